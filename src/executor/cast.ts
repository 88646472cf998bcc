// CAST entry point for the executor: the function library's castVector
// (src/functions/conversion.ts) does the conversions. `fallbackCastVector`
// is the minimal stand-in kept from before that module landed; it is only
// used if a test replaces the kernel with `installCastVector(null)`-style hooks.
import type { EvalContext } from '../functions/registry.js';
import { castVector as libraryCastVector } from '../functions/conversion.js';
import { QueryError } from '../types/errors.js';
import { typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../types/vector.js';

export interface CastOptions {
  readonly safe: boolean;
  readonly format?: string;
  readonly timeZone?: string;
}
export type CastVectorFn = (v: Vector, to: SqlType, opts: CastOptions, ctx: EvalContext) => Vector;

let installed: CastVectorFn | null = libraryCastVector;

/** Replaces the conversion kernel (tests); `null` selects the minimal fallback. */
export function installCastVector(fn: CastVectorFn | null): void {
  installed = fn;
}

export function castVector(v: Vector, to: SqlType, opts: CastOptions, ctx: EvalContext): Vector {
  if (installed) return installed(v, to, opts, ctx);
  if (typeEquals(v.type, to) && opts.format === undefined) return v;
  return fallbackCastVector(v, to, opts);
}

/** Minimal conversions among INT64, FLOAT64, NUMERIC, BOOL, STRING; anything else is reported as unsupported. */
export function fallbackCastVector(v: Vector, to: SqlType, opts: CastOptions): Vector {
  const out: Value[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = getValue(v, i);
    try {
      out[i] = x === null ? null : castScalar(x, v.type, to);
    } catch (e) {
      if (opts.safe) out[i] = null;
      else throw e;
    }
  }
  return vectorFromValues(to, out);
}

function castScalar(x: Value, from: SqlType, to: SqlType): Value {
  const bad = (): never => {
    throw new QueryError(`Bad ${typeToSql(to)} value: ${String(x)}`);
  };
  switch (to.kind) {
    case 'STRING':
      if (typeof x === 'string') return x;
      if (typeof x === 'boolean') return x ? 'true' : 'false';
      if (typeof x === 'number' && from.kind === 'FLOAT64') return Number.isNaN(x) ? 'nan' : !Number.isFinite(x) ? (x > 0 ? 'inf' : '-inf') : String(x);
      return String(x);
    case 'INT64': {
      if (typeof x === 'bigint') return x;
      if (typeof x === 'number') {
        if (!Number.isFinite(x)) bad();
        return BigInt(Math.round(x));
      }
      if (typeof x === 'boolean') return x ? 1n : 0n;
      if (x instanceof Decimal) return BigInt(x.round().toFixed(0));
      if (typeof x === 'string' && /^\s*[+-]?\d+\s*$/.test(x)) return BigInt(x.trim());
      return bad();
    }
    case 'FLOAT64': {
      if (typeof x === 'number') return x;
      if (typeof x === 'bigint') return Number(x);
      if (x instanceof Decimal) return x.toNumber();
      if (typeof x === 'string') {
        const t = x.trim().toLowerCase();
        if (t === 'nan') return NaN;
        if (t === 'inf' || t === '+inf' || t === 'infinity') return Infinity;
        if (t === '-inf' || t === '-infinity') return -Infinity;
        const n = Number(t);
        return t === '' || Number.isNaN(n) ? bad() : n;
      }
      return bad();
    }
    case 'NUMERIC':
    case 'BIGNUMERIC':
      if (typeof x === 'bigint' || typeof x === 'number' || typeof x === 'string') {
        try {
          return new Decimal(typeof x === 'bigint' ? x.toString() : x);
        } catch {
          return bad();
        }
      }
      return x instanceof Decimal ? x : bad();
    case 'BOOL':
      if (typeof x === 'boolean') return x;
      if (typeof x === 'bigint') return x !== 0n;
      if (typeof x === 'string') {
        const t = x.trim().toLowerCase();
        return t === 'true' ? true : t === 'false' ? false : bad();
      }
      return bad();
    default:
      if (typeEquals(from, to)) return x;
      throw new QueryError(`Casting ${typeToSql(from)} to ${typeToSql(to)} is not supported yet`, 'notImplemented', 501);
  }
}
