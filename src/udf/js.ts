// JavaScript UDFs: each function gets a V8 isolate of its own (sandbox.ts),
// made on its first call in a query, with the libraries and the body loaded
// into it; then each column batch is one call into the isolate (one copy of
// the arguments in, one of the results out), under the CPU time limit.
import { QueryError } from '../planner/api.js';
import type { SqlType } from '../types/types.js';
import { typeToSql } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../types/vector.js';
import { Sandbox, type Answer, type ErrorInfo } from './sandbox.js';
import { fromJs, toJs } from './types.js';

export { udfTimeoutMs } from './sandbox.js';

export interface UdfParam {
  readonly name: string;
  readonly type: SqlType;
}

const FILE = 'udf.js';

/** `f(FLOAT64, STRING)`: how the real service names a UDF in its runtime errors. */
export function signature(name: string, params: readonly UdfParam[]): string {
  return `${name}(${params.map((p) => typeToSql(p.type)).join(', ')})`;
}

export class JsUdf {
  private sandbox: Sandbox | undefined;
  /** A load that failed fails every call the same way (SAFE. retries rows one by one). */
  private loadError: QueryError | undefined;
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

  /** Loads the libraries and the body on first use (a query that never calls the UDF pays nothing). */
  private init(): Sandbox {
    if (this.loadError) throw this.loadError;
    if (this.sandbox) return this.sandbox;
    const sig = signature(this.name, this.params);
    const sandbox = new Sandbox(sig);
    // The body is a function body over the parameters; the code's first line is line 1.
    const head = `(function(${this.params.map((p) => p.name).join(', ')}) {`;
    this.headLength = head.length;
    const failed = sandbox.load(this.libraries, { file: FILE, code: `${head}${this.code}\n})` }, { params: this.params.map((p) => p.type), returns: this.returnType });
    if (failed) {
      sandbox.dispose();
      this.loadError = loadError(failed, sig, FILE, this.headLength);
      throw this.loadError;
    }
    this.sandbox = sandbox;
    return sandbox;
  }

  /** Vectorized call: one vector per parameter, `n` rows. */
  call(args: readonly Vector[], n: number): Vector {
    const sandbox = this.init();
    const cols = args.map((v, k) => columnToJs(this.params[k]!.type, v, n));
    let answer = sandbox.call('call', cols, n) as Answer;
    // Promise results settle in the isolate's microtasks, which run as the call returns.
    if (answer.pending) answer = sandbox.call('settle') as Answer;
    if (answer.error) throw jsError(answer.error, signature(this.name, this.params), FILE, this.headLength);
    return convertResults(this.returnType, answer, n);
  }
}

/** Longest joined STRING column sent as one string (V8's string limit is 2^29 - 24 characters). */
const MAX_JOINED = 2 ** 28;

/**
 * `n` rows of a column as they are copied into the isolate: number columns as
 * one Float64Array, STRING columns as one joined string, others value by
 * value (isolate-runtime.ts).
 */
export function columnToJs(t: SqlType, v: Vector, n: number, bigInts = false): unknown {
  if ((t.kind === 'FLOAT64' || (t.kind === 'INT64' && !bigInts)) && v.data instanceof Float64Array) return { f64: own(v.data, n), nulls: v.nulls && own(v.nulls, n) };
  if (t.kind === 'STRING') {
    const parts = new Array<string>(n);
    const lens = new Int32Array(n);
    let nulls: Uint8Array | null = null;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const x = getValue(v, i) as string | null;
      if (x === null) (nulls ??= new Uint8Array(n))[i] = 1;
      parts[i] = x ?? '';
      lens[i] = parts[i]!.length;
      total += lens[i]!;
    }
    if (total <= MAX_JOINED) return { str: parts.join(''), lens, nulls };
  }
  const c = new Array<unknown>(n);
  for (let i = 0; i < n; i++) c[i] = toJs(t, getValue(v, i), bigInts);
  return c;
}

/** The first `n` elements in an array of their own: a clone of a view copies its whole buffer (a scan's batch is a view of its column). */
function own<A extends Float64Array | Uint8Array>(a: A, n: number): A {
  return a.length === n && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : (a.slice(0, n) as A);
}

/** The answer's values as a vector of the declared return type. */
export function convertResults(returnType: SqlType, answer: Answer, n: number): Vector {
  // FLOAT64/INT64 results the isolate found exact: already the vector's layout (INT64 within ±2^53 as Float64Array).
  if (answer.f64) return { type: returnType, length: n, data: answer.f64, nulls: answer.nulls ?? null };
  if (answer.str !== undefined) {
    const { str, lens, nulls } = answer;
    const values = new Array<Value>(n);
    for (let i = 0, o = 0; i < n; i++) {
      const l = lens![i]!;
      values[i] = nulls && nulls[i] === 1 ? null : str.slice(o, o + l);
      o += l;
    }
    return vectorFromValues(returnType, values);
  }
  const out = answer.out!;
  const values = new Array<Value>(n);
  for (let i = 0; i < n; i++) {
    try {
      values[i] = fromJs(returnType, out[i]);
    } catch (e) {
      throw new QueryError(`Failed to coerce output value ${describe(out[i])} to type ${typeToSql(returnType)}: ${(e as Error).message}`, 'invalidQuery', 400);
    }
  }
  return vectorFromValues(returnType, values);
}

/** A failed load: an error in a library names the library, one in the body the function. */
export function loadError(failed: Answer, sig: string, file: string, headLength: number): QueryError {
  const inBody = failed.file === undefined || failed.file === file;
  return jsError(failed.error ?? {}, inBody ? sig : failed.file!, inBody ? file : failed.file!, inBody ? headLength : 0);
}

/** The real service's form: `Error: message at f(FLOAT64) line 1, columns 6-7` (`place`: the signature or a library URI). */
export function jsError(e: ErrorInfo, place: string, file: string, headLength: number): QueryError {
  const text = e.text ?? `${e.name ?? 'Error'}: ${e.message ?? ''}`;
  const where = e.stack ? position(e.stack, file, headLength) : '';
  return new QueryError(`${text} at ${place}${where}`, 'invalidQuery', 400);
}

export function describe(x: unknown): string {
  try {
    return typeof x === 'string' ? JSON.stringify(x) : (JSON.stringify(x) ?? String(x));
  } catch {
    return String(x);
  }
}

/** " line L, columns C-C+1" of the first stack frame in `file`, or "" (syntax errors carry none). */
export function position(stack: string, file: string, headLength: number): string {
  const esc = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${esc}:(\\d+):(\\d+)`).exec(stack);
  if (!m) return '';
  const line = Number(m[1]);
  // The body follows "(function(...) {" on line 1: columns there are shifted by that prefix.
  const col = Number(m[2]) - (line === 1 ? headLength : 0);
  return ` line ${line}, columns ${col - 1}-${col}`;
}
