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
    const cols = new Array<unknown[]>(args.length);
    for (let k = 0; k < args.length; k++) {
      const t = this.params[k]!.type;
      const v = args[k]!;
      const c = new Array<unknown>(n);
      for (let i = 0; i < n; i++) c[i] = toJs(t, getValue(v, i));
      cols[k] = c;
    }
    let answer = sandbox.call('call', cols, n) as Answer;
    // Promise results settle in the isolate's microtasks, which run as the call returns.
    if (answer.pending) answer = sandbox.call('settle') as Answer;
    if (answer.error) throw jsError(answer.error, signature(this.name, this.params), FILE, this.headLength);
    return convertResults(this.returnType, answer.out!, n);
  }
}

/** The answer's values as a vector of the declared return type. */
export function convertResults(returnType: SqlType, out: readonly unknown[], n: number): Vector {
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
