// Non-SQL UDFs (LANGUAGE js, LANGUAGE python). The analyzer turns a call of
// one into an ordinary `call` expression whose kernel runs the compiled
// function over the batch: the vectorized executor, SAFE. calls, lazy CASE
// branches and the planner all treat it like any other scalar call. The
// compiled function (a vm context, a python3 process) is made once per
// session (one query or script) and shared by every call site.
import fs from 'node:fs';
import type * as A from '../../grammar/ast.js';
import type { CallExpr, Expr } from '../analyzer/resolved.js';
import type { AggregateFunctionDef } from '../functions/registry.js';
import { IoError } from '../io/errors.js';
import { checkLocalPath } from '../io/local-access.js';
import { localPath } from '../io/objects.js';
import { QueryError } from '../planner/api.js';
import type { SqlType } from '../types/types.js';
import { typeToSql } from '../types/types.js';
import { JsAggregate } from './js-aggregate.js';
import { JsUdf, udfTimeoutMs, type UdfParam } from './js.js';
import { PythonUdf } from './python.js';
import { runSync } from './sync.js';
import { jsUnsupportedType } from './types.js';

export type ExternalLanguage = 'js' | 'python';

/** The language of a CREATE FUNCTION, normalized; undefined for SQL. */
export function languageOf(udf: A.CreateFunctionStmt): ExternalLanguage | undefined {
  const l = udf.language?.toLowerCase();
  if (!l || l === 'sql') return undefined;
  if (l === 'js' || l === 'javascript') return 'js';
  if (l === 'python') return 'python';
  throw new QueryError(`Language "${udf.language}" is unsupported`, 'invalidQuery', 400);
}

/** OPTIONS value as a list of strings (a string or an array of string literals). */
export function stringListOption(udf: A.CreateFunctionStmt, name: string): string[] | undefined {
  const o = udf.options?.find((e) => e.name.toLowerCase() === name);
  if (!o) return undefined;
  const v = o.value;
  if (v.kind === 'StringLiteral') return [v.value];
  if (v.kind === 'ArrayExpr' && v.elements.every((e) => e.kind === 'StringLiteral')) return v.elements.map((e) => (e as A.StringLiteral).value);
  throw new QueryError(`Invalid value for OPTIONS ${name}: expected a string or an array of string literals`, 'invalidQuery', 400);
}

export function stringOption(udf: A.CreateFunctionStmt, name: string): string | undefined {
  const o = udf.options?.find((e) => e.name.toLowerCase() === name);
  if (!o) return undefined;
  if (o.value.kind !== 'StringLiteral') throw new QueryError(`Invalid value for OPTIONS ${name}: expected a string literal`, 'invalidQuery', 400);
  return o.value.value;
}

/**
 * CREATE-time checks of a non-SQL function, with the real service's wording
 * where it has one. `types` are the resolved parameter types and return type.
 */
export function checkExternalFunction(udf: A.CreateFunctionStmt, params: readonly SqlType[], returns: SqlType | undefined): void {
  const lang = languageOf(udf);
  if (!lang) return;
  const name = udf.name.join('.');
  if (udf.tableFunction || (lang === 'python' && udf.aggregate)) throw new QueryError(`Language "${udf.language}" is unsupported`, 'invalidQuery', 400);
  if (!returns) throw new QueryError(`Non-SQL functions must specify a return type`, 'invalidQuery', 400);
  if (udf.params.some((p) => p.type.kind === 'AnyType')) throw new QueryError(`Functions with ANY TYPE parameters must be SQL functions: ${name}`, 'invalidQuery', 400);
  if (udf.code === undefined) throw new QueryError(`The body of a LANGUAGE ${udf.language} function must be a string literal: ${name}`, 'invalidQuery', 400);
  if (lang === 'js') {
    for (const t of [...params, returns]) {
      const bad = jsUnsupportedType(t);
      if (bad) throw new QueryError(`Type ${bad} is not supported in JavaScript UDF ${name}`, 'invalidQuery', 400);
    }
    // user-defined-functions.md, Supported JavaScript UDF data types: JavaScript has no 64-bit integer, so INT64 is
    // not an input type of a JavaScript UDF (FLOAT64 or STRING instead); it is a return type. A JavaScript UDAF
    // takes INT64 as a BigInt (user-defined-aggregates.md, Permitted SQL type encodings).
    if (!udf.aggregate && params.some((t) => t.kind === 'INT64')) {
      throw new QueryError(`Type INT64 is not supported as an argument of JavaScript UDF ${name}; use FLOAT64 or STRING`, 'invalidQuery', 400);
    }
    stringListOption(udf, 'library');
  } else {
    const entry = stringOption(udf, 'entry_point');
    if (!entry) throw new QueryError(`OPTIONS entry_point is required for LANGUAGE python function ${name}`, 'invalidQuery', 400);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(entry)) throw new QueryError(`Invalid entry_point ${JSON.stringify(entry)}: expected a Python function name`, 'invalidQuery', 400);
    const rv = stringOption(udf, 'runtime_version');
    if (!rv) throw new QueryError(`OPTIONS runtime_version is required for LANGUAGE python function ${name}`, 'invalidQuery', 400);
    if (!/^python-3\.\d+$/.test(rv)) throw new QueryError(`Unsupported runtime_version ${JSON.stringify(rv)}: expected a value such as "python-3.11"`, 'invalidQuery', 400);
    stringListOption(udf, 'packages');
  }
}

/** Library source by URI: file:// (or a path) read directly, gs:// through the object-store emulator. */
function readLibrary(uri: string): string {
  try {
    const local = localPath(uri);
    if (local !== undefined) return fs.readFileSync(checkLocalPath(local, uri), 'utf8');
    if (uri.startsWith('gs://')) {
      const rest = uri.slice(5);
      const slash = rest.indexOf('/');
      if (slash <= 0) throw new Error('expected gs://bucket/object');
      const host = objectStoreHost();
      if (!host) throw new Error('no object store configured (STORAGE_EMULATOR_HOST)');
      const url = `${host}/storage/v1/b/${encodeURIComponent(rest.slice(0, slash))}/o/${encodeURIComponent(rest.slice(slash + 1))}?alt=media`;
      return runSync({ op: 'fetch', url }, udfTimeoutMs());
    }
  } catch (e) {
    if (e instanceof IoError) throw new QueryError(e.message, e.reason, e.code);
    throw new QueryError(`Cannot read JavaScript library ${uri}: ${(e as Error).message}`, 'invalidQuery', 400);
  }
  throw new QueryError(`Invalid library URI ${uri}: expected gs://bucket/path or file://path`, 'invalidQuery', 400);
}

// Same discovery as the load jobs' object-store reader (src/io/objects.ts, which does not export it).
function objectStoreHost(): string | undefined {
  const env = process.env;
  const h = env['STORAGE_EMULATOR_HOST'];
  if (h) return /^https?:\/\//.test(h) ? h.replace(/\/+$/, '') : `http://${h}`;
  const port = env['FAKE_GCS_PORT'] || env['FAKE_OBJSTORE_PORT'];
  return port ? `http://localhost:${port}` : undefined;
}

interface Compiled {
  readonly call: (args: readonly import('../types/vector.js').Vector[], n: number) => import('../types/vector.js').Vector;
}

const sessions = new WeakMap<object, Map<string, Compiled>>();
const aggregates = new WeakMap<object, Map<string, JsAggregate>>();

function cacheKey(udf: A.CreateFunctionStmt, params: readonly UdfParam[], returnType: SqlType): string {
  return `${languageOf(udf)}\0${udf.name.join('.')}\0${params.map((p) => `${p.name}:${typeToSql(p.type)}`).join(',')}\0${typeToSql(returnType)}\0${udf.code}\0${JSON.stringify(stringListOption(udf, 'library') ?? stringListOption(udf, 'packages') ?? [])}`;
}

/**
 * The registry-shaped definition of a JavaScript aggregate UDF, for the
 * analyzer to resolve like a built-in aggregate (GROUP BY, DISTINCT, FILTER).
 */
export function externalAggregateDef(session: object, udf: A.CreateFunctionStmt, name: string, paramTypes: readonly SqlType[], returnType: SqlType): AggregateFunctionDef {
  checkExternalFunction(udf, paramTypes, returnType);
  const params = udf.params.map((p, i) => ({ name: p.name, type: paramTypes[i]!, notAggregate: p.notAggregate === true }));
  let cache = aggregates.get(session);
  if (!cache) aggregates.set(session, (cache = new Map()));
  const key = cacheKey(udf, params, returnType);
  let agg = cache.get(key);
  if (!agg) {
    const libs = (stringListOption(udf, 'library') ?? []).map((uri) => [uri, readLibrary(uri)] as const);
    cache.set(key, (agg = new JsAggregate(name, params, returnType, udf.code ?? '', libs)));
  }
  return agg.definition();
}

function compile(udf: A.CreateFunctionStmt, name: string, params: readonly UdfParam[], returnType: SqlType): Compiled {
  const lang = languageOf(udf)!;
  const code = udf.code ?? '';
  if (lang === 'js') {
    const libs = (stringListOption(udf, 'library') ?? []).map((uri) => [uri, readLibrary(uri)] as const);
    return new JsUdf(name, params, returnType, code, libs);
  }
  return new PythonUdf(name, params, returnType, code, stringOption(udf, 'entry_point') ?? '', stringListOption(udf, 'packages') ?? []);
}

/**
 * The call of a non-SQL UDF over already-resolved (and coerced) arguments.
 * `session` scopes the compiled function (the analyzer's environment).
 */
export function externalUdfCall(session: object, udf: A.CreateFunctionStmt, name: string, args: readonly Expr[], paramTypes: readonly SqlType[], returnType: SqlType): CallExpr {
  checkExternalFunction(udf, paramTypes, returnType);
  const params = udf.params.map((p, i) => ({ name: p.name, type: paramTypes[i]! }));
  let cache = sessions.get(session);
  if (!cache) sessions.set(session, (cache = new Map()));
  const key = cacheKey(udf, params, returnType);
  let compiled = cache.get(key);
  if (!compiled) cache.set(key, (compiled = compile(udf, name, params, returnType)));
  const c = compiled;
  return {
    kind: 'call',
    type: returnType,
    name,
    args,
    fn: { returnType, argTypes: paramTypes, kernel: (vecs, n) => c.call(vecs, n) },
    // No SAFE. form: the analyzer refuses SAFE. on every user-defined function (functions-reference.md).
    safe: false,
  };
}
