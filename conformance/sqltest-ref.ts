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
//
// Prints one line per case (`same`, `DIFF`, `ref-error` or `skipped: why`),
// with both answers for the differing ones. The packaged reference is an older
// ZetaSQL in external mode: a `ref-error` is often a feature it lacks, and
// FLOAT64 text and a few functions changed since; a DIFF is a lead to check
// against the documentation, not a verdict.

import { readFileSync } from 'node:fs';
import { javaDouble } from '../src/types/wire.js';
import { connect, languageOptions, type Call, type EvalResponse, type TypeProto, type ValueProto, wireOf } from './lib/reference.js';

interface SqlCase { name: string; sections: Map<string, string> }

function parseCases(text: string): SqlCase[] {
  const cases: SqlCase[] = [];
  let cur: SqlCase | undefined;
  let section: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('=== ')) {
      cur = { name: line.slice(4).trim(), sections: new Map() };
      cases.push(cur);
      section = undefined;
    } else if (cur && line.startsWith('--- ')) {
      section = line.slice(4).trim();
      cur.sections.set(section, '');
    } else if (cur && section) cur.sections.set(section, cur.sections.get(section)! + line + '\n');
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
  return typeof w === 'boolean' ? String(w) : w;
}

async function evaluate(call: Call, lang: Record<string, unknown>, sql: string): Promise<{ rows: unknown[]; schema: string } | { error: string }> {
  const req = {
    sql,
    options: { language_options: lang, default_timezone: 'UTC' },
    simple_catalog: { name: 'catalog', builtin_function_options: { language_options: lang } },
  };
  try {
    const res = await call<EvalResponse>('EvaluateQuery', req);
    const cols = res.prepared?.columns ?? [];
    const schema = cols.map((c) => `${c.name} ${typeText(c.type)}`).join(', ');
    return { schema, rows: (res.content?.table_data?.row ?? []).map((r) => cols.map((c, i) => cell(c.type, r.cell?.[i] ?? {}))) };
  } catch (e) {
    return { error: (e as { details?: string }).details ?? (e as Error).message };
  }
}

function typeText(t: TypeProto): string {
  if (t.type_kind === 'TYPE_ARRAY') return `ARRAY<${typeText(t.array_type!.element_type)}>`;
  if (t.type_kind === 'TYPE_STRUCT') return `STRUCT<${t.struct_type!.field.map((f) => `${f.field_name ?? ''} ${typeText(f.field_type)}`).join(', ')}>`;
  return t.type_kind.replace(/^TYPE_/, '');
}

const key = (x: unknown) => JSON.stringify(x);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const { call, stop } = await connect();
  try {
    const lang = await languageOptions(call);
    const qi = args.indexOf('--query');
    if (qi >= 0) {
      const r = await evaluate(call, lang, args[qi + 1]!);
      if ('error' in r) console.log(`error: ${r.error}`);
      else {
        console.log(r.schema);
        for (const row of r.rows) console.log(key(row));
      }
      return;
    }
    let same = 0, diff = 0, refErr = 0, skipped = 0;
    for (const file of args) {
      for (const c of parseCases(readFileSync(file, 'utf8'))) {
        const label = `${file.replace(/^.*\//, '')}: ${c.name}`;
        if (c.sections.has('setup') || c.sections.has('params')) { skipped++; continue; }
        const query = c.sections.get('query')?.trim();
        if (!query || /^(CREATE|INSERT|UPDATE|DELETE|MERGE|DECLARE|BEGIN|DROP|ALTER)\b/i.test(query)) { skipped++; continue; }
        const r = await evaluate(call, lang, query);
        const wantError = c.sections.get('error')?.trim();
        const rowsText = c.sections.get('rows');
        if ('error' in r) {
          if (wantError !== undefined) { same++; continue; }
          refErr++;
          console.log(`ref-error ${label}\n    ${r.error.split('\n')[0]}`);
          continue;
        }
        if (wantError !== undefined) { diff++; console.log(`DIFF ${label}\n    want error: ${wantError}\n    ref rows:   ${r.rows.map(key).join(' ')}`); continue; }
        if (rowsText === undefined) { skipped++; continue; }
        const want = rowsText.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => JSON.parse(l) as unknown);
        const ordered = /\bORDER\s+BY\b[^)]*$/i.test(query);
        const a = want.map(key), b = r.rows.map(key);
        if (!ordered) { a.sort(); b.sort(); }
        if (key(a) === key(b)) same++;
        else { diff++; console.log(`DIFF ${label}\n    want: ${a.join(' ')}\n    ref:  ${b.join(' ')}`); }
      }
    }
    console.log(`same ${same}, differ ${diff}, reference error ${refErr}, skipped ${skipped}`);
  } finally {
    stop();
  }
}

await main();
