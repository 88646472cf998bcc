// JavaScript aggregate UDFs (CREATE AGGREGATE FUNCTION ... LANGUAGE js): the
// body exports initialState / aggregate / merge / finalize (serialize and
// deserialize are optional). One context per function per query; the group
// states live inside that context, and each batch of rows is folded into
// partial states that are merged into the groups' states, by one script run
// (under the CPU timeout). NOT AGGREGATE arguments are constants passed last
// to every function, as the real service does.
import vm from 'node:vm';
import { QueryError } from '../planner/api.js';
import type { AggregateFunctionDef, GroupsAccumulator, ResolvedAggregate } from '../functions/registry.js';
import type { SqlType } from '../types/types.js';
import { typeEquals, typeToSql } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../types/vector.js';
import { describe, jsError, newContext, udfTimeoutMs, type UdfParam } from './js.js';
import { fromJs, toJs, type Realm } from './types.js';

const FILE = 'udaf.js';
const REQUIRED = ['initialState', 'aggregate', 'merge', 'finalize'] as const;

interface AggBridge {
  init: (...a: unknown[]) => unknown;
  aggregate: (...a: unknown[]) => unknown;
  finalize: (...a: unknown[]) => unknown;
  merge: (...a: unknown[]) => unknown;
  serialize: ((...a: unknown[]) => unknown) | undefined;
  deserialize: ((...a: unknown[]) => unknown) | undefined;
  states: unknown[];
  consts: unknown[];
  cols: unknown[][] | null;
  groups: Int32Array | null;
  n2: number;
  out: unknown[] | null;
}

// Folds the batch's rows into their groups' states; then (FINISH) finalizes every group.
// Each batch is folded into fresh partial states, which are then merged into the
// groups' states (through serialize/deserialize when the body defines them), as
// the service combines partial aggregates: merge() runs for real.
const UPDATE = `(() => {
  const a = __bqagg, host = a.cols, hg = a.groups, n = a.n2, st = a.states, c = a.consts;
  // Host arrays are copied into this realm and dropped before user code runs.
  a.cols = null; a.groups = null;
  const k = host.length, cols = new Array(k), groups = new Array(n);
  for (let j = 0; j < k; j++) { const h = host[j], col = new Array(n); for (let i = 0; i < n; i++) col[i] = h[i]; cols[j] = col; }
  for (let i = 0; i < n; i++) groups[i] = hg[i];
  const init = a.init, agg = a.aggregate, merge = a.merge, ser = a.serialize, de = a.deserialize, c0 = cols[0], nc = c.length;
  const parts = [], touched = [];
  for (let i = 0; i < n; i++) {
    const g = groups[i];
    let s = parts[g];
    if (s === undefined) { s = parts[g] = init(...c); touched.push(g); }
    const r = k === 1 && nc === 0 ? agg(s, c0[i]) : agg(s, ...cols.map((col) => col[i]), ...c);
    if (r !== undefined) parts[g] = r;
  }
  for (const g of touched) {
    const p0 = parts[g], p = ser && de ? de(ser(p0)) : p0;
    let s = st[g];
    if (s === undefined) s = st[g] = init(...c);
    const r = merge(s, p, ...c);
    if (r !== undefined) st[g] = r;
  }
})()`;
const FINISH = `(() => {
  const a = __bqagg, st = a.states, c = a.consts, out = new Array(a.n);
  for (let g = 0; g < a.n; g++) out[g] = a.finalize(st[g] === undefined ? a.init(...c) : st[g], ...c);
  a.out = out;
})()`;

/** Compiled once per query; each GROUP BY (or window of the executor) gets its own states. */
export class JsAggregate {
  private ctx: vm.Context | undefined;
  private realm!: Realm;
  private exportsFn!: Record<string, unknown>;
  private readonly update = new vm.Script(UPDATE, { filename: 'aggregate.js' });
  private readonly finish = new vm.Script(FINISH, { filename: 'finalize.js' });

  constructor(
    readonly name: string,
    readonly params: readonly (UdfParam & { readonly notAggregate: boolean })[],
    readonly returnType: SqlType,
    private readonly code: string,
    private readonly libraries: readonly (readonly [string, string])[],
  ) {}

  private signature(): string {
    return `${this.name}(${this.params.map((p) => typeToSql(p.type)).join(', ')})`;
  }

  private error(e: unknown): QueryError {
    return jsError(e, this.signature(), FILE, 0);
  }

  private compile(): void {
    if (this.ctx) return;
    const ctx = newContext(this.name, this.libraries);
    // The body is module-like (`export function ...`): run it as a script with the exports kept as globals.
    const script = this.code.replace(/(^|[\s;])export\s+(?=(async\s+)?function\b|const\b|let\b|var\b|class\b)/g, '$1');
    try {
      new vm.Script(script, { filename: FILE }).runInContext(ctx, { timeout: udfTimeoutMs() });
    } catch (e) {
      throw this.error(e);
    }
    const names = [...REQUIRED, 'serialize', 'deserialize'];
    this.exportsFn = vm.runInContext(`({ ${names.map((n) => `${n}: typeof ${n} === 'function' ? ${n} : undefined`).join(', ')} })`, ctx) as Record<string, unknown>;
    const missing = REQUIRED.filter((n) => typeof this.exportsFn[n] !== 'function');
    if (missing.length) throw new QueryError(`JavaScript aggregate function ${this.name} must export ${missing.map((m) => `${m}()`).join(', ')}`, 'invalidQuery', 400);
    this.realm = vm.runInContext('({ Date, Object, Array })', ctx) as Realm;
    this.ctx = ctx;
  }

  private run(script: vm.Script): void {
    try {
      script.runInContext(this.ctx!, { timeout: udfTimeoutMs() });
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        this.ctx = undefined;
        throw new QueryError(`Resources exceeded during query execution: JavaScript UDF ${this.signature()} exceeded the CPU time limit (${udfTimeoutMs()} ms per batch).`, 'invalidQuery', 400);
      }
      throw this.error(e);
    }
  }

  /** A fresh accumulator: its group states live in the context, under their own bridge. */
  accumulator(): GroupsAccumulator {
    this.compile();
    const ctx = this.ctx!;
    const bridge = vm.runInContext('({ states: [], consts: [], cols: null, groups: null, n2: 0, out: null, n: 0 })', ctx) as AggBridge & { n: number };
    bridge.init = this.exportsFn['initialState'] as AggBridge['init'];
    bridge.aggregate = this.exportsFn['aggregate'] as AggBridge['aggregate'];
    bridge.finalize = this.exportsFn['finalize'] as AggBridge['finalize'];
    bridge.merge = this.exportsFn['merge'] as AggBridge['merge'];
    bridge.serialize = this.exportsFn['serialize'] as AggBridge['serialize'];
    bridge.deserialize = this.exportsFn['deserialize'] as AggBridge['deserialize'];
    let constsSet = false;
    const aggIdx = this.params.flatMap((p, i) => (p.notAggregate ? [] : [i]));
    const constIdx = this.params.flatMap((p, i) => (p.notAggregate ? [i] : []));
    const setBridge = vm.runInContext('(b) => { globalThis.__bqagg = b; }', ctx) as (b: unknown) => void;
    const use = () => setBridge(bridge);
    return {
      resize: (numGroups: number) => {
        bridge.n = Math.max(bridge.n, numGroups);
      },
      update: (args: readonly Vector[], groups: Int32Array, n: number) => {
        if (!constsSet && n > 0) {
          bridge.consts = this.realm.Array.of(...constIdx.map((k) => toJs(this.params[k]!.type, getValue(args[k]!, 0), this.realm)));
          constsSet = true;
        }
        const cols = aggIdx.map((k) => {
          const t = this.params[k]!.type;
          const v = args[k]!;
          const col = new Array<unknown>(n);
          for (let i = 0; i < n; i++) col[i] = toJs(t, getValue(v, i), this.realm);
          return col;
        });
        bridge.cols = cols;
        bridge.groups = groups;
        bridge.n2 = n;
        use();
        this.run(this.update);
        bridge.cols = null;
        bridge.groups = null;
      },
      finish: (numGroups: number) => {
        bridge.n = numGroups;
        use();
        this.run(this.finish);
        const out = bridge.out!;
        bridge.out = null;
        const values = new Array<Value>(numGroups);
        for (let g = 0; g < numGroups; g++) {
          try {
            values[g] = fromJs(this.returnType, out[g]);
          } catch (e) {
            throw new QueryError(`Failed to coerce output value ${describe(out[g])} to type ${typeToSql(this.returnType)}: ${(e as Error).message}`, 'invalidQuery', 400);
          }
        }
        return vectorFromValues(this.returnType, values);
      },
    };
  }

  /** The registry-shaped definition the analyzer resolves like a built-in aggregate. */
  definition(): AggregateFunctionDef {
    const resolved: ResolvedAggregate = {
      returnType: this.returnType,
      argTypes: this.params.map((p) => p.type),
      create: () => this.accumulator(),
    };
    return {
      kind: 'aggregate',
      name: this.name,
      analytic: false,
      resolve: (args) => {
        if (args.length !== this.params.length) return { ok: false, message: `Number of arguments does not match for aggregate function ${this.name}` };
        const bad = args.findIndex((a, i) => !a.untypedNull && !typeEquals(a.type, this.params[i]!.type) && !(a.isLiteral && coercibleLiteral(a.type, this.params[i]!.type)) && !widens(a.type, this.params[i]!.type));
        if (bad >= 0) return { ok: false, message: `No matching signature for aggregate function ${this.name} for argument types: ${args.map((a) => typeToSql(a.type)).join(', ')}` };
        const notConst = this.params.findIndex((p, i) => p.notAggregate && !args[i]!.constant);
        if (notConst >= 0) return { ok: false, message: `Argument ${this.params[notConst]!.name} of ${this.name} is NOT AGGREGATE and must be a constant` };
        return { ok: true, resolved };
      },
    };
  }
}

/** INT64 -> NUMERIC/BIGNUMERIC/FLOAT64 and NUMERIC -> BIGNUMERIC/FLOAT64: the implicit widenings of function arguments. */
function widens(from: SqlType, to: SqlType): boolean {
  if (from.kind === 'INT64') return to.kind === 'NUMERIC' || to.kind === 'BIGNUMERIC' || to.kind === 'FLOAT64';
  if (from.kind === 'NUMERIC') return to.kind === 'BIGNUMERIC' || to.kind === 'FLOAT64';
  if (from.kind === 'BIGNUMERIC') return to.kind === 'FLOAT64';
  return false;
}

/** String literals coerce to date/time types as arguments. */
function coercibleLiteral(from: SqlType, to: SqlType): boolean {
  return from.kind === 'STRING' && ['DATE', 'DATETIME', 'TIMESTAMP', 'TIME', 'JSON'].includes(to.kind);
}
