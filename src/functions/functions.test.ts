// SQL behaviour of the function library as data: each testdata/*.yaml entry is
// `{expr, type?, value?}` (SELECT <expr>, one row, one column) or
// `{sql, rows?}` or `{expr|sql, error}`. Values are compared in FORMAT's %t text form.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { MemoryCatalog } from '../executor/testing/memory-catalog.js';
import { runQuery } from '../planner/run.js';
import type { QueryCatalog } from '../storage/api.js';
import { typeToSql } from '../types/types.js';
import { getValue } from '../types/vector.js';
import { formatValueLiteral } from './format-value.js';

interface Case {
  expr?: string;
  sql?: string;
  type?: string;
  value?: string | number | boolean | null;
  rows?: string[][];
  error?: string;
}

const dir = join(dirname(fileURLToPath(import.meta.url)), 'testdata');

async function run(sql: string) {
  const r = await runQuery({
    sql,
    projectId: 'p',
    params: { named: new Map(), positional: [] },
    catalog: new MemoryCatalog() as unknown as QueryCatalog,
    jobId: 'test',
    signal: new AbortController().signal,
    dryRun: false,
    nowMicros: 1700000000123456n,
    sessionUser: 'user@example.com',
  });
  const cols = r.columns ?? [];
  const rows: string[][] = [];
  for (const b of r.batches)
    for (let i = 0; i < b.length; i++) rows.push(b.columns.map((c, k) => formatValueLiteral(getValue(c, i), cols[k]!.type, false)));
  return { types: cols.map((c) => typeToSql(c.type)), rows };
}

for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
  const cases = parseYaml(readFileSync(join(dir, file), 'utf8')) as Case[];
  describe(file, () => {
    for (const c of cases) {
      const sql = c.sql ?? `SELECT ${c.expr}`;
      it(sql, async () => {
        if (c.error !== undefined) {
          await expect(run(sql)).rejects.toThrow(c.error);
          return;
        }
        const r = await run(sql);
        if (c.rows) {
          expect(r.rows).toEqual(c.rows);
          return;
        }
        if (c.type) expect(r.types[0]).toBe(c.type);
        if (c.value !== undefined) expect(r.rows[0]?.[0]).toBe(c.value === null ? 'NULL' : String(c.value));
      });
    }
  });
}
