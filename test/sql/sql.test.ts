// Runs every test/sql/*.sqltest file. Format (one file, many cases):
//
//   === case name                     starts a case
//   @unordered                        optional flags: @unordered, @no_default_dataset, @project <id>, @dry_run, @fails <why>
//   --- setup                         statements run first (one runQuery call)
//   CREATE TABLE t (x INT64); INSERT t VALUES (1);
//   --- query                         the statement under test
//   SELECT x FROM t
//   --- params                        optional: JSON list of {name, type, value} (conformance form)
//   --- schema                        REST schema: `name TYPE[(fields)][ REPEATED]`, comma separated
//   x INTEGER
//   --- rows                          one JSON array per row of REST wire values (strings/null/nested arrays)
//   ["1"]
//   --- error                         or: the exact error message (`~ text`: the message contains text; `#` lines are comments)
//   Unrecognized name: y at [1:8]
//   --- result                        or: statement metadata as JSON (statementType, numDmlAffectedRows, ...)
//
// Each case gets its own project with dataset `ds` (the default dataset).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, openHarness, restParams, rowsOf, run, schemaOf, schemaText, setupDataset, type Harness } from './harness.js';

interface SqlCase {
  name: string;
  flags: Set<string>;
  sections: Map<string, string>;
}

function parseFile(text: string): SqlCase[] {
  const cases: SqlCase[] = [];
  let cur: SqlCase | undefined;
  let section: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('=== ')) {
      cur = { name: line.slice(4).trim(), flags: new Set(), sections: new Map() };
      cases.push(cur);
      section = undefined;
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('--- ')) {
      section = line.slice(4).trim();
      cur.sections.set(section, '');
      continue;
    }
    if (!section) {
      if (line.startsWith('@')) cur.flags.add(line.slice(1).trim());
      continue;
    }
    cur.sections.set(section, cur.sections.get(section)! + line + '\n');
  }
  return cases;
}

const dir = __dirname;
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.sqltest')).sort();

let h: Harness;
let n = 0;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await h?.close();
});

for (const file of files) {
  describe(file, () => {
    for (const c of parseFile(fs.readFileSync(path.join(dir, file), 'utf8'))) {
      // `@fails <why>`: a known failure (the case turns red once it passes, so the mark is dropped with the fix).
      (c.flags.has('fails') || [...c.flags].some((f) => f.startsWith('fails ')) ? it.fails : it)(c.name, async () => {
        const pf = [...c.flags].find((f) => f.startsWith('project '));
        const projectId = pf ? pf.slice(8).trim() : `p${++n}`;
        await setupDataset(h, projectId, 'ds');
        const opts = { projectId, ...(c.flags.has('no_default_dataset') ? {} : { defaultDataset: { projectId, datasetId: 'ds' } }) };
        const setup = c.sections.get('setup')?.trim();
        if (setup) await run(h, setup, opts);
        const query = c.sections.get('query')!.trim();
        // `#` lines in an error section are comments (where the expected message comes from).
        const wantError = c.sections.get('error')?.split('\n').filter((l) => !l.startsWith('#')).join('\n').trim();
        let res;
        try {
          const paramsText = c.sections.get('params')?.trim();
          const params = paramsText ? restParams(JSON.parse(paramsText) as unknown[]) : undefined;
          res = await run(h, query, { ...opts, dryRun: c.flags.has('dry_run'), ...(params ? { params } : {}) });
        } catch (e) {
          if (wantError === undefined) throw e;
          if (wantError.startsWith('~ ')) expect(errorMessage(e)).toContain(wantError.slice(2));
          else expect(errorMessage(e)).toBe(wantError);
          return;
        }
        if (wantError !== undefined) throw new Error(`expected error: ${wantError}`);
        const schema = c.sections.get('schema')?.trim();
        if (schema !== undefined) expect(schemaText(schemaOf(res))).toBe(schema.replace(/\s*\n\s*/g, ' '));
        const rowsText = c.sections.get('rows');
        if (rowsText !== undefined) {
          const want = rowsText
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => l && !l.startsWith('#'))
            .map((l) => JSON.parse(l) as unknown);
          const got = rowsOf(res);
          if (c.flags.has('unordered')) {
            const key = (x: unknown) => JSON.stringify(x);
            expect(got.map(key).sort()).toEqual(want.map(key).sort());
          } else expect(got).toEqual(want);
        }
        const meta = c.sections.get('result')?.trim();
        if (meta) {
          const m = JSON.parse(meta) as Record<string, unknown>;
          const r = res as unknown as Record<string, unknown>;
          for (const [k, v] of Object.entries(m)) expect([k, r[k]]).toEqual([k, v]);
        }
      });
    }
  });
}
