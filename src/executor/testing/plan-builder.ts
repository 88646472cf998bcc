// Test helpers: build resolved plans by hand, with small stand-in kernels and
// accumulators (the real ones live in src/functions; these only exist so the
// executor can be tested on its own).
import type {
  AggregateCall,
  CallExpr,
  ColumnRefExpr,
  Expr,
  LiteralExpr,
  ResolvedColumn,
  ScanRel,
} from '../../analyzer/resolved.js';
import type { GroupsAccumulator, ResolvedAggregate, ResolvedScalar, ScalarKernel } from '../../functions/registry.js';
import { QueryError, type QueryContext } from '../../planner/api.js';
import type { QueryCatalog, TableId } from '../../storage/api.js';
import { T, arrayOf, type SqlType } from '../../types/types.js';
import type { Value } from '../../types/values.js';
import { getValue, vectorFromValues, type Batch, type Vector } from '../../types/vector.js';
import { makeExecContext, type ExecContext } from '../context.js';
import { compareValues, valuesEqual } from '../values-compare.js';

let nextId = 1;
export function col(name: string, type: SqlType): ResolvedColumn {
  return { id: nextId++, name, type };
}
export function ref(c: ResolvedColumn, correlated = false): ColumnRefExpr {
  return { kind: 'column', type: c.type, columnId: c.id, correlated };
}
export function lit(value: Value, type: SqlType): LiteralExpr {
  return { kind: 'literal', type, value };
}

function scalarFn(returnType: SqlType, argTypes: SqlType[], kernel: ScalarKernel): ResolvedScalar {
  return { returnType, argTypes, kernel };
}

/** Row-wise kernel helper (tests only: speed doesn't matter here). */
function rowKernel(type: SqlType, f: (args: Value[]) => Value): ScalarKernel {
  return (args, n) => {
    const out: Value[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = f(args.map((a) => getValue(a, i)));
    return vectorFromValues(type, out);
  };
}

export function call(name: string, type: SqlType, args: Expr[], f: (args: Value[]) => Value, safe = false): CallExpr {
  return { kind: 'call', type, name, args, fn: scalarFn(type, args.map((a) => a.type), rowKernel(type, f)), safe };
}

const strict = (f: (args: Value[]) => Value) => (a: Value[]) => (a.some((x) => x === null) ? null : f(a));

export const eq = (a: Expr, b: Expr): CallExpr => call('$equal', T.BOOL, [a, b], strict(([x, y]) => valuesEqual(x!, y!, a.type)));
export const lt = (a: Expr, b: Expr): CallExpr => call('$less', T.BOOL, [a, b], strict(([x, y]) => compareValues(x!, y!, a.type) < 0));
export const gt = (a: Expr, b: Expr): CallExpr => call('$greater', T.BOOL, [a, b], strict(([x, y]) => compareValues(x!, y!, a.type) > 0));
export const isNullE = (a: Expr): CallExpr => call('$is_null', T.BOOL, [a], ([x]) => x === null);
export const add = (a: Expr, b: Expr): CallExpr =>
  call('$add', a.type, [a, b], strict(([x, y]) => (typeof x === 'bigint' ? x + (y as bigint) : (x as number) + (y as number))));
export const div = (a: Expr, b: Expr, safe = false): CallExpr =>
  call(
    '$divide',
    T.FLOAT64,
    [a, b],
    strict(([x, y]) => {
      const d = Number(y);
      if (d === 0) throw new QueryError(`division by zero: ${String(x)} / ${String(y)}`);
      return Number(x) / d;
    }),
    safe,
  );

// ---------------------------------------------------------------- aggregates

class RowAcc implements GroupsAccumulator {
  states: Value[][][] = [];
  constructor(
    private readonly type: SqlType,
    private readonly fin: (vals: Value[][]) => Value,
    private readonly countStar = false,
  ) {}
  resize(n: number): void {
    while (this.states.length < n) this.states.push([]);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    for (let i = 0; i < n; i++) this.states[groups[i]!]!.push(this.countStar ? [true] : args.map((a) => getValue(a, i)));
  }
  finish(n: number): Vector {
    this.resize(n);
    return vectorFromValues(this.type, this.states.slice(0, n).map((s) => this.fin(s)));
  }
}

function aggFn(returnType: SqlType, fin: (vals: Value[][]) => Value, countStar = false): ResolvedAggregate {
  return { returnType, argTypes: [], create: () => new RowAcc(returnType, fin, countStar) };
}

const nonNull = (v: Value[][]): Value[] => v.map((r) => r[0]!).filter((x) => x !== null);

export const AGG = {
  sum: (t: SqlType): ResolvedAggregate =>
    aggFn(t, (v) => {
      const xs = nonNull(v);
      if (xs.length === 0) return null;
      return t.kind === 'INT64' ? xs.reduce((s: bigint, x) => s + (x as bigint), 0n) : xs.reduce((s: number, x) => s + (x as number), 0);
    }),
  count: (): ResolvedAggregate => aggFn(T.INT64, (v) => BigInt(nonNull(v).length)),
  countStar: (): ResolvedAggregate => aggFn(T.INT64, (v) => BigInt(v.length), true),
  min: (t: SqlType): ResolvedAggregate =>
    aggFn(t, (v) => nonNull(v).reduce<Value>((m, x) => (m === null || compareValues(x, m, t) < 0 ? x : m), null)),
  max: (t: SqlType): ResolvedAggregate =>
    aggFn(t, (v) => nonNull(v).reduce<Value>((m, x) => (m === null || compareValues(x, m, t) > 0 ? x : m), null)),
  arrayAgg: (t: SqlType): ResolvedAggregate => aggFn(arrayOf(t), (v) => v.map((r) => r[0]!)),
};

export function agg(column: ResolvedColumn, name: string, fn: ResolvedAggregate, args: Expr[], extra: Partial<AggregateCall> = {}): AggregateCall {
  return { column, name, fn, args, distinct: false, ignoreNulls: undefined, orderBy: [], ...extra };
}

// ---------------------------------------------------------------- running

export const TABLE = (tableId: string): TableId => ({ projectId: 'p', datasetId: 'd', tableId });

export function scan(tableId: string, columns: ResolvedColumn[], tableColumns?: number[]): ScanRel {
  return { kind: 'scan', table: TABLE(tableId), columns, tableColumns: tableColumns ?? columns.map((_, i) => i) };
}

export function testContext(catalog: QueryCatalog, signal: AbortSignal = new AbortController().signal): ExecContext {
  const q: QueryContext = {
    sql: '',
    projectId: 'p',
    params: { named: new Map(), positional: [] },
    catalog,
    jobId: 'job',
    signal,
    dryRun: false,
    nowMicros: 0n,
    sessionUser: 'test@example.com',
  };
  return makeExecContext(q);
}

/** Rows of the batches as arrays of scalar values (INT64 as bigint). */
export function rowsOf(batches: readonly Batch[]): Value[][] {
  const out: Value[][] = [];
  for (const b of batches) for (let i = 0; i < b.length; i++) out.push(b.columns.map((c) => getValue(c, i)));
  return out;
}
