// Vectorized expression evaluation over a batch. Column references resolve by
// column id through `layout` (id -> batch column index), then through the
// context's outer bindings (correlated references). Conditionals and AND/OR
// evaluate lazily: each branch only sees the rows that reach it (selection +
// take, then scatter), so `IF(x = 0, 0, 1 / x)` never divides by zero.
//
// Subqueries need async execution; everything else is synchronous. `evaluate`
// first resolves the expression's subqueries for the whole batch (async),
// then runs the synchronous evaluator with those vectors at hand.
import type {
  CallExpr,
  CastExpr,
  ConditionalExpr,
  Expr,
  LambdaExpr,
  LogicalExpr,
  SubqueryExpr,
} from '../analyzer/resolved.js';
import { MAX_ROW_BYTES, QueryError, rowTooLarge } from '../types/errors.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { constantVector, getValue, structField, takeVector, vectorFromValues, withNullRows, type Batch, type Vector } from '../types/vector.js';
import { castVector } from './cast.js';
import type { ExecContext, ValueMemo } from './context.js';
import { executeRel } from './execute.js';
import { GroupTable } from './hash.js';
import { tupleKey } from './values-compare.js';
import { sqlEquals } from '../functions/compare.js';
import { approxBytes } from '../functions/vec.js';
import { scatterVectors } from './vectors.js';
import { batchedSubquery, outerColumn } from './subquery-batch.js';

export type ColumnLayout = ReadonlyMap<number, number>;

/** Layout of a relation's output: column id -> batch index. */
export function layoutOf(columns: readonly { readonly id: number }[]): Map<number, number> {
  const m = new Map<number, number>();
  columns.forEach((c, i) => m.set(c.id, i));
  return m;
}

interface Env {
  readonly ctx: ExecContext;
  /** Per-batch results of the expression's subqueries (row-aligned with the batch). */
  readonly subq: Map<SubqueryExpr, Vector> | null;
}

// ---------------------------------------------------------------- entry points

export async function evaluate(expr: Expr, batch: Batch, layout: ColumnLayout, ctx: ExecContext): Promise<Vector> {
  if (subqueriesOf(expr).length === 0) return evalExpr(expr, batch, layout, { ctx, subq: null });
  return evalAsync(expr, batch, layout, ctx);
}

/**
 * The evaluator for expressions holding subqueries: nodes above a subquery
 * are evaluated here (awaiting their children), so subqueries inside CASE /
 * COALESCE branches and later AND/OR operands run only for the rows that
 * reach them, exactly like every other expression. Subquery-free subtrees
 * go to the synchronous evaluator.
 */
async function evalAsync(e: Expr, batch: Batch, layout: ColumnLayout, ctx: ExecContext): Promise<Vector> {
  if (subqueriesOf(e).length === 0) return evalExpr(e, batch, layout, { ctx, subq: null });
  const n = batch.length;
  const env: Env = { ctx, subq: null };
  switch (e.kind) {
    case 'subquery':
      return evaluateSubquery(e, batch, layout, ctx);
    case 'call': {
      const args: Vector[] = [];
      for (const a of e.args) args.push(a.kind === 'lambda' ? lambdaVector(a, batch, layout, env, n, null) : await evalAsync(a, batch, layout, ctx));
      return applyCall(e, args, batch, layout, env);
    }
    case 'cast': {
      const v = await evalAsync(e.arg, batch, layout, ctx);
      const first = async (x: Expr | undefined): Promise<string | null | undefined> => {
        if (!x || n === 0) return undefined;
        const fv = getValue(await evalAsync(x, batch, layout, ctx), 0);
        return fv === null ? null : String(fv);
      };
      const format = await first(e.format);
      const timeZone = await first(e.timeZone);
      // CAST ... FORMAT NULL / AT TIME ZONE NULL yields NULL.
      if (format === null || timeZone === null) return constantVector(e.type, null, n);
      return castVector(v, e.type, { safe: e.safe, format, timeZone }, ctx.eval);
    }
    case 'make_struct':
    case 'make_array': {
      const parts: Vector[] = [];
      for (const f of e.kind === 'make_struct' ? e.fields : e.elements) parts.push(await evalAsync(f, batch, layout, ctx));
      return assembleRows(e.type, parts, n);
    }
    case 'field':
      return fieldOf(e.type, await evalAsync(e.arg, batch, layout, ctx), e.fieldIndex, n);
    case 'conditional':
    case 'logical': {
      // Same algorithms as the synchronous forms, with branches evaluated through evalAsync.
      const on = (x: Expr, sel: Int32Array | null, count: number): Promise<Vector> => {
        if (sel === null) return evalAsync(x, batch, layout, ctx);
        const [b, l] = restrict(x, batch, layout, env, sel, count);
        return evalAsync(x, b, l, ctx);
      };
      if (e.kind === 'logical') return logicalWith(e, n, on);
      return e.op === 'case' ? caseWith(e, n, on) : coalesceWith(e, n, on);
    }
    default:
      return evalExpr(e, batch, layout, env);
  }
}

/** Synchronous evaluation; throws if the expression holds a subquery (use `evaluate`). */
export function evaluateSync(expr: Expr, batch: Batch, layout: ColumnLayout, ctx: ExecContext): Vector {
  return evalExpr(expr, batch, layout, { ctx, subq: null });
}

export function hasSubquery(expr: Expr): boolean {
  return subqueriesOf(expr).length > 0;
}

// ---------------------------------------------------------------- analysis caches

const subqueryCache = new WeakMap<Expr, SubqueryExpr[]>();
/** Subqueries of an expression, outside lambda bodies and other subqueries' plans. */
function subqueriesOf(expr: Expr): SubqueryExpr[] {
  let r = subqueryCache.get(expr);
  if (r) return r;
  r = [];
  const walk = (e: Expr): void => {
    if (e.kind === 'subquery') {
      r!.push(e);
      return;
    }
    forEachChild(e, walk);
  };
  walk(expr);
  subqueryCache.set(expr, r);
  return r;
}

function forEachChild(e: Expr, f: (c: Expr) => void): void {
  switch (e.kind) {
    case 'call':
      e.args.forEach(f);
      return;
    case 'cast':
      f(e.arg);
      if (e.format) f(e.format);
      if (e.timeZone) f(e.timeZone);
      return;
    case 'conditional':
      e.whens.forEach(f);
      e.thens.forEach(f);
      if (e.else) f(e.else);
      return;
    case 'logical':
      e.args.forEach(f);
      return;
    case 'make_struct':
      e.fields.forEach(f);
      return;
    case 'make_array':
      e.elements.forEach(f);
      return;
    case 'field':
      f(e.arg);
      return;
    case 'subquery':
      if (e.inExpr) f(e.inExpr);
      return;
    default:
      return;
  }
}

const refsCache = new WeakMap<Expr, number[]>();
/** columnRefsOf, and in a lifted subquery run the outer row column its outer references are read at. */
function readIds(expr: Expr, ctx: ExecContext): readonly number[] {
  const ids = columnRefsOf(expr);
  return ctx.outerRows ? [...ids, ctx.outerRows.rowColumn] : ids;
}

/** Column ids an expression reads (including lambda bodies and subquery correlations). */
export function columnRefsOf(expr: Expr): number[] {
  let r = refsCache.get(expr);
  if (r) return r;
  const set = new Set<number>();
  const walk = (e: Expr): void => {
    if (e.kind === 'column') set.add(e.columnId);
    else if (e.kind === 'lambda') walk(e.body);
    else if (e.kind === 'subquery') for (const c of e.correlatedColumns) set.add(c);
    forEachChild(e, walk);
  };
  walk(expr);
  r = [...set];
  refsCache.set(expr, r);
  return r;
}

/** The rows `sel` of the columns `expr` reads, with a matching layout. */
function restrict(expr: Expr, batch: Batch, layout: ColumnLayout, env: Env, sel: Int32Array, count: number): [Batch, ColumnLayout, Env] {
  const cols: Vector[] = [];
  const lay = new Map<number, number>();
  for (const id of readIds(expr, env.ctx)) {
    const idx = layout.get(id);
    if (idx === undefined || lay.has(id)) continue;
    lay.set(id, cols.length);
    cols.push(takeVector(batch.columns[idx]!, sel, count));
  }
  let subq: Map<SubqueryExpr, Vector> | null = null;
  if (env.subq) {
    subq = new Map();
    for (const [s, v] of env.subq) subq.set(s, takeVector(v, sel, count));
  }
  return [{ length: count, columns: cols }, lay, { ctx: env.ctx, subq }];
}

// ---------------------------------------------------------------- the evaluator

const literalCache = new WeakMap<Expr, Vector>();

function evalExpr(e: Expr, batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const n = batch.length;
  switch (e.kind) {
    case 'literal': {
      // Kernels never mutate inputs, so one broadcast vector per literal is shared:
      // kept at the longest length asked for; shorter lengths (CASE branches, filtered rows) get views of it.
      const c = literalCache.get(e);
      if (c && c.length === n) return c;
      if (c && c.length > n && !Array.isArray(c.data)) {
        return { type: c.type, length: n, data: c.data.subarray(0, n), nulls: c.nulls ? c.nulls.subarray(0, n) : null };
      }
      const v = constantVector(e.type, e.value, n);
      literalCache.set(e, v);
      return v;
    }
    case 'column': {
      const idx = layout.get(e.columnId);
      if (idx !== undefined) return batch.columns[idx]!;
      if (env.ctx.outerRows) {
        const v = outerColumn(e.columnId, batch, layout, env.ctx);
        if (v) return v;
      }
      const outer = env.ctx.outer;
      if (outer.has(e.columnId)) return constantVector(e.type, outer.get(e.columnId)!, n);
      throw new Error(`executor: column #${e.columnId} is not bound`);
    }
    case 'call':
      return evalCall(e, batch, layout, env);
    case 'cast':
      return evalCast(e, batch, layout, env);
    case 'conditional':
      return e.op === 'case' ? evalCase(e, batch, layout, env) : evalCoalesce(e, batch, layout, env);
    case 'logical':
      return evalLogical(e, batch, layout, env);
    case 'make_struct':
      return assembleRows(e.type, e.fields.map((f) => evalExpr(f, batch, layout, env)), n);
    case 'make_array':
      return assembleRows(e.type, e.elements.map((f) => evalExpr(f, batch, layout, env)), n);
    case 'field':
      return fieldOf(e.type, evalExpr(e.arg, batch, layout, env), e.fieldIndex, n);
    case 'subquery': {
      const v = env.subq?.get(e);
      if (!v) throw new Error('executor: subquery evaluated synchronously (use evaluate())');
      return v;
    }
    case 'lambda':
      return lambdaVector(e, batch, layout, env, n, null);
  }
}

/** STRUCT / ARRAY constructor: row i holds the i-th value of every part. */
function assembleRows(type: SqlType, parts: readonly Vector[], n: number): Vector {
  const out: Value[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const row: Value[] = new Array(parts.length);
    for (let f = 0; f < parts.length; f++) row[f] = getValue(parts[f]!, i);
    out[i] = row;
  }
  return { type, length: n, data: out, nulls: null };
}

/** Field `fieldIndex` of each STRUCT row (NULL for a NULL struct); a FLOAT64/TIME field straight into its typed array. */
export function fieldOf(type: SqlType, s: Vector, fieldIndex: number, n: number): Vector {
  const f = structField(s, fieldIndex);
  if (f) return withNulls(f, s.nulls);
  const d = s.data as (Value[] | null)[];
  const sn = s.nulls;
  if (type.kind === 'FLOAT64' || type.kind === 'TIME') {
    const out = new Float64Array(n);
    let nulls: Uint8Array | null = null;
    for (let i = 0; i < n; i++) {
      const v = sn !== null && sn[i] === 1 ? null : d[i]!;
      const x = v === null ? null : v[fieldIndex]!;
      if (x === null) (nulls ??= new Uint8Array(n))[i] = 1;
      else out[i] = x as number;
    }
    return { type, length: n, data: out, nulls };
  }
  const out: Value[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const v = sn !== null && sn[i] === 1 ? null : d[i]!;
    out[i] = v === null ? null : v[fieldIndex]!;
  }
  return vectorFromValues(type, out);
}

/** `v` NULL also where `nulls` says so (a struct's field where the struct is NULL), its layout kept. */
function withNulls(v: Vector, nulls: Uint8Array | null): Vector {
  if (nulls === null) return v;
  let merged: Uint8Array | null = null;
  for (let i = 0; i < v.length; i++) {
    if (nulls[i] === 1 && (v.nulls === null || v.nulls[i] !== 1)) {
      merged ??= v.nulls ? v.nulls.slice() : new Uint8Array(v.length);
      merged[i] = 1;
    }
  }
  return merged === null ? v : withNullRows(v, merged);
}

function evalCall(e: CallExpr, batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const n = batch.length;
  const m = memoArg(e);
  if (m >= 0 && n > 0) {
    const memo = memoOf(env.ctx, e);
    const x = evalExpr(e.args[m]!, batch, layout, env);
    const r = x.dict ? dictCall(e, m, x, memo, env) : null;
    if (r !== null) return r;
    if (!memo.off) return memoCall(e, m, x, memo, env);
    return applyCall(e, e.args.map((a, i) => (i === m ? x : evalExpr(a, batch, layout, env))), batch, layout, env);
  }
  const args = e.args.map((a) => (a.kind === 'lambda' ? lambdaVector(a, batch, layout, env, n, null) : evalExpr(a, batch, layout, env)));
  return applyCall(e, args, batch, layout, env);
}

// ---------------------------------------------------------------- calls over dictionary codes

/**
 * A memoizable call (memoArg) whose STRING argument comes as dictionary codes
 * (Vector.dict: a dictionary-encoded chunk, or such a call's results): the
 * call runs once per dictionary value (plus NULL, at index `values.length`),
 * cached for the statement by dictionary, and each row takes its code's
 * result. A STRING result without NULLs keeps the codes, so `LOWER(s)`
 * under `REGEXP_CONTAINS` is one gather each. Null when the call raised over
 * the dictionary: a value no row of the batch holds may be the cause, so the
 * rows decide (the per-value path).
 */
function dictCall(e: CallExpr, m: number, x: Vector, memo: ValueMemo, env: Env): Vector | null {
  const { codes, values } = x.dict!;
  const cache = env.ctx.shared.dictResults;
  let byCall = cache.get(values);
  if (!byCall) cache.set(values, (byCall = new Map()));
  // A storage dictionary shared by row groups grows as they are read (codes
  // never change meaning): results over fewer values than it holds now are made again.
  const d = values.length;
  let r = byCall.get(e);
  if (r === undefined || (r !== null && r.length !== d + 1)) {
    const data: Value[] = values.slice();
    data.push(null);
    const nulls = new Uint8Array(d + 1);
    for (let j = 0; j <= d; j++) if (data[j] === null) nulls[j] = 1;
    const dv: Vector = { type: x.type, length: d + 1, data, nulls };
    try {
      if (!memo.off) r = memoCall(e, m, dv, memo, env);
      else {
        const none: Batch = { length: d + 1, columns: [] };
        r = e.fn.kernel(e.args.map((a, i) => (i === m ? dv : evalExpr(a, none, EMPTY_LAYOUT, env))), d + 1, env.ctx.eval);
      }
      // NULL results as null values: another call over these results as a dictionary sees NULLs.
      if (r.nulls !== null && Array.isArray(r.data)) {
        const rn = r.nulls;
        r = { ...r, data: r.data.map((v, i) => (rn[i] === 1 ? null : v)) };
      }
    } catch {
      r = null;
    }
    byCall.set(e, r);
  }
  if (r === null) return null;
  return gatherCodes(e.type, r, codes, x.nulls, d);
}

/** Rows of dictionary results `r`: row i takes r[codes[i]], or r[nullIndex] where `nulls` marks it. */
function gatherCodes(type: SqlType, r: Vector, codes: Int32Array, nulls: Uint8Array | null, nullIndex: number): Vector {
  const n = codes.length;
  let idx = codes;
  if (nulls !== null) {
    idx = new Int32Array(n);
    for (let i = 0; i < n; i++) idx[i] = nulls[i] === 1 ? nullIndex : codes[i]!;
  }
  const rd = r.data;
  let data: Vector['data'];
  if (Array.isArray(rd)) {
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) out[i] = rd[idx[i]!]!;
    data = out;
  } else {
    const out = new (rd.constructor as new (n: number) => typeof rd)(n);
    gatherTyped(out as Float64Array, rd as Float64Array, idx, n);
    data = out;
  }
  let outNulls: Uint8Array | null = null;
  if (r.nulls !== null) {
    const rn = r.nulls;
    for (let i = 0; i < n; i++) if (rn[idx[i]!] === 1) (outNulls ??= new Uint8Array(n))[i] = 1;
  }
  // STRING results are a dictionary of their own (NULL rows index the NULL input's result).
  const dict = type.kind === 'STRING' && Array.isArray(rd) ? { codes: idx, values: rd as (string | null)[] } : undefined;
  return dict ? { type, length: n, data, nulls: outNulls, dict } : { type, length: n, data, nulls: outNulls };
}

/** out[i] = src[idx[i]] over same-kind typed arrays (one loop for every layout; V8 keys it by element kind). */
function gatherTyped(out: Float64Array, src: Float64Array, idx: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = src[idx[i]!]!;
}

// ---------------------------------------------------------------- per-value memo of pure calls

/** Result types whose values are immutable scalars (one value may be shared by many rows). */
const MEMO_RESULTS = new Set(['STRING', 'BOOL', 'INT64', 'FLOAT64', 'DATE', 'TIME', 'DATETIME', 'TIMESTAMP', 'NUMERIC', 'BIGNUMERIC']);
/** Rows seen before judging whether values repeat enough (at most one distinct value per two rows), and most values kept. */
const MEMO_TRIAL_ROWS = 1 << 16;
const MEMO_MAX_VALUES = 1 << 16;

const memoArgCache = new WeakMap<CallExpr, number>();
/**
 * For a pure call whose arguments are one STRING expression and literals,
 * that expression's index (else -1): the call can be computed once per
 * distinct string (`LOWER(s)`, `REGEXP_CONTAINS(s, r'..')`, `s LIKE 'a%'`).
 */
function memoArg(e: CallExpr): number {
  let r = memoArgCache.get(e);
  if (r !== undefined) return r;
  r = -1;
  if (e.fn.pure && !e.safe && MEMO_RESULTS.has(e.type.kind)) {
    for (let i = 0; i < e.args.length; i++) {
      const a = e.args[i]!;
      if (a.kind === 'literal') continue;
      if (r !== -1 || a.kind === 'lambda' || a.type.kind !== 'STRING') {
        r = -1;
        break;
      }
      r = i;
    }
  }
  memoArgCache.set(e, r);
  return r;
}

function memoOf(ctx: ExecContext, e: CallExpr): ValueMemo {
  let m = ctx.shared.memos.get(e);
  if (!m) ctx.shared.memos.set(e, (m = { results: new Map(), rows: 0, off: false }));
  return m;
}

/**
 * Evaluates `e` through its memo: rows whose value was seen take the stored
 * result; the kernel runs once on the batch's new distinct values, in their
 * order of first appearance (so an error names the same value the batch
 * would). Results are the kernel's own, shared between equal inputs. Once
 * values prove mostly distinct (or too many), the memo turns off for the
 * statement and the call runs as usual.
 */
function memoCall(e: CallExpr, m: number, x: Vector, memo: ValueMemo, env: Env): Vector {
  const n = x.length;
  const xs = x.data as Value[];
  const xn = x.nulls;
  const results = memo.results;
  const out = new Array<Value>(n);
  let missing: Value[] | null = null;
  let missRows: Int32Array | null = null;
  let misses = 0;
  for (let i = 0; i < n; i++) {
    const key = xn !== null && xn[i] === 1 ? null : xs[i]!;
    const r = results.get(key);
    if (r !== undefined) out[i] = r;
    else {
      missRows ??= new Int32Array(n);
      missRows[misses++] = i;
    }
  }
  if (misses > 0) {
    // The batch's new values, distinct, in order of first appearance.
    const seen = new Set<Value>();
    missing = [];
    for (let j = 0; j < misses; j++) {
      const i = missRows![j]!;
      const key = xn !== null && xn[i] === 1 ? null : xs[i]!;
      if (!seen.has(key)) {
        seen.add(key);
        missing.push(key);
      }
    }
    const k = missing.length;
    const none: Batch = { length: k, columns: [] };
    const args = e.args.map((a, i) => (i === m ? vectorFromValues(x.type, missing!) : evalExpr(a, none, EMPTY_LAYOUT, env)));
    const r = e.fn.kernel(args, k, env.ctx.eval);
    for (let j = 0; j < k; j++) results.set(missing[j]!, getValue(r, j));
    for (let j = 0; j < misses; j++) {
      const i = missRows![j]!;
      out[i] = results.get(xn !== null && xn[i] === 1 ? null : xs[i]!)!;
    }
  }
  memo.rows += n;
  // Not judged on the first batches: a column cycling through 10,000 values in table order has 10,000 new ones first.
  if (results.size > MEMO_MAX_VALUES || (memo.rows >= MEMO_TRIAL_ROWS && results.size * 2 > memo.rows)) {
    memo.off = true;
    results.clear();
  }
  return vectorFromValues(e.type, out);
}

const EMPTY_LAYOUT: ColumnLayout = new Map();

function applyCall(e: CallExpr, args: Vector[], batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const n = batch.length;
  if (!e.safe) return e.fn.kernel(args, n, env.ctx.eval);
  try {
    return e.fn.kernel(args, n, env.ctx.eval);
  } catch (err) {
    // A query out of time or memory (a UDF's CPU or heap limit) fails whole: SAFE. covers the function's own errors only.
    if (err instanceof QueryError && err.message.startsWith('Resources exceeded')) throw err;
    // SAFE.: redo row by row and turn only the failing rows into NULL.
    const out: Value[] = new Array(n);
    const one = new Int32Array(1);
    for (let i = 0; i < n; i++) {
      one[0] = i;
      const rowArgs = e.args.map((a, k) =>
        a.kind === 'lambda' ? lambdaVector(a, batch, layout, env, 1, Int32Array.of(i)) : takeVector(args[k]!, one, 1),
      );
      try {
        out[i] = getValue(e.fn.kernel(rowArgs, 1, env.ctx.eval), 0);
      } catch {
        out[i] = null;
      }
    }
    return vectorFromValues(e.type, out);
  }
}

function evalCast(e: CastExpr, batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const v = evalExpr(e.arg, batch, layout, env);
  const firstValue = (x: Expr | undefined): string | null | undefined => {
    if (!x || batch.length === 0) return undefined;
    const fv = getValue(evalExpr(x, batch, layout, env), 0);
    return fv === null ? null : String(fv);
  };
  const format = firstValue(e.format);
  const timeZone = firstValue(e.timeZone);
  // CAST ... FORMAT NULL / AT TIME ZONE NULL yields NULL.
  if (format === null || timeZone === null) return constantVector(e.type, null, batch.length);
  return castVector(v, e.type, { safe: e.safe, format, timeZone }, env.ctx.eval);
}

interface Part {
  sel: Int32Array;
  count: number;
  vec: Vector;
}

/** Evaluates `expr` on rows `sel` (absolute indexes) only. */
function evalOn(expr: Expr, batch: Batch, layout: ColumnLayout, env: Env, sel: Int32Array | null, count: number): Vector {
  if (sel === null) return evalExpr(expr, batch, layout, env);
  const [b, l, en] = restrict(expr, batch, layout, env, sel, count);
  return evalExpr(expr, b, l, en);
}

function allRows(n: number): Int32Array {
  const s = new Int32Array(n);
  for (let i = 0; i < n; i++) s[i] = i;
  return s;
}

function finishParts(type: SqlType, n: number, parts: Part[]): Vector {
  if (parts.length === 1 && parts[0]!.count === n) {
    const p = parts[0]!;
    let identity = true;
    for (let i = 0; i < n && identity; i++) if (p.sel[i] !== i) identity = false;
    if (identity) return p.vec;
  }
  return scatterVectors(type, n, parts);
}

/**
 * Splits the remaining rows (`rem`, null = every row in order) by a BOOL
 * evaluated on them: rows where it is TRUE, and the others (FALSE or NULL).
 */
function splitByCondition(cond: Vector, rem: Int32Array | null, remCount: number): { take: Int32Array; tc: number; rest: Int32Array; rc: number } {
  const cd = cond.data as Uint8Array;
  const cn = cond.nulls;
  const take = new Int32Array(remCount);
  const rest = new Int32Array(remCount);
  let tc = 0;
  let rc = 0;
  for (let j = 0; j < remCount; j++) {
    const row = rem === null ? j : rem[j]!;
    if (cd[j] === 1 && (cn === null || cn[j] === 0)) take[tc++] = row;
    else rest[rc++] = row;
  }
  return { take, tc, rest, rc };
}

/** Splits the remaining rows by a value's nulls: non-NULL rows (with their positions in the value, `takeLocal`), and NULL ones. */
function splitNonNull(nulls: Uint8Array, rem: Int32Array | null, remCount: number): { take: Int32Array; takeLocal: Int32Array; tc: number; rest: Int32Array; rc: number } {
  const take = new Int32Array(remCount);
  const takeLocal = new Int32Array(remCount);
  const rest = new Int32Array(remCount);
  let tc = 0;
  let rc = 0;
  for (let j = 0; j < remCount; j++) {
    const row = rem === null ? j : rem[j]!;
    if (nulls[j] === 0) {
      takeLocal[tc] = j;
      take[tc++] = row;
    } else rest[rc++] = row;
  }
  return { take, takeLocal, tc, rest, rc };
}

function evalCase(e: ConditionalExpr, batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const n = batch.length;
  let rem: Int32Array | null = null; // null = every row, in order
  let remCount = n;
  const parts: Part[] = [];
  for (let k = 0; k < e.whens.length && remCount > 0; k++) {
    const cond = evalOn(e.whens[k]!, batch, layout, env, rem, remCount);
    const { take, tc, rest, rc } = splitByCondition(cond, rem, remCount);
    if (tc > 0) {
      const all = tc === n;
      parts.push({ sel: all ? allRows(n) : take, count: tc, vec: evalOn(e.thens[k]!, batch, layout, env, all ? null : take, tc) });
    }
    rem = rest;
    remCount = rc;
  }
  if (remCount > 0 && e.else) {
    const all = remCount === n;
    parts.push({ sel: rem ?? allRows(n), count: remCount, vec: evalOn(e.else, batch, layout, env, all ? null : rem, remCount) });
  }
  return finishParts(e.type, n, parts);
}

function evalCoalesce(e: ConditionalExpr, batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const n = batch.length;
  let rem: Int32Array | null = null;
  let remCount = n;
  const parts: Part[] = [];
  const args = e.thens;
  for (let k = 0; k < args.length && remCount > 0; k++) {
    const v = evalOn(args[k]!, batch, layout, env, rem, remCount);
    if (k === args.length - 1 || v.nulls === null) {
      parts.push({ sel: rem ?? allRows(n), count: remCount, vec: v });
      remCount = 0;
      break;
    }
    const { take, takeLocal, tc, rest, rc } = splitNonNull(v.nulls, rem, remCount);
    if (tc > 0) parts.push({ sel: take, count: tc, vec: takeVector(v, takeLocal, tc) });
    rem = rest;
    remCount = rc;
  }
  return finishParts(e.type, n, parts);
}

/**
 * Functions whose kernels never raise, whatever their (error-free) arguments:
 * comparisons and NULL tests. An AND/OR of such operands (over columns and
 * literals) needs no short-circuit to stay error-free.
 */
const NEVER_RAISE = new Set(['$equal', '$not_equal', '$less', '$less_or_equal', '$greater', '$greater_or_equal', '$between', '$is_null', '$is_true', '$is_false', '$is_distinct_from', '$is_not_distinct_from']);

const neverRaisesCache = new WeakMap<Expr, boolean>();
/** Whether evaluating `e` can never raise an error (so it may run on rows a short-circuit would skip). */
function neverRaises(e: Expr): boolean {
  let r = neverRaisesCache.get(e);
  if (r !== undefined) return r;
  switch (e.kind) {
    case 'column':
    case 'literal':
      r = true;
      break;
    case 'call':
      r = !e.safe && NEVER_RAISE.has(e.name) && e.args.every(neverRaises);
      break;
    case 'logical':
      r = e.args.every(neverRaises);
      break;
    default:
      r = false;
  }
  neverRaisesCache.set(e, r);
  return r;
}

/**
 * AND/OR of operands that never raise: every operand on every row, combined
 * with typed loops (three-valued). `a >= x AND a <= y` costs two comparison
 * loops instead of a selection, a take of `a` and a scatter.
 */
function evalLogicalDense(e: LogicalExpr, batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const n = batch.length;
  const isAnd = e.op === 'and';
  // decided[i]: some operand has the dominant value (FALSE for AND, TRUE for OR); unknown[i]: some operand is NULL.
  const decided = new Uint8Array(n);
  let unknown: Uint8Array | null = null;
  for (const a of e.args) {
    const v = evalExpr(a, batch, layout, env);
    if (v.nulls !== null) unknown ??= new Uint8Array(n);
    combineDominant(v.data as Uint8Array, v.nulls, isAnd ? 0 : 1, n, decided, unknown);
  }
  // AND: TRUE unless decided (FALSE) or unknown; OR: TRUE when decided.
  const data = isAnd ? new Uint8Array(n) : decided;
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (decided[i] === 1) continue;
    if (unknown !== null && unknown[i] === 1) (nulls ??= new Uint8Array(n))[i] = 1;
    else if (isAnd) data[i] = 1;
  }
  return { type: e.type, length: n, data, nulls };
}

function combineDominant(d: Uint8Array, nulls: Uint8Array | null, dominant: number, n: number, decided: Uint8Array, unknown: Uint8Array | null): void {
  if (nulls === null) {
    for (let i = 0; i < n; i++) decided[i] |= d[i] === dominant ? 1 : 0;
    return;
  }
  for (let i = 0; i < n; i++) {
    if (nulls[i] === 1) unknown![i] = 1;
    else decided[i] |= d[i] === dominant ? 1 : 0;
  }
}

/** Three-valued AND/OR with short-circuit by selection; NOT. */
function evalLogical(e: LogicalExpr, batch: Batch, layout: ColumnLayout, env: Env): Vector {
  const n = batch.length;
  if (e.op === 'not') return logicalNot(e.type, n, evalExpr(e.args[0]!, batch, layout, env));
  if (neverRaises(e)) return evalLogicalDense(e, batch, layout, env);
  const f = logicalStart(e, n, evalExpr(e.args[0]!, batch, layout, env));
  for (let k = 1; k < e.args.length && f.remCount > 0; k++) {
    const all = f.remCount === n;
    logicalStep(f, evalOn(e.args[k]!, batch, layout, env, all ? null : f.rem, f.remCount));
  }
  return logicalEnd(f);
}

function logicalNot(type: SqlType, n: number, v: Vector): Vector {
  const d = v.data as Uint8Array;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = d[i]! ^ 1;
  return { type, length: n, data: out, nulls: v.nulls };
}

/**
 * An AND/OR evaluated argument by argument: the rows not yet decided (`rem`)
 * are the only ones the next argument is evaluated on, so an argument that
 * would raise on a decided row never sees it.
 */
interface LogicalFold {
  type: SqlType;
  n: number;
  /** FALSE for AND, TRUE for OR: the value that decides a row. */
  dominant: number;
  data: Uint8Array;
  nulls: Uint8Array | null;
  rem: Int32Array;
  remCount: number;
}

function logicalStart(e: LogicalExpr, n: number, first: Vector): LogicalFold {
  const dominant = e.op === 'and' ? 0 : 1;
  const data = new Uint8Array(n);
  let nulls: Uint8Array | null = null;
  const fd = first.data as Uint8Array;
  const fn = first.nulls;
  const rem = new Int32Array(n);
  let remCount = 0;
  for (let i = 0; i < n; i++) {
    if (fn !== null && fn[i] === 1) {
      nulls ??= new Uint8Array(n);
      nulls[i] = 1;
      rem[remCount++] = i;
    } else {
      data[i] = fd[i]!;
      if (fd[i] !== dominant) rem[remCount++] = i;
    }
  }
  return { type: e.type, n, dominant, data, nulls, rem, remCount };
}

/** Folds in the next argument's values `v`, one per row of `f.rem`. */
function logicalStep(f: LogicalFold, v: Vector): void {
  const vd = v.data as Uint8Array;
  const vn = v.nulls;
  const next = new Int32Array(f.remCount);
  let nc = 0;
  for (let j = 0; j < f.remCount; j++) {
    const row = f.rem[j]!;
    if (vn !== null && vn[j] === 1) {
      f.nulls ??= new Uint8Array(f.n);
      f.nulls[row] = 1;
      next[nc++] = row;
    } else if (vd[j] === f.dominant) {
      f.data[row] = f.dominant;
      if (f.nulls) f.nulls[row] = 0;
    } else next[nc++] = row;
  }
  f.rem = next;
  f.remCount = nc;
}

function logicalEnd(f: LogicalFold): Vector {
  if (f.nulls) for (let i = 0; i < f.n; i++) if (f.nulls[i] === 1) f.data[i] = 0;
  return { type: f.type, length: f.n, data: f.data, nulls: f.nulls };
}

// Async twins of evalCase / evalCoalesce / evalLogical for expressions with subqueries (see evalAsync).
async function caseWith(e: ConditionalExpr, n: number, on: (x: Expr, sel: Int32Array | null, count: number) => Promise<Vector>): Promise<Vector> {
  let rem: Int32Array | null = null; // null = every row, in order
  let remCount = n;
  const parts: Part[] = [];
  for (let k = 0; k < e.whens.length && remCount > 0; k++) {
    const cond = await on(e.whens[k]!, rem, remCount);
    const { take, tc, rest, rc } = splitByCondition(cond, rem, remCount);
    if (tc > 0) {
      const all = tc === n;
      parts.push({ sel: all ? allRows(n) : take, count: tc, vec: await on(e.thens[k]!, all ? null : take, tc) });
    }
    rem = rest;
    remCount = rc;
  }
  if (remCount > 0 && e.else) {
    const all = remCount === n;
    parts.push({ sel: rem ?? allRows(n), count: remCount, vec: await on(e.else, all ? null : rem, remCount) });
  }
  return finishParts(e.type, n, parts);
}

async function coalesceWith(e: ConditionalExpr, n: number, on: (x: Expr, sel: Int32Array | null, count: number) => Promise<Vector>): Promise<Vector> {
  let rem: Int32Array | null = null;
  let remCount = n;
  const parts: Part[] = [];
  const args = e.thens;
  for (let k = 0; k < args.length && remCount > 0; k++) {
    const v = await on(args[k]!, rem, remCount);
    if (k === args.length - 1 || v.nulls === null) {
      parts.push({ sel: rem ?? allRows(n), count: remCount, vec: v });
      remCount = 0;
      break;
    }
    const { take, takeLocal, tc, rest, rc } = splitNonNull(v.nulls, rem, remCount);
    if (tc > 0) parts.push({ sel: take, count: tc, vec: takeVector(v, takeLocal, tc) });
    rem = rest;
    remCount = rc;
  }
  return finishParts(e.type, n, parts);
}

async function logicalWith(e: LogicalExpr, n: number, on: (x: Expr, sel: Int32Array | null, count: number) => Promise<Vector>): Promise<Vector> {
  if (e.op === 'not') return logicalNot(e.type, n, await on(e.args[0]!, null, n));
  const f = logicalStart(e, n, await on(e.args[0]!, null, n));
  for (let k = 1; k < e.args.length && f.remCount > 0; k++) {
    const all = f.remCount === n;
    logicalStep(f, await on(e.args[k]!, all ? null : f.rem, f.remCount));
  }
  return logicalEnd(f);
}

// ---------------------------------------------------------------- lambdas

/**
 * How a lambda argument reaches a function kernel (ARRAY_FILTER,
 * ARRAY_TRANSFORM, ...): the kernel receives a vector whose `data[0]` is this
 * handle (use `lambdaOf(vector)`). The kernel flattens the array elements of
 * all rows, calls `invoke(params, rows)` where `params[k]` holds the k-th
 * lambda parameter per element and `rows[j]` is the kernel row element j
 * belongs to (so the body can read that row's columns), and gets the body's
 * value per element back.
 */
export interface LambdaHandle {
  readonly kind: 'lambda';
  readonly lambda: LambdaExpr;
  invoke(params: readonly Vector[], rows: Int32Array): Vector;
}

export function lambdaOf(v: Vector): LambdaHandle {
  const h = (v.data as unknown[])[0] as LambdaHandle | undefined;
  if (!h || h.kind !== 'lambda') throw new Error('executor: argument is not a lambda');
  return h;
}

function lambdaVector(lambda: LambdaExpr, batch: Batch, layout: ColumnLayout, env: Env, n: number, rowMap: Int32Array | null): Vector {
  const handle: LambdaHandle = {
    kind: 'lambda',
    lambda,
    invoke(params, rows) {
      const outerRows = rowMap === null ? rows : Int32Array.from(rows, (r) => rowMap[r]!);
      return invokeLambda(lambda, params, batch, layout, env, outerRows);
    },
  };
  return { type: lambda.type, length: n, data: [handle as unknown as Value], nulls: null };
}

function invokeLambda(lambda: LambdaExpr, params: readonly Vector[], batch: Batch, layout: ColumnLayout, env: Env, rows: Int32Array): Vector {
  const m = rows.length;
  const cols: Vector[] = [];
  const lay = new Map<number, number>();
  const paramIds = new Set(lambda.params.map((p) => p.id));
  for (const id of readIds(lambda.body, env.ctx)) {
    const idx = layout.get(id);
    if (idx === undefined || paramIds.has(id)) continue;
    lay.set(id, cols.length);
    cols.push(takeVector(batch.columns[idx]!, rows, m));
  }
  lambda.params.forEach((p, k) => {
    lay.set(p.id, cols.length);
    cols.push(params[k]!);
  });
  let subq: Map<SubqueryExpr, Vector> | null = null;
  if (env.subq) {
    subq = new Map();
    for (const [s, v] of env.subq) subq.set(s, takeVector(v, rows, m));
  }
  return evalExpr(lambda.body, { length: m, columns: cols }, lay, { ctx: env.ctx, subq });
}

/** Evaluates a lambda's body for `args` (one vector per parameter) outside any batch. */
export function evaluateLambda(lambda: LambdaExpr, args: readonly Vector[], ctx: ExecContext): Vector {
  const m = args[0]?.length ?? 0;
  return invokeLambda(lambda, args, { length: 0, columns: [] }, new Map(), { ctx, subq: null }, new Int32Array(m));
}

// ---------------------------------------------------------------- subqueries

interface InSet {
  readonly table: GroupTable;
  readonly hasNull: boolean;
  readonly empty: boolean;
  /**
   * STRUCT/ARRAY sets whose elements hold NULLs inside: their values, for a
   * three-valued scan (the hash table groups NULL fields together, SQL = does not).
   */
  readonly composite?: Value[];
  readonly innerNull?: boolean;
}

/** A NULL anywhere inside a STRUCT/ARRAY value. */
function hasInnerNull(v: Value): boolean {
  return Array.isArray(v) && v.some((e) => e === null || hasInnerNull(e));
}

type SubResult = Value | InSet;

/** Runs of subquery plans (tests: a correlated subquery runs once per distinct binding of the columns it reads). */
export const subqueryCounters = { runs: 0 };

async function runSubquery(s: SubqueryExpr, ctx: ExecContext): Promise<SubResult> {
  subqueryCounters.runs++;
  const plan = s.plan;
  switch (s.mode) {
    case 'exists': {
      for await (const b of executeRel(plan, ctx)) if (b.length > 0) return true;
      return false;
    }
    case 'scalar': {
      let found: Value = null;
      let rows = 0;
      for await (const b of executeRel(plan, ctx)) {
        if (b.length === 0) continue;
        rows += b.length;
        if (rows > 1) throw new QueryError('Scalar subquery produced more than one element');
        found = getValue(b.columns[0]!, 0);
      }
      return found;
    }
    case 'array': {
      const out: Value[] = [];
      // One value of one row: past the service's row limit it fails, as there (not as V8 running out of heap).
      let bytes = 0;
      for await (const b of executeRel(plan, ctx)) {
        const c = b.columns[0]!;
        for (let i = 0; i < b.length; i++) {
          const v = getValue(c, i);
          if ((bytes += approxBytes(v)) > MAX_ROW_BYTES) throw rowTooLarge();
          out.push(v);
        }
      }
      return out;
    }
    case 'in': {
      const type = plan.columns[0]!.type;
      const table = new GroupTable([type], 64);
      let hasNull = false;
      let empty = true;
      let groups = new Int32Array(0);
      const composite = type.kind === 'STRUCT' || type.kind === 'ARRAY' ? ([] as Value[]) : undefined;
      let innerNull = false;
      for await (const b of executeRel(plan, ctx)) {
        if (b.length === 0) continue;
        empty = false;
        const c = b.columns[0]!;
        if (c.nulls) for (let i = 0; i < b.length; i++) if (c.nulls[i] === 1) hasNull = true;
        if (composite) {
          for (let i = 0; i < b.length; i++) {
            const v = getValue(c, i);
            composite.push(v);
            if (hasInnerNull(v)) innerNull = true;
          }
        }
        if (groups.length < b.length) groups = new Int32Array(b.length);
        table.findOrInsert([c], b.length, groups);
      }
      return { table, hasNull, empty, ...(composite ? { composite, innerNull } : {}) };
    }
  }
}

function subqueryResultType(s: SubqueryExpr): SqlType {
  return s.type;
}

/** The subquery's value for every row of the batch. */
async function evaluateSubquery(s: SubqueryExpr, batch: Batch, layout: ColumnLayout, ctx: ExecContext): Promise<Vector> {
  const n = batch.length;
  const inVec = s.mode === 'in' && s.inExpr ? await evaluate(s.inExpr, batch, layout, ctx) : null;
  if (s.correlatedColumns.length === 0) {
    let p = ctx.shared.uncorrelated.get(s) as Promise<SubResult> | undefined;
    if (!p) {
      p = runSubquery(s, ctx);
      ctx.shared.uncorrelated.set(s, p);
    }
    const r = await p;
    if (s.mode === 'in') return probeIn(r as InSet, inVec!, null, s.type);
    return constantVector(subqueryResultType(s), r as Value, n);
  }
  // Over the rows' arrays: one run for the whole batch.
  if (s.mode !== 'in') {
    const v = await batchedSubquery(s, batch, layout, ctx);
    if (v) return v;
  }
  // Correlated: one run per distinct binding of the correlated columns, cached for the statement.
  let cache = ctx.shared.correlated.get(s) as Map<string, SubResult> | undefined;
  if (!cache) {
    cache = new Map();
    ctx.shared.correlated.set(s, cache);
  }
  const bindCols = s.correlatedColumns.map((id) => outerColumn(id, batch, layout, ctx));
  const perRow: SubResult[] = new Array(n);
  const vals: Value[] = new Array(s.correlatedColumns.length);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < vals.length; k++) {
      const col = bindCols[k];
      vals[k] = col ? getValue(col, i) : ctx.outer.get(s.correlatedColumns[k]!) ?? null;
    }
    const key = tupleKey(vals);
    let r = cache.get(key);
    if (r === undefined) {
      const outer = new Map(ctx.outer);
      s.correlatedColumns.forEach((id, k) => outer.set(id, vals[k]!));
      r = await runSubquery(s, { ...ctx, outer, outerRows: undefined });
      cache.set(key, r);
    }
    perRow[i] = r;
  }
  if (s.mode === 'in') return probeIn(null, inVec!, perRow as InSet[], s.type);
  return vectorFromValues(subqueryResultType(s), perRow as Value[]);
}

/** `x IN (subquery)`: TRUE if found; else NULL when x is NULL or the set holds NULL (non-empty set); else FALSE. */
function probeIn(one: InSet | null, x: Vector, perRow: InSet[] | null, type: SqlType): Vector {
  const n = x.length;
  const data = new Uint8Array(n);
  let nulls: Uint8Array | null = null;
  const g = new Int32Array(1);
  const one1 = new Int32Array(1);
  const all = new Int32Array(n);
  if (one) one.table.lookup([x], n, all);
  for (let i = 0; i < n; i++) {
    const set = one ?? perRow![i]!;
    if (set.empty) continue;
    let found: boolean;
    if (one) found = all[i]! >= 0;
    else {
      one1[0] = i;
      set.table.lookup([takeVector(x, one1, 1)], 1, g);
      found = g[0]! >= 0;
    }
    const xNull = x.nulls !== null && x.nulls[i] === 1;
    if (set.composite && !xNull && (set.innerNull || hasInnerNull(getValue(x, i)))) {
      // STRUCT/ARRAY with NULLs inside (probe or set): SQL equality, element by element.
      const xv = getValue(x, i);
      let r: boolean | null = false;
      for (const e of set.composite) {
        const q = sqlEquals(xv, e);
        if (q === true) {
          r = true;
          break;
        }
        if (q === null) r = null;
      }
      if (r === true) data[i] = 1;
      else if (r === null) {
        nulls ??= new Uint8Array(n);
        nulls[i] = 1;
      }
      continue;
    }
    // NaN = NaN is FALSE in SQL, though the set groups NaNs together.
    const isNaN = !xNull && x.type.kind === 'FLOAT64' && Number.isNaN((x.data as Float64Array)[i]);
    if (found && !xNull && !isNaN) data[i] = 1;
    else if (xNull || set.hasNull) {
      nulls ??= new Uint8Array(n);
      nulls[i] = 1;
    }
  }
  return { type, length: n, data, nulls };
}

