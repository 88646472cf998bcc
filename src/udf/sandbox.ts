// The boundary around JavaScript UDF code: a V8 isolate of its own
// (isolated-vm), one per function per query. The isolate has only the
// language's built-ins: no process, require, import(), file system, network
// or timers; its heap is capped (WAREHOUSE_UDF_MEMORY_MB) and every call into
// it runs under the CPU time limit (WAREHOUSE_UDF_TIMEOUT_MS). Values go in
// and out as copies (structured clone); the engine never holds an object of
// the isolate, and the isolate never holds one of the engine. The code that
// runs in it first is isolate-runtime.ts. How this boundary was chosen, with
// the measurements: README.md.
import { createRequire } from 'node:module';
import type IsolatedVM from 'isolated-vm';
import { QueryError } from '../planner/api.js';
import type { SqlType } from '../types/types.js';
import { RUNTIME } from './isolate-runtime.js';

/** CPU budget of one call into the isolate, i.e. one batch of rows (WAREHOUSE_UDF_TIMEOUT_MS overrides it). */
export function udfTimeoutMs(): number {
  const v = Number(process.env['WAREHOUSE_UDF_TIMEOUT_MS']);
  return Number.isFinite(v) && v > 0 ? v : 5_000;
}

/** Heap cap of one UDF's isolate in MB (WAREHOUSE_UDF_MEMORY_MB overrides it; isolated-vm's minimum is 8). */
export function udfMemoryMb(): number {
  const v = Number(process.env['WAREHOUSE_UDF_MEMORY_MB']);
  return Number.isFinite(v) && v >= 8 ? v : 128;
}

/** An error of the UDF's code, as the runtime describes it (strings only). */
export interface ErrorInfo {
  readonly name?: string;
  readonly message?: string;
  readonly stack?: string;
  /** String(thrown value), for a throw of something other than an Error. */
  readonly text?: string;
}

/** The runtime's answer to one op (see isolate-runtime.ts). */
export interface Answer {
  readonly out?: unknown[];
  /** FLOAT64 and INT64 results in one block (every value a number; `nulls[i]` 1 for NULL). */
  readonly f64?: Float64Array;
  /** STRING results joined into one string, `lens[i]` characters each. */
  readonly str?: string;
  readonly lens?: Int32Array;
  readonly nulls?: Uint8Array | null;
  readonly pending?: boolean;
  readonly error?: ErrorInfo;
  /** Row of the batch whose call failed, -1 when not one row's. */
  readonly row?: number;
  /** Source that failed while loading: a library URI or the body's file name. */
  readonly file?: string;
}

/** What the runtime needs to know of the function: types of parameters (and NOT AGGREGATE constants) and result. */
export interface FunctionSpec {
  readonly params: readonly SqlType[];
  readonly consts?: readonly SqlType[];
  readonly returns: SqlType;
}

type Ivm = typeof IsolatedVM;
let ivm: Ivm | undefined;
let ivmError: string | undefined;

/** isolated-vm, loaded on the first JavaScript UDF call (an optional peer of the package: a native addon compiled at install). */
function loadIvm(): Ivm {
  if (ivm) return ivm;
  if (ivmError === undefined) {
    try {
      ivm = createRequire(import.meta.url)('isolated-vm') as Ivm;
      return ivm;
    } catch (e) {
      ivmError = (e as Error).message.split('\n')[0] ?? String(e);
    }
  }
  throw new QueryError(
    `JavaScript UDFs need the isolated-vm package, which did not load (${ivmError}). It is a native addon compiled at install (make, g++ and python3): npm_config_build_from_source=true npm install isolated-vm@5 beside the emulator`,
    'invalidQuery',
    400,
  );
}

// An isolate whose Sandbox was collected (its query ended) is disposed at once: its memory is outside the engine's heap.
const live = new FinalizationRegistry<IsolatedVM.Isolate>((isolate) => {
  if (!isolate.isDisposed) isolate.dispose();
});

export class Sandbox {
  private readonly isolate: IsolatedVM.Isolate;
  private readonly run: IsolatedVM.Reference<(...a: unknown[]) => Answer | number | null>;
  /** Set once a call ran out of time or memory: the isolate is gone, every later call fails the same way. */
  private failed: QueryError | undefined;

  constructor(
    /** `f(FLOAT64)`: how errors name the function. */
    private readonly signature: string,
  ) {
    const lib = loadIvm();
    this.isolate = new lib.Isolate({
      memoryLimit: udfMemoryMb(),
      onCatastrophicError: (message) => process.stderr.write(`JavaScript UDF ${signature}: isolate failed: ${message}\n`),
    });
    live.register(this, this.isolate, this);
    this.run = this.guard(() => this.isolate.createContextSync().evalSync(RUNTIME, { reference: true, timeout: udfTimeoutMs() })) as typeof this.run;
  }

  /** Runs the libraries ([uri, source]) and the body (`file`: its name in stack traces); null when all went well. */
  load(libraries: readonly (readonly [string, string])[], body: { file: string; code: string }, spec: FunctionSpec): Answer | null {
    return this.call('load', libraries, body, spec) as Answer | null;
  }

  /** One op of the runtime, under the time limit; arguments and answer are copies. */
  call(op: string, ...args: unknown[]): Answer | number | null {
    return this.guard(() => this.run.applySync(undefined, [op, ...args], { arguments: { copy: true }, result: { copy: true }, timeout: udfTimeoutMs() }));
  }

  /** Only the host side's own errors reach here: running out of time or memory (the runtime answers the UDF's errors as data). */
  private guard<T>(f: () => T): T {
    if (this.failed) throw this.failed;
    try {
      return f();
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      if (/timed out/i.test(message)) {
        this.failed = new QueryError(`Resources exceeded during query execution: JavaScript UDF ${this.signature} exceeded the CPU time limit (${udfTimeoutMs()} ms per batch).`, 'invalidQuery', 400);
      } else if (this.isolate.isDisposed || /memory limit/i.test(message)) {
        this.failed = new QueryError(`Resources exceeded during query execution: UDF out of memory. JavaScript UDF ${this.signature} used more than its ${udfMemoryMb()} MB heap.`, 'invalidQuery', 400);
      } else {
        this.failed = new QueryError(`JavaScript UDF ${this.signature} failed: ${message}`, 'invalidQuery', 400);
      }
      // Whatever the code was doing when it was stopped may have left its state half-changed.
      this.dispose();
      throw this.failed;
    }
  }

  dispose(): void {
    live.unregister(this);
    if (!this.isolate.isDisposed) this.isolate.dispose();
  }
}
