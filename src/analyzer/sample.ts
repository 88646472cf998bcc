// TABLESAMPLE as the service has it: `TABLESAMPLE SYSTEM (percent PERCENT)` on
// a table, the percent a literal or a query parameter between 0 and 100
// (query-syntax.md, "TABLESAMPLE operator"). The reference implementation has
// more (BERNOULLI, RESERVOIR, ROWS, REPEATABLE, WITH WEIGHT, samples of
// subqueries); the service refuses those, and table-sampling.md ("Limitations")
// lists what it cannot sample: views, subqueries, table-valued function calls,
// array scans, anything inside an IN subquery, tables with row-level security,
// and a sampled table read more than once in a statement (views included).
// Where neither page nor the reference gives the service's wording, the
// messages paraphrase the page.

import type * as A from '../../grammar/ast.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { resolveExpr } from './expr.js';
import { mapOwnExprs, relInputs, rewriteExpr } from './rewrite.js';
import type { Rel, SampleRel } from './resolved.js';
import { Scope } from './scope.js';

/** What a FROM item is, for TABLESAMPLE: a table (its `db.ds.t` key) or the thing the service does not sample. */
export type SampleTarget =
  | { kind: 'table'; key: string; rowAccess: boolean }
  | { kind: 'not a table'; what: string }
  | { kind: 'array' }
  | { kind: 'tvf' };

/** The TableRef nodes resolved so far, by what they named (a pipe's `FROM t |> TABLESAMPLE` asks after its FROM). */
const refTargets = new WeakMap<A.TableRef, SampleTarget>();

export function noteTableRef(ref: A.TableRef, target: SampleTarget): void {
  refTargets.set(ref, target);
}

export function tableRefTarget(ref: A.TableRef): SampleTarget | undefined {
  return refTargets.get(ref);
}

/** Sample nodes over a table, with the table's key: a statement may read that table only this once. */
const sampledTables = new WeakMap<SampleRel, { key: string; loc: A.Loc }>();
/** The analyzers that sampled a table (only their plans need the walk of checkSampledOnce). */
const sampling = new WeakSet<Analyzer>();

/** How many IN subqueries the analyzer is inside (table-sampling.md: no sampling there). */
const inSubqueryDepth = new WeakMap<Analyzer, number>();

export function insideInSubquery<R>(an: Analyzer, f: () => R): R {
  inSubqueryDepth.set(an, (inSubqueryDepth.get(an) ?? 0) + 1);
  try {
    return f();
  } finally {
    inSubqueryDepth.set(an, inSubqueryDepth.get(an)! - 1);
  }
}

/** `rel` sampled by `s`; `target` is what the FROM item (or the pipe's input) is, at `loc`. */
export function sample(an: Analyzer, rel: Rel, s: A.TableSample, target: SampleTarget, loc: A.Loc): Rel {
  const percent = checkSample(an, s, target, loc);
  const out: SampleRel = { kind: 'sample', input: rel, percent, columns: rel.columns };
  if (target.kind === 'table') {
    sampledTables.set(out, { key: target.key, loc });
    sampling.add(an);
  }
  return out;
}

/** The percent of a TABLESAMPLE the service runs; an error for every other form and target. */
export function checkSample(an: Analyzer, s: A.TableSample, target: SampleTarget, loc: A.Loc): number {
  const at = s.loc ?? loc;
  // The one documented form: TABLESAMPLE SYSTEM ( percent PERCENT ).
  if (s.method !== 'SYSTEM') throw sqlError(`TABLESAMPLE ${s.method} is not supported: the only sampling method is SYSTEM`, at);
  if (s.unit !== 'PERCENT') throw sqlError('TABLESAMPLE SYSTEM takes its size in PERCENT: ROWS is not supported', s.size.loc);
  // The reference analyzer's wording with stratified sampling off.
  if (s.partitionBy) throw sqlError('TABLESAMPLE does not support the PARTITION BY clause', s.partitionBy[0]?.loc ?? at);
  if (s.repeatable) throw sqlError('TABLESAMPLE does not support REPEATABLE', s.repeatable.loc);
  if (s.withWeight) throw sqlError('TABLESAMPLE does not support WITH WEIGHT', at);
  const percent = percentOf(an, s.size);
  switch (target.kind) {
    case 'array':
      throw sqlError('TABLESAMPLE cannot be used with arrays', loc);
    case 'tvf':
      // The reference analyzer's wording when sampling of table-valued functions is off.
      throw sqlError('TABLESAMPLE from table-valued function calls is not supported', at);
    case 'not a table':
      throw sqlError(`TABLESAMPLE of ${target.what} is not supported: only a table can be sampled`, loc);
    case 'table':
      if (target.rowAccess) throw sqlError(`TABLESAMPLE of table ${target.key} is not supported: the table has row access policies`, loc);
      if ((inSubqueryDepth.get(an) ?? 0) > 0) throw sqlError('TABLESAMPLE is not supported inside an IN subquery', at);
      return percent;
  }
}

/**
 * The percent: an INT64 or FLOAT64 literal or query parameter (the reference
 * analyzer's check and wording), in [0, 100]. A script variable is neither
 * (query-syntax.md: it can't be a variable).
 */
function percentOf(an: Analyzer, size: A.Expr): number {
  const written = size.kind === 'IntLiteral' || size.kind === 'FloatLiteral' || size.kind === 'NamedParam' || size.kind === 'PositionalParam';
  const x = written ? resolveExpr(an, size, { scope: new Scope(), clause: 'TABLESAMPLE' }) : undefined;
  if (!x || x.kind !== 'literal' || (x.type.kind !== 'INT64' && x.type.kind !== 'FLOAT64')) {
    throw sqlError('PERCENT expects either a double or an integer literal or parameter', size.loc);
  }
  const n = x.value === null ? NaN : Number(x.value as bigint | number);
  if (!(n >= 0 && n <= 100)) throw sqlError('PERCENT value must be in the range [0, 100]', size.loc);
  return n;
}

/**
 * table-sampling.md (Limitations): a sampled table appears once in a query
 * statement, counting the tables views read. Checked on the finished plan, so
 * that a FROM item resolved twice on the way (a rewrite's retry) counts once.
 */
export function checkSampledOnce(an: Analyzer, plan: Rel): void {
  if (!sampling.has(an)) return;
  const scans = new Map<string, Set<Rel>>();
  const samples: { key: string; loc: A.Loc }[] = [];
  const seen = new Set<Rel>();
  const walk = (r: Rel): void => {
    if (seen.has(r)) return;
    seen.add(r);
    if (r.kind === 'scan') {
      const key = `${r.table.projectId}.${r.table.datasetId}.${r.table.tableId}`;
      const set = scans.get(key) ?? new Set<Rel>();
      scans.set(key, set.add(r));
    }
    if (r.kind === 'sample') {
      const s = sampledTables.get(r);
      if (s) samples.push(s);
    }
    mapOwnExprs(r, (e) => {
      rewriteExpr(e, (x) => {
        if (x.kind === 'subquery') walk(x.plan);
        return undefined;
      });
      return e;
    });
    for (const c of relInputs(r)) walk(c);
  };
  walk(plan);
  for (const s of samples) {
    if ((scans.get(s.key)?.size ?? 0) > 1) throw sqlError(`Table ${s.key} is sampled by TABLESAMPLE, so the query may read it only once (views included)`, s.loc);
  }
}
