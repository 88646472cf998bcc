// Runtime join filter: once a hash join's build side is read, the range of
// its keys is handed to the probe side's table scan as statistics filters
// (column >= min, column <= max; no keys at all: nothing can match), so
// storage skips row groups whose keys all lie outside it. A fact table
// joined with a few dimension rows reads only the row groups those keys
// can be in. Only pruning: the probe still checks every row it reads.
import type { Expr, JoinRel, Rel, ScanRel } from '../../analyzer/resolved.js';
import type { ScanFilter } from '../../storage/api.js';
import type { Vector } from '../../types/vector.js';
import type { ExecContext } from '../context.js';

/** Probe-side rows without a match are dropped by these joins (the left, probe side of hashJoin). */
const DROPS_UNMATCHED_PROBE = new Set(['inner', 'right', 'semi']);

/** Kinds whose statistics compare as the executor's numbers do (scan-filters.ts valueOf). */
const NUMERIC_KEYS = new Set(['INT64', 'FLOAT64', 'DATE']);

/**
 * `ctx` for reading the probe side `rel.left` of a hash join with build key
 * vectors `bk`, with the runtime filter on its scan when one applies: one key,
 * not NULL-safe, a plain column of a table scan (under filters and column
 * projections), numbers on both sides.
 */
export function withRuntimeFilter(rel: JoinRel, keys: readonly { left: Expr; nullSafe: boolean }[], bk: readonly Vector[], ctx: ExecContext): ExecContext {
  if (!DROPS_UNMATCHED_PROBE.has(rel.joinType) || keys.length !== 1 || keys[0]!.nullSafe) return ctx;
  const key = keys[0]!.left;
  if (key.kind !== 'column' || key.correlated || !NUMERIC_KEYS.has(key.type.kind)) return ctx;
  const target = scanColumn(rel.left, key.columnId);
  const build = bk[0]!;
  if (target === null || build.type.kind !== key.type.kind) return ctx;
  const d = build.data;
  if (!(d instanceof Float64Array) && !(d instanceof Int32Array)) return ctx;
  const range = keyRange(d, build.nulls, build.length);
  // NULL and NaN build keys never match; without any other key nothing does ('in' no value).
  const filters: ScanFilter[] =
    range === null
      ? [{ column: target.column, op: 'in', values: [] }]
      : [
          { column: target.column, op: '>=', values: [range[0]] },
          { column: target.column, op: '<=', values: [range[1]] },
        ];
  const runtimeFilters = new Map(ctx.runtimeFilters ?? []);
  runtimeFilters.set(target.scan, [...(runtimeFilters.get(target.scan) ?? []), ...filters]);
  return { ...ctx, runtimeFilters };
}

/** The table scan under `rel` (through filters and projections of plain columns) and the table column that column id reads. */
export function scanColumn(rel: Rel, id: number): { scan: ScanRel; column: number } | null {
  for (;;) {
    if (rel.kind === 'scan') {
      const i = rel.columns.findIndex((c) => c.id === id);
      return i < 0 ? null : { scan: rel, column: rel.tableColumns[i]! };
    }
    if (rel.kind === 'filter') {
      rel = rel.input;
      continue;
    }
    if (rel.kind === 'project') {
      const i = rel.columns.findIndex((c) => c.id === id);
      const e = i < 0 ? undefined : rel.exprs[i];
      if (!e || e.kind !== 'column' || e.correlated) return null;
      id = e.columnId;
      rel = rel.input;
      continue;
    }
    return null;
  }
}

/** Smallest and largest key that is not NULL or NaN, or null when there is none. */
function keyRange(d: Float64Array | Int32Array, nulls: Uint8Array | null, n: number): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const x = d[i]!;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return lo <= hi ? [lo, hi] : null;
}
