// JavaScript UDFs: each function gets a fresh `node:vm` context (its own
// globals; no require, process, or host objects), compiled once per query,
// then called over whole column batches: one script run per batch, under a
// CPU timeout, so `while (true) {}` fails the query instead of hanging it.
import vm from 'node:vm';
import { QueryError } from '../planner/api.js';
import type { SqlType } from '../types/types.js';
import { typeToSql } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../types/vector.js';
import { fromJs, toJs, type Realm } from './types.js';

/** CPU budget of one batch of calls (WAREHOUSE_UDF_TIMEOUT_MS overrides it). */
export function udfTimeoutMs(): number {
  const v = Number(process.env['WAREHOUSE_UDF_TIMEOUT_MS']);
  return Number.isFinite(v) && v > 0 ? v : 5_000;
}

export interface UdfParam {
  readonly name: string;
  readonly type: SqlType;
}

const FILE = 'udf.js';

// Runs the function over every row of the batch inside the context. Promise
// results are settled by the context's microtask queue before the run returns.
const BATCH_SCRIPT = `(() => {
  const b = __bq, host = b.cols, n = b.n;
  // The host's column arrays are copied into this realm and dropped from the
  // bridge before the function runs: the body never reaches a host object.
  b.cols = null;
  const k = host.length, cols = new Array(k);
  for (let j = 0; j < k; j++) { const h = host[j], c = new Array(n); for (let i = 0; i < n; i++) c[i] = h[i]; cols[j] = c; }
  const fn = b.fn, out = new Array(n), c0 = cols[0], c1 = cols[1], c2 = cols[2];
  for (let i = 0; i < n; i++) {
    let r;
    try {
      r = k === 0 ? fn() : k === 1 ? fn(c0[i]) : k === 2 ? fn(c0[i], c1[i]) : k === 3 ? fn(c0[i], c1[i], c2[i]) : fn.apply(null, cols.map((c) => c[i]));
    } catch (e) { b.error = e; b.row = i; return; }
    if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
      r.then((v) => { out[i] = v; }, (e) => { if (b.error === undefined) { b.error = e; b.row = i; } });
    } else out[i] = r;
  }
  b.out = out;
})()`;

interface Bridge {
  fn: (...a: unknown[]) => unknown;
  cols: unknown[][] | null;
  n: number;
  out: unknown[] | undefined;
  error: unknown;
  row: number;
}

export class JsUdf {
  private ctx: vm.Context | undefined;
  private realm!: Realm;
  private bridge!: Bridge;
  private batch!: vm.Script;
  /** Length of the wrapper's text before the body on line 1 (error columns). */
  private headLength = 0;

  constructor(
    /** The function's name as written (messages). */
    readonly name: string,
    readonly params: readonly UdfParam[],
    readonly returnType: SqlType,
    private readonly code: string,
    /** [uri, source] of OPTIONS(library=...), run before the body. */
    private readonly libraries: readonly (readonly [string, string])[],
  ) {}

  /** `f(FLOAT64, STRING)`: how the real service names a UDF in its runtime errors. */
  private signature(): string {
    return `${this.name}(${this.params.map((p) => typeToSql(p.type)).join(', ')})`;
  }

  /** Compiles the libraries and the body on first use (a query that never calls the UDF pays nothing). */
  private init(): void {
    if (this.ctx) return;
    const ctx = newContext(this.name, this.libraries);
    const timeout = udfTimeoutMs();
    let fn: Bridge['fn'];
    try {
      // The body is a function body over the parameters; the code's first line is line 1.
      const head = `(function(${this.params.map((p) => p.name).join(', ')}) {`;
      this.headLength = head.length;
      fn = new vm.Script(`${head}${this.code}\n})`, { filename: FILE }).runInContext(ctx, { timeout }) as Bridge['fn'];
    } catch (e) {
      throw this.error(e);
    }
    this.realm = vm.runInContext('({ Date, Object, Array })', ctx) as Realm;
    // The bridge and every row array are made in the context's realm: the body never
    // holds a host object (whose constructor chain would lead back to the host's globals).
    this.bridge = vm.runInContext('globalThis.__bq = { fn: null, cols: null, n: 0, out: undefined, error: undefined, row: -1 }', ctx) as Bridge;
    this.bridge.fn = fn;
    this.batch = new vm.Script(BATCH_SCRIPT, { filename: 'batch.js' });
    this.ctx = ctx;
  }

  /** Vectorized call: one vector per parameter, `n` rows. */
  call(args: readonly Vector[], n: number): Vector {
    this.init();
    const b = this.bridge;
    const cols = new Array<unknown[]>(args.length);
    for (let k = 0; k < args.length; k++) {
      const t = this.params[k]!.type;
      const v = args[k]!;
      const c = new Array<unknown>(n);
      for (let i = 0; i < n; i++) c[i] = toJs(t, getValue(v, i), this.realm);
      cols[k] = c;
    }
    b.cols = cols;
    b.n = n;
    b.out = undefined;
    b.error = undefined;
    b.row = -1;
    try {
      this.batch.runInContext(this.ctx!, { timeout: udfTimeoutMs() });
    } catch (e) {
      b.cols = null;
      if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        // Make the next batch start from a clean context: the interrupted one may hold half-updated state.
        this.ctx = undefined;
        throw new QueryError(`Resources exceeded during query execution: JavaScript UDF ${this.signature()} exceeded the CPU time limit (${udfTimeoutMs()} ms per batch).`, 'invalidQuery', 400);
      }
      throw this.error(e);
    }
    b.cols = null;
    if (b.error !== undefined) throw this.error(b.error);
    const out = b.out!;
    const values = new Array<Value>(n);
    for (let i = 0; i < n; i++) {
      try {
        values[i] = fromJs(this.returnType, out[i]);
      } catch (e) {
        throw new QueryError(`Failed to coerce output value ${describe(out[i])} to type ${typeToSql(this.returnType)}: ${(e as Error).message}`, 'invalidQuery', 400);
      }
    }
    return vectorFromValues(this.returnType, values);
  }

  private error(e: unknown, file = FILE): QueryError {
    return jsError(e, file === FILE ? this.signature() : file, file, file === FILE ? this.headLength : 0);
  }
}

/** The real service's form: `Error: message at f(FLOAT64) line 1, columns 6-7` (`place`: the signature or a library URI). */
export function jsError(e: unknown, place: string, file: string, headLength: number): QueryError {
  const err = e as { name?: unknown; message?: unknown; stack?: unknown } | null;
  const isErr = err !== null && typeof err === 'object' && typeof err.message === 'string';
  const text = isErr ? `${String(err.name ?? 'Error')}: ${String(err.message)}` : String(e);
  const where = isErr && typeof err.stack === 'string' ? position(err.stack, file, headLength) : '';
  return new QueryError(`${text} at ${place}${where}`, 'invalidQuery', 400);
}

/** A fresh context with the libraries run in it (errors name the library). */
export function newContext(name: string, libraries: readonly (readonly [string, string])[]): vm.Context {
  const ctx = vm.createContext({}, { name: `udf ${name}`, codeGeneration: { strings: true, wasm: false }, microtaskMode: 'afterEvaluate' });
  // Debug output has nowhere to go: a console whose methods do nothing (made in the context's realm).
  vm.runInContext("globalThis.console = Object.freeze({ log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} });", ctx);
  for (const [uri, src] of libraries) {
    try {
      new vm.Script(src, { filename: uri }).runInContext(ctx, { timeout: udfTimeoutMs() });
    } catch (e) {
      throw jsError(e, uri, uri, 0);
    }
  }
  return ctx;
}

export function describe(x: unknown): string {
  try {
    return typeof x === 'string' ? JSON.stringify(x) : (JSON.stringify(x) ?? String(x));
  } catch {
    return String(x);
  }
}

/** " line L, columns C-C+1" of the first stack frame in `file`, or "" (syntax errors carry it differently). */
export function position(stack: string, file: string, headLength: number): string {
  const esc = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${esc}:(\\d+):(\\d+)`).exec(stack);
  if (!m) return '';
  const line = Number(m[1]);
  // The body follows "(function(...) {" on line 1: columns there are shifted by that prefix.
  const col = Number(m[2]) - (line === 1 ? headLength : 0);
  return ` line ${line}, columns ${col - 1}-${col}`;
}
