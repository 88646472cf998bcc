// Cross-checks the project's own SQL test data (test/sql/*.sqltest) against the
// GoogleSQL reference implementation: every case without setup or parameters
// is evaluated by the reference and its answer compared with the file's
// expected rows (or error). Dev-only, for writing test data whose expected
// answers the reference documentation leaves implicit; the test suite itself
// never needs the reference.
//
//   npm install --no-save @fivetrandevelopers/zetasql   # dev-only, not a dependency
//   node --import tsx conformance/sqltest-ref.ts test/sql/docs-bit.sqltest [...]
//   node --import tsx conformance/sqltest-ref.ts --query "SELECT 1 AS x"
//   node --import tsx conformance/sqltest-ref.ts --emu [--fill [--schema]] draft.sqltest
//
// Prints one line per case (`same`, `DIFF`, `ref-error` or `skipped: why`),
// with both answers for the differing ones. `--emu` also runs each case in the
// emulator (in process, as test/sql does) and prints `EMU` where the emulator's
// answer differs from the reference's. `--fill` writes the reference's rows
// into cases that have neither `--- rows` nor `--- error` (a draft: queries
// written from the documentation, answers to be checked against it). The packaged reference is an older
// ZetaSQL in external mode: a `ref-error` is often a feature it lacks, and
// FLOAT64 text and a few functions changed since; a DIFF is a lead to check
// against the documentation, not a verdict.

import { readFileSync, writeFileSync } from 'node:fs';
import { javaDouble } from '../src/types/wire.js';
import { connect, languageOptions, type Call, restField, type EvalResponse, type TypeProto, type ValueProto, wireOf, type YamlField } from './lib/reference.js';

interface SqlCase { name: string; flags: string[]; sections: Map<string, string> }

function parseCases(text: string): SqlCase[] {
  const cases: SqlCase[] = [];
  let cur: SqlCase | undefined;
  let section: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('=== ')) {
      cur = { name: line.slice(4).trim(), flags: [], sections: new Map() };
      cases.push(cur);
      section = undefined;
    } else if (cur && line.startsWith('--- ')) {
      section = line.slice(4).trim();
      cur.sections.set(section, '');
    } else if (cur && section) cur.sections.set(section, cur.sections.get(section)! + line + '\n');
    else if (cur && line.startsWith('@')) cur.flags.push(line.slice(1).trim());
  }
  return cases;
}

/** A reference value as a sqltest cell: REST wire text, records and arrays as nested arrays. */
function cell(t: TypeProto, v: ValueProto): unknown {
  if (t.type_kind === 'TYPE_ARRAY') return v.value ? (v.array_value?.element ?? []).map((e) => cell(t.array_type!.element_type, e)) : [];
  if (!v.value) return null;
  if (t.type_kind === 'TYPE_STRUCT') return t.struct_type!.field.map((f, i) => cell(f.field_type, v.struct_value?.field?.[i] ?? {}));
  if (t.type_kind === 'TYPE_DOUBLE') {
    const d = v.double_value!;
    return Number.isNaN(d) ? 'NaN' : d === Infinity ? 'Infinity' : d === -Infinity ? '-Infinity' : javaDouble(d);
  }
  const w = wireOf(t, v);
  // The REST API writes a DATETIME/TIME fraction with all six digits.
  if ((t.type_kind === 'TYPE_DATETIME' || t.type_kind === 'TYPE_TIME') && typeof w === 'string') return w.replace(/\.(\d{1,6})$/, (_, f: string) => '.' + f.padEnd(6, '0'));
  return typeof w === 'boolean' ? String(w) : w;
}

/** The reference service, restarted when a query does not come back in time (it has hung on a few). */
let ref: Awaited<ReturnType<typeof connect>>;
async function evaluate(lang: Record<string, unknown>, sql: string): Promise<{ rows: unknown[]; schema: string } | { error: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ error: string }>((resolve) => { timer = setTimeout(() => resolve({ error: 'reference timed out' }), 30_000); });
  const r = await Promise.race([evaluateOnce(ref.call, lang, sql), timeout]);
  clearTimeout(timer);
  if ('error' in r && r.error === 'reference timed out') {
    ref.stop();
    ref = await connect();
  }
  return r;
}

async function evaluateOnce(call: Call, lang: Record<string, unknown>, sql: string): Promise<{ rows: unknown[]; schema: string } | { error: string }> {
  const req = {
    sql,
    options: { language_options: lang, default_timezone: 'UTC' },
    simple_catalog: { name: 'catalog', builtin_function_options: { language_options: lang } },
  };
  try {
    const res = await call<EvalResponse>('EvaluateQuery', req);
    const cols = res.prepared?.columns ?? [];
    // An unnamed column is f<i>_ in the service's results.
    const schema = cols.map((c, i) => fieldText(restField(c.name || `f${i}_`, c.type))).join(', ');
    return { schema, rows: (res.content?.table_data?.row ?? []).map((r) => cols.map((c, i) => cell(c.type, r.cell?.[i] ?? {}))) };
  } catch (e) {
    return { error: (e as { details?: string }).details ?? (e as Error).message };
  }
}

/** A REST field as test/sql writes schemas: `name TYPE[(fields)][ REPEATED]`. */
function fieldText(f: YamlField): string {
  return `${f.name} ${f.type}${f.fields ? `(${f.fields.map(fieldText).join(', ')})` : ''}${f.mode === 'REPEATED' ? ' REPEATED' : ''}`;
}

const key = (x: unknown) => JSON.stringify(x);

/** The emulator's answer to a setup-free case, in process (test/sql's harness). */
async function emulator(sql: string, noDefaultDataset: boolean): Promise<{ rows: unknown[]; schema: string } | { error: string }> {
  const h = await harness();
  const projectId = `p${++emuSeq}`;
  await h.mod.setupDataset(h.h, projectId, 'ds');
  try {
    const r = await h.mod.run(h.h, sql, { projectId, ...(noDefaultDataset ? {} : { defaultDataset: { projectId, datasetId: 'ds' } }) });
    return { rows: h.mod.rowsOf(r), schema: h.mod.schemaText(h.mod.schemaOf(r)) };
  } catch (e) {
    return { error: h.mod.errorMessage(e) };
  }
}
type HarnessModule = typeof import('../test/sql/harness.js');
let emuSeq = 0;
let emuHarness: { mod: HarnessModule; h: Awaited<ReturnType<HarnessModule['openHarness']>> } | undefined;
async function harness() {
  if (!emuHarness) {
    const mod = await import('../test/sql/harness.js');
    emuHarness = { mod, h: await mod.openHarness() };
  }
  return emuHarness;
}

function sameRows(a: unknown[], b: unknown[], ordered: boolean): boolean {
  const x = a.map(key), y = b.map(key);
  if (!ordered) { x.sort(); y.sort(); }
  return key(x) === key(y);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const withEmu = args.includes('--emu');
  const fill = args.includes('--fill');
  // `--schema` with `--fill`: also write the reference's result schema (column names and types).
  const fillSchema = args.includes('--schema');
  ref = await connect();
  try {
    const lang = await languageOptions(ref.call);
    const qi = args.indexOf('--query');
    if (qi >= 0) {
      const r = await evaluate(lang, args[qi + 1]!);
      if ('error' in r) console.log(`error: ${r.error}`);
      else {
        console.log(r.schema);
        for (const row of r.rows) console.log(key(row));
      }
      if (withEmu) {
        const e = await emulator(args[qi + 1]!, false);
        console.log('emulator:');
        if ('error' in e) console.log(`error: ${e.error}`);
        else {
          console.log(e.schema);
          for (const row of e.rows) console.log(key(row));
        }
      }
      return;
    }
    let same = 0, diff = 0, refErr = 0, skipped = 0, emuDiff = 0, filled = 0;
    for (const file of args.filter((a) => !a.startsWith('--'))) {
      const text = readFileSync(file, 'utf8');
      const cases = parseCases(text);
      const fills = new Map<number, string>();
      for (const [ci, c] of cases.entries()) {
        const label = `${file.replace(/^.*\//, '')}: ${c.name}`;
        if (c.sections.has('setup') || c.sections.has('params')) { skipped++; continue; }
        const query = c.sections.get('query')?.trim();
        if (!query || /^(CREATE|INSERT|UPDATE|DELETE|MERGE|DECLARE|BEGIN|DROP|ALTER)\b/i.test(query)) { skipped++; continue; }
        const r = await evaluate(lang, query);
        const wantError = c.sections.get('error')?.trim();
        const rowsText = c.sections.get('rows');
        const ordered = !c.flags.includes('unordered') && /\bORDER\s+BY\b[^)]*$/i.test(query);
        if (withEmu) {
          const e = await emulator(query, c.flags.includes('no_default_dataset'));
          if ('error' in r || 'error' in e) {
            if (!('error' in r && 'error' in e)) {
              emuDiff++;
              console.log(`EMU ${label}\n    ref: ${'error' in r ? `error ${r.error.split('\n')[0]}` : r.rows.map(key).join(' ')}\n    emu: ${'error' in e ? `error ${e.error.split('\n')[0]}` : e.rows.map(key).join(' ')}`);
            }
          } else if (!sameRows(r.rows, e.rows, ordered) || r.schema !== e.schema) {
            emuDiff++;
            console.log(`EMU ${label}\n    ref: ${r.schema} | ${r.rows.map(key).join(' ')}\n    emu: ${e.schema} | ${e.rows.map(key).join(' ')}`);
          }
          if (fill && wantError === undefined && rowsText === undefined) {
            // Where the reference refuses (often a feature its older version lacks), the
            // emulator's answer goes in marked UNCHECKED, to be checked against the documentation.
            if ('error' in r) {
              const ref = `# reference: ${r.error.split('\n')[0]}\n`;
              fills.set(ci, 'error' in e ? `--- error\n~ ${e.error}\n${ref}` : `--- rows\n# UNCHECKED emulator answer\n${ref}${e.rows.map(key).join('\n')}${e.rows.length ? '\n' : ''}`);
            }
            else fills.set(ci, `${fillSchema ? `--- schema\n${r.schema}\n` : ''}--- rows\n${r.rows.map(key).join('\n')}${r.rows.length ? '\n' : ''}`);
          }
        }
        if ('error' in r) {
          if (wantError !== undefined) { same++; continue; }
          refErr++;
          console.log(`ref-error ${label}\n    ${r.error.split('\n')[0]}`);
          continue;
        }
        if (wantError !== undefined) { diff++; console.log(`DIFF ${label}\n    want error: ${wantError}\n    ref rows:   ${r.rows.map(key).join(' ')}`); continue; }
        if (rowsText === undefined) { skipped++; continue; }
        const want = rowsText.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => JSON.parse(l) as unknown);
        if (sameRows(want, r.rows, ordered)) same++;
        else { diff++; console.log(`DIFF ${label}\n    want: ${want.map(key).join(' ')}\n    ref:  ${r.rows.map(key).join(' ')}`); }
      }
      if (fills.size) {
        // Chunks split at each case header: chunk i + 1 is case i.
        const chunks = text.split(/^(?==== )/m);
        const off = chunks[0]!.startsWith('=== ') ? 0 : 1;
        for (const [ci, add] of fills) chunks[ci + off] = `${chunks[ci + off]!.trimEnd()}\n${add}\n`;
        writeFileSync(file, chunks.join(''));
        filled += fills.size;
      }
    }
    console.log(`same ${same}, differ ${diff}, reference error ${refErr}, skipped ${skipped}${withEmu ? `, emulator differs ${emuDiff}` : ''}${fill ? `, filled ${filled}` : ''}`);
  } finally {
    ref.stop();
    await emuHarness?.h.close();
  }
}

await main();
