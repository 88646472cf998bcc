// A case in-process on DuckDB, timed like the emulator side: each run is
// execute + read every row as JSON values. Each case gets its own in-memory
// instance, closed afterwards, so memory from a 2M-row case never carries into
// the next one.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { BenchCase, DuckdbOverride } from './cases.js';
import { translateToDuckdb } from './sql-translate.js';
import { errorMessage } from './stats.js';
import { canonDuckValue } from './compare.js';
import { runLockstep, type OpenedSide, type SideOutput } from './case-session.js';

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

/** An in-memory instance with the case's setup done; closing the session closes the instance. */
export async function openDuckdbCase(c: BenchCase, override: DuckdbOverride | undefined): Promise<OpenedSide> {
  const schema = 'bench_ds';
  let sql: { setup: string[]; query: string };
  try {
    sql = translateCase(c, override, schema);
  } catch (e) {
    return { failed: { status: 'error', error: `translation: ${errorMessage(e)}` } };
  }
  let instance: DuckDBInstance | null = null;
  let conn: DuckDBConnection | null = null;
  const close = async (): Promise<void> => {
    conn?.closeSync();
    instance?.closeSync();
    conn = null;
    instance = null;
  };
  try {
    instance = await DuckDBInstance.create(':memory:');
    const cn = await instance.connect();
    conn = cn;
    await cn.run(`CREATE SCHEMA ${schema}`);
    const s0 = performance.now();
    for (const stmt of sql.setup) await cn.run(stmt);
    const setupMs = Math.round(performance.now() - s0);
    const query = sql.query;
    let last: { types: string[]; rows: unknown[][] } = { types: [], rows: [] };
    return {
      session: {
        setupMs,
        sql,
        async run() {
          const t0 = performance.now();
          const reader = await cn.runAndReadAll(query);
          last = { types: reader.columnTypes().map((t) => t.toString()), rows: reader.getRowsJson() };
          return performance.now() - t0;
        },
        lastRows: () => last.rows.map((r) => r.map((v, i) => canonDuckValue(last.types[i] ?? '', v))),
        close,
      },
    };
  } catch (e) {
    await close();
    return { failed: { status: 'error', error: errorMessage(e), sql } };
  }
}

/** A case on DuckDB alone (the bench's own tests): setup, warmup, timed iterations. */
export async function runCaseOnDuckdb(c: BenchCase, override: DuckdbOverride | undefined): Promise<SideOutput> {
  const [out] = await runLockstep([await openDuckdbCase(c, override)], c.warmup, c.iterations);
  return out!;
}
