// Analyzer entry points: a query statement -> ResolvedQuery (plan + output
// names). DDL/DML statements reuse resolveQuery/resolveExpr through run.ts.
import type * as A from '../../grammar/ast.js';
import { Analyzer, type AnalyzerEnv } from './context.js';
import { sqlError } from './errors.js';
import { graphTypeIn } from './graph-values.js';
import { project, resolveQuery, type RelOut } from './query.js';
import type { ResolvedQuery } from './resolved.js';
import { checkSampledOnce } from './sample.js';

export { Analyzer, type AnalyzerEnv } from './context.js';
export { resolveQuery, project, type RelOut } from './query.js';
export { resolveSelect } from './select.js';
export { resolveExpr, type ExprCtx } from './expr.js';
export { coerce, literal, originOf } from './coercion.js';
export { callScalar } from './calls.js';
export { Scope } from './scope.js';
export { tableIdOf, tableNotFound, splitPath } from './names.js';
export { typeFromNode, canCast } from './types.js';

/**
 * Result column names as the service reports them: anonymous columns are
 * f0_, f1_, ... (counting anonymous columns only) and repeated names get
 * _1, _2, ... suffixes.
 */
export function outputNames(names: readonly string[]): string[] {
  let anon = 0;
  const seen = new Map<string, number>();
  const taken = new Set(names.filter((n) => n).map((n) => n.toLowerCase()));
  return names.map((n) => {
    let name = n || `f${anon++}_`;
    if (!n) while (taken.has(name.toLowerCase())) name = `f${anon++}_`;
    const l = name.toLowerCase();
    const k = seen.get(l);
    if (k === undefined) {
      seen.set(l, 0);
      return name;
    }
    let i = k + 1;
    while (taken.has(`${l}_${i}`)) i++;
    seen.set(l, i);
    const out = `${name}_${i}`;
    taken.add(out.toLowerCase());
    return out;
  });
}

/** Results whose column names repeat (case-insensitively) are refused where they define a table: a destination table, CTAS, a view (query-syntax.md, Duplicate aliases). */
export function checkDuplicateNames(names: readonly string[], loc?: A.Loc): void {
  const seen = new Set<string>();
  const dups: string[] = [];
  for (const n of names) {
    if (!n) continue;
    const l = n.toLowerCase();
    if (seen.has(l) && !dups.includes(n)) dups.push(n);
    seen.add(l);
  }
  if (dups.length) throw sqlError(`Duplicate column names in the result are not supported. Found duplicate(s): ${dups.join(', ')}`, loc);
}

export function analyzeQuery(env: AnalyzerEnv, q: A.Query, an = new Analyzer(env), opts: { allowDuplicateNames?: boolean } = {}): ResolvedQuery {
  let out: RelOut = resolveQuery(an, q, undefined);
  checkSampledOnce(an, out.rel);
  const valueTable = out.isValueTable;
  for (const c of out.rel.columns) {
    const g = graphTypeIn(c.type);
    if (g) throw sqlError(`Returning expressions of type ${g} is not allowed`);
  }
  const c0 = out.rel.columns[0];
  if (out.isValueTable && c0 && c0.type.kind === 'STRUCT') {
    // A STRUCT value table returns its fields as the result columns.
    const t = c0.type;
    const names = t.fields.map((f) => f.name);
    const exprs = t.fields.map((f, i) => ({ kind: 'field' as const, type: f.type, arg: { kind: 'column' as const, type: t, columnId: c0.id }, fieldIndex: i }));
    out = { rel: project(an, out.rel, exprs, names), names, isValueTable: false };
  }
  if (!out.isValueTable && !opts.allowDuplicateNames) checkDuplicateNames(out.names);
  return { plan: out.rel, outputNames: outputNames(out.names), isValueTable: valueTable };
}
