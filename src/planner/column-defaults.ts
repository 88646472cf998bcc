// Column defaults (default-values.md): the one rule every write path uses for a column it leaves out — INSERT and
// MERGE (dml.ts), LOAD DATA (data-statements.ts), the engine's row inserts (engine/rows.ts: tabledata.insertAll) and
// the staged writes of load jobs (engine/table-writes.ts).
import { coerce, literal } from '../analyzer/coercion.js';
import { resolveExpr } from '../analyzer/expr.js';
import type { Analyzer } from '../analyzer/index.js';
import type { Expr, Rel } from '../analyzer/resolved.js';
import { Scope } from '../analyzer/scope.js';
import type { TableInfo } from '../storage/api.js';
import { partitionOfMs } from '../storage/ingestion.js';
import type { Column, RestField } from '../types/schema.js';
import { T } from '../types/types.js';
import { concatVectors, getValue, vectorFromValues, type Batch, type Vector } from '../types/vector.js';
import type { QueryContext } from './api.js';
import { Session } from './session.js';

/** The pseudo-column an ingestion-time partitioned table's rows carry their partition time in. */
export const PARTITION_TIME: Column = { name: '_PARTITIONTIME', type: T.TIMESTAMP, required: false };

/** The table's schema fields (top level). */
function fieldsOf(info: Pick<TableInfo, 'resource'>): readonly RestField[] {
  return (info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? [];
}

/** Whether column `name` of the table has a DEFAULT expression. */
export function hasDefault(info: Pick<TableInfo, 'resource'>, name: string): boolean {
  const lower = name.toLowerCase();
  return !!fieldsOf(info).find((f) => f.name.toLowerCase() === lower)?.defaultValueExpression;
}

/** The value a row written without column `c` takes: its DEFAULT expression (per row), else NULL. */
export async function defaultValue(an: Analyzer, info: TableInfo, c: Column): Promise<Expr> {
  // Rows written without a partition time go to the partition of the write.
  if (c === PARTITION_TIME && info.partitionUnit) return literal(T.TIMESTAMP, partitionOfMs(Date.now(), info.partitionUnit));
  const dflt = fieldsOf(info).find((f) => f.name === c.name)?.defaultValueExpression;
  if (dflt) {
    // An expression of the statement, not a value: default-values.md says a default's function is evaluated as each
    // row is written (GENERATE_UUID and RAND differ per row; CURRENT_TIMESTAMP is one value per statement anyway).
    const { parseExpression } = await import('../../grammar/index.js');
    return coerce(resolveExpr(an, parseExpression(dflt), { scope: new Scope(), clause: 'DEFAULT' }), c.type);
  }
  return literal(c.type, null);
}

/** `n` rows of the defaults of `columns` (one vector per column), evaluated per row as one write's. */
export async function defaultVectors(s: Session, info: TableInfo, columns: readonly Column[], n: number): Promise<Vector[]> {
  const an = s.analyzer();
  const exprs: Expr[] = [];
  for (const c of columns) exprs.push(await defaultValue(an, info, c));
  const rel: Rel = {
    kind: 'project',
    input: { kind: 'values', rows: Array.from({ length: n }, () => []), columns: [] },
    exprs,
    columns: columns.map((c) => an.newColumn(c.name, c.type)),
  };
  const batches = await s.run(rel);
  return columns.map((c, i) => concatVectors(c.type, batches.map((b) => b.columns[i]!)));
}

/**
 * Which rows of a write leave column `c` out, and so take its default: all (`true`), none (`false`), or those `row`
 * says (a row of the batch). Which columns count as left out is each path's rule (default-values.md).
 */
export type LeftOut = (c: Column) => boolean | ((row: number) => boolean);

/**
 * `batch` (rows of the table's `columns`) with the defaults of the defaulted columns the write leaves out: one
 * statement's evaluation, per row (GENERATE_UUID differs per row).
 */
export async function withDefaults(s: Session, info: TableInfo, columns: readonly Column[], batch: Batch, leftOut: LeftOut): Promise<Batch> {
  if (!batch.length) return batch;
  const targets: { i: number; rows: true | ((row: number) => boolean) }[] = [];
  for (const [i, c] of columns.entries()) {
    if (!hasDefault(info, c.name)) continue;
    const rows = leftOut(c);
    if (rows !== false) targets.push({ i, rows });
  }
  if (!targets.length) return batch;
  const dflts = await defaultVectors(s, info, targets.map((x) => columns[x.i]!), batch.length);
  const out = batch.columns.slice();
  targets.forEach(({ i, rows }, j) => {
    const own = out[i]!;
    const dflt = dflts[j]!;
    out[i] = rows === true ? dflt : vectorFromValues(columns[i]!.type, Array.from({ length: batch.length }, (_, k) => getValue(rows(k) ? dflt : own, k)));
  });
  return { length: batch.length, columns: out };
}

/** withDefaults for a write outside any query (the engine's row inserts and load jobs): a statement of its own under `ctx`. */
export function withDefaultsOf(ctx: QueryContext, info: TableInfo, columns: readonly Column[], batch: Batch, leftOut: LeftOut): Promise<Batch> {
  return withDefaults(new Session(ctx), info, columns, batch, leftOut);
}
