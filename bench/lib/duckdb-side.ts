// Runs a case in-process on DuckDB, timed like the emulator side: warmup,
// then `iterations` runs of (execute + read every row as JSON values). Each
// case gets its own in-memory instance, closed afterwards, so memory from a
// 2M-row case never carries into the next one.
import { DuckDBInstance } from '@duckdb/node-api';
import type { BenchCase, DuckdbOverride } from './cases.js';
import { translateToDuckdb } from './sql-translate.js';
import { summarize, errorMessage } from './stats.js';
import { canonDuckValue, type CanonRow } from './compare.js';
import type { SideResult } from './types.js';

export interface DuckdbCaseOutput {
  result: SideResult;
  rows: CanonRow[] | null;
}

export function translateCase(c: BenchCase, override: DuckdbOverride | undefined, schema: string): { setup: string[]; query: string } {
  // Overrides are written in DuckDB SQL already; only {{ds}} is substituted.
  const setup = override?.setup
    ? override.setup.map((s) => s.replaceAll('{{ds}}', schema))
    : c.setup.map((s) => translateToDuckdb(s, schema));
  const query = override?.query ? override.query.replaceAll('{{ds}}', schema) : translateToDuckdb(c.query, schema);
  return { setup, query };
}

export async function duckdbVersion(): Promise<string | null> {
  try {
    const inst = await DuckDBInstance.create(':memory:');
    const conn = await inst.connect();
    const r = await conn.runAndReadAll('SELECT version()');
    const v = String(r.getRowsJson()[0]?.[0] ?? '');
    conn.closeSync();
    inst.closeSync();
    return v;
  } catch {
    return null;
  }
}

export async function runCaseOnDuckdb(c: BenchCase, override: DuckdbOverride | undefined): Promise<DuckdbCaseOutput> {
  const schema = 'bench_ds';
  let sql: { setup: string[]; query: string };
  try {
    sql = translateCase(c, override, schema);
  } catch (e) {
    return { result: { status: 'error', error: `translation: ${errorMessage(e)}` }, rows: null };
  }
  let instance: DuckDBInstance | null = null;
  try {
    instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      await conn.run(`CREATE SCHEMA ${schema}`);
      const s0 = performance.now();
      for (const stmt of sql.setup) await conn.run(stmt);
      const setupMs = Math.round(performance.now() - s0);
      const once = async (): Promise<{ types: string[]; rows: unknown[][] }> => {
        const reader = await conn.runAndReadAll(sql.query);
        return { types: reader.columnTypes().map((t) => t.toString()), rows: reader.getRowsJson() };
      };
      for (let i = 0; i < c.warmup; i++) await once();
      const samples: number[] = [];
      let last: { types: string[]; rows: unknown[][] } = { types: [], rows: [] };
      for (let i = 0; i < c.iterations; i++) {
        const t0 = performance.now();
        last = await once();
        samples.push(performance.now() - t0);
      }
      const rows = last.rows.map((r) => r.map((v, i) => canonDuckValue(last.types[i] ?? '', v)));
      return {
        result: {
          status: 'ok', samples: samples.map((s) => Math.round(s * 100) / 100), latency: summarize(samples),
          setupMs, rowCount: rows.length, sql,
        },
        rows,
      };
    } finally {
      conn.closeSync();
    }
  } catch (e) {
    return { result: { status: 'error', error: errorMessage(e), sql }, rows: null };
  } finally {
    instance?.closeSync();
  }
}
