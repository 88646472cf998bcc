// Batches reshaped for a table's writes: rows of one schema read in
// another (a replace or ALTER that changed it, time travel across
// generations), batches merged into one, a state's live rows rewritten.
import type { Column } from '../types/schema.js';
import { concatVectors, type Batch, type Vector } from '../types/vector.js';
import { scanSegments, stateSegments, type TableState } from './table-state.js';
import { nullVector } from './vectors.js';

/**
 * Rows of schema `from` in schema `to`: by position when only names changed
 * (RENAME COLUMN), else by name (conformBatches).
 */
export function conformTail(from: readonly Column[], to: readonly Column[], batches: readonly Batch[]): Batch[] {
  const renamed = from.length === to.length && from.every((c, i) => JSON.stringify(c.type) === JSON.stringify(to[i]!.type));
  if (renamed) return batches.map((b) => ({ length: b.length, columns: b.columns.map((v, i) => ({ ...v, type: to[i]!.type })) }));
  return conformBatches(from, to, batches);
}

/** A state's live rows (every column), then `added`: a row-level change written as a rewrite. */
export async function* rewrittenRows(s: TableState, added: readonly Batch[]): AsyncGenerator<Batch> {
  yield* scanSegments(stateSegments(s), s.columns, s.columns.map((_, i) => i), [], undefined, s.deleted);
  yield* added;
}

/**
 * Batches of schema `from` in schema `to`: columns matched by name
 * (case-insensitively); a column missing then, or of another type then
 * (ALTER COLUMN SET DATA TYPE), reads as NULL.
 */
export function conformBatches(from: readonly Column[], to: readonly Column[], batches: readonly Batch[]): Batch[] {
  const byName = new Map(from.map((c, i) => [c.name.toLowerCase(), i]));
  return batches.map((b) => ({
    length: b.length,
    columns: to.map((c) => {
      const i = byName.get(c.name.toLowerCase());
      return i !== undefined && JSON.stringify(from[i]!.type) === JSON.stringify(c.type) ? b.columns[i]! : nullVector(c.type, b.length);
    }),
  }));
}

/** One batch of all rows, so scans and later merges touch few large vectors. */
export function mergeBatches(columns: readonly Column[], batches: readonly Batch[]): Batch {
  if (batches.length === 1) return batches[0]!;
  const length = batches.reduce((s, b) => s + b.length, 0);
  const cols: Vector[] = columns.map((c, i) => concatVectors(c.type, batches.map((b) => b.columns[i]!)));
  return { length, columns: cols };
}
