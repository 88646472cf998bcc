// JavaScript aggregate UDFs (CREATE AGGREGATE FUNCTION ... LANGUAGE js): the
// body exports initialState / aggregate / merge / finalize (serialize and
// deserialize are optional). One isolate per function per query (sandbox.ts);
// the group states live inside it, and each batch of rows is folded into
// partial states that are merged into the groups' states, by one call into the
// isolate (under the CPU time limit). NOT AGGREGATE arguments are constants
// passed last to every function, as the real service does.
import { QueryError } from '../planner/api.js';
import type { AggregateFunctionDef, GroupsAccumulator, ResolvedAggregate } from '../functions/registry.js';
import type { SqlType } from '../types/types.js';
import { typeEquals, typeToSql } from '../types/types.js';
import { getValue, type Vector } from '../types/vector.js';
import { columnToJs, convertResults, jsError, loadError, signature, type UdfParam } from './js.js';
import { Sandbox, type Answer } from './sandbox.js';
import { toJs } from './types.js';

const FILE = 'udaf.js';
const REQUIRED = ['initialState', 'aggregate', 'merge', 'finalize'] as const;
const EXPORTS = [...REQUIRED, 'serialize', 'deserialize'];

/** Loaded once per query; each GROUP BY (or window of the executor) gets its own states. */
export class JsAggregate {
  private sandbox: Sandbox | undefined;
  private loadError: QueryError | undefined;

  constructor(
    readonly name: string,
    readonly params: readonly (UdfParam & { readonly notAggregate: boolean })[],
    readonly returnType: SqlType,
    private readonly code: string,
    private readonly libraries: readonly (readonly [string, string])[],
  ) {}

  private signature(): string {
    return signature(this.name, this.params);
  }

  private load(): Sandbox {
    if (this.loadError) throw this.loadError;
    if (this.sandbox) return this.sandbox;
    const sandbox = new Sandbox(this.signature());
    // The body is module-like (`export function ...`): it runs as a script, and an
    // expression after it hands the exported functions to the runtime.
    const script = this.code.replace(/(^|[\s;])export\s+(?=(async\s+)?function\b|const\b|let\b|var\b|class\b)/g, '$1');
    const handOver = `\n;({ ${EXPORTS.map((n) => `${n}: typeof ${n} === 'function' ? ${n} : undefined`).join(', ')} })`;
    const spec = {
      params: this.params.filter((p) => !p.notAggregate).map((p) => p.type),
      consts: this.params.filter((p) => p.notAggregate).map((p) => p.type),
      returns: this.returnType,
    };
    const failed = sandbox.load(this.libraries, { file: FILE, code: script + handOver }, spec);
    if (failed) this.loadError = loadError(failed, this.signature(), FILE, 0);
    else {
      const missing = sandbox.call('missing', REQUIRED) as string[];
      if (missing.length) this.loadError = new QueryError(`JavaScript aggregate function ${this.name} must export ${missing.map((m) => `${m}()`).join(', ')}`, 'invalidQuery', 400);
    }
    if (this.loadError) {
      sandbox.dispose();
      throw this.loadError;
    }
    this.sandbox = sandbox;
    return sandbox;
  }

  private check(answer: Answer | null): void {
    if (answer?.error) throw jsError(answer.error, this.signature(), FILE, 0);
  }

  /** A fresh accumulator: its group states live in the isolate, under their own id. */
  accumulator(): GroupsAccumulator {
    const sandbox = this.load();
    const id = sandbox.call('open') as number;
    let constsSent = false;
    const aggIdx = this.params.flatMap((p, i) => (p.notAggregate ? [] : [i]));
    const constIdx = this.params.flatMap((p, i) => (p.notAggregate ? [i] : []));
    return {
      resize: () => undefined,
      update: (args: readonly Vector[], groups: Int32Array, n: number) => {
        // NOT AGGREGATE arguments are constants: taken from the first row once.
        let consts: unknown[] | null = null;
        if (!constsSent && n > 0) {
          consts = constIdx.map((k) => toJs(this.params[k]!.type, getValue(args[k]!, 0), true));
          constsSent = true;
        }
        const cols = aggIdx.map((k) => columnToJs(this.params[k]!.type, args[k]!, n, true));
        this.check(sandbox.call('update', id, cols, groups.slice(0, n), n, consts) as Answer | null);
      },
      finish: (numGroups: number) => {
        const answer = sandbox.call('finish', id, numGroups) as Answer;
        this.check(answer);
        return convertResults(this.returnType, answer, numGroups);
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
