// One analytic call's values over its spec's geometry: numbering (ROW_NUMBER, RANK, NTILE...), navigation (LAG,
// LEAD, FIRST/LAST/NTH_VALUE), TF_IDF, ST_CLUSTERDBSCAN; percentiles and aggregates go to their own modules.
import type { WindowCall } from '../../../analyzer/resolved.js';
import { clusterDbscan } from '../../../functions/geography.js';
import { tfIdf } from '../../../functions/search.js';
import { QueryError } from '../../../types/errors.js';
import { T, type SqlType } from '../../../types/types.js';
import { type Value } from '../../../types/values.js';
import { getValue, type Batch, type Vector } from '../../../types/vector.js';
import { type ExecContext } from '../../context.js';
import { evaluate } from '../../expr.js';
import { nullVector, takeOrNull } from '../../vectors.js';
import { type Layout, type Geometry, constantArg, toNum, frames, int64Vector } from './geometry.js';
import { percentile } from './percentile.js';
import { aggregateCall } from './aggregates.js';

/** ROW_NUMBER / RANK / DENSE_RANK in a plain function (tight loops; computeCall is async). */
function numbering(name: string, g: Geometry, idx: Int32Array, n: number): Float64Array {
  const d = new Float64Array(n);
  const partStart = g.partStart;
  if (name === 'ROW_NUMBER') {
    for (let p = 0; p < n; p++) d[idx[p]!] = p - partStart[p]! + 1;
    return d;
  }
  const peerStart = g.peerStart;
  let dense = 0;
  for (let p = 0; p < n; p++) {
    const ps = partStart[p]!;
    if (p === ps) dense = 0;
    if (p === peerStart[p]) dense++;
    d[idx[p]!] = name === 'RANK' ? peerStart[p]! - ps + 1 : dense;
  }
  return d;
}

export async function computeCall(call: WindowCall, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<Vector> {
  const n = g.n;
  const idx = g.idx;
  const name = call.name.toUpperCase();
  // No rows: nothing to compute, and no row to read a constant argument (NTILE's N, LAG's offset...) from.
  if (n === 0) return nullVector(call.column.type, 0);
  if (call.aggregate) return aggregateCall(call, g, input, layout, ctx);
  const arg = async (k: number): Promise<Vector> => evaluate(call.args[k]!, input, layout, ctx);
  switch (name) {
    case 'ROW_NUMBER':
    case 'RANK':
    case 'DENSE_RANK': {
      return int64Vector(numbering(name, g, idx, n));
    }
    case 'PERCENT_RANK':
    case 'CUME_DIST': {
      const d = new Float64Array(n);
      for (let p = 0; p < n; p++) {
        const ps = g.partStart[p]!;
        const cnt = g.partEnd[p]! - ps;
        d[idx[p]!] = name === 'CUME_DIST' ? (g.peerEnd[p]! - ps) / cnt : cnt === 1 ? 0 : (g.peerStart[p]! - ps) / (cnt - 1);
      }
      return { type: T.FLOAT64, length: n, data: d, nulls: null };
    }
    case 'NTILE': {
      const kv = await constantArg(call.args[0], input, layout, ctx);
      if (kv === null) throw new QueryError('The N value of NTILE cannot be NULL');
      const k = toNum(kv);
      if (k <= 0) throw new QueryError('The N value (number of buckets) for the NTILE function must be positive');
      const d = new Float64Array(n);
      for (let p = 0; p < n; p++) {
        const ps = g.partStart[p]!;
        const cnt = g.partEnd[p]! - ps;
        const r = p - ps;
        const q = Math.floor(cnt / k);
        const rem = cnt % k;
        const big = rem * (q + 1);
        d[idx[p]!] = r < big ? Math.floor(r / (q + 1)) + 1 : rem + Math.floor((r - big) / q) + 1;
      }
      return int64Vector(d);
    }
    case 'LAG':
    case 'LEAD': {
      const v = await arg(0);
      const offV = call.args.length > 1 ? await constantArg(call.args[1], input, layout, ctx) : 1n;
      if (offV === null) throw new QueryError(`The offset to ${name} must not be NULL`);
      const off = toNum(offV);
      if (off < 0) throw new QueryError(`The offset to the function ${name} must not be negative`);
      const def = call.args.length > 2 ? await arg(2) : null;
      const pick = new Int32Array(n);
      const useDefault = new Uint8Array(n);
      for (let p = 0; p < n; p++) {
        const q = name === 'LAG' ? p - off : p + off;
        const r = idx[p]!;
        if (q >= g.partStart[p]! && q < g.partEnd[p]!) pick[r] = idx[q]!;
        else {
          pick[r] = -1;
          useDefault[r] = 1;
        }
      }
      const res = takeOrNull(v, pick);
      if (!def) return res;
      // Rows outside the partition take the default expression's value of the current row.
      const vals: Value[] = new Array(n);
      for (let r = 0; r < n; r++) vals[r] = useDefault[r] === 1 ? getValue(def, r) : getValue(res, r);
      return vectorFromValuesOf(call.column.type, vals);
    }
    case 'FIRST_VALUE':
    case 'LAST_VALUE':
    case 'NTH_VALUE': {
      const v = await arg(0);
      const { fs, fe } = await frames(call, g, input, layout, ctx);
      let nth = 1;
      if (name === 'NTH_VALUE') {
        const nv = await constantArg(call.args[1], input, layout, ctx);
        if (nv === null) throw new QueryError('The N value for the NthValue function must not be NULL');
        if (toNum(nv) <= 0) throw new QueryError('The N value for the NthValue function must be positive');
        nth = toNum(nv);
      }
      const pick = valuePicks(name === 'LAST_VALUE', nth, call.ignoreNulls === true ? v.nulls : null, idx, fs, fe);
      return takeOrNull(v, pick);
    }
    case 'PERCENTILE_CONT':
    case 'PERCENTILE_DISC':
      return percentile(call, name === 'PERCENTILE_CONT', g, input, layout, ctx);
    case 'TF_IDF': {
      // One dictionary per partition; document order does not matter.
      const v = await arg(0);
      const limit = async (i: number, dflt: number, max: number, what: string): Promise<number> => {
        if (call.args.length <= i) return dflt;
        const x = await constantArg(call.args[i], input, layout, ctx);
        if (x === null) throw new QueryError(`TF_IDF ${what} must not be NULL`);
        const k = toNum(x);
        if (k < 0 || k > max) throw new QueryError(`TF_IDF ${what} must be between 0 and ${max}, got ${k}`);
        return k;
      };
      const maxDistinct = await limit(1, 32000, 1048576, 'max_distinct_tokens');
      const threshold = await limit(2, 5, Number.MAX_SAFE_INTEGER, 'frequency_threshold');
      const vals: Value[] = new Array<Value>(n).fill(null);
      for (let p = 0; p < n; p = g.partEnd[p]!) {
        const rows = Array.from({ length: g.partEnd[p]! - p }, (_, k) => idx[p + k]!);
        tfIdf(rows.map((r) => getValue(v, r)), maxDistinct, threshold).forEach((w, k) => (vals[rows[k]!] = w));
      }
      return vectorFromValuesOf(call.column.type, vals);
    }
    case 'ST_CLUSTERDBSCAN': {
      // One DBSCAN run per partition, rows in window order (the GEOGRAPHY library clusters).
      const v = await arg(0);
      const [eps, minPts] = [await constantArg(call.args[1], input, layout, ctx), await constantArg(call.args[2], input, layout, ctx)];
      const vals: Value[] = new Array<Value>(n).fill(null);
      for (let p = 0; p < n; p = g.partEnd[p]!) {
        const rows = Array.from({ length: g.partEnd[p]! - p }, (_, k) => idx[p + k]!);
        clusterDbscan(rows.map((r) => getValue(v, r)), eps, minPts).forEach((c, k) => (vals[rows[k]!] = c));
      }
      return vectorFromValuesOf(T.INT64, vals);
    }
    default:
      throw new QueryError(`Analytic function ${call.name} is not supported`, 'notImplemented', 501);
  }
}

/**
 * FIRST_VALUE / NTH_VALUE (the nth qualifying row of each frame) and
 * LAST_VALUE (the last): the input row picked for each input row, -1 for
 * none. Under IGNORE NULLS (`nulls`) through the qualifying positions and a
 * count of them before each position, so a frame costs O(1) whatever NULLs
 * it holds (scanning them was O(n) a frame: O(n^2) over long frames).
 */
export function valuePicks(last: boolean, nth: number, nulls: Uint8Array | null, idx: Int32Array, fs: Int32Array, fe: Int32Array): Int32Array {
  const n = idx.length;
  const pick = new Int32Array(n);
  if (nulls === null) {
    for (let p = 0; p < n; p++) {
      const q = last ? fe[p]! - 1 : fs[p]! + nth - 1;
      pick[idx[p]!] = q >= fs[p]! && q < fe[p]! ? idx[q]! : -1;
    }
    return pick;
  }
  // before[q]: qualifying positions before q; at[k]: the k-th qualifying position.
  const before = new Int32Array(n + 1);
  const at = new Int32Array(n);
  let k = 0;
  for (let q = 0; q < n; q++) {
    before[q] = k;
    if (nulls[idx[q]!] !== 1) at[k++] = q;
  }
  before[n] = k;
  for (let p = 0; p < n; p++) {
    const s = fs[p]!;
    const e = fe[p]!;
    const j = last ? before[e]! - 1 : before[s]! + nth - 1;
    const q = j >= 0 && j < k ? at[j]! : -1;
    pick[idx[p]!] = q >= s && q < e ? idx[q]! : -1;
  }
  return pick;
}

/** The rows that are NULL (a value layout may hold a NULL without the bitmap saying so); null: none. */
export function nullMask(v: Vector): Uint8Array | null {
  const d = v.data;
  if (!Array.isArray(d)) return v.nulls;
  let m: Uint8Array | null = null;
  for (let i = 0; i < v.length; i++) {
    if (d[i] !== null || (v.nulls !== null && v.nulls[i] === 1)) continue;
    m ??= v.nulls === null ? new Uint8Array(v.length) : Uint8Array.from(v.nulls);
    m[i] = 1;
  }
  return m ?? v.nulls;
}

function vectorFromValuesOf(type: SqlType, vals: Value[]): Vector {
  // Local import avoidance: VectorBuilder semantics via vectorFromValues.
  return vfv(type, vals);
}
import { vectorFromValues as vfv } from '../../../types/vector.js';
