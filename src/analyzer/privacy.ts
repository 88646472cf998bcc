// The privacy clauses of SELECT: WITH AGGREGATION_THRESHOLD (with the aggregation threshold analysis rule of views)
// and WITH DIFFERENTIAL_PRIVACY. Both are rewritten at AST level into a plain aggregate query:
//   AGGREGATION_THRESHOLD: HAVING COUNT(DISTINCT privacy unit) >= threshold (query-syntax.md, AGGREGATION_THRESHOLD
//     clause; analysis-rules.md for views carrying the rule);
//   DIFFERENTIAL_PRIVACY: the page's rules are enforced, and each aggregate is computed exactly, without noise, as
//     the service computes it with epsilon = 1e20 (query-syntax.md, "Remove noise"). Small groups are not removed
//     and max_groups_contributed is not applied: both are random in the service.
import type * as A from '../../grammar/ast.js';
import { lookupFunction } from '../functions/registry.js';
import { isGroupable, typeToSql } from '../types/types.js';
import type { Analyzer, ThresholdView } from './context.js';
import { sqlError } from './errors.js';
import { resolveExpr } from './expr.js';
import { Scope } from './scope.js';
import type { TableInfo } from '../storage/api.js';

// Aggregate functions the AGGREGATION_THRESHOLD clause allows (query-syntax.md, AGGREGATION_THRESHOLD clause, Details).
const THRESHOLD_AGGREGATES = new Set([
  'APPROX_COUNT_DISTINCT', 'AVG', 'COUNT', 'COUNTIF', 'LOGICAL_OR', 'LOGICAL_AND', 'SUM',
  'COVAR_POP', 'COVAR_SAMP', 'STDDEV_POP', 'STDDEV_SAMP', 'VAR_POP', 'VAR_SAMP',
]);

/** Function calls of an expression tree, not looking into subqueries; `inAggregate` tells whether an aggregate encloses the node. */
function walk(e: unknown, f: (o: Record<string, unknown>, inAggregate: boolean) => void, inAggregate = false): void {
  if (Array.isArray(e)) return e.forEach((x) => walk(x, f, inAggregate));
  if (!e || typeof e !== 'object' || e instanceof Uint8Array) return;
  const o = e as Record<string, unknown>;
  if (o.kind === 'Query' || o.kind === 'ScalarSubquery' || o.kind === 'ArraySubquery' || o.kind === 'ExistsSubquery') return;
  f(o, inAggregate);
  const agg = inAggregate || (o.kind === 'FunctionCall' && !o.over && isAggregate(o as unknown as A.FunctionCall));
  for (const v of Object.values(o)) if (v && typeof v === 'object') walk(v, f, agg);
}

const callName = (f: A.FunctionCall): string => f.name.join('.').toUpperCase();
const isAggregate = (f: A.FunctionCall): boolean => lookupFunction(callName(f))?.kind === 'aggregate';

/** An option's value when it is a literal or a query parameter, with its type. */
function optionConstant(an: Analyzer, e: A.Expr, clause: string): { value: unknown; type: string } | undefined {
  const r = resolveExpr(an, e, { scope: new Scope(), clause });
  return r.kind === 'literal' ? { value: r.value, type: r.type.kind } : undefined;
}

// ---------------------------------------------------------------- AGGREGATION_THRESHOLD

/** A view's aggregation threshold policy (analysis-rules.md: privacy_policy's aggregation_threshold_policy), if it has one. */
export function thresholdPolicy(info: TableInfo): { threshold: number; unit: string } | undefined {
  const raw = (info.resource.options as Record<string, unknown> | undefined)?.privacy_policy;
  if (typeof raw !== 'string') return undefined;
  let policy: { aggregation_threshold_policy?: { threshold?: unknown; privacy_unit_column?: unknown; privacy_unit_columns?: unknown } };
  try {
    policy = JSON.parse(raw) as typeof policy;
  } catch {
    return undefined;
  }
  const p = policy.aggregation_threshold_policy;
  // analysis-rules.md spells the key privacy_unit_column, data-definition-language.md privacy_unit_columns.
  const unit = p?.privacy_unit_column ?? p?.privacy_unit_columns;
  if (!p || typeof unit !== 'string') return undefined;
  return { threshold: Number(p.threshold ?? 50), unit };
}

/** A view with the rule is only read by the FROM clause of a SELECT WITH AGGREGATION_THRESHOLD (analysis-rules.md). */
export function noteThresholdView(an: Analyzer, info: TableInfo, alias: string, loc: A.Loc): void {
  const policy = thresholdPolicy(info);
  if (!policy) return;
  const name = `${info.id.projectId}.${info.id.datasetId}.${info.id.tableId}`;
  if (!an.thresholdViews) throw sqlError(`View ${name} has an aggregation threshold analysis rule: it can only be queried with SELECT WITH AGGREGATION_THRESHOLD`, loc);
  an.thresholdViews.push({ name, alias, ...policy });
}

/**
 * SELECT WITH AGGREGATION_THRESHOLD OPTIONS(threshold, privacy_unit_column), `views` the rule-carrying views its
 * FROM clause read: the query keeps only the groups with at least `threshold` distinct privacy units, i.e.
 * HAVING COUNT(DISTINCT privacy_unit_column) >= threshold.
 */
export function withAggregationThreshold(an: Analyzer, sel: A.Select, views: readonly ThresholdView[]): A.Select {
  const loc = sel.loc;
  let threshold: A.Expr | undefined;
  let unit: A.Expr | undefined;
  for (const o of sel.withModifier!.options ?? []) {
    const name = o.name.toLowerCase();
    if (name === 'threshold') threshold = o.value;
    else if (name === 'privacy_unit_column') unit = o.value;
    else throw sqlError(`Unknown option ${o.name} for AGGREGATION_THRESHOLD`, loc);
  }
  if (unit && unit.kind !== 'PathExpr') throw sqlError('AGGREGATION_THRESHOLD requires the option privacy_unit_column, a column path', unit.loc);
  let t = 0;
  if (threshold) {
    const c = optionConstant(an, threshold, 'AGGREGATION_THRESHOLD threshold');
    if (!c || c.type !== 'INT64' || c.value === null || Number(c.value) <= 0) throw sqlError('The threshold of AGGREGATION_THRESHOLD must be a positive INT64', threshold.loc);
    t = Number(c.value);
  }
  const view = views[0];
  if (view) {
    // analysis-rules.md, Limitations: the query's threshold is at least the view's; the privacy unit column is the view's.
    if (threshold && t < view.threshold) throw sqlError(`Aggregation threshold is too low: the query's threshold ${t} is below the threshold ${view.threshold} of view ${view.name}`, threshold.loc);
    if (!threshold) t = view.threshold;
    if (unit && (unit as A.PathExpr).parts.at(-1)!.toLowerCase() !== view.unit.toLowerCase()) {
      throw sqlError(`privacy_unit_column option cannot override the privacy unit column ${view.unit} set in view ${view.name}`, unit.loc);
    }
    // analysis-rules.md: the privacy unit column's values cannot be projected.
    walk(sel.items, (o, inAggregate) => {
      if (!inAggregate && o.kind === 'PathExpr' && (o.parts as string[]).at(-1)!.toLowerCase() === view.unit.toLowerCase()) {
        throw sqlError(`The privacy unit column ${view.unit} of view ${view.name} cannot be projected`, o.loc as A.Loc);
      }
    });
    unit ??= { kind: 'PathExpr', loc, parts: [view.alias, view.unit] };
  }
  if (!unit) throw sqlError('AGGREGATION_THRESHOLD requires the option privacy_unit_column, a column path', loc);
  // query-syntax.md: a query reading no view with the rule writes both options (only the view form brackets them).
  if (!view && !threshold) throw sqlError('AGGREGATION_THRESHOLD requires the option threshold when no view with an aggregation threshold analysis rule is queried', loc);
  walk([sel.items, sel.having, sel.qualify], (o) => {
    if (o.kind !== 'FunctionCall') return;
    const f = o as unknown as A.FunctionCall;
    if (isAggregate(f) && !THRESHOLD_AGGREGATES.has(callName(f))) throw sqlError(`Aggregate function ${callName(f)} is not supported in a query with the AGGREGATION_THRESHOLD clause`, f.loc);
  });
  const units: A.Expr = { kind: 'FunctionCall', loc, name: ['COUNT'], safe: false, distinct: true, args: [unit] };
  const enough: A.Expr = { kind: 'BinaryExpr', loc, op: '>=', left: units, right: { kind: 'IntLiteral', loc, text: String(t), hex: false } };
  return { ...sel, withModifier: undefined, having: sel.having ? { kind: 'BinaryExpr', loc, op: 'AND', left: enough, right: sel.having } : enough };
}

// ---------------------------------------------------------------- DIFFERENTIAL_PRIVACY

// The differentially private aggregate functions (aggregate-dp-functions.md). PERCENTILE_CONT's only form takes
// contribution_bounds_per_row, which would clamp: refused by name, as the other functions' bounds are (aggregate-calls.ts).
const DP_AGGREGATES = new Set(['AVG', 'COUNT', 'SUM']);
const DP_OPTIONS = new Set(['epsilon', 'delta', 'max_groups_contributed', 'privacy_unit_column']);
// 1/epsilon scales the noise; past this it is no longer a normal FLOAT64, where the service's query fails
// (query-syntax.md, epsilon: "Extremely large epsilon values, such as 1e308, cause query failure").
const MAX_EPSILON = 1 / 2.2250738585072014e-308;

/**
 * Checks SELECT WITH DIFFERENTIAL_PRIVACY against query-syntax.md (Differential privacy clause) and
 * differential-privacy.md, and returns the query as it runs here, plus the privacy unit path, which the caller
 * checks once the FROM clause is resolved.
 */
export function withDifferentialPrivacy(an: Analyzer, sel: A.Select): { sel: A.Select; unit: A.PathExpr } {
  const opts = new Map<string, A.OptionEntry>();
  for (const o of sel.withModifier!.options ?? []) {
    const name = o.name.toLowerCase();
    if (!DP_OPTIONS.has(name)) throw sqlError(`Unknown option ${o.name} for SELECT WITH DIFFERENTIAL_PRIVACY`, o.value.loc);
    if (opts.has(name)) throw sqlError(`Duplicate option ${o.name} for SELECT WITH DIFFERENTIAL_PRIVACY: a query has one and only one ${name}`, o.value.loc);
    opts.set(name, o);
  }
  // The privacy unit comes from the option or from a view's privacy policy; the emulator keeps no differential
  // privacy policies, so without the option there is none.
  const unit = opts.get('privacy_unit_column')?.value;
  if (!unit) throw sqlError('A SELECT WITH DIFFERENTIAL_PRIVACY query must query data with a specified privacy unit column', sel.loc);
  if (unit.kind !== 'PathExpr') throw sqlError('The option privacy_unit_column of SELECT WITH DIFFERENTIAL_PRIVACY must be a column path', unit.loc);
  for (const name of ['epsilon', 'delta']) {
    const o = opts.get(name);
    if (!o) throw sqlError(`SELECT WITH DIFFERENTIAL_PRIVACY requires the option ${name}`, sel.loc);
    const c = o.value.kind === 'FloatLiteral' || o.value.kind === 'IntLiteral' || o.value.kind === 'UnaryExpr' || o.value.kind === 'NamedParam' || o.value.kind === 'PositionalParam'
      ? optionConstant(an, o.value, name) : undefined;
    if (!c || (c.type !== 'FLOAT64' && c.type !== 'INT64') || c.value === null) throw sqlError(`The option ${name} of SELECT WITH DIFFERENTIAL_PRIVACY must be a FLOAT64 literal`, o.value.loc);
    const v = Number(c.value);
    if (name === 'epsilon' && !(v > 0 && v <= MAX_EPSILON)) throw sqlError(`The option epsilon must be positive and at most ${MAX_EPSILON}, not ${v}`, o.value.loc);
    if (name === 'delta' && !(v >= 0 && v <= 1)) throw sqlError(`The option delta must be between 0 and 1, not ${v}`, o.value.loc);
  }
  const groups = opts.get('max_groups_contributed');
  if (groups) {
    const c = optionConstant(an, groups.value, 'max_groups_contributed');
    const ok = c && (c.value === null || (c.type === 'INT64' && Number(c.value) >= 1 && Number(c.value) <= 2147483647));
    if (!ok) throw sqlError('Option MAX_GROUPS_CONTRIBUTED must be an INT64 literal between 1 and 2147483647', groups.value.loc);
  }
  // differential-privacy.md: only differentially private aggregate functions in the SELECT list.
  walk(sel.items, (o) => {
    if (o.kind !== 'FunctionCall') return;
    const f = o as unknown as A.FunctionCall;
    if (!isAggregate(f) && callName(f) !== 'PERCENTILE_CONT') return;
    // Contribution bounds are refused by name where the call resolves (analyzer/aggregate-calls.ts).
    if (f.args.some((a) => a.kind === 'NamedArgument' && a.name.toLowerCase() === 'contribution_bounds_per_group')) return;
    const name = callName(f);
    if (name === 'PERCENTILE_CONT') {
      throw sqlError('PERCENTILE_CONT in SELECT WITH DIFFERENTIAL_PRIVACY is not supported by this emulator: its contribution_bounds_per_row would clamp values, and the emulator does not bound contributions (https://cloud.google.com/bigquery/docs/reference/standard-sql/aggregate-dp-functions)', f.loc);
    }
    if (!DP_AGGREGATES.has(name)) throw sqlError(`Unsupported function in SELECT WITH DIFFERENTIAL_PRIVACY clause: ${name}`, f.loc);
  });
  const items = sel.items.map((it) => (it.kind === 'SelectExpr' ? { ...it, expr: lowerDpCalls(it.expr, unit) } : it));
  return { sel: { ...sel, items, withModifier: undefined }, unit };
}

/**
 * aggregate-dp-functions.md: SUM adds the non-NULL, non-NaN values (the per-unit sums summed: the plain sum);
 * AVG averages the per-unit averages of those values (`$dp_avg`, functions/aggregate-dp.ts); COUNT is the plain count.
 */
function lowerDpCalls(e: A.Expr, unit: A.PathExpr): A.Expr {
  const map = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(map);
    if (!x || typeof x !== 'object' || x instanceof Uint8Array) return x;
    const o = x as Record<string, unknown>;
    if (o.kind === 'Query' || o.kind === 'ScalarSubquery' || o.kind === 'ArraySubquery' || o.kind === 'ExistsSubquery') return x;
    const bounded = o.kind === 'FunctionCall' && (o.args as A.Expr[]).some((a) => a.kind === 'NamedArgument');
    if (o.kind === 'FunctionCall' && callName(o as unknown as A.FunctionCall) === 'AVG' && !o.over && !bounded) {
      const f = o as unknown as A.FunctionCall;
      return { ...f, name: ['$dp_avg'], args: [...f.args, unit] };
    }
    if (o.kind === 'FunctionCall' && callName(o as unknown as A.FunctionCall) === 'SUM' && !o.over) {
      const f = o as unknown as A.FunctionCall;
      const arg = f.args[0]!;
      const notNaN: A.Expr = { kind: 'IsExpr', loc: f.loc, not: true, what: 'TRUE', expr: { kind: 'FunctionCall', loc: f.loc, name: ['IS_NAN'], safe: false, distinct: false, args: [arg] } };
      return { ...f, where: f.where ? { kind: 'BinaryExpr', loc: f.loc, op: 'AND', left: f.where, right: notNaN } : notNaN };
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) out[k] = map(v);
    return out;
  };
  return map(e) as A.Expr;
}

/** The privacy unit column resolves in the FROM clause's scope and is groupable (differential-privacy.md). */
export function checkPrivacyUnit(an: Analyzer, unit: A.PathExpr, scope: Scope): void {
  const r = resolveExpr(an, unit, { scope, clause: 'privacy_unit_column' });
  if (!isGroupable(r.type)) throw sqlError(`The privacy unit column ${unit.parts.join('.')} must be of a groupable type, not ${typeToSql(r.type)}`, unit.loc);
}
