// Plans and batches in a form that crosses to a worker thread (structured
// clone): function calls carry how they were resolved (registry.ts
// `Resolution`) instead of their kernels, and are resolved again on the other
// side; values that are class instances (NUMERIC, JSON, ...) travel in their
// storage form (storage/codec.ts). A plan holding anything else (subqueries,
// UDFs, volatile functions, relation kinds a worker does not run) is not
// encodable: encode* throw Unencodable and the caller runs it on the main thread.
import type { AggregateCall, Expr, Rel, SortKey } from '../../analyzer/resolved.js';
import { lookupFunction, replayResolution, resolutionOf, type ArgInfo, type ResolvedAggregate, type ResolvedScalar, type Resolution } from '../../functions/registry.js';
import { fromStored, toStored, type Stored } from '../../storage/codec.js';
import type { SqlType } from '../../types/types.js';
import type { Value } from '../../types/values.js';
import { decimalVector, intervalVector, rangeVector, type Batch, type Vector } from '../../types/vector.js';
import type { DecimalWidth } from '../../types/decimal-words.js';

export class Unencodable extends Error {}

/** A table's name as a plan's row counts are keyed (EncodedPlan.rowCounts). */
export const tableKey = (t: { projectId: string; datasetId: string; tableId: string }): string => `${t.projectId}\u0000${t.datasetId}\u0000${t.tableId}`;

/** A literal or constant: null, or its storage form. */
type EncodedValue = { readonly n: true } | { readonly s: Stored };

interface EncodedResolution {
  readonly name: string;
  readonly args: readonly (Omit<ArgInfo, 'constant'> & { constant?: EncodedValue })[];
  readonly opts?: Resolution['opts'];
}

/** An Expr or Rel with calls' `fn` as EncodedResolution and literal values as EncodedValue (same shape otherwise). */
export type Encoded = { readonly kind: string; readonly [k: string]: unknown };

function encodeValue(t: SqlType, v: Value): EncodedValue {
  return v === null ? { n: true } : { s: toStored(t, v) };
}

function decodeValue(t: SqlType, v: EncodedValue): Value {
  return 'n' in v ? null : fromStored(t, v.s);
}

function encodeResolution(fn: ResolvedScalar | ResolvedAggregate): EncodedResolution {
  const r = resolutionOf(fn);
  if (!r) throw new Unencodable('a call resolved outside the registry');
  const def = lookupFunction(r.name);
  if (!def || (def.kind === 'scalar' && def.volatile)) throw new Unencodable(`${r.name} cannot run in another thread`);
  return {
    name: r.name,
    args: r.args.map((a) => (a.constant ? { ...a, constant: encodeValue(a.type, a.constant.value) } : (a as Omit<ArgInfo, 'constant'>))),
    ...(r.opts ? { opts: r.opts } : {}),
  };
}

function decodeResolution(e: EncodedResolution): ResolvedScalar | ResolvedAggregate {
  const args: ArgInfo[] = e.args.map((a) => (a.constant ? { ...a, constant: { value: decodeValue(a.type, a.constant) } } : (a as ArgInfo)));
  const fn = replayResolution({ name: e.name, args, ...(e.opts ? { opts: e.opts } : {}) });
  if (!fn) throw new Error(`${e.name} does not resolve in this thread`);
  return fn;
}

// ---------------------------------------------------------------- expressions

const opt = <T, U>(x: T | undefined, f: (x: T) => U): U | undefined => (x === undefined ? undefined : f(x));

export function encodeExpr(e: Expr): Encoded {
  switch (e.kind) {
    case 'literal':
      return { ...e, value: encodeValue(e.type, e.value) };
    case 'column':
      return { ...e };
    case 'call':
      return { ...e, fn: encodeResolution(e.fn), args: e.args.map(encodeExpr) };
    case 'cast':
      return { ...e, arg: encodeExpr(e.arg), format: opt(e.format, encodeExpr), timeZone: opt(e.timeZone, encodeExpr) };
    case 'conditional':
      return { ...e, whens: e.whens.map(encodeExpr), thens: e.thens.map(encodeExpr), else: opt(e.else, encodeExpr) };
    case 'logical':
      return { ...e, args: e.args.map(encodeExpr) };
    case 'make_struct':
      return { ...e, fields: e.fields.map(encodeExpr) };
    case 'make_array':
      return { ...e, elements: e.elements.map(encodeExpr) };
    case 'field':
      return { ...e, arg: encodeExpr(e.arg) };
    case 'lambda':
      return { ...e, body: encodeExpr(e.body) };
    case 'subquery':
      throw new Unencodable('a subquery');
  }
}

/** Drops the keys encode set to undefined (optional members absent, as the analyzer leaves them). */
function clean<T extends object>(o: T): T {
  for (const k of Object.keys(o)) if ((o as Record<string, unknown>)[k] === undefined) delete (o as Record<string, unknown>)[k];
  return o;
}

export function decodeExpr(x: Encoded): Expr {
  const e = x as unknown as Expr & Record<string, unknown>;
  const d = (v: unknown): Expr => decodeExpr(v as Encoded);
  const od = (v: unknown): Expr | undefined => (v === undefined ? undefined : d(v));
  const ds = (v: unknown): Expr[] => (v as Encoded[]).map(decodeExpr);
  switch (e.kind) {
    case 'literal':
      return { ...e, value: decodeValue(e.type, e.value as unknown as EncodedValue) };
    case 'column':
      return e;
    case 'call':
      return { ...e, fn: decodeResolution(e.fn as unknown as EncodedResolution) as ResolvedScalar, args: ds(e.args) };
    case 'cast':
      return clean({ ...e, arg: d(e.arg), format: od(e.format), timeZone: od(e.timeZone) });
    case 'conditional':
      return clean({ ...e, whens: ds(e.whens), thens: ds(e.thens), else: od(e.else) });
    case 'logical':
      return { ...e, args: ds(e.args) };
    case 'make_struct':
      return { ...e, fields: ds(e.fields) };
    case 'make_array':
      return { ...e, elements: ds(e.elements) };
    case 'field':
      return { ...e, arg: d(e.arg) };
    case 'lambda':
      return { ...e, body: d(e.body) };
    default:
      throw new Error(`cannot decode expression ${e.kind}`);
  }
}

// ---------------------------------------------------------------- relations

const encodeKey = (k: SortKey): Encoded => ({ ...k, kind: 'key', expr: encodeExpr(k.expr) });
const decodeKey = (k: Encoded): SortKey => {
  const { kind: _, ...rest } = k as unknown as SortKey & { kind: string };
  return { ...rest, expr: decodeExpr(k.expr as Encoded) };
};

function encodeCall(a: AggregateCall): Encoded {
  return {
    ...a,
    kind: 'agg',
    fn: encodeResolution(a.fn),
    args: a.args.map(encodeExpr),
    orderBy: a.orderBy.map(encodeKey),
    having: opt(a.having, (h) => ({ ...h, expr: encodeExpr(h.expr) })),
    filter: opt(a.filter, encodeExpr),
  };
}

function decodeCall(x: Encoded): AggregateCall {
  const { kind: _, ...a } = x as unknown as Record<string, unknown>;
  const having = a.having as { max: boolean; expr: Encoded } | undefined;
  return clean({
    ...(a as unknown as AggregateCall),
    fn: decodeResolution(a.fn as EncodedResolution) as ResolvedAggregate,
    args: (a.args as Encoded[]).map(decodeExpr),
    orderBy: (a.orderBy as Encoded[]).map(decodeKey),
    having: having ? { max: having.max, expr: decodeExpr(having.expr) } : undefined,
    filter: a.filter === undefined ? undefined : decodeExpr(a.filter as Encoded),
  });
}

/** Relations a worker runs: scans, filters, projections, hash joins, aggregates, sorts (top-N) and limits over them. */
export function encodeRel(r: Rel): Encoded {
  switch (r.kind) {
    case 'scan':
      return { ...r, pushedFilters: opt(r.pushedFilters, (fs) => fs.map(encodeExpr)) };
    case 'filter':
      return { ...r, input: encodeRel(r.input), predicate: encodeExpr(r.predicate) };
    case 'project':
      return { ...r, input: encodeRel(r.input), exprs: r.exprs.map(encodeExpr) };
    case 'aggregate':
      return { ...r, input: encodeRel(r.input), groupBy: r.groupBy.map((g) => ({ column: g.column, expr: encodeExpr(g.expr) })), aggregates: r.aggregates.map(encodeCall) };
    case 'sort':
      return { ...r, input: encodeRel(r.input), keys: r.keys.map(encodeKey) };
    case 'limit':
      return { ...r, input: encodeRel(r.input) };
    case 'join':
      return {
        ...r,
        left: encodeRel(r.left),
        right: encodeRel(r.right),
        condition: opt(r.condition, encodeExpr),
        equiKeys: opt(r.equiKeys, (ks) => ks.map((k) => ({ ...k, left: encodeExpr(k.left), right: encodeExpr(k.right) }))),
      };
    default:
      throw new Unencodable(`a ${r.kind} relation`);
  }
}

export function decodeRel(x: Encoded): Rel {
  const r = x as unknown as Rel & Record<string, unknown>;
  const input = (): Rel => decodeRel(r.input as Encoded);
  switch (r.kind) {
    case 'scan':
      return clean({ ...r, pushedFilters: r.pushedFilters === undefined ? undefined : (r.pushedFilters as unknown as Encoded[]).map(decodeExpr) });
    case 'filter':
      return { ...r, input: input(), predicate: decodeExpr(r.predicate as unknown as Encoded) };
    case 'project':
      return { ...r, input: input(), exprs: (r.exprs as unknown as Encoded[]).map(decodeExpr) };
    case 'aggregate':
      return {
        ...r,
        input: input(),
        groupBy: (r.groupBy as unknown as { column: AggregateCall['column']; expr: Encoded }[]).map((g) => ({ column: g.column, expr: decodeExpr(g.expr) })),
        aggregates: (r.aggregates as unknown as Encoded[]).map(decodeCall),
      };
    case 'sort':
      return { ...r, input: input(), keys: (r.keys as unknown as Encoded[]).map(decodeKey) };
    case 'limit':
      return { ...r, input: input() };
    case 'join': {
      const keys = r.equiKeys as unknown as { left: Encoded; right: Encoded; nullSafe: boolean }[] | undefined;
      return clean({
        ...r,
        left: decodeRel(r.left as unknown as Encoded),
        right: decodeRel(r.right as unknown as Encoded),
        condition: r.condition === undefined ? undefined : decodeExpr(r.condition as unknown as Encoded),
        equiKeys: keys?.map((k) => ({ ...k, left: decodeExpr(k.left), right: decodeExpr(k.right) })),
      });
    }
    default:
      throw new Error(`cannot decode relation ${r.kind}`);
  }
}

// ---------------------------------------------------------------- batches

/** Types whose values are primitives (or Uint8Array) that structured clone copies as they are. */
const PRIMITIVE = new Set(['INT64', 'FLOAT64', 'BOOL', 'STRING', 'BYTES', 'DATE', 'TIME', 'DATETIME', 'TIMESTAMP']);

export interface EncodedVector {
  readonly type: SqlType;
  readonly length: number;
  /** Typed arrays compact (their own buffer), values of other types in storage form. */
  readonly data: Vector['data'] | Stored[];
  readonly stored: boolean;
  readonly nulls: Uint8Array | null;
  /** NUMERIC / BIGNUMERIC rows as their decimal words (Vector.decimal; `data` then empty): copied, never boxed. */
  readonly decimal?: { readonly words: Uint32Array; readonly width: DecimalWidth };
  /** INTERVAL rows as their parts (Vector.interval), RANGE rows as their sides (Vector.range): copied, never boxed. */
  readonly interval?: { readonly months: Int32Array; readonly days: Int32Array; readonly micros: BigInt64Array };
  readonly range?: { readonly start: EncodedVector; readonly end: EncodedVector };
}

export interface EncodedBatch {
  readonly length: number;
  readonly columns: readonly EncodedVector[];
}

/**
 * A typed array that structured clone copies cheaply: a view's own copy
 * (cloning a view copies its whole buffer). Never transferred: detaching an
 * ArrayBuffer invalidates V8's ArrayBufferDetaching protector for the whole
 * thread, after which every optimized loop over typed arrays checks for
 * detached buffers (a worker's group-id and sum loops ran 20-30% slower from
 * its first transferred result on).
 */
function compact<A extends Float64Array | BigInt64Array | Int32Array | Uint8Array | Uint32Array>(a: A): A {
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : (a.slice() as A);
}

/** A batch for postMessage or v8.serialize (which copy it). */
export function encodeBatch(b: Batch): EncodedBatch {
  return { length: b.length, columns: b.columns.map(encodeVector) };
}

function encodeVector(v: Vector): EncodedVector {
  const nulls = v.nulls === null ? null : compact(v.nulls.subarray(0, v.length));
  if (v.decimal) {
    const { words, width } = v.decimal;
    return { type: v.type, length: v.length, data: [], stored: false, nulls, decimal: { words: compact(words.subarray(0, v.length * width)), width } };
  }
  if (v.interval) {
    const { months, days, micros } = v.interval;
    const n = v.length;
    return { type: v.type, length: n, data: [], stored: false, nulls, interval: { months: compact(months.subarray(0, n)), days: compact(days.subarray(0, n)), micros: compact(micros.subarray(0, n)) } };
  }
  if (v.range) return { type: v.type, length: v.length, data: [], stored: false, nulls, range: { start: encodeVector(v.range.start), end: encodeVector(v.range.end) } };
  const d = v.data;
  if (!Array.isArray(d)) return { type: v.type, length: v.length, data: compact(d.subarray(0, v.length)), stored: false, nulls };
  if (PRIMITIVE.has(v.type.kind)) return { type: v.type, length: v.length, data: d.slice(0, v.length), stored: false, nulls };
  const out: Stored[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = toStored(v.type, d[i] ?? null);
  return { type: v.type, length: v.length, data: out, stored: true, nulls };
}

export function decodeBatch(b: EncodedBatch): Batch {
  return { length: b.length, columns: b.columns.map(decodeVector) };
}

function decodeVector(v: EncodedVector): Vector {
  if (v.decimal) return decimalVector(v.type, v.length, v.nulls, v.decimal);
  if (v.interval) return intervalVector(v.type, v.length, v.nulls, v.interval);
  if (v.range) return rangeVector(v.type, v.length, v.nulls, { start: decodeVector(v.range.start), end: decodeVector(v.range.end) });
  if (!v.stored) return { type: v.type, length: v.length, data: v.data as Vector['data'], nulls: v.nulls };
  const s = v.data as Stored[];
  const data: Value[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) data[i] = v.nulls !== null && v.nulls[i] === 1 ? null : fromStored(v.type, s[i]);
  return { type: v.type, length: v.length, data, nulls: v.nulls };
}
