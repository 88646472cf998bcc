// Per-partition top-N for windows marked with partitionLimit (see
// planner/rules/window-topn.ts): the rows that are among the first `limit` of
// their partition in window order (ORDER BY keys, ties by input position as
// the window's stable sort breaks them). Each partition keeps a small sorted
// candidate list; a row that is not smaller than a full list's last entry is
// dropped with one comparison, so no full sort happens.
import type { WindowCall, WindowRel } from '../../../analyzer/resolved.js';
import type { Batch, Vector } from '../../../types/vector.js';
import { checkpoint, type ExecContext } from '../../context.js';
import { collectRows, executeRel } from '../../execute.js';
import { evaluate, evaluateSync, hasSubquery, layoutOf } from '../../expr.js';
import { GroupTable } from '../../hash.js';
import { rowsComparator, type RowComparator } from '../../sort-keys.js';
import { batchBytes, concatBatches, takeBatch } from '../../vectors.js';

type Layout = ReadonlyMap<number, number>;

/** Candidate lists larger than this per partition are not worth it: the caller numbers every row. */
const MAX_LIMIT = 1024;

/**
 * The window's input reduced to the rows that can pass the filter the planner
 * saw (rel.partitionLimit: ROW_NUMBER/RANK/DENSE_RANK <= limit), in input
 * order. One pass over the streamed batches when the window has at most one
 * partition key (typed integers of modest range) and one typed order key
 * without NULLs/NaN: no concatenation of the input, no id array. Otherwise
 * ROW_NUMBER falls back to the materialized input and topRowsPerPartition,
 * RANK/DENSE_RANK to the whole input.
 */
export async function topNInput(rel: WindowRel, ctx: ExecContext, partitionLimit: NonNullable<WindowRel['partitionLimit']>): Promise<Batch> {
  const { fn, limit } = partitionLimit;
  const layout = layoutOf(rel.input.columns);
  const types = rel.input.columns.map((c) => c.type);
  const call = rel.calls[0]!;
  const batches: Batch[] = [];
  const desc = call.orderBy[0]?.descending ?? false;
  const fits = call.partitionBy.length <= 1 && call.orderBy.length <= 1 && limit > 0 && limit <= MAX_LIMIT;
  const st: StreamSelector | null = !fits ? null : fn === 'ROW_NUMBER' ? new StreamTopN(limit, desc) : new StreamTopTies(limit, desc, fn === 'DENSE_RANK');
  let ok = st !== null;
  let base = 0;
  const pe = call.partitionBy.length === 1 ? call.partitionBy[0]! : null;
  const oe = call.orderBy.length === 1 ? call.orderBy[0]!.expr : null;
  // Keys without subqueries: no await per key and batch.
  const sync = !(pe && hasSubquery(pe)) && !(oe && hasSubquery(oe));
  // Rows that can no longer pass are let go: every topNOptions.compactBytes of
  // input, what is held shrinks to the rows that can still pass (the input
  // itself, often a whole table, is never held at once). The streaming
  // selectors know them by position; otherwise ROW_NUMBER's top rows of
  // what is held are its top rows of the input so far (the top k of a union
  // is the top k of the parts' top k; held rows stay in input order, so ties
  // break as the stable sort would).
  let compact: Compact | null = null;
  let survivors: Batch | null = null;
  let heldBytes = 0;
  for await (const b of executeRel(rel.input, ctx)) {
    if (b.length === 0) continue;
    batches.push(b);
    heldBytes += batchBytes(b);
    if (ok) {
      const pv = pe === null ? null : sync ? evaluateSync(pe, b, layout, ctx) : await evaluate(pe, b, layout, ctx);
      const ov = oe === null ? null : sync ? evaluateSync(oe, b, layout, ctx) : await evaluate(oe, b, layout, ctx);
      ok = st!.add(pv, ov, b.length, base);
    }
    base += b.length;
    if (heldBytes > topNOptions.compactBytes) {
      if (ok) {
        const keep = st!.kept();
        compact = { batch: gather(keep, types, compact, batches), rows: keep, end: base };
        batches.length = 0;
        heldBytes = batchBytes(compact.batch);
        topNOptions.compactions++;
      } else if (compact === null && fn === 'ROW_NUMBER') {
        const held = concatBatches(types, survivors ? [survivors, ...batches] : batches);
        const keep = await topRowsPerPartition(call, held, layout, ctx, limit);
        survivors = keep === null ? held : takeBatch(held, keep);
        batches.length = 0;
        heldBytes = batchBytes(survivors);
        topNOptions.compactions++;
      }
    }
    await checkpoint(ctx);
  }
  if (ok) return gather(st!.kept(), types, compact, batches);
  // The fast path gave up after rows were let go: read the input again, whole.
  const all = compact !== null ? await collectRows(rel.input, ctx) : survivors ? [survivors, ...batches] : batches;
  const input = concatBatches(types, all);
  const keep = fn === 'ROW_NUMBER' ? await topRowsPerPartition(call, input, layout, ctx, limit) : null;
  return keep === null ? input : takeBatch(input, keep);
}

/** Input held so far, shrunk to the rows candidates then: row i is global row `rows[i]`, all rows before `end`. */
interface Compact {
  readonly batch: Batch;
  readonly rows: Int32Array;
  readonly end: number;
}

/** Input bytes held before they shrink to the candidates' rows (a tunable for tests), and how often that happened. */
export const topNOptions = { compactBytes: 32 << 20, compactions: 0 };

/** The rows `keep` (ascending global row numbers) of what is held (a compacted part, then batches from its end on), in input order, as one batch. */
function gather(keep: Int32Array, types: Parameters<typeof concatBatches>[0], compact: Compact | null, batches: readonly Batch[]): Batch {
  let k = 0;
  const parts: Batch[] = [];
  if (compact !== null) {
    const sel: number[] = [];
    let i = 0;
    for (; k < keep.length && keep[k]! < compact.end; k++) {
      while (compact.rows[i]! < keep[k]!) i++;
      sel.push(i);
    }
    if (sel.length > 0) parts.push(takeBatch(compact.batch, Int32Array.from(sel)));
  }
  takeRows(batches, keep.subarray(k), compact?.end ?? 0, parts);
  return concatBatches(types, parts);
}

interface StreamSelector {
  /** Feeds one batch (rows base .. base + n - 1); false when the batch does not fit the fast path. */
  add(pv: Vector | null, ov: Vector | null, n: number, base: number): boolean;
  /** Global row numbers kept, ascending. */
  kept(): Int32Array;
}

/** Appends to `parts` the rows `keep` (ascending global row numbers) of `batches` (the first one starting at global row `start`), in input order. */
function takeRows(batches: readonly Batch[], keep: Int32Array, start: number, parts: Batch[]): void {
  const m = keep.length;
  let k = 0;
  for (const b of batches) {
    const end = start + b.length;
    const from = k;
    while (k < m && keep[k]! < end) k++;
    if (k > from) {
      const sel = new Int32Array(k - from);
      for (let q = from; q < k; q++) sel[q - from] = keep[q]! - start;
      parts.push(takeBatch(b, sel));
    }
    start = end;
  }
}

/** Whether a batch's key vectors fit the streaming selectors (typed, no NULLs). */
function typedKeys(pv: Vector | null, ov: Vector | null): boolean {
  if (pv !== null && (pv.nulls !== null || !(pv.data instanceof Float64Array || pv.data instanceof Int32Array || pv.data instanceof Uint8Array))) return false;
  return !(ov !== null && (ov.nulls !== null || !(ov.data instanceof Float64Array || ov.data instanceof Int32Array)));
}

/**
 * Partition ids from a dense table over the partition key's integer range,
 * grown as keys arrive; -1 for a key that does not fit (fraction, NaN, or a
 * range beyond MAX_SPAN).
 */
class DenseIds {
  /** Key of table entry 0. */
  lo = 0;
  private span = 0;
  /** Partition id per key - lo; -1 for keys not seen yet. */
  dense = new Int32Array(0);
  size = 0;

  /** Makes the table cover every key of the batch; false when a key is no integer or the range is too wide. */
  cover(pd: Float64Array | Int32Array | Uint8Array, n: number): boolean {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      const x = pd[i]!;
      if (x !== Math.floor(x)) return false; // fractions, NaN
      if (x < min) min = x;
      if (x > max) max = x;
    }
    if (n === 0 || (min >= this.lo && max < this.lo + this.span)) return true;
    return this.grow(min, max);
  }

  /** Id of a covered key (assigning the next id to a new key). */
  id(x: number): number {
    const off = x - this.lo;
    const p = this.dense[off]!;
    if (p >= 0) return p;
    this.dense[off] = this.size;
    return this.size++;
  }

  /** Id of any key (growing the table), or -1 when it does not fit. */
  slot(x: number): number {
    if (x !== Math.floor(x) || !this.cover(Float64Array.of(x), 1)) return -1;
    return this.id(x);
  }

  private grow(min: number, max: number): boolean {
    const had = this.span > 0;
    let lo = had ? Math.min(this.lo, min) : min;
    let hi = had ? Math.max(this.lo + this.span - 1, max) : max;
    // Slack on the side that grew, so that keys arriving in order grow the table O(log) times.
    const slack = Math.max(1024, this.span);
    if (!had || min < this.lo) lo -= slack;
    if (!had || max >= this.lo + this.span) hi += slack;
    const span = hi - lo + 1;
    if (span > MAX_SPAN) return false;
    const dense = new Int32Array(span).fill(-1);
    if (had) dense.set(this.dense, this.lo - lo);
    this.dense = dense;
    this.lo = lo;
    this.span = span;
    return true;
  }
}

/**
 * RANK <= limit (every row with fewer than `limit` smaller rows) or
 * DENSE_RANK <= limit (every row among the `limit` smallest distinct values):
 * per partition a sorted list of candidates that keeps ties, trimmed past the
 * current threshold value. Lists that grow past a bound (huge tie groups) end
 * the fast path.
 */
class StreamTopTies implements StreamSelector {
  private readonly ids = new DenseIds();
  private vals: number[][] = [];
  private rows: number[][] = [];
  /** Per partition: rows with a larger value can never pass (Infinity while the list is short). */
  private threshold: number[] = [];
  private readonly sign: number;
  private readonly maxList: number;

  constructor(
    private readonly limit: number,
    desc: boolean,
    private readonly dense: boolean,
  ) {
    this.sign = desc ? -1 : 1;
    this.maxList = 4 * limit + 1024;
  }

  add(pv: Vector | null, ov: Vector | null, n: number, base: number): boolean {
    if (!typedKeys(pv, ov)) return false;
    const pd = pv === null ? null : (pv.data as Float64Array | Int32Array | Uint8Array);
    const od = ov === null ? null : (ov.data as Float64Array | Int32Array);
    if (pd !== null && !this.ids.cover(pd, n)) return false;
    for (let i = 0; i < n; i++) {
      const p = pd === null ? 0 : this.ids.id(pd[i]!);
      if (p === this.vals.length) {
        this.vals.push([]);
        this.rows.push([]);
        this.threshold.push(Infinity);
      }
      const y = od === null ? 0 : this.sign * od[i]!;
      if (y !== y) return false;
      if (y > this.threshold[p]!) continue;
      const vs = this.vals[p]!;
      const rs = this.rows[p]!;
      // After every equal value: ties keep input order.
      let j = vs.length;
      while (j > 0 && vs[j - 1]! > y) j--;
      vs.splice(j, 0, y);
      rs.splice(j, 0, base + i);
      this.trim(p, vs, rs);
      if (vs.length > this.maxList) return false;
    }
    return true;
  }

  /** Drops candidates past the threshold and records it once the list holds `limit` ranks. */
  private trim(p: number, vs: number[], rs: number[]): void {
    const k = this.limit;
    let cut = -1;
    if (!this.dense) {
      if (vs.length >= k) {
        const t = vs[k - 1]!;
        this.threshold[p] = t;
        cut = k;
        while (cut < vs.length && vs[cut] === t) cut++;
      }
    } else {
      let distinct = 0;
      for (let j = 0; j < vs.length; j++) {
        if (j === 0 || vs[j] !== vs[j - 1]) {
          if (++distinct > k) {
            cut = j;
            break;
          }
        }
      }
      if (distinct >= k) {
        // The k-th distinct value: the last value before the cut.
        this.threshold[p] = cut < 0 ? vs[vs.length - 1]! : vs[cut - 1]!;
      }
    }
    if (cut >= 0 && cut < vs.length) {
      vs.length = cut;
      rs.length = cut;
    }
  }

  kept(): Int32Array {
    let m = 0;
    for (const r of this.rows) m += r.length;
    const keep = new Int32Array(m);
    let j = 0;
    for (const r of this.rows) for (const x of r) keep[j++] = x;
    return keep.sort();
  }
}

/** Largest dense partition-key table (entries) the streaming path builds before giving up. */
const MAX_SPAN = 1 << 22;

/**
 * ROW_NUMBER <= limit: per partition the `limit` smallest rows as global row
 * numbers with their order values (direction folded in), so older batches are
 * never read again; a row not smaller than a full list's last entry is
 * dropped with one comparison.
 */
class StreamTopN implements StreamSelector {
  private readonly ids = new DenseIds();
  private numParts = 0;
  private cap = 0;
  private candRow = new Int32Array(0);
  private candVal = new Float64Array(0);
  private count = new Int32Array(0);
  private worst = new Float64Array(0);
  private rows = 0;
  private readonly sign: number;

  constructor(
    private readonly limit: number,
    desc: boolean,
  ) {
    this.sign = desc ? -1 : 1;
  }

  add(pv: Vector | null, ov: Vector | null, n: number, base: number): boolean {
    if (!typedKeys(pv, ov)) return false;
    const pd = pv === null ? null : (pv.data as Float64Array | Int32Array | Uint8Array);
    const od = ov === null ? null : (ov.data as Float64Array | Int32Array);
    this.rows += n;
    const limit = this.limit;
    const s = this.sign;
    const ids = this.ids;
    let dense = ids.dense;
    let lo = ids.lo;
    let worst = this.worst;
    const fastReject = pd instanceof Float64Array && od instanceof Float64Array;
    for (let i = 0; i < n; i++) {
      // Most rows of a large input lose against their partition's full list: skip those in a tight loop.
      if (fastReject) {
        i = firstCandidate(pd, od, i, n, dense, lo, worst, s);
        if (i === n) break;
      }
      let p = 0;
      if (pd !== null) {
        // Out of the table's range or no integer (fraction, NaN): undefined, take the slow path.
        const q = dense[pd[i]! - lo];
        if (q !== undefined && q >= 0) p = q;
        else {
          p = ids.slot(pd[i]!);
          if (p < 0) return false;
          dense = ids.dense;
          lo = ids.lo;
        }
      }
      const y = od === null ? 0 : s * od[i]!;
      // A full list's last value (Infinity before): a row not strictly smaller is never among the first `limit`.
      const w = p < this.numParts ? worst[p]! : Infinity;
      if (y >= w && w !== Infinity) continue;
      if (p === this.numParts) {
        // Many partitions of few rows: candidate slots would outgrow the input.
        if ((p + 1) * limit > 4 * this.rows + 4096) return false;
        this.newPart();
        worst = this.worst;
      }
      if (y !== y) return false; // NaN: the comparator path orders it
      const c = this.count[p]!;
      const b0 = p * limit;
      const vals = this.candVal;
      const rowsArr = this.candRow;
      // (An infinite last value passes the check above.)
      if (c === limit && !(y < vals[b0 + c - 1]!)) continue;
      let j = c === limit ? c - 1 : c;
      if (c < limit) this.count[p] = c + 1;
      while (j > 0 && y < vals[b0 + j - 1]!) {
        vals[b0 + j] = vals[b0 + j - 1]!;
        rowsArr[b0 + j] = rowsArr[b0 + j - 1]!;
        j--;
      }
      vals[b0 + j] = y;
      rowsArr[b0 + j] = base + i;
      if (this.count[p] === limit) worst[p] = vals[b0 + limit - 1]!;
    }
    return true;
  }

  private newPart(): void {
    if (this.numParts === this.cap) {
      const cap = Math.max(64, this.cap * 2);
      const l = this.limit;
      const rows = new Int32Array(cap * l);
      rows.set(this.candRow);
      const vals = new Float64Array(cap * l);
      vals.set(this.candVal);
      const count = new Int32Array(cap);
      count.set(this.count);
      const worst = new Float64Array(cap).fill(Infinity);
      worst.set(this.worst);
      this.candRow = rows;
      this.candVal = vals;
      this.count = count;
      this.worst = worst;
      this.cap = cap;
    }
    this.numParts++;
  }

  kept(): Int32Array {
    let m = 0;
    for (let p = 0; p < this.numParts; p++) m += this.count[p]!;
    const keep = new Int32Array(m);
    let j = 0;
    for (let p = 0; p < this.numParts; p++) {
      const b0 = p * this.limit;
      for (let i = 0; i < this.count[p]!; i++) keep[j++] = this.candRow[b0 + i]!;
    }
    return keep.sort();
  }
}

/**
 * StreamTopN's common case as a plain loop (V8 keeps it tight): the first row
 * from `i` that may enter its partition's list, i.e. whose partition is new,
 * outside the dense table, or not full, or whose order value is smaller than
 * (or NaN against) the full list's last value. Partitions not yet full have
 * worst = Infinity, so every row of theirs stops the scan.
 */
function firstCandidate(pd: Float64Array, od: Float64Array, i: number, n: number, dense: Int32Array, lo: number, worst: Float64Array, s: number): number {
  const len = dense.length;
  for (; i < n; i++) {
    const off = pd[i]! - lo;
    const j = off | 0;
    // Not an integer inside the table (fractions, NaN, out of range): the caller's slow path.
    if (j !== off || j >>> 0 >= len) return i;
    const p = dense[j]!;
    if (p < 0) return i;
    const w = worst[p]!;
    // worst = Infinity: not full yet (or a full list ending in +Infinity, which the caller handles).
    if (!(s * od[i]! >= w) || w === Infinity) return i;
  }
  return n;
}

/**
 * Input rows to keep (ascending), or null when pruning would not pay
 * (large limit, or about as many candidate slots as rows).
 */
export async function topRowsPerPartition(call: WindowCall, input: Batch, layout: Layout, ctx: ExecContext, limit: number): Promise<Int32Array | null> {
  const n = input.length;
  if (limit > MAX_LIMIT || n < 2 * limit) return null;
  if (limit === 0) return new Int32Array(0);
  const pVecs: Vector[] = [];
  for (const e of call.partitionBy) pVecs.push(await evaluate(e, input, layout, ctx));
  const oVecs: Vector[] = [];
  for (const k of call.orderBy) oVecs.push(await evaluate(k.expr, input, layout, ctx));
  const o0 = oVecs.length === 1 ? oVecs[0]! : null;
  const d0 = o0?.data;
  const typedOrder = o0 !== null && o0.nulls === null && (d0 instanceof Float64Array || d0 instanceof Int32Array);
  const p0 = pVecs.length === 1 ? pVecs[0]! : null;
  // One small-range integer partition key without NULLs: id = x - min, computed inline (no id array).
  const span = p0 !== null && p0.nulls === null ? integralSpan(p0, n) : null;
  let sel: Selection | null = null;
  if (typedOrder && (pVecs.length === 0 || span !== null)) {
    const parts = span?.range ?? 1;
    if (parts * limit * 2 > n) return null;
    sel = selection(parts, limit);
    const pd = span === null ? null : (p0!.data as Float64Array | Int32Array | Uint8Array);
    // A NaN order key: start over with the comparator, which orders NaN first.
    if (!selectTyped(d0, call.orderBy[0]!.descending, pd, span?.min ?? 0, n, limit, sel.cand, sel.count, new Float64Array(parts))) sel = null;
  }
  if (sel === null) {
    // Partition ids: x - min for one small-range integer key, else one GroupTable pass.
    const pid = new Int32Array(n);
    let parts = pVecs.length === 1 ? integralIds(pVecs[0]!, n, pid) : pVecs.length === 0 ? 1 : -1;
    if (parts < 0) {
      const table = new GroupTable(pVecs.map((v) => v.type), 1024);
      table.findOrInsert(pVecs, n, pid);
      parts = table.size;
    }
    if (parts * limit * 2 > n) return null;
    sel = selection(parts, limit);
    const cmp = oVecs.length === 0 ? (a: number, b: number) => a - b : rowsComparator(oVecs, call.orderBy);
    selectGeneric(cmp, pid, n, limit, sel.cand, sel.count);
  }
  const { numParts, cand, count } = sel;
  let m = 0;
  for (let p = 0; p < numParts; p++) m += count[p]!;
  const keep = new Int32Array(m);
  let j = 0;
  for (let p = 0; p < numParts; p++) {
    const base = p * limit;
    for (let i = 0; i < count[p]!; i++) keep[j++] = cand[base + i]!;
  }
  keep.sort();
  return keep;
}

/** Per partition, up to `limit` candidate rows in window order (cand[p × limit ...]). */
interface Selection {
  readonly numParts: number;
  readonly cand: Int32Array;
  readonly count: Int32Array;
}

const selection = (numParts: number, limit: number): Selection => ({ numParts, cand: new Int32Array(numParts * limit), count: new Int32Array(numParts) });

/** min and range of one typed key of integers without NULLs whose range is at most n, else null. */
function integralSpan(v: Vector, n: number): { min: number; range: number } | null {
  const d = v.data;
  if (!(d instanceof Float64Array || d instanceof Int32Array || d instanceof Uint8Array)) return null;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = d[i]!;
    if (x !== Math.floor(x)) return null; // fractions, NaN
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const range = n === 0 ? 0 : max - min + 1;
  return range > n ? null : { min, range };
}

/**
 * Ids x - min (NULL: max - min + 1) for one typed key of integers whose range
 * is at most n; returns the id count, or -1 (pid untouched) for other keys.
 */
function integralIds(v: Vector, n: number, pid: Int32Array): number {
  const d = v.data;
  if (!(d instanceof Float64Array || d instanceof Int32Array || d instanceof Uint8Array)) return -1;
  const nulls = v.nulls;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const x = d[i]!;
    if (x !== Math.floor(x)) return -1; // fractions, NaN
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const range = min === Infinity ? 0 : max - min + 1;
  if (range > n) return -1;
  for (let i = 0; i < n; i++) pid[i] = nulls !== null && nulls[i] === 1 ? range : d[i]! - min;
  return range + 1;
}

/**
 * One typed order key without NULLs: plain number comparisons, each partition's
 * last candidate value cached in `worst`. Rows arrive in input order, so a
 * row equal to a candidate sorts after it (stable ties). False on a NaN (the
 * caller restarts with the comparator, which orders NaN).
 */
function selectTyped(
  d: Float64Array | Int32Array,
  desc: boolean,
  /** Partition key (id = value - pmin), or null for one partition. */
  pd: Float64Array | Int32Array | Uint8Array | null,
  pmin: number,
  n: number,
  limit: number,
  cand: Int32Array,
  count: Int32Array,
  worst: Float64Array,
): boolean {
  const s = desc ? -1 : 1;
  for (let r = 0; r < n; r++) {
    const x = s * d[r]!;
    if (x !== x) return false;
    const p = pd === null ? 0 : pd[r]! - pmin;
    const c = count[p]!;
    // Not strictly smaller than a full list's last candidate: never among the first `limit`.
    if (c === limit && !(x < worst[p]!)) continue;
    const base = p * limit;
    let i = c;
    if (c === limit) i = c - 1;
    else count[p] = c + 1;
    while (i > 0 && x < s * d[cand[base + i - 1]!]!) {
      cand[base + i] = cand[base + i - 1]!;
      i--;
    }
    cand[base + i] = r;
    worst[p] = s * d[cand[base + count[p]! - 1]!]!;
  }
  return true;
}

function selectGeneric(cmp: RowComparator, pid: Int32Array, n: number, limit: number, cand: Int32Array, count: Int32Array): void {
  for (let r = 0; r < n; r++) {
    const p = pid[r]!;
    const base = p * limit;
    const c = count[p]!;
    let i = c;
    if (c === limit) {
      if (!(cmp(r, cand[base + c - 1]!) < 0)) continue;
      i = c - 1;
    } else count[p] = c + 1;
    while (i > 0 && cmp(r, cand[base + i - 1]!) < 0) {
      cand[base + i] = cand[base + i - 1]!;
      i--;
    }
    cand[base + i] = r;
  }
}
