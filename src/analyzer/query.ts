// Query blocks: FROM (tables, views, CTEs, joins, UNNEST, subqueries), WHERE,
// GROUP BY / aggregation, HAVING, windows, QUALIFY, SELECT list, DISTINCT,
// ORDER BY, LIMIT, set operations, WITH [RECURSIVE] and pipe operators.
//
// Plan shape of one SELECT block (see README.md):
//   from -> Filter(WHERE) -> Aggregate -> Filter(HAVING) -> Window
//        -> Filter(QUALIFY) -> Project(items + hidden ORDER BY keys)
//        -> Aggregate(DISTINCT) -> Sort -> Limit -> Project(drop hidden)
import type { Interval, Value } from '../types/values.js';
import type * as A from '../../grammar/ast.js';
import { T, arrayOf, isGroupable, isOrderable, structOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer, CteDef } from './context.js';
import { lookupFunction } from '../functions/registry.js';
import { isBinaryCollation } from '../functions/collation.js';
import { sqlError } from './errors.js';
import {
  AggCollector,
  orderCollation,
  WindowCollector,
  coerce,
  collationGrouper,
  exprEquals,
  literal,
  locOf,
  markLoc,
  originOf,
  refNameOf,
  resolveExpr,
  type ExprCtx,
} from './expr.js';
import { constantValue, resolveTableRef, tableIdOf } from './names.js';
import { vectorIndexesOf } from './search-index.js';
import { mapRelExprs, rewriteExpr } from './rewrite.js';
import { matchRecognizeQuery } from './match-recognize.js';
import type {
  AggregateRel,
  Expr,
  LimitRel,
  ProjectRel,
  Rel,
  ResolvedColumn,
  SetOpRel,
  SortKey,
  SubqueryExpr,
  UnnestRel,
} from './resolved.js';
import { Correlation, Scope, colRef, type RangeVar } from './scope.js';
import { Origin, canCoerce, supertype } from './types.js';

/** A resolved query: its plan plus the output names (parallel to plan.columns). */
export interface RelOut {
  readonly rel: Rel;
  readonly names: readonly string[];
  readonly isValueTable: boolean;
  /** Table aliases the next pipe operator sees (pipe syntax: "a pipe operator can see every alias that exists in the table preceding the pipe"). */
  readonly pipeVars?: readonly PipeVar[];
  /** How many trailing columns only `pipeVars` read (values an alias keeps after `|> SET`/`DROP`); never output. */
  readonly hidden?: number;
}

/** A pipe table alias: its columns by position in the table's columns. */
export interface PipeVar {
  readonly name: string;
  readonly columns: readonly { readonly name: string; readonly index: number }[];
  /** A value table's alias: the row value is this column. */
  readonly valueIndex?: number;
}

// ---------------------------------------------------------------- small builders

export function project(an: Analyzer, input: Rel, exprs: readonly Expr[], names: readonly string[]): ProjectRel {
  const columns = exprs.map((e, i) => (e.kind === 'column' && !e.correlated && input.columns.some((c) => c.id === e.columnId) && false ? input.columns[0]! : an.newColumn(names[i] ?? '', e.type)));
  return { kind: 'project', input, exprs, columns };
}


function filter(input: Rel, predicate: Expr): Rel {
  return { kind: 'filter', input, predicate, columns: input.columns };
}

function oneRow(): Rel {
  return { kind: 'values', rows: [[]], columns: [] };
}

function requireBool(e: Expr, loc: A.Loc, clause: string): Expr {
  if (e.type.kind === 'BOOL') return e;
  if (originOf(e) === Origin.Null) return literal(T.BOOL, null);
  throw sqlError(`${clause} should return type BOOL, but returns ${typeToSql(e.type)}`, loc);
}

function constIntExpr(an: Analyzer, e: A.Expr, what: string): number {
  const x = resolveExpr(an, e, { scope: new Scope(), clause: what });
  // Constant expressions (MOD(@p, 2), 1 + 1) fold to a literal here.
  const v = x.kind === 'literal' ? x.value : constantValue(x);
  if ((x.type.kind !== 'INT64' && originOf(x) !== Origin.Null) || v === undefined) {
    throw sqlError(`${what} expects an integer literal or parameter`, e.loc);
  }
  // A NULL or negative LIMIT/OFFSET that is not a written literal fails as the service's evaluation does.
  const limit = what === 'LIMIT' || what === 'OFFSET';
  const written = e.kind === 'IntLiteral' || (e.kind === 'UnaryExpr' && e.operand.kind === 'IntLiteral');
  if (v === null) throw sqlError(limit ? 'Limit requires non-null count and offset' : `${what} must not be null`, e.loc);
  const n = Number(v as bigint);
  if (n < 0) throw sqlError(limit && !written ? 'Limit requires non-negative count and offset' : `${what} expects a non-negative integer literal or parameter`, e.loc);
  return n;
}

function implicitAlias(e: A.Expr): string {
  if (e.kind === 'PathExpr') return e.parts[e.parts.length - 1]!;
  if (e.kind === 'FieldAccess') return e.field;
  return '';
}

// ---------------------------------------------------------------- subqueries (expressions)

export function resolveSubquery(an: Analyzer, q: A.Query, ctx: ExprCtx, mode: SubqueryExpr['mode'], loc: A.Loc, inExpr?: Expr): Expr {
  // The reference analyzer's wording for a column DEFAULT, the one clause that sets noSubqueries.
  if (ctx.noSubqueries) throw sqlError(`${ctx.clause.charAt(0).toUpperCase()}${ctx.clause.slice(1)} must not include a subquery`, loc);
  const corr = new Correlation();
  // In HAVING/QUALIFY, select-list aliases of aggregates stay visible inside subqueries
  // (HAVING EXISTS (SELECT * FROM UNNEST(agg_alias))).
  let parent = ctx.scope;
  if (ctx.selectAliases?.size) {
    const aliasScope = new Scope(ctx.scope);
    for (const [name, e] of ctx.selectAliases) {
      if (e.kind === 'column' && !e.correlated && ctx.aggs?.calls.some((c) => c.column.id === e.columnId)) {
        const c = ctx.aggs.calls.find((x) => x.column.id === e.columnId)!.column;
        aliasScope.extra.set(name, { ...c, name });
      }
    }
    if (aliasScope.extra.size) parent = aliasScope;
  }
  const boundary = new Scope(parent, corr);
  const out = resolveQuery(an, q, boundary);
  let plan = out.rel;
  const cols = plan.columns;
  let type: SqlType;
  if (mode === 'exists') type = T.BOOL;
  else {
    if (cols.length !== 1 && mode === 'in') throw sqlError('Subquery of type IN must have only one output column', loc);
    if (cols.length !== 1) {
      const what = mode === 'array' ? 'ARRAY subquery' : 'Scalar subquery';
      throw sqlError(`${what} cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values`, loc);
    }
    type = cols[0]!.type;
    if (mode === 'array') {
      if (type.kind === 'ARRAY') throw sqlError('Cannot use array subquery with column of type ' + typeToSql(type) + ' because nested arrays are not supported', loc);
      type = arrayOf(type);
    }
    if (mode === 'in') {
      const st = supertype([
        { type: inExpr!.type, origin: originOf(inExpr!) },
        { type: cols[0]!.type, origin: Origin.Column },
      ]);
      if (!st) throw sqlError(`Cannot execute IN subquery with uncomparable types ${typeToSql(inExpr!.type)} and ${typeToSql(cols[0]!.type)}`, loc);
      inExpr = coerce(inExpr!, st);
      if (st.kind === 'STRING' && !isBinaryCollation(st.collation)) {
        // IN under a collation: both sides compare as collation keys.
        const spec = literal(T.STRING, st.collation!);
        inExpr = expr.callScalar('$collation_key', [inExpr, spec], loc);
        plan = project(an, plan, [expr.callScalar('$collation_key', [coerce(colRef(cols[0]!), st), spec], loc)], [cols[0]!.name]);
      } else if (!typeEquals(cols[0]!.type, st)) plan = project(an, plan, [coerce(colRef(cols[0]!), st)], [cols[0]!.name]);
      type = T.BOOL;
    }
  }
  const e: SubqueryExpr = { kind: 'subquery', type, mode, plan, ...(inExpr ? { inExpr } : {}), correlatedColumns: [...corr.ids] };
  return markLoc(e, loc);
}

// ---------------------------------------------------------------- queries

/** Resolves a full query (WITH, body, ORDER BY, LIMIT, pipes). `outer` is the enclosing scope for correlation. */
export function resolveQuery(an: Analyzer, q: A.Query, outer: Scope | undefined): RelOut {
  const ctes: { id: number; name: string; plan: Rel }[] = [];
  if (q.with) {
    an.ctes.push(new Map());
    for (const c of q.with.recursive ? dependencyOrder(q.with.ctes) : q.with.ctes) ctes.push(resolveCte(an, c, q.with.recursive, outer));
  }
  try {
    let out: RelOut;
    if (q.body.kind === 'Select') {
      out = resolveSelect(an, q.body, outer, q.orderBy, q.limit, q.offset);
    } else {
      out = resolveQueryExpr(an, q.body, outer);
      if (q.orderBy?.length) out = orderByOutput(an, out, q.orderBy, outer);
      if (q.limit || q.offset) out = applyLimit(an, out, q.limit, q.offset);
    }
    let pipeCteLevels = 0;
    try {
      for (const p of q.pipes) {
        if (p.kind === 'PipeWith') {
          // |> WITH: CTEs visible to the remaining pipe operators of this query.
          an.ctes.push(new Map());
          pipeCteLevels++;
          for (const c of p.recursive ? dependencyOrder(p.ctes) : p.ctes) ctes.push(resolveCte(an, c, p.recursive, outer));
          continue;
        }
        out = applyPipe(an, out, p, outer);
      }
    } finally {
      for (let i = 0; i < pipeCteLevels; i++) an.ctes.pop();
    }
    // A query's table aliases end with it.
    out = withoutPipeVars(an, out);
    if (ctes.length) {
      out = { ...out, rel: { kind: 'with', ctes, body: out.rel, columns: out.rel.columns } };
    }
    return out;
  } finally {
    if (q.with) an.ctes.pop();
  }
}

function resolveCte(an: Analyzer, c: A.Cte, recursive: boolean, enclosing: Scope | undefined): { id: number; name: string; plan: Rel } {
  // A WITH query stands alone: no names of an enclosing query (a SQL function's parameters stay visible).
  const outer = enclosing && !c.seesOuter ? Object.assign(new Scope(enclosing), { opaque: true }) : enclosing;
  const map = an.ctes[an.ctes.length - 1]!;
  const lname = c.name.toLowerCase();
  if (map.has(lname)) throw sqlError(`Duplicate alias ${c.name} for WITH subquery`, c.loc);
  const id = an.newId();
  const selfRef = recursive && queryMentions(c.query, lname);
  if (selfRef && c.query.pipes.length === 1 && c.query.pipes[0]!.kind === 'PipeSetOp' && c.query.pipes[0].queries.length === 1 && !c.query.orderBy && !c.query.limit) {
    // `base |> UNION ... (recursive term)` is the recursive UNION.
    const p = c.query.pipes[0];
    const { kind: _k, queries, loc, ...mods } = p;
    void _k;
    const left: A.QueryExpr = c.query.body;
    c = { ...c, query: { ...c.query, pipes: [], body: { kind: 'SetOperation', loc, ...mods, left, right: queries[0]! } } };
  }
  const body = c.query.body;
  if (selfRef && body.kind === 'SetOperation' && body.op === 'UNION' && !c.query.orderBy && !c.query.limit && !c.query.pipes.length) {
    // A WITH inside the recursive CTE's own query is visible to both terms.
    const innerCtes: { id: number; name: string; plan: Rel }[] = [];
    if (c.query.with) {
      an.ctes.push(new Map());
      try {
        for (const ic of c.query.with.recursive ? dependencyOrder(c.query.with.ctes) : c.query.with.ctes) innerCtes.push(resolveCte(an, ic, c.query.with.recursive, outer));
      } catch (e) {
        an.ctes.pop();
        throw e;
      }
    }
    let r: { id: number; name: string; plan: Rel };
    try {
      r = resolveRecursiveCte(an, c, body, id, outer);
    } finally {
      if (c.query.with) an.ctes.pop();
    }
    map.set(lname, { id, name: c.name, columns: r.plan.columns, isValueTable: false });
    return innerCtes.length ? { ...r, plan: { kind: 'with', ctes: innerCtes, body: r.plan, columns: r.plan.columns } } : r;
  }
  if (selfRef) {
    if (c.query.orderBy) throw sqlError('A recursive query may not use ORDER BY', c.loc);
    if (c.query.limit) throw sqlError('A recursive query may not use LIMIT', c.loc);
    throw sqlError('Recursive query does not have the form <non-recursive-term> UNION [ALL|DISTINCT] <recursive-term>', c.loc);
  }
  const out = resolveQuery(an, c.query, outer);
  const cols = out.rel.columns.map((col, i) => ({ ...col, name: out.names[i] ?? '' }));
  map.set(lname, { id, name: c.name, columns: cols, isValueTable: out.isValueTable });
  return { id, name: c.name, plan: out.rel };
}

/** WITH RECURSIVE: every CTE sees every other, so resolve referenced ones first. */
function dependencyOrder(ctes: readonly A.Cte[]): A.Cte[] {
  const out: A.Cte[] = [];
  const state = new Map<A.Cte, number>();
  const visit = (c: A.Cte): void => {
    if (state.get(c)) return;
    state.set(c, 1);
    for (const d of ctes) if (d !== c && !state.get(d) && queryMentions(c.query, d.name.toLowerCase())) visit(d);
    state.set(c, 2);
    out.push(c);
  };
  for (const c of ctes) visit(c);
  return out;
}

/** `base UNION [ALL|DISTINCT] recursive-term` of a self-referencing CTE (the name is bound in the innermost CTE level). */
function resolveRecursiveCte(an: Analyzer, c: A.Cte, body: A.SetOperation, id: number, outer: Scope | undefined): { id: number; name: string; plan: Rel } {
  const map = an.ctes[an.ctes.length - 1]!;
  const lname = c.name.toLowerCase();
  {
    // The last UNION input is the recursive term; the ones before it are the base.
    if (queryMentions(body.left, lname)) throw sqlError('Recursive reference is not allowed in non-recursive UNION term', body.loc);
    checkRecursiveTerm(body.right, c.name, body.loc);
    const base = resolveQueryExpr(an, body.left, outer);
    const cols = base.rel.columns.map((col, i) => an.newColumn(base.names[i] ?? '', col.type));
    map.set(lname, { id, name: c.name, columns: cols, isValueTable: false });
    let rec = resolveQueryExpr(an, body.right, outer);
    if (body.corresponding || body.byName) rec = correspondingInputs(an, body, [base, rec], `${body.op} ${body.quantifier}`)[1]!;
    if (rec.rel.columns.length !== cols.length) {
      throw sqlError(`Queries in UNION ALL have mismatched column count; query 1 has ${cols.length} columns, query 2 has ${rec.rel.columns.length} columns`, body.loc);
    }
    // The recursive term's columns take the base's types: they must coerce to them (the reference's check and wording).
    rec.rel.columns.forEach((rc, i) => {
      const origin = literalOrigin(rec.rel, i);
      if (!typeEquals(rc.type, cols[i]!.type) && !canCoerce(rc.type, cols[i]!.type, origin, origin !== Origin.Column ? literalValue(rec.rel, i) : undefined)) {
        throw sqlError(`Cannot coerce column ${i + 1} of recursive term (${typeToSql(rc.type)}) to column type in non-recursive term (${typeToSql(cols[i]!.type)})`, body.right.loc);
      }
    });
    rec = castTo(an, rec, cols.map((x) => x.type), body.loc, 'UNION ALL');
    const plan: Rel = { kind: 'recursive_cte', cteId: id, base: base.rel, recursive: rec.rel, distinct: body.quantifier === 'DISTINCT', columns: cols };
    return { id, name: c.name, plan };
  }
}

/**
 * The reference's limits on the recursive term of WITH RECURSIVE: one reference to the
 * CTE, never inside an expression subquery, not under DISTINCT, GROUP BY or an aggregate,
 * not on the outer-joined side of a join.
 */
function checkRecursiveTerm(term: A.QueryExpr, name: string, loc: A.Loc): void {
  const lname = name.toLowerCase();
  let refs = 0;
  const inExprs = (...es: unknown[]): void => {
    if (es.some((e) => queryMentions(e, lname))) throw sqlError('A recursive reference from inside an expression subquery is not allowed', loc);
  };
  const query = (q: A.QueryExpr): void => {
    switch (q.kind) {
      case 'Query':
        for (const c of q.with?.ctes ?? []) query(c.query);
        query(q.body);
        inExprs(q.orderBy, q.limit, q.offset, q.pipes);
        // The recursion is evaluated a step at a time: a whole-result ORDER BY or LIMIT over it has no meaning (the reference's words).
        if (q.limit && queryMentions(q.body, lname)) throw sqlError('A query containing a recursive reference may not use a LIMIT clause', loc);
        if (q.orderBy && queryMentions(q.body, lname)) throw sqlError('A subquery containing a recursive reference may not contain an ORDER BY clause', loc);
        return;
      case 'SetOperation':
        query(q.left);
        query(q.right);
        return;
      case 'FromQuery':
        from(q.from);
        return;
      case 'Select':
        if (q.from) {
          from(q.from);
          const aggregate = (e: unknown) => someCall(e, (c) => !c.over && lookupFunction(c.name!.join('.'))?.kind === 'aggregate');
          if (queryMentions(q.from, lname) && (q.distinct || q.groupBy || q.items.some((i) => i.kind === 'SelectExpr' && aggregate(i.expr)) || aggregate(q.having))) {
            throw sqlError('A subquery containing a recursive reference may not use DISTINCT, GROUP BY, or any aggregate function', loc);
          }
        }
        inExprs(q.items, q.where, q.groupBy, q.having, q.qualify, q.window);
        return;
    }
  };
  const from = (f: A.FromItem): void => {
    switch (f.kind) {
      case 'TableRef':
        if (f.path.length === 1 && f.path[0]!.toLowerCase() === lname && ++refs > 1) throw sqlError(`Multiple recursive references to table '${name}' are not allowed`, loc);
        return;
      case 'SubqueryRef':
        query(f.query);
        return;
      case 'JoinRef': {
        from(f.left);
        from(f.right);
        const l = queryMentions(f.left, lname), r = queryMentions(f.right, lname);
        if (f.joinType === 'FULL' && (l || r)) throw sqlError('A query containing a recursive reference may not be used as an operand of a FULL OUTER JOIN', loc);
        if (f.joinType === 'LEFT' && r) throw sqlError('A query containing a recursive reference may not be used as the right operand of a LEFT JOIN', loc);
        if (f.joinType === 'RIGHT' && l) throw sqlError('A query containing a recursive reference may not be used as the left operand of a RIGHT JOIN', loc);
        inExprs(f.on);
        return;
      }
      case 'PivotRef':
      case 'UnpivotRef':
        from(f.input);
        return;
      default:
        inExprs(f);
    }
  };
  query(term);
}

/** True when a call in an AST expression, outside subqueries, satisfies `pred`. */
function someCall(e: unknown, pred: (call: { over?: unknown; name?: string[] }) => boolean): boolean {
  const stack: unknown[] = [e];
  while (stack.length) {
    const x = stack.pop();
    if (!x || typeof x !== 'object') continue;
    if (Array.isArray(x)) {
      stack.push(...x);
      continue;
    }
    const o = x as { kind?: string; over?: unknown; name?: string[] };
    if (o.kind === 'Query') continue;
    if (o.kind === 'FunctionCall' && pred(o)) return true;
    for (const v of Object.values(o)) if (v && typeof v === 'object') stack.push(v);
  }
  return false;
}

/** True when an AST expression calls an analytic function (outside subqueries). */
const hasOver = (e: unknown): boolean => someCall(e, (c) => !!c.over);

function queryMentions(q: unknown, lname: string): boolean {
  // Cheap structural search for a TableRef naming the CTE.
  const stack: unknown[] = [q];
  while (stack.length) {
    const x = stack.pop();
    if (!x || typeof x !== 'object') continue;
    if (Array.isArray(x)) {
      stack.push(...x);
      continue;
    }
    const o = x as { kind?: string; path?: string[] };
    if (o.kind === 'TableRef' && o.path?.length === 1 && o.path[0]!.toLowerCase() === lname) return true;
    for (const v of Object.values(o)) if (v && typeof v === 'object') stack.push(v);
  }
  return false;
}

export function resolveQueryExpr(an: Analyzer, b: A.QueryExpr, outer: Scope | undefined): RelOut {
  switch (b.kind) {
    case 'Select':
      return resolveSelect(an, b, outer);
    case 'Query':
      return resolveQuery(an, b, outer);
    case 'SetOperation':
      return resolveSetOp(an, b, outer);
    case 'FromQuery': {
      const scope = new Scope(outer);
      const rel = resolveFrom(an, b.from, scope, outer);
      const cols = scope.starColumns();
      const exprs = cols.map((c) => colRef(c));
      const names = cols.map((c) => c.name);
      // `FROM UNNEST(array_of_structs)` alone is a value table (its fields resolve by name in later pipes).
      const only = scope.rangeVars.length === 1 ? scope.rangeVars[0]! : undefined;
      const valueTable = !!only?.value && only.value.type.kind === 'STRUCT' && cols.length === 1 && cols[0]!.id === only.value.id;
      const proj = project(an, rel, exprs, valueTable ? [''] : names);
      if (valueTable) return { rel: proj, names: [''], isValueTable: true, ...(only.name ? { pipeVars: [{ name: only.name, columns: [], valueIndex: 0 }] } : {}) };
      // `FROM t AS a JOIN u |> WHERE a.x = u.y`: the FROM clause's table aliases stay nameable in the following pipe operators
      // (not UNNEST ... AS x, where the alias names the element, a column itself; nor an alias that a column's name hides).
      const pos = new Map(cols.map((c, i) => [c.id, i]));
      const pipeVars = scope.rangeVars
        .filter((rv) => rv.name && !rv.value && !names.some((n) => n.toLowerCase() === rv.lname))
        .map((rv) => ({ name: rv.name, columns: rv.columns.filter((c) => pos.has(c.id)).map((c) => ({ name: c.name, index: pos.get(c.id)! })) }));
      return { rel: proj, names, isValueTable: false, ...(pipeVars.length ? { pipeVars } : {}) };
    }
  }
}

// ---------------------------------------------------------------- set operations

function flattenSetOp(b: A.SetOperation, out: A.QueryExpr[]): void {
  for (const side of [b.left, b.right]) {
    if (side.kind === 'SetOperation' && side.op === b.op && side.quantifier === b.quantifier && !side.corresponding && !b.corresponding) flattenSetOp(side, out);
    else out.push(side);
  }
}

function castTo(an: Analyzer, out: RelOut, types: readonly SqlType[], loc: A.Loc, what: string): RelOut {
  void what;
  void loc;
  const cols = out.rel.columns;
  if (cols.every((c, i) => typeEquals(c.type, types[i]!))) return out;
  // A branch's literal coerces in place (a float literal becomes NUMERIC from its exact text).
  const rel = out.rel;
  if (rel.kind === 'project' && rel.exprs.every((e, i) => typeEquals(e.type, types[i]!) || e.kind === 'literal')) {
    return { ...out, rel: project(an, rel.input, rel.exprs.map((e, i) => coerce(e, types[i]!)), out.names) };
  }
  const exprs = cols.map((c, i) => coerce(colRef(c), types[i]!));
  return { ...out, rel: project(an, out.rel, exprs, out.names) };
}

/**
 * CORRESPONDING / BY NAME: columns match by name. INNER (default) keeps names
 * common to every input, LEFT the first input's names, FULL every name (first
 * appearance order); BY (list) fixes the list. Missing columns are NULL.
 */
function correspondingInputs(an: Analyzer, b: A.SetOperation, outs0: RelOut[], what: string): RelOut[] {
  // A value table of STRUCTs matches by its fields' names (its columns as SELECT * shows them).
  const outs = outs0.map((o): RelOut => {
    const v = o.rel.columns[0];
    if (!o.isValueTable || o.rel.columns.length !== 1 || v?.type.kind !== 'STRUCT') return o;
    const fields = v.type.fields;
    return { rel: project(an, o.rel, fields.map((f, i) => ({ kind: 'field', type: f.type, arg: colRef(v), fieldIndex: i })), fields.map((f) => f.name ?? '')), names: fields.map((f) => f.name ?? ''), isValueTable: false };
  });
  // Plain BY NAME is STRICT: every input has the same column names.
  const strict = !!b.corresponding?.strict || (!!b.byName && !b.outerMode);
  const mode = b.outerMode ?? 'INNER';
  const lower = (o: RelOut) => o.names.map((n) => n.toLowerCase());
  const full = `${what} ${b.byName ? 'BY NAME' : 'CORRESPONDING'}`;
  // Matching by name needs every column named, once per input (the reference's wording); with a BY
  // list only the listed columns need to be (the others are not read).
  const listed = b.corresponding?.by && new Set(b.corresponding.by.map((n) => n.toLowerCase()));
  outs.forEach((o, qi) => {
    const seen = new Set<string>();
    o.names.forEach((n, ci) => {
      if (listed && !listed.has(n.toLowerCase())) return;
      if (!n) throw sqlError(`Anonymous columns are not allowed in set operations when ${b.byName ? 'BY NAME' : 'CORRESPONDING'} is used: query ${qi + 1}, column ${ci + 1}`, b.loc);
      if (seen.has(n.toLowerCase())) throw sqlError(`Duplicate columns found when using ${b.byName ? 'BY NAME' : 'CORRESPONDING'} in set operations: ${n} in query ${qi + 1}`, b.loc);
      seen.add(n.toLowerCase());
    });
  });
  if (strict && !b.corresponding?.by) {
    const first = lower(outs[0]!);
    outs.forEach((o, qi) => {
      const extra = o.names.find((n) => !first.includes(n.toLowerCase())) ?? (qi > 0 ? outs[0]!.names.find((n) => !lower(o).includes(n.toLowerCase())) : undefined);
      if (extra !== undefined) throw sqlError(`${full} requires all input queries to have the same column names, but column ${extra} is not in every input`, b.loc);
    });
  }
  let names: string[];
  if (b.corresponding?.by) names = b.corresponding.by.slice();
  else if (mode === 'FULL') {
    names = [];
    for (const o of outs) for (const n of o.names) if (n && !names.some((x) => x.toLowerCase() === n.toLowerCase())) names.push(n);
  } else if (mode === 'LEFT') names = outs[0]!.names.filter((n, i) => n && lower(outs[0]!).indexOf(n.toLowerCase()) === i);
  else names = outs[0]!.names.filter((n, i) => n && lower(outs[0]!).indexOf(n.toLowerCase()) === i && outs.every((o) => lower(o).includes(n.toLowerCase())));
  if (names.length === 0) throw sqlError(`Queries of the set operation using ${b.byName ? 'BY NAME' : 'CORRESPONDING'} do not have any columns in common`, b.loc);
  return outs.map((o, qi) => {
    const ln = lower(o);
    const exprs = names.map((n) => {
      const i = ln.indexOf(n.toLowerCase());
      if (i >= 0) return colRef(o.rel.columns[i]!);
      if (mode === 'INNER' || (mode === 'LEFT' && qi === 0)) {
        throw sqlError(`Column ${n} is not found in query ${qi + 1} of ${full}`, b.loc);
      }
      return literal(T.INT64, null);
    });
    const rel = project(an, o.rel, exprs, names);
    // Keep padded NULLs untyped for supertyping: mark the projection's literal-ness per column.
    correspondingProjections.add(rel);
    return { rel, names, isValueTable: false };
  });
}

const correspondingProjections = new WeakSet<Rel>();

/** Literal origin of output column `c` of a projection, looking through CORRESPONDING's reordering projection. */
function literalOrigin(rel: Rel, c: number): Origin {
  if (rel.kind !== 'project') return Origin.Column;
  const e = rel.exprs[c]!;
  if (e.kind === 'literal') return originOf(e);
  if (e.kind === 'column' && !e.correlated && correspondingProjections.has(rel) && rel.input.kind === 'project') {
    const k = rel.input.columns.findIndex((x) => x.id === e.columnId);
    if (k >= 0) return literalOrigin(rel.input, k);
  }
  return Origin.Column;
}

/** The literal value behind column `c` of a projection (as `literalOrigin` finds it). */
function literalValue(rel: Rel, c: number): unknown {
  if (rel.kind !== 'project') return undefined;
  const e = rel.exprs[c]!;
  if (e.kind === 'literal') return e.value;
  if (e.kind === 'column' && !e.correlated && correspondingProjections.has(rel) && rel.input.kind === 'project') {
    const k = rel.input.columns.findIndex((x) => x.id === e.columnId);
    if (k >= 0) return literalValue(rel.input, k);
  }
  return undefined;
}

function resolveSetOp(an: Analyzer, b: A.SetOperation, outer: Scope | undefined): RelOut {
  const parts: A.QueryExpr[] = [];
  flattenSetOp(b, parts);
  return combineSetOp(an, b, parts.map((p) => resolveQueryExpr(an, p, outer)), parts);
}

/** Combines resolved inputs of one set operation (also used by pipe UNION/INTERSECT/EXCEPT). */
function combineSetOp(an: Analyzer, b: A.SetOperation, inputs: RelOut[], parts: readonly { loc: A.Loc }[]): RelOut {
  const what = `${b.op} ${b.quantifier}`;
  let outs = inputs;
  if (b.corresponding || b.byName) outs = correspondingInputs(an, b, outs, what);
  const n = outs[0]!.rel.columns.length;
  outs.forEach((o, i) => {
    if (o.rel.columns.length !== n) {
      throw sqlError(`Queries in ${what} have mismatched column count; query 1 has ${n} column${n === 1 ? '' : 's'}, query ${i + 1} has ${o.rel.columns.length} column${o.rel.columns.length === 1 ? '' : 's'}`, parts[i]!.loc);
    }
  });
  const types: SqlType[] = [];
  for (let c = 0; c < n; c++) {
    const items = outs.map((o) => {
      const rel = o.rel;
      // A literal select item keeps its literal-ness for supertyping (SELECT 1 UNION ALL SELECT 2.5).
      const origin = literalOrigin(rel, c);
      const value = origin !== Origin.Column ? literalValue(rel, c) : undefined;
      return { type: rel.columns[c]!.type, origin, ...(value !== undefined ? { value } : {}) };
    });
    const st = supertype(items);
    if (!st) {
      // Reported at the first input whose column type differs from query 1's.
      const bad = items.findIndex((i) => !typeEquals(i.type, items[0]!.type));
      const col = b.corresponding || b.byName ? outs[0]!.names[c]! : String(c + 1);
      throw sqlError(`Column ${col} in ${what} has incompatible types: ${items.map((i) => typeToSql(i.type)).join(', ')}`, parts[bad > 0 ? bad : 1]!.loc);
    }
    if (b.quantifier === 'DISTINCT' && !isGroupable(st)) {
      throw sqlError(`Column ${c + 1} in ${what} has type that does not support set operation comparisons: ${typeToSql(st)}`, b.loc);
    }
    types.push(st);
  }
  outs = outs.map((o) => castTo(an, o, types, b.loc, what));
  // Collated columns compare under their collation: one canonical value per equal class, shared by all inputs.
  const groupers = types.map((t) => collationGrouper(t));
  if (groupers.some((g) => g)) outs = outs.map((o) => ({ ...o, rel: project(an, o.rel, o.rel.columns.map((c, i) => groupers[i]?.(colRef(c)) ?? colRef(c)), o.names) }));
  const names = outs[0]!.names;
  const columns = types.map((t, i) => an.newColumn(names[i] ?? '', t));
  const rel: SetOpRel = {
    kind: 'setop',
    op: b.op === 'UNION' ? 'union' : b.op === 'INTERSECT' ? 'intersect' : 'except',
    all: b.quantifier === 'ALL',
    inputs: outs.map((o) => o.rel),
    columns,
  };
  return { rel, names, isValueTable: outs[0]!.isValueTable };
}

// ---------------------------------------------------------------- ORDER BY / LIMIT on a finished query

function orderByOutput(an: Analyzer, out: RelOut, items: readonly A.OrderByItem[], outer: Scope | undefined): RelOut {
  const scope = new Scope(outer);
  scope.addRangeVar({ name: '', lname: '', columns: out.rel.columns.map((c, i) => ({ ...c, name: out.names[i] ?? '' })) });
  const keys: SortKey[] = items.map((o) => {
    let expr: Expr;
    if (o.expr.kind === 'IntLiteral') {
      const k = Number(o.expr.text);
      if (!(k >= 1 && k <= out.rel.columns.length)) throw sqlError(`ORDER BY is out of SELECT column number range: ${k}`, o.expr.loc);
      expr = colRef(out.rel.columns[k - 1]!);
    } else {
      expr = resolveExpr(an, o.expr, { scope, clause: 'ORDER BY clause' });
    }
    checkOrderable(expr, o.expr.loc);
    const descending = o.direction === 'DESC';
    const collation = orderCollation(an, o, expr.type);
    return { expr, descending, nullsFirst: o.nulls ? o.nulls === 'FIRST' : !descending, ...(collation ? { collation } : {}) };
  });
  return { ...out, rel: { kind: 'sort', input: out.rel, keys, columns: out.rel.columns } };
}

function checkOrderable(e: Expr, loc: A.Loc): void {
  if (!isOrderable(e.type)) throw sqlError(`ORDER BY does not support expressions of type ${typeToSql(e.type)}`, loc);
}

function applyLimit(an: Analyzer, out: RelOut, limit: A.Expr | undefined, offset: A.Expr | undefined): RelOut {
  const rel: LimitRel = {
    kind: 'limit',
    input: out.rel,
    limit: limit ? constIntExpr(an, limit, 'LIMIT') : null,
    offset: offset ? constIntExpr(an, offset, 'OFFSET') : 0,
    columns: out.rel.columns,
  };
  return { ...out, rel };
}

// ---------------------------------------------------------------- SELECT

// Aggregate functions the AGGREGATION_THRESHOLD clause allows (query syntax reference).
const THRESHOLD_AGGREGATES = new Set(['APPROX_COUNT_DISTINCT', 'AVG', 'COUNT', 'COUNTIF', 'LOGICAL_OR', 'LOGICAL_AND', 'SUM', 'COVAR_SAMP', 'STDDEV_POP', 'STDDEV_SAMP', 'VAR_POP', 'VAR_SAMP']);

/**
 * SELECT WITH AGGREGATION_THRESHOLD OPTIONS(threshold, privacy_unit_column): the
 * query aggregates, and keeps only the groups with at least `threshold` distinct
 * privacy units, i.e. HAVING COUNT(DISTINCT privacy_unit_column) >= threshold.
 */
function withAggregationThreshold(an: Analyzer, sel: A.Select): A.Select {
  const loc = sel.loc;
  let threshold: A.Expr | undefined;
  let unit: A.Expr | undefined;
  for (const o of sel.withModifier!.options ?? []) {
    const name = o.name.toLowerCase();
    if (name === 'threshold') threshold = o.value;
    else if (name === 'privacy_unit_column') unit = o.value;
    else throw sqlError(`Unknown option ${o.name} for AGGREGATION_THRESHOLD`, loc);
  }
  if (!unit || unit.kind !== 'PathExpr') throw sqlError('AGGREGATION_THRESHOLD requires the option privacy_unit_column, a column path', loc);
  const t = threshold ? constIntExpr(an, threshold, 'AGGREGATION_THRESHOLD threshold') : 50;
  if (t <= 0) throw sqlError('The threshold of AGGREGATION_THRESHOLD must be a positive INT64', threshold?.loc ?? loc);
  const check = (e: unknown): void => {
    if (!e || typeof e !== 'object') return;
    if (Array.isArray(e)) return e.forEach(check);
    const n = e as { kind?: string; name?: string[] };
    if (n.kind === 'Query' || n.kind === 'ScalarSubquery' || n.kind === 'ArraySubquery' || n.kind === 'ExistsSubquery') return;
    if (n.kind === 'FunctionCall' && n.name) {
      const fname = n.name.join('.').toUpperCase();
      const def = lookupFunction(fname);
      if (def?.kind === 'aggregate' && !THRESHOLD_AGGREGATES.has(fname)) throw sqlError(`Aggregate function ${fname} is not supported in a query with the AGGREGATION_THRESHOLD clause`, (e as { loc: A.Loc }).loc);
    }
    for (const v of Object.values(e)) if (v && typeof v === 'object') check(v);
  };
  check([sel.items, sel.having, sel.qualify]);
  const units: A.Expr = { kind: 'FunctionCall', loc, name: ['COUNT'], safe: false, distinct: true, args: [unit] };
  const enough: A.Expr = { kind: 'BinaryExpr', loc, op: '>=', left: units, right: { kind: 'IntLiteral', loc, text: String(t), hex: false } };
  return { ...sel, withModifier: undefined, having: sel.having ? { kind: 'BinaryExpr', loc, op: 'AND', left: enough, right: sel.having } : enough };
}

interface SelItem {
  name: string;
  expr: Expr;
  loc: A.Loc;
  /** Explicit alias or implicit (path) name: usable by GROUP BY / ORDER BY. */
  aliasable: boolean;
}

function hasColumnIn(e: Expr, ids: ReadonlySet<number>): boolean {
  let found = false;
  rewriteExpr(e, (x) => {
    if (x.kind === 'column' && ids.has(x.columnId)) found = true;
    if (x.kind === 'subquery' && x.correlatedColumns.some((id) => ids.has(id))) found = true;
    return undefined;
  });
  return found;
}

/** A SELECT without FROM has one row and no clause that filters, groups, windows or orders it. */
function checkNoFromClauses(sel: A.Select, orderBy: readonly A.OrderByItem[] | undefined): void {
  const clause = (what: string, loc: A.Loc): never => {
    throw sqlError(`Query without FROM clause cannot ${what}`, loc);
  };
  if (sel.where) clause('have a WHERE clause', sel.where.loc);
  if (sel.groupBy) clause('have a GROUP BY clause', sel.groupBy.loc);
  if (sel.having) clause('have a HAVING clause', sel.having.loc);
  if (sel.qualify) clause('have an QUALIFY clause', sel.qualify.loc);
  if (sel.window?.length) clause('have a WINDOW clause', sel.window[0]!.loc);
  if (sel.distinct) clause('use SELECT DISTINCT', sel.loc);
  if (orderBy?.length) clause('have an ORDER BY clause', orderBy[0]!.loc);
}

export function resolveSelect(
  an: Analyzer,
  sel: A.Select,
  outer: Scope | undefined,
  orderBy?: readonly A.OrderByItem[],
  limit?: A.Expr,
  offset?: A.Expr,
  carry?: (scope: Scope) => SelItem[],
  /** `pipe SELECT` / `pipe EXTEND`: a select list of its own form, where aggregate functions are refused. */
  pipeForm?: string,
): RelOut {
  if (sel.withModifier?.name === 'AGGREGATION_THRESHOLD') sel = withAggregationThreshold(an, sel);
  // The privacy unit comes from the option or from a table's privacy policy;
  // the emulator keeps no privacy policies, so without the option there is none.
  if (sel.withModifier?.name === 'DIFFERENTIAL_PRIVACY' && !sel.withModifier.options?.some((o) => o.name.toLowerCase() === 'privacy_unit_column')) {
    throw sqlError('A SELECT WITH DIFFERENTIAL_PRIVACY query must query data with a specified privacy unit column', sel.loc);
  }
  if (!sel.from) checkNoFromClauses(sel, orderBy);
  const scope = new Scope(outer);
  let rel: Rel = sel.from ? resolveFrom(an, sel.from, scope, outer) : oneRow();

  if (sel.where) {
    const w = resolveExpr(an, sel.where, { scope, clause: 'WHERE clause' });
    rel = filter(rel, requireBool(w, sel.where.loc, 'WHERE clause'));
  }

  const named = new Map<string, A.WindowSpec>();
  for (const w of sel.window ?? []) {
    if (named.has(w.name.toLowerCase())) throw sqlError(`Duplicate window alias ${w.name}`, w.spec.loc ?? sel.loc);
    named.set(w.name.toLowerCase(), w.spec);
  }
  const aggs = new AggCollector(scope);
  const wins = new WindowCollector(named);
  const ctx: ExprCtx = pipeForm ? { scope, clause: pipeForm, wins } : { scope, clause: 'SELECT list', aggs, wins };

  // SELECT list (pre-aggregation form; aggregates become column refs).
  const items: SelItem[] = [];
  for (const it of sel.items) {
    if (it.kind === 'SelectStar') items.push(...expandStar(an, it, scope, ctx));
    else {
      const expr = resolveExpr(an, it.expr, ctx);
      const alias = it.alias ?? implicitAlias(it.expr);
      items.push({ name: alias, expr, loc: it.loc, aliasable: !!alias });
    }
  }
  if (carry) items.push(...carry(scope));
  if (!sel.from && aggs.calls.length > 0) throw sqlError('SELECT without FROM clause cannot use aggregation', sel.loc);
  if (!sel.from && wins.calls.length > 0) throw sqlError('SELECT without FROM clause cannot use analytic functions', sel.loc);

  // GROUP BY keys.
  const keys: { expr: Expr; name: string; loc: A.Loc }[] = [];
  let groupingSets: number[][] | undefined;
  if (sel.groupBy) {
    const r = resolveGroupBy(an, sel.groupBy, items, scope, aggs, wins);
    keys.push(...r.keys);
    groupingSets = r.sets;
  }

  // HAVING and QUALIFY may name SELECT-list aliases (they win over FROM columns).
  const selectAliases = new Map<string, Expr>();
  for (const it of items) if (it.aliasable && !selectAliases.has(it.name.toLowerCase())) selectAliases.set(it.name.toLowerCase(), it.expr);
  aggs.selectAliases = selectAliases;
  const groupedBeforeHaving = !!sel.groupBy || aggs.calls.length > 0 || aggs.grouping.length > 0;
  const having = sel.having ? resolveExpr(an, sel.having, { ...ctx, clause: 'HAVING clause', selectAliases }) : undefined;
  if (sel.having && !groupedBeforeHaving) {
    // HAVING filters groups: without GROUP BY or SELECT-list aggregation there are none (the service's analyzer).
    if (aggs.calls.length > 0) throw sqlError('The HAVING clause only allows aggregation if GROUP BY or SELECT list aggregation is present', sel.having.loc);
    throw sqlError('The HAVING clause requires GROUP BY or aggregation to be present', sel.having.loc);
  }
  const qualify = sel.qualify ? resolveExpr(an, sel.qualify, { ...ctx, clause: 'QUALIFY clause', selectAliases }) : undefined;

  // ORDER BY keys: select-list ordinals and aliases first, then expressions over the FROM scope.
  const order: { ref?: number; expr?: Expr; item: A.OrderByItem }[] = [];
  for (const o of orderBy ?? []) {
    if (o.expr.kind === 'IntLiteral') {
      const k = Number(o.expr.text);
      if (!(k >= 1 && k <= items.length)) throw sqlError(`ORDER BY is out of SELECT column number range: ${k}`, o.expr.loc);
      order.push({ ref: k - 1, item: o });
      continue;
    }
    if (o.expr.kind === 'PathExpr' && o.expr.parts.length === 1) {
      const l = o.expr.parts[0]!.toLowerCase();
      const matches = items.map((s, i) => (s.aliasable && s.name.toLowerCase() === l ? i : -1)).filter((i) => i >= 0);
      if (matches.length > 1 && !matches.every((i) => exprEquals(items[i]!.expr, items[matches[0]!]!.expr))) {
        throw sqlError(`Column name ${o.expr.parts[0]} is ambiguous`, o.expr.loc);
      }
      if (matches.length) {
        order.push({ ref: matches[0]!, item: o });
        continue;
      }
    }
    // Inside expressions too, select-list aliases come before the FROM clause's names (`ORDER BY ABS(alias)`).
    order.push({ expr: resolveExpr(an, o.expr, { ...ctx, clause: 'ORDER BY clause', selectAliases }), item: o });
  }

  const aggregating = !!sel.groupBy || aggs.calls.length > 0 || aggs.grouping.length > 0 || !!having;
  let selectExprs = items.map((i) => i.expr);
  let havingExpr = having;
  let qualifyExpr = qualify;
  let orderExprs = order.map((o) => o.expr);
  const windowCalls = wins.calls;

  if (aggregating) {
    const keyCols = keys.map((k) => an.newColumn(k.name || '$groupbycol', k.expr.type));
    for (const k of keys) {
      if (!isGroupable(k.expr.type)) throw sqlError(`Grouping by expressions of type ${typeToSql(k.expr.type)} is not allowed`, k.loc);
    }
    const fromIds = new Set<number>();
    for (const rv of allRangeColumns(scope)) fromIds.add(rv);
    const groupingCalls = aggs.grouping.map((g) => {
      const i = keys.findIndex((k) => exprEquals(k.expr, g.arg));
      if (i < 0) throw sqlError('GROUPING must have an argument that exists within the group-by expression list', g.loc);
      return { column: g.column, keyIndex: i };
    });
    const agg: AggregateRel = {
      kind: 'aggregate',
      input: rel,
      // Collated keys group under their collation; the reference applies it to
      // plain GROUP BY only (ROLLUP/CUBE/GROUPING SETS keep binary grouping).
      groupBy: keys.map((k, i) => ({ column: keyCols[i]!, expr: (groupingSets ? undefined : collationGrouper(k.expr.type)?.(k.expr)) ?? k.expr })),
      aggregates: aggs.calls,
      ...(groupingSets ? { groupingSets } : {}),
      ...(groupingCalls.length ? { groupingCalls } : {}),
      columns: [...keyCols, ...aggs.calls.map((c) => c.column), ...groupingCalls.map((g) => g.column)],
    };
    rel = agg;
    // A value table's alias (UNNEST(...) AS x) is named a table alias in the refusal, as the service does; its fields are columns.
    const aliasIds = new Map(scope.rangeVars.flatMap((rv) => (rv.value ? [[rv.value.id, rv.lname] as const] : [])));
    const post = (e: Expr, clause: string): Expr => postAggregate(e, keys, keyCols, fromIds, clause, aliasIds);
    selectExprs = selectExprs.map((e) => post(e, 'SELECT list'));
    havingExpr = havingExpr && post(havingExpr, 'HAVING clause');
    qualifyExpr = qualifyExpr && post(qualifyExpr, 'QUALIFY clause');
    orderExprs = orderExprs.map((e) => e && post(e, 'ORDER BY clause'));
    for (let i = 0; i < windowCalls.length; i++) {
      const w = windowCalls[i]!;
      windowCalls[i] = {
        ...w,
        args: w.args.map((a) => post(a, 'SELECT list')),
        partitionBy: w.partitionBy.map((a) => post(a, 'PARTITION BY')),
        orderBy: w.orderBy.map((k) => ({ ...k, expr: post(k.expr, 'Window ORDER BY') })),
      };
    }
  }
  if (havingExpr) rel = filter(rel, requireBool(havingExpr, sel.having!.loc, 'HAVING clause'));
  if (windowCalls.length) {
    rel = { kind: 'window', input: rel, calls: windowCalls, columns: [...rel.columns, ...windowCalls.map((w) => w.column)] };
  }
  if (qualifyExpr) {
    if (!windowCalls.length) throw sqlError('The QUALIFY clause requires analytic function to be present', sel.qualify!.loc);
    rel = filter(rel, requireBool(qualifyExpr, sel.qualify!.loc, 'QUALIFY clause'));
  }

  // Project: select items, then hidden ORDER BY expressions.
  const hidden: Expr[] = [];
  const lateDistinct = new Map<number, Expr>();
  const orderIdx: number[] = order.map((o, i) => {
    if (o.ref !== undefined) return o.ref;
    const e = orderExprs[i]!;
    const same = selectExprs.findIndex((s) => exprEquals(s, e));
    if (same >= 0) return same;
    if (sel.distinct) {
      // Computed after DISTINCT from the select items it is built of (ORDER BY t.f for SELECT DISTINCT t).
      lateDistinct.set(i, e);
      return -1;
    }
    hidden.push(e);
    return items.length + hidden.length - 1;
  });
  const names = items.map((i) => i.name);
  let proj: Rel = project(an, rel, [...selectExprs, ...hidden], [...names, ...hidden.map(() => '$orderby')]);
  rel = proj;

  if (sel.distinct) {
    for (const [i, c] of rel.columns.entries()) {
      if (!isGroupable(c.type)) throw sqlError(`Column ${names[i] || i + 1} of type ${typeToSql(c.type)} cannot be used in SELECT DISTINCT`, items[i]!.loc);
    }
    const cols = rel.columns.map((c) => an.newColumn(c.name, c.type));
    rel = { kind: 'aggregate', input: rel, groupBy: rel.columns.map((c, i) => ({ column: cols[i]!, expr: collationGrouper(c.type)?.(colRef(c)) ?? colRef(c) })), aggregates: [], columns: cols };
  }

  if (order.length) {
    const distinctOut = rel.columns;
    const keysOut: SortKey[] = order.map((o, i) => {
      let expr: Expr;
      const late = lateDistinct.get(i);
      if (late) {
        expr = rewriteExpr(late, (x) => {
          const k = selectExprs.findIndex((se) => exprEquals(se, x));
          return k >= 0 ? colRef(distinctOut[k]!) : undefined;
        });
        const visible = new Set(distinctOut.map((c) => c.id));
        rewriteExpr(expr, (x) => {
          if (x.kind === 'column' && !x.correlated && !visible.has(x.columnId)) {
            // Named by the path that reaches it, as written: `column y` for a lone name (a column or a value
            // table's field), `t.y` for a longer path, `table alias v` for a value table's range variable.
            const rvs = ctx.scope.rangeVars;
            const path = pathsOf(o.item.expr).find((pe) => {
              const h = ctx.scope.peek(pe.parts[0]!);
              if (h?.kind === 'column' || h?.kind === 'field') return h.column.id === x.columnId;
              return h?.kind === 'range' && (h.rv.value?.id === x.columnId || h.rv.columns.some((c) => c.id === x.columnId));
            });
            const column = rvs.flatMap((rv) => rv.columns).find((c) => c.id === x.columnId)?.name;
            const alias = column === undefined ? rvs.find((rv) => rv.value?.id === x.columnId)?.name : undefined;
            const what = path && path.parts.length > 1 ? `${path.parts.join('.')} `
              : path && ctx.scope.peek(path.parts[0]!)?.kind !== 'range' ? `column ${path.parts[0]} `
              : column ? `column ${column} ` : alias ? `table alias ${alias} ` : 'column ';
            throw sqlError(`ORDER BY clause expression references ${what}which is not visible after SELECT DISTINCT`, o.item.expr.loc);
          }
          return undefined;
        });
      } else expr = colRef(rel.columns[orderIdx[i]!]!);
      checkOrderable(expr, o.item.expr.loc);
      const descending = o.item.direction === 'DESC';
      const collation = orderCollation(an, o.item, expr.type);
      return { expr, descending, nullsFirst: o.item.nulls ? o.item.nulls === 'FIRST' : !descending, ...(collation ? { collation } : {}) };
    });
    rel = { kind: 'sort', input: rel, keys: keysOut, columns: rel.columns };
  }
  let out: RelOut = { rel, names, isValueTable: false };
  if (limit || offset) out = applyLimit(an, out, limit, offset);
  rel = out.rel;
  if (hidden.length) {
    const vis = rel.columns.slice(0, items.length);
    rel = project(an, rel, vis.map((c) => colRef(c)), names);
  }

  if (sel.asMode === 'STRUCT') {
    const type = structOf(rel.columns.map((c, i) => ({ name: names[i] ?? '', type: c.type })));
    rel = project(an, rel, [{ kind: 'make_struct', type, fields: rel.columns.map((c) => colRef(c)) }], ['']);
    return { rel, names: [''], isValueTable: true };
  }
  if (sel.asMode === 'VALUE') {
    if (items.length !== 1) throw sqlError('SELECT AS VALUE query must have exactly one column', sel.loc);
    return { rel, names: [''], isValueTable: true };
  }
  void proj;
  return { rel, names, isValueTable: false };
}

function allRangeColumns(scope: Scope): number[] {
  const ids: number[] = [];
  for (const rv of scope.rangeVars) {
    for (const c of rv.columns) ids.push(c.id);
    if (rv.value) ids.push(rv.value.id);
  }
  for (const c of scope.extra.values()) ids.push(c.id);
  return ids;
}

/** Rewrites a pre-aggregation expression over the aggregate's output; ungrouped column refs are errors. */
function postAggregate(e: Expr, keys: readonly { expr: Expr; selectRef?: boolean }[], keyCols: readonly ResolvedColumn[], fromIds: ReadonlySet<number>, clause: string, aliasIds: ReadonlyMap<number, string> = new Map()): Expr {
  // A grouped column reference wins over a grouped expression containing it
  // (ZetaSQL: `SELECT a + 1 ... GROUP BY ROLLUP(a, a + 1)` is key(a) + 1).
  const isPath = (x: Expr): boolean => x.kind === 'column' || (x.kind === 'field' && isPath(x.arg));
  const bare = keys.filter((k) => isPath(k.expr)).map((k) => k.expr);
  const containsBare = (x: Expr): boolean => {
    let found = false;
    rewriteExpr(x, (y) => {
      if (!found && isPath(y) && bare.some((b) => exprEquals(b, y))) found = true;
      return undefined;
    });
    return found;
  };
  return rewriteExpr(e, (x) => {
    // (Keys named by a select alias or ordinal are that select item itself.)
    const shadowed = bare.length > 0 && !isPath(x) && containsBare(x);
    for (let i = 0; i < keys.length; i++) if ((!shadowed || keys[i]!.selectRef) && exprEquals(keys[i]!.expr, x)) return colRef(keyCols[i]!);
    if (x.kind === 'field' && isPath(x) && refNameOf(x) === undefined) {
      // A written field path (`t.s.b`, `s.b`) none of whose prefixes is grouped is named whole, as written (ZetaSQL's name scope).
      const names: string[] = [];
      let p: Expr = x;
      let grouped = false;
      for (; p.kind === 'field'; p = p.arg) {
        grouped ||= keys.some((k) => exprEquals(k.expr, p));
        if (refNameOf(p) !== undefined) break;
        names.unshift(p.arg.type.kind === 'STRUCT' ? p.arg.type.fields[p.fieldIndex]!.name : '');
      }
      let root: Expr = p;
      while (root.kind === 'field') root = root.arg;
      grouped ||= keys.some((k) => exprEquals(k.expr, p) || exprEquals(k.expr, root));
      const written = refNameOf(p);
      if (!grouped && written && root.kind === 'column' && !root.correlated && fromIds.has(root.columnId)) {
        throw sqlError(`${clause} expression references ${[written, ...names].join('.')} which is neither grouped nor aggregated`, locOf(x));
      }
    }
    if (x.kind === 'column' && !x.correlated && fromIds.has(x.columnId)) {
      const name = refNameOf(x) ?? String(x.columnId);
      // A lone name is a `column` (or a value table's `table alias`); `t.y` is named as written, as the reference does.
      const what = name.includes('.') ? name : `${aliasIds.get(x.columnId) === name.toLowerCase() ? 'table alias' : 'column'} ${name}`;
      throw sqlError(`${clause} expression references ${what} which is neither grouped nor aggregated`, locOf(x));
    }
    if (x.kind === 'subquery' && x.correlatedColumns.some((id) => fromIds.has(id))) {
      // Correlated references to this block's columns must be grouping keys: a grouped column,
      // or a grouped field path of one (`g` of `FROM UNNEST([STRUCT(1 AS g)])` is a field of the row).
      const map = new Map<number, number>();
      const viaPaths = new Set<number>();
      for (const id of x.correlatedColumns) {
        if (!fromIds.has(id)) continue;
        const k = keys.findIndex((kk) => kk.expr.kind === 'column' && kk.expr.columnId === id);
        if (k >= 0) map.set(id, keyCols[k]!.id);
        else viaPaths.add(id);
      }
      const refused = (name: string | undefined) => sqlError(`An expression references column ${name ?? ''} which is neither grouped nor aggregated`, locOf(x));
      const pathKeys = new Set<number>();
      const plan = mapRelExprs(x.plan, (y) => {
        if (y.kind === 'field' && viaPaths.size) {
          const root = (z: Expr): Expr => (z.kind === 'field' ? root(z.arg) : z);
          const r = root(y);
          if (r.kind === 'column' && r.correlated && viaPaths.has(r.columnId)) {
            const plain = rewriteExpr(y, (z) => (z.kind === 'column' && z.correlated ? { kind: 'column', type: z.type, columnId: z.columnId } : undefined));
            const k = keys.findIndex((kk) => exprEquals(kk.expr, plain));
            if (k < 0) throw refused(y.arg.type.kind === 'STRUCT' ? y.arg.type.fields[y.fieldIndex]?.name : undefined);
            pathKeys.add(keyCols[k]!.id);
            return colRef(keyCols[k]!, true);
          }
        }
        if (y.kind !== 'column' || !y.correlated) return undefined;
        if (viaPaths.has(y.columnId)) throw refused(refNameOf(y));
        return map.has(y.columnId) ? { ...y, columnId: map.get(y.columnId)! } : undefined;
      });
      const inExpr = x.inExpr ? postAggregate(x.inExpr, keys, keyCols, fromIds, clause, aliasIds) : undefined;
      const correlatedColumns = [...x.correlatedColumns.filter((id) => !viaPaths.has(id)).map((id) => map.get(id) ?? id), ...pathKeys];
      return { ...x, plan, ...(inExpr ? { inExpr } : {}), correlatedColumns };
    }
    return undefined;
  });
}

function resolveGroupBy(
  an: Analyzer,
  g: A.GroupBy,
  items: readonly SelItem[],
  scope: Scope,
  aggs: AggCollector,
  wins: WindowCollector,
): { keys: { expr: Expr; name: string; loc: A.Loc; selectRef?: boolean }[]; sets?: number[][] } {
  const keys: { expr: Expr; name: string; loc: A.Loc; selectRef?: boolean }[] = [];
  const aggIds = () => new Set(aggs.calls.map((c) => c.column.id).concat(wins.calls.map((w) => w.column.id), aggs.grouping.map((x) => x.column.id)));
  const keyIndex = (expr: Expr, name: string, loc: A.Loc, selectRef = false): number => {
    const i = keys.findIndex((k) => exprEquals(k.expr, expr));
    if (i >= 0) {
      if (selectRef) keys[i]!.selectRef = true;
      return i;
    }
    keys.push({ expr, name, loc, ...(selectRef ? { selectRef } : {}) });
    return keys.length - 1;
  };
  const one = (e: A.Expr): number => {
    // An integer is a select-list ordinal; any other plain literal is refused (typed literals group).
    if (e.kind === 'FloatLiteral' || e.kind === 'StringLiteral' || e.kind === 'BytesLiteral' || e.kind === 'BoolLiteral' || e.kind === 'NullLiteral') {
      throw sqlError('Cannot GROUP BY literal values', e.loc);
    }
    if (e.kind === 'IntLiteral') {
      const k = Number(e.text);
      if (!(k >= 1 && k <= items.length)) throw sqlError(`GROUP BY is out of SELECT column number range: ${k}`, e.loc);
      const it = items[k - 1]!;
      if (hasColumnIn(it.expr, aggIds())) throw sqlError(`Column ${k} contains an aggregation function, which is not allowed in GROUP BY`, e.loc);
      return keyIndex(it.expr, it.name, e.loc, true);
    }
    if (e.kind === 'PathExpr' && e.parts.length === 1) {
      const l = e.parts[0]!.toLowerCase();
      const it = items.find((s) => s.aliasable && s.name.toLowerCase() === l);
      // A select alias wins unless the same name is a FROM column the alias merely repeats.
      if (it && !hasColumnIn(it.expr, aggIds())) {
        const fromHit = scope.peek(e.parts[0]!);
        if (!fromHit || fromHit.kind === 'ambiguous' || it.expr.kind !== 'column' || true) return keyIndex(it.expr, it.name, e.loc, true);
      }
      // An alias of an aggregate (and of no FROM column) cannot be a grouping key.
      if (it && !scope.peek(e.parts[0]!)) throw sqlError(`Column ${e.parts[0]} contains an aggregation function, which is not allowed in GROUP BY`, e.loc);
    }
    const x = resolveExpr(an, e, { scope, clause: 'GROUP BY clause' });
    return keyIndex(x, implicitAlias(e), e.loc);
  };
  if (g.all) {
    const ids = aggIds();
    const fromIds = new Set(allRangeColumns(scope));
    for (const it of items) {
      if (hasColumnIn(it.expr, ids)) continue;
      if (!hasColumnIn(it.expr, fromIds)) continue;
      keyIndex(it.expr, it.name, it.loc, true);
    }
    return { keys };
  }
  // A parenthesized list inside ROLLUP/CUBE is one multi-column unit.
  const unit = (e: A.Expr): number[] => (e.kind === 'StructExpr' && e.syntax === 'tuple' ? e.fields.map((f) => one(f.expr)) : [one(e)]);
  // Grouping sets: the cross product of each item's sets.
  let sets: number[][] = [[]];
  let plain = true;
  const itemSets = (it: A.GroupingItem): number[][] => {
    switch (it.kind) {
      case 'Rollup': {
        plain = false;
        const ks = it.exprs.map(unit);
        const out: number[][] = [];
        for (let i = ks.length; i >= 0; i--) out.push(ks.slice(0, i).flat());
        return out;
      }
      case 'Cube': {
        plain = false;
        const ks = it.exprs.map(unit);
        const out: number[][] = [];
        for (let m = (1 << ks.length) - 1; m >= 0; m--) out.push(ks.filter((_, i) => m & (1 << (ks.length - 1 - i))).flat());
        return out;
      }
      case 'GroupingSets': {
        plain = false;
        const out: number[][] = [];
        for (const s of it.sets) {
          if (s.kind === 'StructExpr' && s.syntax === 'tuple') out.push(s.fields.map((f) => one(f.expr)));
          else out.push(...itemSets(s));
        }
        return out;
      }
      case 'EmptyGroupingSet':
        plain = false;
        return [[]];
      default:
        return [[one(it)]];
    }
  };
  for (const it of g.items) {
    const s = itemSets(it);
    const next: number[][] = [];
    for (const a of sets) for (const b of s) next.push([...a, ...b.filter((x) => !a.includes(x))]);
    sets = next;
  }
  return plain ? { keys } : { keys, sets };
}

function expandStar(an: Analyzer, it: A.SelectStar, scope: Scope, ctx: ExprCtx): SelItem[] {
  let cols: { name: string; expr: Expr }[];
  if (!it.qualifier) {
    const sc = scope.starColumns();
    if (sc.length === 0 && scope.rangeVars.length === 0) throw sqlError('SELECT * must have a FROM clause', it.loc);
    cols = [];
    for (const c of sc) {
      const valueRv = scope.rangeVars.find((rv) => rv.value?.id === c.id);
      if (valueRv && c.type.kind === 'STRUCT') {
        c.type.fields.forEach((f, i) => cols.push({ name: f.name, expr: { kind: 'field', type: f.type, arg: colRef(c), fieldIndex: i } }));
      } else cols.push({ name: c.name, expr: colRef(c) });
    }
  } else {
    const q = it.qualifier;
    const rv = q.kind === 'PathExpr' && q.parts.length === 1 ? scope.findRangeVar(q.parts[0]!.toLowerCase()) : undefined;
    if (rv && !rv.value) cols = rv.columns.map((c) => ({ name: c.name, expr: colRef(c) }));
    else {
      const base = resolveExpr(an, q, ctx);
      if (base.type.kind !== 'STRUCT') throw sqlError(`Dot-star is not supported for type ${typeToSql(base.type)}`, it.loc);
      cols = base.type.fields.map((f, i) => ({ name: f.name, expr: { kind: 'field' as const, type: f.type, arg: base, fieldIndex: i } }));
    }
  }
  if (it.except) {
    for (const ex of it.except) {
      if (!cols.some((c) => c.name.toLowerCase() === ex.toLowerCase())) throw sqlError(`Column ${ex} in SELECT * EXCEPT list does not exist`, it.loc);
    }
    const ex = new Set(it.except.map((x) => x.toLowerCase()));
    cols = cols.filter((c) => !ex.has(c.name.toLowerCase()));
    if (cols.length === 0) throw sqlError('SELECT * expands to zero columns after applying EXCEPT', it.loc);
  }
  if (it.replace) {
    for (const r of it.replace) {
      const i = cols.findIndex((c) => c.name.toLowerCase() === r.alias.toLowerCase());
      if (i < 0) throw sqlError(`Column ${r.alias} in SELECT * REPLACE list does not exist`, it.loc);
      cols[i] = { name: cols[i]!.name, expr: resolveExpr(an, r.expr, ctx) };
    }
  }
  return cols.map((c) => ({ name: c.name, expr: c.expr, loc: it.loc, aliasable: !!c.name }));
}

// ---------------------------------------------------------------- FROM

/** Range variable over a relation's columns with display names. */
function rangeOver(name: string, rel: Rel, names: readonly string[]): RangeVar {
  return { name, lname: name.toLowerCase(), columns: rel.columns.map((c, i) => ({ id: c.id, type: c.type, name: names[i] ?? c.name })) };
}

/**
 * Resolves one FROM item into `scope` (adding its range variables) and
 * returns its relation. `outer` is the enclosing query's scope: derived
 * tables see it but not their FROM siblings.
 */
export function resolveFrom(an: Analyzer, item: A.FromItem, scope: Scope, outer: Scope | undefined): Rel {
  if (item.matchRecognize) {
    const { matchRecognize: mr, ...input } = item;
    const inputAlias = 'alias' in input && input.alias ? input.alias : input.kind === 'TableRef' ? input.path[input.path.length - 1] : undefined;
    const q = matchRecognizeQuery(an, input as A.FromItem, inputAlias, mr.spec, mr.loc);
    item = { kind: 'SubqueryRef', loc: mr.loc, query: q, ...(mr.alias ? { alias: mr.alias } : {}) };
  }
  switch (item.kind) {
    case 'JoinRef':
      return resolveJoin(an, item, scope, outer);
    case 'TableRef':
    case 'UnnestRef':
    case 'SubqueryRef':
    case 'TvfRef':
    case 'PivotRef':
    case 'UnpivotRef': {
      const r = resolveLeaf(an, item, scope, outer);
      const w = weightColumns.get(r.rel);
      if (w) {
        // The WITH WEIGHT projection gave every input column a new id.
        const p = r.rel as ProjectRel;
        const ids = new Map<number, ResolvedColumn>();
        p.exprs.forEach((e, i) => {
          if (e.kind === 'column') ids.set(e.columnId, p.columns[i]!);
        });
        const re = <C extends ResolvedColumn>(c: C): C => (ids.has(c.id) ? { ...c, id: ids.get(c.id)!.id } : c);
        r.rvs = r.rvs.map((rv) => {
          const n: RangeVar = { ...rv, columns: rv.columns.map(re), ...(rv.value ? { value: re(rv.value) } : {}) };
          if (offsetVars.has(rv)) offsetVars.add(n);
          return n;
        });
        r.star = r.star.map(re);
      }
      for (const rv of r.rvs) addFromRangeVar(scope, rv, item.loc, r.arrayScan);
      scope.starList = [...(scope.starList ?? []), ...r.star];
      if (w) {
        scope.addRangeVar({ name: w.name, lname: w.name.toLowerCase(), columns: [], value: w });
        scope.starList = [...scope.starList, w];
      }
      return r.rel;
    }
    default: {
      const x: { kind: string; loc: A.Loc } = item;
      throw sqlError(`Unsupported FROM item ${x.kind}`, x.loc);
    }
  }
}

/** The range variables holding an UNNEST's aliased WITH OFFSET column: its alias is a name of the FROM clause too. */
const offsetVars = new WeakSet<RangeVar>();

function fromName(rv: RangeVar): string | undefined {
  return rv.lname || (offsetVars.has(rv) ? rv.columns[0]!.name.toLowerCase() : undefined);
}

/**
 * Adds a FROM item's range variable. The names of one FROM clause (explicit or implicit aliases, explicit
 * WITH OFFSET aliases) are unique; the error is worded by the kind of the later item, as the reference words it.
 */
function addFromRangeVar(scope: Scope, rv: RangeVar, loc: A.Loc, arrayScan = false): void {
  const n = fromName(rv);
  if (n && scope.rangeVars.some((o) => fromName(o) === n)) {
    const shown = rv.lname ? rv.name : rv.columns[0]!.name;
    throw sqlError(arrayScan ? `Duplicate alias ${shown} found` : `Duplicate table alias ${shown} in the same FROM clause`, loc);
  }
  scope.addRangeVar(rv);
}

interface Leaf {
  rel: Rel;
  rvs: RangeVar[];
  star: ResolvedColumn[];
  /** True when the relation reads columns of earlier FROM items or of an enclosing query (correlated). */
  lateral: boolean;
  /** The columns a correlated UNNEST reads from outside itself (earlier FROM items and enclosing queries). */
  correlatedIds?: ReadonlySet<number>;
  /** An UNNEST (explicit or by path): its name clashes are worded as the reference words them. */
  arrayScan?: boolean;
}

function resolveLeaf(an: Analyzer, item: A.FromItem, scope: Scope, outer: Scope | undefined): Leaf {
  switch (item.kind) {
    case 'TableRef': {
      // `FROM t, t.arr` / `FROM t.arr`: a path starting at a visible range variable is an implicit UNNEST.
      const first = item.path[0]!;
      if (item.systemTime && item.path.length === 1 && an.findCte(first)) throw sqlError('FOR SYSTEM_TIME AS OF cannot be used with tables defined in WITH clause', item.systemTime.loc);
      if (item.path.length > 1 || !an.findCte(first)) {
        const hit = first.includes('.') ? undefined : scope.peek(first);
        if (hit && hit.kind !== 'ambiguous' && item.path.length >= 1 && !(item.path.length === 1 && hit.kind === 'range' && !hit.rv.value)) {
          if (item.sample) throw sqlError('TABLESAMPLE cannot be used with arrays', item.loc);
          const alias = item.alias ?? item.path[item.path.length - 1]!;
          return unnestLeaf(an, [{ kind: 'PathExpr', loc: item.loc, parts: item.path }], alias, item.withOffset, scope, item.loc);
        }
      }
      const pipe = pipeInputs.get(item);
      if (pipe && (pipe.pipeVars || pipe.hidden)) {
        // The current table of a pipe: its visible columns unqualified, its table aliases by name.
        const hiddenIds = new Set(pipe.rel.columns.slice(pipe.rel.columns.length - (pipe.hidden ?? 0)).map((c) => c.id));
        const name = item.alias ?? '';
        const rv: RangeVar = pipe.isValueTable
          ? { name, lname: name.toLowerCase(), columns: [], value: { ...pipe.rel.columns[0]!, name } }
          : { ...rangeOver(name, pipe.rel, pipe.names), ...(hiddenIds.size ? { hidden: hiddenIds } : {}) };
        const star = rv.value ? [rv.value] : rv.columns.filter((c) => !hiddenIds.has(c.id));
        return { rel: pipe.rel, rvs: [rv, ...pipeRangeVars(pipe)], star, lateral: false };
      }
      const r = resolveTableRef(an, item, outer);
      const rv = r.isValueTable
        ? { name: r.alias, lname: r.alias.toLowerCase(), columns: [], value: { ...r.rel.columns[0]!, name: r.alias } }
        : rangeOver(r.alias, r.rel, r.names);
      let rel = r.rel;
      if (item.sample) rel = sample(an, rel, item.sample);
      const shown = rv.columns.length - (r.hidden ?? 0);
      const star = rv.value ? [rv.value] : rv.columns.slice(0, shown);
      return { rel, rvs: [r.hidden ? { ...rv, hidden: new Set(rv.columns.slice(shown).map((c) => c.id)) } : rv], star, lateral: false };
    }
    case 'UnnestRef': {
      if (item.systemTime) throw sqlError('FOR SYSTEM_TIME AS OF is not allowed with array scans', item.systemTime.loc);
      // An array scan is not sampled (the reference refuses it; a subquery over the UNNEST may be).
      if (item.sample) throw sqlError('TABLESAMPLE cannot be used with arrays', item.loc);
      return unnestLeaf(an, item.exprs, item.alias, item.withOffset, scope, item.loc, item.exprAliases, item.mode);
    }
    case 'SubqueryRef': {
      const out = resolveQuery(an, item.query, outer);
      const alias = item.alias ?? '';
      let rel = out.rel;
      if (item.sample) rel = sample(an, rel, item.sample);
      if (out.isValueTable) {
        const v = { ...out.rel.columns[0]!, name: alias };
        return { rel, rvs: [{ name: alias, lname: alias.toLowerCase(), columns: [], value: v }], star: [v], lateral: false };
      }
      const rv = rangeOver(alias, out.rel, out.names);
      return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
    }
    case 'PivotRef':
      return resolvePivot(an, item, outer);
    case 'UnpivotRef':
      return resolveUnpivot(an, item, outer);
    case 'TvfRef':
      return resolveTvf(an, item, scope);
    default:
      throw sqlError(`Unsupported FROM item ${item.kind}`, item.loc);
  }
}

/** SQL table functions: the body query is analyzed with its parameters bound to the (constant) arguments. */
function resolveTvf(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fname = item.name.join('.').toUpperCase();
  if (fname.startsWith('ML.')) return mlStub(an, item, fname, scope);
  if (fname === 'RANGE_SESSIONIZE') return rangeSessionize(an, item, scope);
  if (fname === 'GAP_FILL') return gapFill(an, item, scope);
  if (fname === 'VECTOR_SEARCH') return vectorSearch(an, item, scope);
  const def = expr.findUdf(an, item.name);
  if (!def || !def.tableFunction || !def.query) throw sqlError(`Table-valued function not found: ${item.name.join('.')}`, item.loc);
  if (item.args.length !== def.params.length) {
    throw sqlError(`Number of arguments does not match for table-valued function ${item.name.join('.')}`, item.loc);
  }
  const params = new Map<string, Expr>();
  // TABLE parameters bind like CTEs of the body (one evaluation however often the body reads them).
  const tableParams: { id: number; name: string; plan: Rel; def: CteDef }[] = [];
  def.params.forEach((p, i) => {
    const a = item.args[i]!;
    const isTableParam = p.type.kind === 'TableType' || p.type.kind === 'AnyTableType';
    if (isTableParam) {
      let out: RelOut;
      if (a.kind === 'TableArg') {
        const r = resolveTableRef(an, { kind: 'TableRef', loc: a.loc, path: a.path }, undefined);
        out = { rel: r.rel, names: r.names, isValueTable: r.isValueTable };
      } else if (a.kind === 'Query') out = resolveQuery(an, a, undefined);
      else if (a.kind === 'ScalarSubquery') out = resolveQuery(an, a.query, undefined);
      else throw sqlError(`Table-valued function ${item.name.join('.')} argument ${p.name} must be a TABLE or a subquery`, a.loc);
      const id = an.newId();
      const columns = out.rel.columns.map((c, k) => ({ ...c, name: out.names[k] ?? c.name }));
      tableParams.push({ id, name: p.name, plan: out.rel, def: { id, name: p.name, columns, isValueTable: out.isValueTable } });
      return;
    }
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError('TABLE and MODEL arguments of table-valued functions are not supported', a.loc);
    let v = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    if (p.type.kind !== 'AnyType' && p.type.kind !== 'TableType') {
      const t = expr.typeOf(p.type);
      // As a scalar function's arguments: a value of a type that does not coerce is no match (a STRING literal is no INT64).
      if (!typeEquals(v.type, t) && !canCoerce(v.type, t, expr.originOf(v))) {
        throw sqlError(`No matching signature for table-valued function ${item.name.join('.')} for argument ${p.name} of type ${typeToSql(t)}: got ${typeToSql(v.type)}`, a.loc);
      }
      if (!typeEquals(v.type, t)) v = coerce(v, t);
    }
    params.set(p.name.toLowerCase(), v);
  });
  const savedCtes = an.ctes.splice(0);
  if (tableParams.length) an.ctes.push(new Map(tableParams.map((t) => [t.name.toLowerCase(), t.def])));
  (an.tvfParams as Map<string, Expr>[]).push(params);
  try {
    let out = resolveQuery(an, def.query, undefined);
    if (def.returns?.kind === 'TableType') out = declaredTable(an, out, def.returns, item);
    const alias = item.alias ?? item.name[item.name.length - 1]!.split('.').pop()!;
    const rv = rangeOver(alias, out.rel, out.names);
    const rel: Rel = tableParams.length ? { kind: 'with', ctes: tableParams.map((t) => ({ id: t.id, name: t.name, plan: t.plan })), body: out.rel, columns: out.rel.columns } : out.rel;
    return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
  } finally {
    (an.tvfParams as Map<string, Expr>[]).pop();
    an.ctes.push(...savedCtes);
  }
}

/**
 * CREATE TABLE FUNCTION ... RETURNS TABLE<...>: the body's output is checked against the declaration
 * when the function is made, as the service does, with each scalar parameter bound to a NULL of its type.
 * A body that cannot be analyzed yet (a table made later, TABLE or ANY TYPE parameters) is left to the call.
 */
export function checkDeclaredTable(an: Analyzer, st: A.CreateFunctionStmt): void {
  if (!st.tableFunction || !st.query || st.returns?.kind !== 'TableType') return;
  if (st.params.some((p) => p.type.kind === 'AnyType' || p.type.kind === 'TableType' || p.type.kind === 'AnyTableType')) return;
  const params = new Map<string, Expr>(st.params.map((p) => [p.name.toLowerCase(), literal(expr.typeOf(p.type), null)]));
  const savedCtes = an.ctes.splice(0);
  (an.tvfParams as Map<string, Expr>[]).push(params);
  let out: RelOut;
  try {
    out = resolveQuery(an, st.query, undefined);
  } catch {
    return;
  } finally {
    (an.tvfParams as Map<string, Expr>[]).pop();
    an.ctes.push(...savedCtes);
  }
  declaredTable(an, out, st.returns, { kind: 'TvfRef', loc: st.loc, name: st.name, args: [] });
}

/** A table function's body output as its RETURNS TABLE<...> declares it: each column by name, coerced to the declared type (ZetaSQL's wording). */
function declaredTable(an: Analyzer, out: RelOut, decl: A.TableTypeNode, item: A.TvfRef): RelOut {
  const exprs = decl.columns.map((c) => {
    const k = out.names.findIndex((n) => n.toLowerCase() === c.name.toLowerCase());
    if (k < 0) throw sqlError(`Required column name ${c.name} not returned from SQL body of CREATE TABLE FUNCTION statement`, item.loc);
    const t = expr.typeOf(c.type);
    const e = colRef(out.rel.columns[k]!);
    if (typeEquals(e.type, t)) return e;
    if (!canCoerce(e.type, t, Origin.Column)) {
      throw sqlError(`Column ${c.name} for the output table of a CREATE TABLE FUNCTION statement has type ${typeToSql(t)}, but the SQL body provides incompatible type ${typeToSql(e.type)} for this column`, item.loc);
    }
    return coerce(e, t);
  });
  const names = decl.columns.map((c) => c.name);
  return { rel: project(an, out.rel, exprs, names), names, isValueTable: false };
}

/** The rows of a TABLE / subquery argument of a table function. */
function tableArgument(an: Analyzer, a: A.TvfRef['args'][number], what: string): RelOut {
  if (a.kind === 'TableArg') {
    const r = resolveTableRef(an, { kind: 'TableRef', loc: a.loc, path: a.path }, undefined);
    return { rel: r.rel, names: r.names, isValueTable: r.isValueTable };
  }
  if (a.kind === 'Query') return resolveQuery(an, a, undefined);
  if (a.kind === 'ScalarSubquery') return resolveQuery(an, a.query, undefined);
  throw sqlError(`${what} must be a TABLE or a subquery`, a.loc);
}

/**
 * RANGE_SESSIONIZE(TABLE t, 'range_column', ['partition', ...] [, 'MEETS' | 'OVERLAPS']):
 * the input rows plus `session_range`, the union of the ranges of the session
 * (within the partition) that each row belongs to. Sessions join ranges that
 * meet or overlap (MEETS, the default) or only overlap (OVERLAPS); a NULL
 * bound is unbounded; a NULL range is in no session. Planned as a gaps-and-
 * islands window query over the input bound as a CTE.
 */
function rangeSessionize(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fn = 'RANGE_SESSIONIZE';
  if (item.args.length < 3 || item.args.length > 4) throw sqlError(`Number of arguments does not match for table-valued function ${fn}`, item.loc);
  const input = tableArgument(an, item.args[0]!, `${fn} argument 1`);
  const constant = (i: number, t: SqlType, what: string): Value => {
    const a = item.args[i]!;
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError(`${fn} ${what} must be a ${typeToSql(t)} literal`, a.loc);
    const e = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    // `[]` is an empty array whatever element type it was given
    const emptyArray = e.kind === 'literal' && t.kind === 'ARRAY' && e.type.kind === 'ARRAY' && Array.isArray(e.value) && e.value.length === 0;
    if (e.kind !== 'literal' || (!typeEquals(e.type, t) && !emptyArray) || e.value === null) throw sqlError(`${fn} ${what} must be a non-NULL ${typeToSql(t)} literal`, a.loc);
    return e.value;
  };
  const lower = input.names.map((n) => n.toLowerCase());
  const column = (name: string, what: string): string => {
    const i = lower.indexOf(name.toLowerCase());
    if (i < 0) throw sqlError(`${fn} ${what} ${name} is not a column of the input table`, item.loc);
    return '`' + input.names[i]!.replace(/[`\\]/g, '\\$&') + '`';
  };
  const rangeName = constant(1, T.STRING, 'range_column') as string;
  const rc = column(rangeName, 'range_column');
  if (input.rel.columns[lower.indexOf(rangeName.toLowerCase())]!.type.kind !== 'RANGE') {
    throw sqlError(`${fn} range_column ${rangeName} must have a RANGE type`, item.args[1]!.loc);
  }
  const parts = (constant(2, { kind: 'ARRAY', element: T.STRING }, 'partitioning_columns') as string[]).map((c) => column(c, 'partitioning column'));
  const option = item.args.length === 4 ? (constant(3, T.STRING, 'sessionize_option') as string).toUpperCase() : 'MEETS';
  if (option !== 'MEETS' && option !== 'OVERLAPS') throw sqlError(`${fn} sessionize_option must be 'MEETS' or 'OVERLAPS'`, item.args[3]!.loc);
  // A row starts a session when its start is past the end of every earlier
  // range of the partition (ordered by start); MEETS also joins start = end.
  const partition = [...parts, `${rc} IS NULL`].join(', ');
  const after = option === 'MEETS' ? '>' : '>=';
  const sql = `SELECT * EXCEPT (__rs_pcnt, __rs_pinf, __rs_pmax, __rs_new, __rs_sid),
      IF(${rc} IS NULL, NULL, RANGE(
        IF(LOGICAL_OR(RANGE_START(${rc}) IS NULL) OVER __rs_s, NULL, MIN(RANGE_START(${rc})) OVER __rs_s),
        IF(LOGICAL_OR(RANGE_END(${rc}) IS NULL) OVER __rs_s, NULL, MAX(RANGE_END(${rc})) OVER __rs_s))) AS session_range
    FROM (
      SELECT *, SUM(__rs_new) OVER (PARTITION BY ${partition} ORDER BY RANGE_START(${rc}), RANGE_END(${rc}) ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS __rs_sid
      FROM (
        SELECT *, CASE WHEN __rs_pcnt = 0 THEN 1 WHEN __rs_pinf OR RANGE_START(${rc}) IS NULL THEN 0
                       WHEN RANGE_START(${rc}) ${after} __rs_pmax THEN 1 ELSE 0 END AS __rs_new
        FROM (
          SELECT *, COUNT(*) OVER __rs_prev AS __rs_pcnt,
                 LOGICAL_OR(RANGE_END(${rc}) IS NULL) OVER __rs_prev AS __rs_pinf,
                 MAX(RANGE_END(${rc})) OVER __rs_prev AS __rs_pmax
          FROM __rs_input
          WINDOW __rs_prev AS (PARTITION BY ${partition} ORDER BY RANGE_START(${rc}), RANGE_END(${rc}) ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))))
    WINDOW __rs_s AS (PARTITION BY ${partition}, __rs_sid)`;
  return resolveRewrittenTvf(an, item, input, sql, '__rs_input', 'range_sessionize');
}

/**
 * GAP_FILL(TABLE t | (subquery), ts_column, bucket_width [, partitioning_columns => [...]]
 * [, value_columns => [(col, 'null'|'locf'|'linear'), ...]] [, origin => x] [, ignore_null_values => b]):
 * one row per grid point (origin + k * bucket_width) between the first and the
 * last time point of each partition. A value is the input row's at exactly that
 * point, or else filled: NULL, the last observed value (locf) or the linear
 * interpolation of its neighbours. Planned as a window query over the input
 * rows unioned with the grid points, ordered by time (input rows first at a tie).
 */
function gapFill(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fn = 'GAP_FILL';
  if (!item.args.length) throw sqlError(`Number of arguments does not match for table-valued function ${fn}`, item.loc);
  const input = tableArgument(an, item.args[0]!, `${fn} argument 1`);
  const named = new Map<string, A.Expr>();
  const positional: A.Expr[] = [];
  for (const a of item.args.slice(1)) {
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError(`${fn} takes a table only as its first argument`, a.loc);
    if (a.kind === 'NamedArgument') {
      const n = a.name.toLowerCase();
      if (named.has(n)) throw sqlError(`Duplicate named argument ${a.name} in ${fn}`, a.loc);
      named.set(n, a.value);
    } else if (named.size) throw sqlError(`Positional argument follows named argument in ${fn}`, a.loc);
    else positional.push(a);
  }
  const order = ['ts_column', 'bucket_width', 'partitioning_columns', 'value_columns', 'origin', 'ignore_null_values'];
  if (positional.length > order.length) throw sqlError(`Number of arguments does not match for table-valued function ${fn}`, item.loc);
  positional.forEach((a, i) => {
    if (named.has(order[i]!)) throw sqlError(`Named argument ${order[i]} of ${fn} is also given positionally`, a.loc);
    named.set(order[i]!, a);
  });
  for (const n of named.keys()) if (!order.includes(n)) throw sqlError(`Unknown named argument ${n} of ${fn}`, item.loc);
  for (const n of ['ts_column', 'bucket_width']) if (!named.has(n)) throw sqlError(`${fn} requires argument ${n}`, item.loc);
  const constant = (n: string): { value: Value; type: SqlType; loc: A.Loc } => {
    const a = named.get(n)!;
    const e = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    const v = constantValue(e);
    if (v === undefined) throw sqlError(`${fn} argument ${n} must be a constant`, a.loc);
    if (v === null) throw sqlError(`${fn} argument ${n} must not be NULL`, a.loc);
    return { value: v, type: e.type, loc: a.loc };
  };
  const lower = input.names.map((c) => c.toLowerCase());
  const q = (name: string): string => '`' + name.replace(/[`\\]/g, '\\$&') + '`';
  const column = (name: string, what: string, loc: A.Loc): number => {
    const i = lower.indexOf(name.toLowerCase());
    if (i < 0) throw sqlError(`${fn} ${what} ${name} is not a column of the input table`, loc);
    return i;
  };

  const ts = constant('ts_column');
  if (ts.type.kind !== 'STRING') throw sqlError(`${fn} ts_column must be a STRING`, ts.loc);
  const tsIdx = column(ts.value as string, 'ts_column', ts.loc);
  const tsType = input.rel.columns[tsIdx]!.type;
  if (tsType.kind !== 'DATE' && tsType.kind !== 'DATETIME' && tsType.kind !== 'TIMESTAMP') {
    throw sqlError(`${fn} ts_column ${input.names[tsIdx]} must be of type DATE, DATETIME or TIMESTAMP, not ${typeToSql(tsType)}`, ts.loc);
  }
  const bw = constant('bucket_width');
  if (bw.type.kind !== 'INTERVAL') throw sqlError(`${fn} bucket_width must be an INTERVAL`, bw.loc);
  const iv = bw.value as Interval;
  // The grid is kept in integer steps of the time column's unit (days for DATE,
  // microseconds otherwise); a DATE grid may instead step in months (as DATE_BUCKET).
  const monthly = tsType.kind === 'DATE' && iv.months !== 0;
  if (iv.months !== 0 && (!monthly || iv.days !== 0 || iv.micros !== 0n)) {
    throw sqlError(`${fn} bucket_width with a MONTH, QUARTER or YEAR part is only supported alone, for a DATE ts_column`, bw.loc);
  }
  let width: bigint;
  if (tsType.kind === 'DATE') {
    if (iv.micros !== 0n) throw sqlError(`${fn} bucket_width for a DATE column must be a whole number of days`, bw.loc);
    width = BigInt(monthly ? iv.months : iv.days);
  } else width = BigInt(iv.days) * 86_400_000_000n + iv.micros;
  if (width <= 0n) throw sqlError(`${fn} bucket_width must be positive`, bw.loc);
  let origin: bigint = tsType.kind === 'DATE' ? BigInt(Math.floor(Date.UTC(1950, 0, 1) / 86_400_000)) : BigInt(Date.UTC(1950, 0, 1)) * 1000n;
  if (named.has('origin')) {
    const o = constant('origin');
    if (o.type.kind !== tsType.kind) throw sqlError(`${fn} origin must have the type of ts_column (${typeToSql(tsType)}), not ${typeToSql(o.type)}`, o.loc);
    origin = typeof o.value === 'number' ? BigInt(o.value) : (o.value as bigint);
  }
  let parts: number[] = [];
  if (named.has('partitioning_columns')) {
    const p = constant('partitioning_columns');
    if (p.type.kind !== 'ARRAY' || p.type.element.kind !== 'STRING') throw sqlError(`${fn} partitioning_columns must be an ARRAY<STRING>`, p.loc);
    parts = (p.value as string[]).map((c) => column(c, 'partitioning column', p.loc));
  }
  let values: { idx: number; method: 'null' | 'locf' | 'linear' }[];
  if (named.has('value_columns')) {
    const v = constant('value_columns');
    const ok = v.type.kind === 'ARRAY' && v.type.element.kind === 'STRUCT' && v.type.element.fields.length === 2 && v.type.element.fields.every((f) => f.type.kind === 'STRING');
    if (!ok) throw sqlError(`${fn} value_columns must be an ARRAY<STRUCT<STRING, STRING>>`, v.loc);
    values = (v.value as Value[][]).map(([name, method]) => {
      const idx = column(name as string, 'value column', v.loc);
      const m = String(method).toLowerCase();
      if (m !== 'null' && m !== 'locf' && m !== 'linear') throw sqlError(`${fn} gap-filling method must be 'null', 'locf' or 'linear', not '${String(method)}'`, v.loc);
      const t = input.rel.columns[idx]!.type.kind;
      if (m === 'linear' && t !== 'INT64' && t !== 'FLOAT64' && t !== 'NUMERIC' && t !== 'BIGNUMERIC') {
        throw sqlError(`${fn} linear gap filling requires a numeric column; ${input.names[idx]} is ${t}`, v.loc);
      }
      return { idx, method: m };
    });
  } else values = input.names.map((_, idx) => ({ idx, method: 'null' as const })).filter((c) => c.idx !== tsIdx && !parts.includes(c.idx));
  const seen = new Set<number>();
  for (const c of values) {
    if (c.idx === tsIdx || parts.includes(c.idx)) throw sqlError(`${fn} value column ${input.names[c.idx]} is the ts_column or a partitioning column`, item.loc);
    if (seen.has(c.idx)) throw sqlError(`${fn} value column ${input.names[c.idx]} is given more than once`, item.loc);
    seen.add(c.idx);
  }
  let ignoreNulls = true;
  if (named.has('ignore_null_values')) {
    const b = constant('ignore_null_values');
    if (b.type.kind !== 'BOOL') throw sqlError(`${fn} ignore_null_values must be a BOOL`, b.loc);
    ignoreNulls = b.value as boolean;
  }

  const tsc = q(input.names[tsIdx]!);
  const toUnit = tsType.kind === 'DATE' ? `UNIX_DATE(${tsc})` : tsType.kind === 'DATETIME' ? `UNIX_MICROS(TIMESTAMP(${tsc}, 'UTC'))` : `UNIX_MICROS(${tsc})`;
  const fromUnit = (x: string): string => tsType.kind === 'DATE' ? `DATE_FROM_UNIX_DATE(${x})` : tsType.kind === 'DATETIME' ? `DATETIME(TIMESTAMP_MICROS(${x}), 'UTC')` : `TIMESTAMP_MICROS(${x})`;
  // floor((x - origin) / width) with DIV/MOD, exact on INT64 (DIV truncates toward zero)
  const floorIdx = (x: string): string => `(DIV(${x} - ${origin}, ${width}) - IF(MOD(${x} - ${origin}, ${width}) < 0, 1, 0))`;
  const ceilIdx = (x: string): string => `(${floorIdx(x)} + IF(MOD(${x} - ${origin}, ${width}) = 0, 0, 1))`;
  // Monthly DATE grid: bucket k starts at origin + k * width months; the first and last
  // buckets come from DATE_BUCKET (its lower bounds are whole steps from the origin).
  const od = `DATE_FROM_UNIX_DATE(${origin})`;
  const mBucket = (x: string): string => `DATE_BUCKET(DATE_FROM_UNIX_DATE(${x}), INTERVAL ${width} MONTH, ${od})`;
  const mIdx = (x: string): string => `DIV(DATE_DIFF(${mBucket(x)}, ${od}, MONTH), ${width})`;
  const loIdx = monthly ? `(${mIdx('__gf_lo')} + IF(UNIX_DATE(${mBucket('__gf_lo')}) = __gf_lo, 0, 1))` : ceilIdx('__gf_lo');
  const hiIdx = monthly ? mIdx('__gf_hi') : floorIdx('__gf_hi');
  const gridT = monthly ? `UNIX_DATE(DATE_ADD(${od}, INTERVAL __gf_k * ${width} MONTH))` : `${origin} + __gf_k * ${width}`;
  const pcols = parts.map((i) => q(input.names[i]!));
  const vcol = (i: number): string => `__gf_v${i}`;
  const dataSel = [...pcols, `${toUnit} AS __gf_t`, '0 AS __gf_grid', ...values.map((c, k) => `${q(input.names[c.idx]!)} AS ${vcol(k)}`)];
  const gridSel = [...pcols, `${gridT} AS __gf_t`, '1 AS __gf_grid', ...values.map((c, k) => `CAST(NULL AS ${typeToSql(input.rel.columns[c.idx]!.type)}) AS ${vcol(k)}`)];
  const partBy = pcols.length ? `PARTITION BY ${pcols.join(', ')} ` : '';
  const upTo = `(${partBy}ORDER BY __gf_t, __gf_grid ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`;
  const from = `(${partBy}ORDER BY __gf_t, __gf_grid ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)`;
  // Per value column, the middle query keeps the neighbouring observations as STRUCT(t, v):
  // a STRUCT is non-NULL even when its v is NULL ("the last input row" vs "the last non-NULL value").
  const filled = values.map((c, k) => {
    const v = vcol(k);
    const obs = (nonNullOnly: boolean): string => `IF(__gf_grid = 0${nonNullOnly ? ` AND ${v} IS NOT NULL` : ''}, STRUCT(__gf_t AS t, ${v} AS v), NULL)`;
    if (c.method === 'null') return `LAST_VALUE(${obs(false)} IGNORE NULLS) OVER ${upTo} AS __gf_p${k}`;
    const prev = `LAST_VALUE(${obs(ignoreNulls)} IGNORE NULLS) OVER ${upTo} AS __gf_p${k}`;
    if (c.method === 'locf') return prev;
    return `${prev}, FIRST_VALUE(${obs(ignoreNulls)} IGNORE NULLS) OVER ${from} AS __gf_n${k}`;
  });
  const final = (k: number, method: 'null' | 'locf' | 'linear', type: SqlType): string => {
    const p = `__gf_p${k}`, n = `__gf_n${k}`;
    if (method === 'null') return `IF(${p}.t = __gf_t, ${p}.v, NULL)`;
    if (method === 'locf') return `${p}.v`;
    // INT64 is interpolated in FLOAT64 and rounded half away from zero (the documented 77.5 -> 78)
    const calc = type.kind === 'INT64'
      ? `CAST(ROUND(${p}.v + (${n}.v - ${p}.v) * (__gf_t - ${p}.t) / (${n}.t - ${p}.t)) AS INT64)`
      : `${p}.v + (${n}.v - ${p}.v) * CAST(__gf_t - ${p}.t AS ${typeToSql(type)}) / CAST(${n}.t - ${p}.t AS ${typeToSql(type)})`;
    return `CASE WHEN ${p}.t = __gf_t THEN ${p}.v WHEN ${p} IS NULL OR ${n} IS NULL THEN NULL ELSE ${calc} END`;
  };
  const outCols = [`${fromUnit('__gf_t')} AS ${tsc}`, ...pcols, ...values.map((c, k) => `${final(k, c.method, input.rel.columns[c.idx]!.type)} AS ${q(input.names[c.idx]!)}`)];
  const sql = `SELECT ${outCols.join(', ')} FROM (
      SELECT ${[...pcols, '__gf_t', '__gf_grid', ...filled].join(', ')}
      FROM (
        SELECT ${dataSel.join(', ')} FROM __gf_input WHERE ${tsc} IS NOT NULL
        UNION ALL
        SELECT ${gridSel.join(', ')}
        FROM (SELECT ${[...pcols, `MIN(${toUnit}) AS __gf_lo`, `MAX(${toUnit}) AS __gf_hi`].join(', ')} FROM __gf_input WHERE ${tsc} IS NOT NULL${pcols.length ? ` GROUP BY ${pcols.join(', ')}` : ''}),
          UNNEST(GENERATE_ARRAY(${loIdx}, ${hiIdx})) AS __gf_k))
    WHERE __gf_grid = 1`;
  return resolveRewrittenTvf(an, item, input, sql, '__gf_input', 'gap_fill');
}

/**
 * VECTOR_SEARCH(TABLE base | (query), 'column_to_search', TABLE query | (query) [, 'query_column_to_search']
 * [, query_column_to_search => ...] [, top_k => n] [, distance_type => 'EUCLIDEAN'|'COSINE'|'DOT_PRODUCT']
 * [, options => '{"use_brute_force": b, "fraction_lists_to_search": f}']) (search_functions):
 * for each query row, its top_k nearest base rows as (query STRUCT, base STRUCT, distance).
 * The emulator has no approximate index, so the search is always exact (brute force), which the page
 * allows: use_brute_force and fraction_lists_to_search only trade recall for speed on the service.
 * A vector index still matters for one thing: without distance_type, a vector index on the searched
 * column of a TABLE argument gives its distance_type (unless use_brute_force skips the index).
 * Distances: EUCLIDEAN sqrt(sum (a-b)^2), COSINE 1 - a.b / (|a||b|), DOT_PRODUCT -a.b (smaller is nearer).
 * Ties in distance keep the base rows' order. top_k defaults to 10; a negative top_k returns every row.
 * Planned as a cross join of the numbered rows with a per-query-row ROW_NUMBER.
 */
function vectorSearch(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fn = 'VECTOR_SEARCH';
  const tables = item.args.filter((a) => a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ScalarSubquery');
  if (item.args.length < 3 || tables.length !== 2 || item.args[1]!.kind === 'TableArg' || item.args[1]!.kind === 'Query') {
    throw sqlError(`${fn} takes a base table, the column to search and a query table: VECTOR_SEARCH(TABLE base, 'column', TABLE query, ...)`, item.loc);
  }
  if (item.args[0] !== tables[0] || item.args[2] !== tables[1]) throw sqlError(`${fn} takes the base table as argument 1 and the query table as argument 3`, item.loc);
  const base = tableArgument(an, item.args[0]!, `${fn} argument 1`);
  const query = tableArgument(an, item.args[2]!, `${fn} argument 3`);
  const named = new Map<string, A.Expr>([['column_to_search', item.args[1] as A.Expr]]);
  const order = ['column_to_search', 'query_column_to_search', 'top_k', 'distance_type', 'options'];
  let position = 1;
  for (const a of item.args.slice(3)) {
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError(`${fn} takes tables only as arguments 1 and 3`, a.loc);
    let n: string;
    let v: A.Expr;
    if (a.kind === 'NamedArgument') {
      n = a.name.toLowerCase();
      v = a.value;
      position = order.length;
    } else {
      if (position >= order.length) throw sqlError(`Positional argument follows named argument in ${fn}`, a.loc);
      n = order[position++]!;
      v = a;
    }
    if (!order.includes(n)) throw sqlError(`Unknown named argument ${n} of ${fn}`, a.loc);
    if (named.has(n)) throw sqlError(`Duplicate argument ${n} in ${fn}`, a.loc);
    named.set(n, v);
  }
  const constant = (n: string, t: SqlType): Value | undefined => {
    const a = named.get(n);
    if (!a) return undefined;
    const e = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    const v = constantValue(e);
    if (v === undefined) throw sqlError(`${fn} argument ${n} must be a constant`, a.loc);
    if (v === null) throw sqlError(`${fn} argument ${n} must not be NULL`, a.loc);
    if (!typeEquals(e.type, t)) throw sqlError(`${fn} argument ${n} must be ${typeToSql(t)}, got ${typeToSql(e.type)}`, a.loc);
    return v;
  };
  const q = (name: string): string => '`' + name.replace(/[`\\]/g, '\\$&') + '`';
  const embedding = (input: RelOut, name: string, which: string): string => {
    const i = input.names.findIndex((c) => c.toLowerCase() === name.toLowerCase());
    if (i < 0) throw sqlError(`${fn}: column ${name} not found in the ${which} table`, item.loc);
    const t = input.rel.columns[i]!.type;
    if (t.kind !== 'ARRAY' || t.element.kind !== 'FLOAT64') throw sqlError(`${fn}: column ${name} of the ${which} table must be ARRAY<FLOAT64>, got ${typeToSql(t)}`, item.loc);
    return input.names[i]!;
  };
  const column = embedding(base, constant('column_to_search', T.STRING) as string, 'base');
  const queryColumn = embedding(query, (constant('query_column_to_search', T.STRING) as string | undefined) ?? column, 'query');
  const topK = (constant('top_k', T.INT64) as bigint | undefined) ?? 10n;

  let bruteForce = false;
  const optionsText = constant('options', T.STRING) as string | undefined;
  if (optionsText !== undefined) {
    const loc = named.get('options')!.loc;
    let opts: unknown;
    try {
      opts = JSON.parse(optionsText);
    } catch {
      throw sqlError(`${fn} options must be a JSON object: ${optionsText}`, loc);
    }
    if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) throw sqlError(`${fn} options must be a JSON object: ${optionsText}`, loc);
    for (const [k, v] of Object.entries(opts)) {
      if (k === 'use_brute_force') {
        if (typeof v !== 'boolean') throw sqlError(`${fn} option use_brute_force must be a JSON boolean`, loc);
        bruteForce = v;
      } else if (k === 'fraction_lists_to_search') {
        if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw sqlError(`${fn} option fraction_lists_to_search must be a number between 0.0 and 1.0`, loc);
      } else throw sqlError(`${fn} has no option ${k}; the options are use_brute_force and fraction_lists_to_search`, loc);
    }
  }

  let distanceType = (constant('distance_type', T.STRING) as string | undefined)?.toUpperCase();
  if (distanceType === undefined && !bruteForce) distanceType = indexDistanceType(an, item.args[0]!, column);
  distanceType ??= 'EUCLIDEAN';
  if (!['EUCLIDEAN', 'COSINE', 'DOT_PRODUCT'].includes(distanceType)) {
    throw sqlError(`${fn} distance_type must be 'EUCLIDEAN', 'COSINE' or 'DOT_PRODUCT', got '${distanceType}'`, named.get('distance_type')!.loc);
  }
  const err = (s: string): string => `ERROR(${JSON.stringify(s)})`;
  const dist = distanceType === 'DOT_PRODUCT'
    ? `-(SELECT SUM(__vs_x * __vs_qv[OFFSET(__vs_i)]) FROM UNNEST(__vs_bv) AS __vs_x WITH OFFSET __vs_i)`
    : `${distanceType}_DISTANCE(__vs_bv, __vs_qv)`;
  const check = `CASE
      WHEN __vs_qv IS NULL OR ARRAY_LENGTH(__vs_qv) = 0 THEN ${err(`${fn}: the query column ${queryColumn} has a NULL or empty array`)}
      WHEN __vs_bv IS NULL OR ARRAY_LENGTH(__vs_bv) = 0 THEN ${err(`${fn}: the base column ${column} has a NULL or empty array`)}
      WHEN ARRAY_LENGTH(__vs_qv) != ARRAY_LENGTH(__vs_bv) THEN ERROR(FORMAT('${fn}: embeddings must have the same length; the query embedding has %d elements and the base embedding %d', ARRAY_LENGTH(__vs_qv), ARRAY_LENGTH(__vs_bv)))
      WHEN EXISTS (SELECT 1 FROM UNNEST(ARRAY_CONCAT(__vs_qv, __vs_bv)) AS __vs_x WHERE __vs_x IS NULL) THEN ${err(`${fn}: an embedding has a NULL element`)}
      ELSE ${dist} END`;
  const struct = (input: RelOut): string => `STRUCT(${input.names.map((n) => `${q(n)} AS ${q(n)}`).join(', ')})`;
  const sql = `SELECT __vs_q AS query, __vs_b AS base, __vs_d AS distance FROM (
      SELECT __vs_q, __vs_b, __vs_qid, __vs_bid, ${check} AS __vs_d
      FROM (SELECT ${struct(query)} AS __vs_q, ${q(queryColumn)} AS __vs_qv, ROW_NUMBER() OVER () AS __vs_qid FROM __vs_query)
      CROSS JOIN (SELECT ${struct(base)} AS __vs_b, ${q(column)} AS __vs_bv, ROW_NUMBER() OVER () AS __vs_bid FROM __vs_base))
    ${topK < 0n ? '' : `QUALIFY ROW_NUMBER() OVER (PARTITION BY __vs_qid ORDER BY __vs_d, __vs_bid) <= ${topK}`}`;
  return resolveRewrittenTvfOver(an, item, [{ input: base, name: '__vs_base' }, { input: query, name: '__vs_query' }], sql, 'vector_search');
}

/** The distance_type of a vector index on `column` of a TABLE argument (EUCLIDEAN when the index sets none). */
function indexDistanceType(an: Analyzer, a: A.TvfRef['args'][number], column: string): string | undefined {
  if (a.kind !== 'TableArg' || (a.path.length === 1 && an.findCte(a.path[0]!))) return undefined;
  const info = an.getTable(tableIdOf(an, a.path, a.loc));
  const ix = info ? vectorIndexesOf(info.resource).find((x) => x.column.toLowerCase() === column.toLowerCase()) : undefined;
  if (!ix) return undefined;
  return ix.options.find((o) => o.name.toLowerCase() === 'distance_type')?.value.toUpperCase() ?? 'EUCLIDEAN';
}

/**
 * Resolves a built-in table function written as SQL over its table argument:
 * the argument is visible to `sql` as the CTE `inputName` (and only it: the
 * caller's CTEs are hidden), and the result is a WITH over the argument's plan.
 */
function resolveRewrittenTvf(an: Analyzer, item: A.TvfRef, input: RelOut, sql: string, inputName: string, defaultAlias: string): Leaf {
  return resolveRewrittenTvfOver(an, item, [{ input, name: inputName }], sql, defaultAlias);
}

/** resolveRewrittenTvf over several table arguments, each bound as its own CTE. */
function resolveRewrittenTvfOver(an: Analyzer, item: A.TvfRef, inputs: { input: RelOut; name: string }[], sql: string, defaultAlias: string): Leaf {
  const stmt = an.env.parse(sql).statements[0];
  if (stmt?.kind !== 'QueryStatement') throw new Error(`${defaultAlias}: internal query did not parse`);
  const bound = inputs.map(({ input, name }) => ({
    id: an.newId(),
    name,
    plan: input.rel,
    columns: input.rel.columns.map((c, k) => ({ ...c, name: input.names[k] ?? c.name })),
  }));
  const savedCtes = an.ctes.splice(0);
  an.ctes.push(new Map(bound.map((b) => [b.name, { id: b.id, name: b.name, columns: b.columns, isValueTable: false }])));
  try {
    const out = resolveQuery(an, stmt.query, undefined);
    const rv = rangeOver(item.alias ?? defaultAlias, out.rel, out.names);
    const rel: Rel = { kind: 'with', ctes: bound.map((b) => ({ id: b.id, name: b.name, plan: b.plan })), body: out.rel, columns: out.rel.columns };
    return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
  } finally {
    an.ctes.splice(0);
    an.ctes.push(...savedCtes);
  }
}

/**
 * ML.PREDICT / ML.EVALUATE / ML.FORECAST over metadata-only models (spec §1.6.6:
 * inference is not implemented): the documented output columns, with NULL results.
 */
function mlStub(an: Analyzer, item: A.TvfRef, fname: string, scope: Scope): Leaf {
  const m = item.args[0];
  if (!m || m.kind !== 'ModelArg') throw sqlError(`${fname} requires a MODEL argument`, item.loc);
  const parts = m.path.flatMap((p) => p.split('.'));
  const modelId = parts[parts.length - 1]!;
  const datasetId = parts.length > 1 ? parts[parts.length - 2]! : an.env.defaultDataset?.datasetId ?? '';
  const projectId = parts.length > 2 ? parts[0]! : an.env.projectId;
  const model = an.env.catalog.getDataset(projectId, datasetId) ? an.env.catalog.getChild('models', projectId, datasetId, modelId) : undefined;
  if (!model) throw sqlError(`Not found: Model ${projectId}:${datasetId}.${modelId}`, m.loc);
  const alias = item.alias ?? fname.slice(3).toLowerCase();
  const nullCols = (cols: [string, SqlType][]): Leaf => {
    const rel: Rel = { kind: 'values', rows: [cols.map(([, t]) => literal(t, null))], columns: cols.map(([n, t]) => an.newColumn(n, t)) };
    const rv = rangeOver(alias, rel, cols.map(([n]) => n));
    return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
  };
  switch (fname) {
    case 'ML.PREDICT': {
      const input = item.args[1];
      if (!input || input.kind === 'ModelArg') throw sqlError('ML.PREDICT requires an input table or query', item.loc);
      let out: RelOut;
      if (input.kind === 'Query') out = resolveQuery(an, input, undefined);
      else if (input.kind === 'ScalarSubquery') out = resolveQuery(an, input.query, undefined);
      else if (input.kind === 'TableArg') {
        const r = resolveTableRef(an, { kind: 'TableRef', loc: input.loc, path: input.path }, undefined);
        out = { rel: r.rel, names: r.names, isValueTable: r.isValueTable };
      } else {
        const x = resolveExpr(an, input, { scope, clause: 'ML.PREDICT' });
        throw sqlError(`ML.PREDICT input must be a table or query, not ${typeToSql(x.type)}`, input.loc);
      }
      const labels = ((model.labelColumns as { name?: string }[] | undefined) ?? [{ name: 'label' }]).map((l) => `predicted_${l.name ?? 'label'}`);
      const exprs: Expr[] = [...out.rel.columns.map((c) => colRef(c)), ...labels.map(() => literal(T.FLOAT64, null))];
      const names = [...out.names, ...labels];
      const rel = project(an, out.rel, exprs, names);
      const rv = rangeOver(alias, rel, names);
      return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
    }
    case 'ML.EVALUATE':
      return nullCols([['mean_absolute_error', T.FLOAT64], ['mean_squared_error', T.FLOAT64], ['mean_squared_log_error', T.FLOAT64], ['median_absolute_error', T.FLOAT64], ['r2_score', T.FLOAT64], ['explained_variance', T.FLOAT64]]);
    case 'ML.FORECAST':
      return nullCols([['forecast_timestamp', T.TIMESTAMP], ['forecast_value', T.FLOAT64], ['standard_error', T.FLOAT64], ['confidence_level', T.FLOAT64], ['prediction_interval_lower_bound', T.FLOAT64], ['prediction_interval_upper_bound', T.FLOAT64]]);
    default:
      throw sqlError(`Table-valued function not found: ${item.name.join('.')}`, item.loc);
  }
}

function sample(an: Analyzer, rel: Rel, s: A.TableSample): Rel {
  const x = resolveExpr(an, s.size, { scope: new Scope(), clause: 'TABLESAMPLE' });
  if (x.kind !== 'literal' || x.value === null) throw sqlError('TABLESAMPLE size must be a constant', s.size.loc);
  const n = typeof x.value === 'bigint' ? Number(x.value) : Number(x.value as number);
  if (s.repeatable) {
    const r = resolveExpr(an, s.repeatable, { scope: new Scope(), clause: 'TABLESAMPLE' });
    if (r.kind === 'literal') {
      if (r.value === null) throw sqlError('REPEATABLE must not be null', s.repeatable.loc);
      if (typeof r.value === 'bigint' && r.value < 0n) throw sqlError('REPEATABLE must not be negative', s.repeatable.loc);
    }
  }
  if (s.unit === 'ROWS') {
    if (n < 0) throw sqlError('SampleScan requires non-negative size', s.size.loc);
    if (!s.withWeight) return { kind: 'limit', input: rel, limit: n, offset: 0, columns: rel.columns };
    // WITH WEIGHT: each kept row stands for max(input rows / n, 1) rows.
    const def = lookupFunction('$count_star');
    if (!def || def.kind !== 'aggregate') throw sqlError('TABLESAMPLE RESERVOIR WITH WEIGHT is not supported', s.size.loc);
    const r = def.resolve([], { distinct: false, ignoreNulls: undefined, hasOrderBy: false });
    if (!r.ok) throw sqlError(r.message, s.size.loc);
    const cnt = an.newColumn('$count', T.INT64);
    const win: Rel = { kind: 'window', input: rel, calls: [{ column: cnt, name: def.name, args: [], aggregate: r.resolved, distinct: false, ignoreNulls: undefined, partitionBy: [], orderBy: [] }], columns: [...rel.columns, cnt] };
    const lim: Rel = { kind: 'limit', input: win, limit: n, offset: 0, columns: win.columns };
    const ratio = expr.callScalar('GREATEST', [expr.callScalar('$divide', [coerce(colRef(cnt), T.FLOAT64), literal(T.FLOAT64, n)], s.size.loc), literal(T.FLOAT64, 1)], s.size.loc);
    const out = project(an, lim, [...rel.columns.map((c) => colRef(c)), ratio], [...rel.columns.map((c) => c.name), s.withWeight.alias ?? 'weight']);
    weightColumns.set(out, out.columns[out.columns.length - 1]!);
    return out;
  }
  if (n < 0 || n > 100) throw sqlError('PERCENT value must be in the range [0, 100]', s.size.loc);
  const sampled: Rel = { kind: 'sample', input: rel, percent: n, columns: rel.columns };
  if (!s.withWeight) return sampled;
  // WITH WEIGHT: each sampled row stands for 100 / percent input rows.
  const name = s.withWeight.alias ?? 'weight';
  const out = project(an, sampled, [...rel.columns.map((c) => colRef(c)), literal(T.FLOAT64, 100 / n)], [...rel.columns.map((c) => c.name), name]);
  weightColumns.set(out, out.columns[out.columns.length - 1]!);
  return out;
}

/** The WITH WEIGHT column a sampled relation carries (exposed as its own range variable). */
const weightColumns = new WeakMap<Rel, ResolvedColumn>();

function unnestLeaf(
  an: Analyzer,
  exprs: readonly A.Expr[],
  alias0: string | undefined,
  withOffset: { alias?: string } | undefined,
  scope: Scope,
  loc: A.Loc,
  exprAliases?: readonly (string | undefined)[],
  modeExpr?: A.Expr,
): Leaf {
  const alias = alias0 ?? (exprs.length === 1 ? exprAliases?.[0] : undefined);
  if (alias && withOffset?.alias && alias.toLowerCase() === withOffset.alias.toLowerCase()) throw sqlError(`Duplicate alias ${withOffset.alias} found`, loc);
  const corr = new Correlation();
  const lat = new Scope(scope, corr);
  const arrays = exprs.map((e) => {
    // An UNNEST argument may be an array path through arrays (implicitly flattened).
    const x = resolveExpr(an, e, { scope: lat, clause: 'UNNEST', flatten: true });
    if (x.type.kind !== 'ARRAY') {
      if (originOf(x) === Origin.Null) return literal(arrayOf(T.INT64), null);
      throw sqlError(`Values referenced in UNNEST must be arrays. UNNEST contains expression of type ${typeToSql(x.type)}`, e.loc);
    }
    return x;
  });
  const elements = arrays.map((a, i) => an.newColumn(i === 0 ? (alias ?? '') : '', (a.type as { element: SqlType }).element));
  const off = withOffset ? an.newColumn(withOffset.alias ?? 'offset', T.INT64) : undefined;
  let mode: UnnestRel['mode'];
  if (modeExpr) {
    const m = resolveExpr(an, modeExpr, { scope: lat, clause: 'UNNEST' });
    const v = m.kind === 'literal' ? m.value : constantValue(m);
    if (v === null) throw sqlError('UNNEST does not allow NULL mode argument', modeExpr.loc);
    const u = typeof v === 'string' ? v.toUpperCase() : '';
    if (u !== 'PAD' && u !== 'TRUNCATE' && u !== 'STRICT') throw sqlError(`Invalid UNNEST mode: ${String(v)}`, modeExpr.loc);
    mode = u;
  }
  const rel: UnnestRel = { kind: 'unnest', arrays, elements, ...(off ? { offset: off } : {}), ...(mode && mode !== 'PAD' ? { mode } : {}), columns: off ? [...elements, off] : elements };
  const rvs: RangeVar[] = [];
  const star: ResolvedColumn[] = [];
  if (arrays.length === 1) {
    const a = alias ?? '';
    rvs.push({ name: a, lname: a.toLowerCase(), columns: [], value: elements[0]! });
    star.push(elements[0]!);
  } else {
    // Multi-array UNNEST: each element is a plain column named by its alias (or the path's last name).
    const cols = elements.map((c, i) => ({ ...c, name: exprAliases?.[i] ?? implicitAlias(exprs[i]!) }));
    rvs.push({ name: '', lname: '', columns: cols });
    star.push(...cols);
  }
  if (off) {
    const orv: RangeVar = { name: '', lname: '', columns: [off] };
    // Only an explicit alias is a name of the FROM clause: two unaliased WITH OFFSET may be joined USING (offset).
    if (withOffset?.alias) offsetVars.add(orv);
    rvs.push(orv);
    star.push(off);
  }
  // A volatile array (UNNEST([RAND()])) is evaluated once per row of the FROM items before it,
  // as a correlated one is: joined laterally even without a reference to them.
  return { rel, rvs, star, lateral: corr.ids.size > 0 || arrays.some(isVolatileExpr), correlatedIds: corr.ids, arrayScan: true };
}

function isLateralCandidate(item: A.FromItem): boolean {
  return item.kind === 'UnnestRef' || (item.kind === 'TableRef' && !item.path[0]!.includes('.')) || item.kind === 'TvfRef';
}

function resolveJoin(an: Analyzer, j: A.JoinRef, scope: Scope, outer: Scope | undefined): Rel {
  const left = resolveFrom(an, j.left, scope, outer);
  const leftStar = scope.starList ?? [];
  const leftRvs = scope.rangeVars.slice();
  // USING keys merged by the left side's joins: `a JOIN b USING (x) JOIN c USING (x)` finds its left x there.
  const leftExtra = new Map(scope.extra);
  let rightExtra = new Map<string, ResolvedColumn>();
  let right: Rel;
  let lateral = false;
  let correlatedIds: ReadonlySet<number> | undefined;
  let rightRvs: RangeVar[];
  let rightStar: ResolvedColumn[];
  let rightArrayScan = false;
  if (j.right.kind === 'JoinRef') {
    // Parenthesized join on the right: resolved in its own scope (no lateral references).
    const sub = new Scope(outer);
    right = resolveFrom(an, j.right, sub, outer);
    rightRvs = sub.rangeVars;
    rightStar = sub.starList ?? [];
    rightExtra = sub.extra;
    for (const [k, v] of sub.extra) scope.extra.set(k, v);
  } else {
    const leaf = isLateralCandidate(j.right) ? resolveLeaf(an, j.right, scope, outer) : resolveLeaf(an, j.right, new Scope(outer), outer);
    right = leaf.rel;
    lateral = leaf.lateral;
    correlatedIds = leaf.correlatedIds;
    rightRvs = leaf.rvs;
    rightStar = leaf.star;
    rightArrayScan = !!leaf.arrayScan;
  }
  if (lateral && (j.joinType === 'RIGHT' || j.joinType === 'FULL')) {
    // Only a reference to the join's left side is lateral; an UNNEST of an enclosing query's
    // value is a constant here, so the join runs as an ordinary (non-lateral) one.
    const leftIds = new Set<number>();
    for (const rv of leftRvs) {
      for (const c of rv.columns) leftIds.add(c.id);
      if (rv.value) leftIds.add(rv.value.id);
    }
    for (const c of scope.extra.values()) leftIds.add(c.id);
    if (!correlatedIds || [...correlatedIds].some((id) => leftIds.has(id))) {
      throw sqlError(`${j.joinType} JOIN cannot be used with a correlated UNNEST or lateral reference`, j.loc);
    }
    lateral = false;
  }
  for (const rv of rightRvs) addFromRangeVar(scope, rv, j.right.loc, rightArrayScan);
  const joinType = j.joinType === 'COMMA' || j.joinType === 'CROSS' ? 'cross' : j.joinType === 'INNER' ? 'inner' : (j.joinType.toLowerCase() as 'left' | 'right' | 'full');
  let condition: Expr | undefined;
  let star = [...leftStar, ...rightStar];
  let rel: Rel;
  if (j.natural) throw sqlError('Natural join not supported', j.loc);
  if (j.using) {
    const names = j.using;
    const lscope = new Scope();
    lscope.rangeVars = leftRvs;
    for (const [k, v] of leftExtra) lscope.extra.set(k, v);
    const rscope = new Scope();
    rscope.rangeVars = rightRvs;
    for (const [k, v] of rightExtra) rscope.extra.set(k, v);
    const conds: Expr[] = [];
    // A key is a column, or a field of a STRUCT value table (`JOIN UNNEST(structs) USING (f)`).
    type Key = { expr: Expr; col?: ResolvedColumn; value?: ResolvedColumn; fieldIndex?: number };
    const keyOf = (h: ReturnType<Scope['lookup']>, side: string): Key => {
      if (h?.kind === 'column') return { expr: colRef(h.column), col: h.column };
      if (h?.kind === 'field') return { expr: { kind: 'field', type: h.type, arg: colRef(h.column), fieldIndex: h.fieldIndex }, value: h.column, fieldIndex: h.fieldIndex };
      throw sqlError(`Column ${names[merged.length]} in USING clause not found on ${side} side of join`, j.loc);
    };
    const merged: { name: string; l: Key; r: Key; type: SqlType }[] = [];
    for (const n of names) {
      const lh = lscope.columnLookup(n);
      const rh = rscope.columnLookup(n);
      if (lh?.kind === 'ambiguous') throw sqlError(`Column ${n} in USING clause is ambiguous on left side of join`, j.loc);
      if (rh?.kind === 'ambiguous') throw sqlError(`Column ${n} in USING clause is ambiguous on right side of join`, j.loc);
      const l = keyOf(lh, 'left');
      const r = keyOf(rh, 'right');
      const st = supertype([
        { type: l.expr.type, origin: Origin.Column },
        { type: r.expr.type, origin: Origin.Column },
      ]);
      // The reference implementation's wording (it quotes the name here, unlike its other USING errors).
      if (!st) throw sqlError(`Column '${n}' in USING has incompatible types that cannot be directly compared using equality on either side of the join: ${typeToSql(l.expr.type)} and ${typeToSql(r.expr.type)}`, j.loc);
      const { callScalar } = expr;
      conds.push(callScalar('$equal', [coerce(l.expr, st), coerce(r.expr, st)], j.loc));
      merged.push({ name: n, l, r, type: st });
    }
    condition = conds.length === 0 ? undefined : conds.length === 1 ? conds[0] : { kind: 'logical', type: T.BOOL, op: 'and', args: conds };
    rel = { kind: 'join', joinType: conds.length ? joinType : 'cross', left, right, ...(condition ? { condition } : {}), lateral, columns: [...left.columns, ...right.columns] };
    const keyCols: ResolvedColumn[] = [];
    if (joinType === 'full' || merged.some((m) => !m.l.col || !m.r.col)) {
      // The keys become columns of a projection over the join: FULL takes either side's
      // value; a struct field key is computed, and its value table's other fields stand in
      // for the struct in SELECT * (the key is listed once, first).
      const exprs: Expr[] = rel.columns.map((c) => colRef(c));
      const extraNames = rel.columns.map((c) => c.name);
      for (const m of merged) {
        exprs.push(
          joinType === 'full'
            ? { kind: 'conditional', type: m.type, op: 'coalesce', whens: [], thens: [coerce(m.l.expr, m.type), coerce(m.r.expr, m.type)] }
            : joinType === 'right' ? m.r.expr : m.l.expr,
        );
        extraNames.push(m.name);
      }
      const usedFields = new Map<number, Set<number>>();
      for (const m of merged) for (const k of [m.l, m.r]) if (k.value) (usedFields.get(k.value.id) ?? usedFields.set(k.value.id, new Set()).get(k.value.id)!).add(k.fieldIndex!);
      const expanded = new Map<number, number[]>();
      for (const [id, used] of usedFields) {
        const v = rel.columns.find((c) => c.id === id)!;
        if (v.type.kind !== 'STRUCT') continue;
        const at: number[] = [];
        v.type.fields.forEach((f, i) => {
          if (used.has(i)) return;
          at.push(exprs.length);
          exprs.push({ kind: 'field', type: f.type, arg: colRef(v), fieldIndex: i });
          extraNames.push(f.name);
        });
        expanded.set(id, at);
      }
      const p = project(an, rel, exprs, extraNames);
      // Re-point range variables at the projected copies of the join's columns.
      const idMap = new Map<number, ResolvedColumn>();
      rel.columns.forEach((c, i) => idMap.set(c.id, p.columns[i]!));
      const remap = (rv: RangeVar): RangeVar => ({ ...rv, columns: rv.columns.map((c) => ({ ...idMap.get(c.id)!, name: c.name })), ...(rv.value ? { value: { ...idMap.get(rv.value.id)!, name: rv.value.name } } : {}) });
      scope.rangeVars = scope.rangeVars.map((rv) => (leftRvs.includes(rv) || rightRvs.includes(rv) ? remap(rv) : rv));
      for (const [k, v] of scope.extra) if (idMap.has(v.id)) scope.extra.set(k, idMap.get(v.id)!);
      merged.forEach((m, i) => {
        const col = { ...p.columns[rel.columns.length + i]!, name: m.name };
        keyCols.push(col);
        scope.extra.set(m.name.toLowerCase(), col);
      });
      const drop = new Set(merged.flatMap((m) => [m.l.col?.id, m.r.col?.id]));
      star = [
        ...keyCols,
        ...star.flatMap((c) => (drop.has(c.id) ? [] : expanded.has(c.id) ? expanded.get(c.id)!.map((k) => p.columns[k]!) : [idMap.get(c.id) ?? c])),
      ];
      scope.starList = star;
      return p;
    }
    for (const m of merged) {
      const col = joinType === 'right' ? m.r.col! : m.l.col!;
      keyCols.push({ ...col, name: m.name });
      scope.extra.set(m.name.toLowerCase(), { ...col, name: m.name });
    }
    const drop = new Set(merged.flatMap((m) => [m.l.col!.id, m.r.col!.id]));
    star = [...keyCols, ...star.filter((c) => !drop.has(c.id))];
    scope.starList = star;
    return rel;
  }
  if (j.on) condition = requireBool(resolveExpr(an, j.on, { scope, clause: 'ON clause' }), j.on.loc, 'JOIN ON clause');
  else if (joinType !== 'cross' && !lateral && j.right.kind !== 'UnnestRef') {
    throw sqlError(`${j.joinType} JOIN must have an immediately following ON or USING clause`, j.loc);
  }
  scope.starList = star;
  rel = {
    kind: 'join',
    joinType: condition ? joinType : (lateral || j.right.kind === 'UnnestRef') && joinType !== 'cross' ? joinType : 'cross',
    left,
    right,
    ...(condition ? { condition } : {}),
    lateral,
    columns: [...left.columns, ...right.columns],
  };
  return rel;
}

// `expr` namespace import for callScalar without a name clash with local helpers.
import * as expr from './expr.js';

// ---------------------------------------------------------------- PIVOT / UNPIVOT

function valueName(e: A.Expr): string {
  switch (e.kind) {
    case 'StringLiteral':
      return e.value;
    case 'IntLiteral':
      return e.text;
    case 'UnaryExpr':
      return e.operand.kind === 'IntLiteral' ? `minus_${e.operand.text}` : '';
    case 'BoolLiteral':
      return e.value ? 'true' : 'false';
    case 'NullLiteral':
      return 'NULL';
    default:
      return '';
  }
}

/** A FROM item whose rows are one value (a value table: UNNEST of structs, SELECT AS VALUE, a value-table pipe input). */
const isValueInput = (scope: Scope): boolean => scope.rangeVars[0]?.value !== undefined;

function resolvePivot(an: Analyzer, p: A.PivotRef, outer: Scope | undefined): Leaf {
  if (p.input.kind === 'UnnestRef') throw sqlError('PIVOT is not allowed with array scans', p.loc);
  const inner = new Scope(outer);
  const input = resolveFrom(an, p.input, inner, outer);
  // A value table has no columns to group by or to pivot (only its row value):
  // the reference refuses it rather than pivot over nothing.
  if (isValueInput(inner)) throw sqlError('PIVOT is not allowed on value tables', p.loc);
  const aggs = new AggCollector(inner);
  const ctx: ExprCtx = { scope: inner, clause: 'PIVOT clause', aggs };
  let forExpr = resolveExpr(an, p.forExpr, { scope: inner, clause: 'PIVOT clause' });
  const aggExprs = p.aggregates.map((a) => {
    const before = aggs.calls.length;
    const e = resolveExpr(an, a.expr, ctx);
    if (aggs.calls.length !== before + 1 || e.kind !== 'column') throw sqlError('PIVOT expression must be an aggregate function call', a.expr.loc);
    return aggs.calls[before]!;
  });
  // Columns referenced by aggregates or FOR are consumed; the rest group the output.
  const used = new Set<number>();
  const note = (e: Expr) =>
    rewriteExpr(e, (x) => {
      if (x.kind === 'column') used.add(x.columnId);
      return undefined;
    });
  note(forExpr);
  for (const a of aggExprs) {
    a.args.forEach(note);
    a.orderBy.forEach((k) => note(k.expr));
    if (a.having) note(a.having.expr);
    if (a.filter) note(a.filter);
  }
  const groupCols = (inner.starList ?? []).filter((c) => !used.has(c.id));
  const keyCols = groupCols.map((c) => an.newColumn(c.name, c.type));
  // A volatile aggregate argument (SUM(RAND())) is computed once per input row and
  // shared by every pivot column, as the reference does: project it below the aggregate.
  let aggInput = input;
  const volatileArgs = aggExprs.flatMap((a) => a.args.filter((x) => isVolatileExpr(x)));
  if (volatileArgs.length) {
    const proj = project(an, input, [...input.columns.map((c) => colRef(c)), ...volatileArgs], [...input.columns.map((c) => c.name), ...volatileArgs.map(() => '$pivot_arg')]);
    const idMap = new Map(input.columns.map((c, i) => [c.id, proj.columns[i]!]));
    const argCol = new Map(volatileArgs.map((x, i) => [x, proj.columns[input.columns.length + i]!]));
    const remap = (e: Expr): Expr =>
      rewriteExpr(e, (x) => {
        const ac = argCol.get(x);
        if (ac) return colRef(ac);
        if (x.kind === 'column' && !x.correlated && idMap.has(x.columnId)) return colRef(idMap.get(x.columnId)!);
        return undefined;
      });
    aggInput = proj;
    forExpr = remap(forExpr);
    for (let i = 0; i < aggExprs.length; i++) {
      const a = aggExprs[i]!;
      aggExprs[i] = {
        ...a,
        args: a.args.map(remap),
        orderBy: a.orderBy.map((k) => ({ ...k, expr: remap(k.expr) })),
        ...(a.having ? { having: { ...a.having, expr: remap(a.having.expr) } } : {}),
        ...(a.filter ? { filter: remap(a.filter) } : {}),
      };
    }
    groupCols.splice(0, groupCols.length, ...groupCols.map((c) => { const m = idMap.get(c.id); return m ? { ...m, name: c.name } : c; }));
  }
  const calls = [];
  const outNames: string[] = [];
  for (const v of p.inValues) {
    const val = resolveExpr(an, v.expr, { scope: new Scope(), clause: 'PIVOT IN list' });
    const st = supertype([
      { type: forExpr.type, origin: Origin.Column },
      { type: val.type, origin: originOf(val) },
    ]);
    if (!st) throw sqlError(`PIVOT IN value of type ${typeToSql(val.type)} does not match FOR expression type ${typeToSql(forExpr.type)}`, v.expr.loc);
    const cond = expr.callScalar('$is_not_distinct_from', [coerce(forExpr, st), coerce(val, st)], v.expr.loc);
    const vname = v.alias ?? valueName(v.expr);
    for (const [ai, a] of aggExprs.entries()) {
      const aAlias = p.aggregates[ai]!.alias;
      // `alias_value`, or the bare value when there is one unaliased aggregate; names may not start with a digit.
      const raw = aAlias ? `${aAlias}_${vname}` : aggExprs.length === 1 ? vname : `_${vname}`;
      const name = /^[0-9]/.test(raw) ? `_${raw}` : raw;
      const column = an.newColumn(name, a.column.type);
      calls.push({ ...a, column, filter: a.filter ? { kind: 'logical' as const, type: T.BOOL, op: 'and' as const, args: [a.filter, cond] } : cond });
      outNames.push(name);
    }
  }
  const rel: AggregateRel = {
    kind: 'aggregate',
    input: aggInput,
    groupBy: groupCols.map((c, i) => ({ column: keyCols[i]!, expr: colRef(c) })),
    aggregates: calls,
    columns: [...keyCols, ...calls.map((c) => c.column)],
  };
  const alias = p.alias ?? '';
  const rv = rangeOver(alias, rel, [...groupCols.map((c) => c.name), ...outNames]);
  return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
}

/** Whether an expression calls a volatile function (RAND, GENERATE_UUID, ...). */
function isVolatileExpr(e: Expr): boolean {
  let v = false;
  rewriteExpr(e, (x) => {
    if (x.kind === 'call' && (lookupFunction(x.name) as { volatile?: boolean } | undefined)?.volatile) v = true;
    return undefined;
  });
  return v;
}

function resolveUnpivot(an: Analyzer, u: A.UnpivotRef, outer: Scope | undefined): Leaf {
  if (u.input.kind === 'UnnestRef') throw sqlError('UNPIVOT is not allowed with array scans', u.loc);
  const inner = new Scope(outer);
  const input = resolveFrom(an, u.input, inner, outer);
  if (isValueInput(inner)) throw sqlError('UNPIVOT is not allowed on value tables', u.loc);
  const all = inner.starList ?? [];
  const byName = (n: string) => {
    const c = all.find((x) => x.name.toLowerCase() === n.toLowerCase());
    if (!c) throw sqlError(`Unrecognized name: ${n}`, u.loc);
    return c;
  };
  const inNames = u.inColumns.flatMap((s) => s.columns.map((n) => n.toLowerCase()));
  if (new Set(inNames).size < inNames.length) throw sqlError('Column names in UNPIVOT IN clause cannot be repeated', u.loc);
  const consumed = new Set(u.inColumns.flatMap((s) => s.columns.map((n) => byName(n).id)));
  const keep = all.filter((c) => !consumed.has(c.id));
  const nv = u.valueColumns.length;
  const valueTypes: SqlType[] = [];
  // The IN clause's columns must all have the first one's type (no coercion).
  for (let k = 0; k < nv; k++) {
    const first = byName(u.inColumns[0]!.columns[k]!).type;
    for (const s of u.inColumns) {
      const t = byName(s.columns[k]!).type;
      if (!typeEquals(t, first)) throw sqlError(`The datatype of column does not match with other datatypes in the IN clause. Expected ${typeToSql(first)}, Found ${typeToSql(t)}`, u.loc);
    }
    valueTypes.push(first);
  }
  const labels = u.inColumns.map((s) => (s.alias ? resolveExpr(an, s.alias, { scope: new Scope(), clause: 'UNPIVOT' }) : literal(T.STRING, s.columns.join('_'))));
  const labelType = supertype(labels.map((l) => ({ type: l.type, origin: originOf(l) }))) ?? T.STRING;
  const names = [...keep.map((c) => c.name), ...u.valueColumns, u.nameColumn];
  const branches = u.inColumns.map((s, i) => {
    const exprs: Expr[] = [...keep.map((c) => colRef(c)), ...s.columns.map((n, k) => coerce(colRef(byName(n)), valueTypes[k]!)), coerce(labels[i]!, labelType)];
    let r: Rel = project(an, input, exprs, names);
    if (u.nulls !== 'INCLUDE') {
      const vcols = r.columns.slice(keep.length, keep.length + nv);
      const conds = vcols.map((c) => expr.not(expr.callScalar('$is_null', [colRef(c)], u.loc)));
      r = filter(r, conds.length === 1 ? conds[0]! : { kind: 'logical', type: T.BOOL, op: 'or', args: conds });
    }
    return r;
  });
  const cols = branches[0]!.columns.map((c, i) => an.newColumn(names[i]!, c.type));
  const rel: Rel = branches.length === 1 ? branches[0]! : { kind: 'setop', op: 'union', all: true, inputs: branches, columns: cols };
  const rv = rangeOver(u.alias ?? '', rel, names);
  return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
}

// ---------------------------------------------------------------- pipes
//
// Each operator rewrites to the equivalent SELECT over the current table, read
// through a synthetic `$pipe` table reference (pipeInputs). Table aliases
// follow the pipe syntax reference: WHERE, ORDER BY, LIMIT, TABLESAMPLE,
// DISTINCT, EXTEND, WINDOW, SET, DROP, RENAME and JOIN keep the input's
// aliases (JOIN adds the right side's); after SET, DROP and RENAME an alias
// still reads the original values, so those are carried as hidden trailing
// columns; AS replaces every alias with one; the other operators make a new
// table without aliases (CALL, PIVOT and UNPIVOT may name it).

/** The visible table of `out`: hidden columns projected away, no aliases. */
function withoutPipeVars(an: Analyzer, out: RelOut): RelOut {
  if (!out.pipeVars && !out.hidden) return out;
  const n = out.rel.columns.length - (out.hidden ?? 0);
  const names = out.names.slice(0, n);
  const rel = out.hidden ? project(an, out.rel, out.rel.columns.slice(0, n).map((c) => colRef(c)), names) : out.rel;
  return { rel, names, isValueTable: out.isValueTable };
}

/** The table aliases' range variables for a `$pipe` reference to `out`. */
export function pipeRangeVars(out: RelOut): RangeVar[] {
  return (out.pipeVars ?? []).map((v) => {
    const cols = out.rel.columns;
    if (v.valueIndex !== undefined) return { name: v.name, lname: v.name.toLowerCase(), columns: [], value: { ...cols[v.valueIndex]!, name: v.name }, qualifiedOnly: true };
    return { name: v.name, lname: v.name.toLowerCase(), columns: v.columns.map((c) => ({ ...cols[c.index]!, name: c.name })), qualifiedOnly: true };
  });
}

/** One alias over every visible column of `out` (`|> AS t`, `|> CALL f() AS t`). */
function aliased(out: RelOut, alias: string | undefined): RelOut {
  if (!alias) return out;
  const v: PipeVar = out.isValueTable
    ? { name: alias, columns: [], valueIndex: 0 }
    : { name: alias, columns: out.names.map((name, index) => ({ name, index })) };
  return { ...out, pipeVars: [v] };
}

const HIDDEN = '$pipe_alias';

function applyPipe(an: Analyzer, out: RelOut, p: A.PipeOp, outer: Scope | undefined): RelOut {
  const pipeRef = (input: RelOut, alias?: string): A.TableRef => {
    const ref: A.TableRef = { kind: 'TableRef', loc: p.loc, path: ['$pipe'], ...(alias ? { alias } : {}) };
    pipeInputs.set(ref, input);
    return ref;
  };
  /** The operator as a SELECT over the current table: `keep` carries the table aliases in scope (and the input's) to the output. */
  const viaSelect = (sel: Omit<A.Select, 'kind' | 'loc' | 'from'>, keep: boolean, orderBy?: A.OrderByItem[], from: A.FromItem = pipeRef(out), pipeForm?: string): RelOut => {
    let vars: { rv: RangeVar; first: number }[] = [];
    let carried = 0;
    const carry = keep
      ? (scope: Scope): SelItem[] => {
          const items: SelItem[] = [];
          vars = [];
          for (const rv of scope.rangeVars) {
            if (!rv.lname) continue;
            vars.push({ rv, first: items.length });
            for (const c of rv.value ? [rv.value] : rv.columns) items.push({ name: HIDDEN, expr: colRef(c), loc: p.loc, aliasable: false });
          }
          carried = items.length;
          return items;
        }
      : undefined;
    const r = resolveSelect(an, { kind: 'Select', loc: p.loc, from, ...sel }, outer, orderBy, undefined, undefined, carry, pipeForm);
    if (!carried) return r;
    const start = r.names.length - carried;
    const pipeVars = vars.map(({ rv, first }): PipeVar =>
      rv.value ? { name: rv.name, columns: [], valueIndex: start + first } : { name: rv.name, columns: rv.columns.map((c, k) => ({ name: c.name, index: start + first + k })) },
    );
    return { ...r, pipeVars, hidden: carried };
  };
  const star: A.SelectStar = { kind: 'SelectStar', loc: p.loc };
  switch (p.kind) {
    case 'PipeWhere':
      // A window function in |> WHERE filters after windowing, like QUALIFY.
      return hasOver(p.cond) ? viaSelect({ distinct: false, items: [star], qualify: p.cond }, true) : viaSelect({ distinct: false, items: [star], where: p.cond }, true);
    case 'PipeSelect':
      return viaSelect({ distinct: p.distinct, ...(p.asMode ? { asMode: p.asMode } : {}), items: p.items, ...(p.window ? { window: p.window } : {}) }, false, undefined, undefined, 'pipe SELECT');
    case 'PipeExtend':
      return viaSelect({ distinct: false, items: [star, ...p.items], ...(p.window ? { window: p.window } : {}) }, true, undefined, undefined, 'pipe EXTEND');
    case 'PipeWindow':
      return viaSelect({ distinct: false, items: [star, ...p.items] }, true);
    case 'PipeSet': {
      checkPipeColumns(out, 'SET', p.assignments.map((a) => a.column[a.column.length - 1]!), p.loc);
      const replace = p.assignments.map((a) => ({ expr: a.expr, alias: a.column[a.column.length - 1]! }));
      return viaSelect({ distinct: false, items: [{ ...star, replace }] }, true);
    }
    case 'PipeDrop': {
      const dropped = p.columns.map((c) => c[c.length - 1]!);
      checkPipeColumns(out, 'DROP', dropped, p.loc);
      const gone = new Set(dropped.map((n) => n.toLowerCase()));
      if (!out.isValueTable && visibleNames(out).every((n) => gone.has(n.toLowerCase()))) throw sqlError('Pipe DROP dropped all columns in the input table', p.loc);
      return viaSelect({ distinct: false, items: [{ ...star, except: dropped }] }, true);
    }
    case 'PipeRename': {
      const visible = out.names.length - (out.hidden ?? 0);
      checkPipeColumns(out, 'RENAME', p.renames.map((r) => r.from[r.from.length - 1]!), p.loc);
      const names = out.names.map((n, i) => {
        const r = i < visible ? p.renames.find((x) => x.from[x.from.length - 1]!.toLowerCase() === n.toLowerCase()) : undefined;
        return r ? r.to : n;
      });
      // The aliases keep the old names (pipe syntax reference, RENAME).
      return { ...out, names };
    }
    case 'PipeAs':
      return aliased(withoutPipeVars(an, out), p.alias);
    case 'PipeOrderBy':
      return viaSelect({ distinct: false, items: [star] }, true, p.items);
    case 'PipeLimit':
      return applyLimit(an, out, p.limit, p.offset);
    case 'PipeDistinct': {
      // Distinct over the visible columns; the aliases keep the columns that are visible ones.
      const vis = withoutPipeVars(an, { ...out, pipeVars: undefined });
      const r = viaSelect({ distinct: true, items: [star] }, false, undefined, pipeRef(vis));
      const n = vis.names.length;
      const pipeVars = (out.pipeVars ?? []).map((v) => ({ ...v, columns: v.columns.filter((c) => c.index < n) })).filter((v) => v.valueIndex === undefined || v.valueIndex < n);
      return pipeVars.length ? { ...r, pipeVars } : r;
    }
    case 'PipeAggregate': {
      const items: A.SelectItem[] = [];
      const groupItems: A.GroupingItem[] = [];
      const order: A.OrderByItem[] = [];
      for (const g of p.groupBy) {
        items.push({ kind: 'SelectExpr', loc: g.expr.loc, expr: g.expr, ...(g.alias ? { alias: g.alias } : {}) });
        groupItems.push(g.expr);
        if (g.direction || p.groupAndOrder) order.push({ kind: 'OrderByItem', loc: g.expr.loc, expr: g.expr, ...(g.direction ? { direction: g.direction } : {}), ...(g.nulls ? { nulls: g.nulls } : {}) });
      }
      for (const a of p.items) {
        if (!hasAggregateCall(a.expr)) throw sqlError('Pipe AGGREGATE cannot include non-aggregate expressions', a.expr.loc);
        items.push({ kind: 'SelectExpr', loc: a.expr.loc, expr: a.expr, ...(a.alias ? { alias: a.alias } : {}) });
        if (a.direction) order.push({ kind: 'OrderByItem', loc: a.expr.loc, expr: a.expr, direction: a.direction, ...(a.nulls ? { nulls: a.nulls } : {}) });
      }
      if (p.groupingItems) {
        // GROUP BY ROLLUP / CUBE / GROUPING SETS: each expression they group by is an output column, first
        // appearance first, as a plain group item would be (and ordered by under GROUP AND ORDER BY).
        const seen = new Set<string>();
        const keyOf = (e: A.Expr) => JSON.stringify(e, (k, v: unknown) => (k === 'loc' ? undefined : v));
        const add = (e: A.Expr) => {
          const k = keyOf(e);
          if (seen.has(k) || p.groupBy.some((g) => keyOf(g.expr) === k)) return;
          seen.add(k);
          items.splice(seen.size - 1 + p.groupBy.length, 0, { kind: 'SelectExpr', loc: e.loc, expr: e });
          if (p.groupAndOrder) order.push({ kind: 'OrderByItem', loc: e.loc, expr: e });
        };
        const walk = (g: A.GroupingItem): void => {
          if (g.kind === 'Rollup' || g.kind === 'Cube') g.exprs.forEach(add);
          else if (g.kind === 'GroupingSets') g.sets.forEach(walk);
          else if (g.kind === 'EmptyGroupingSet') return;
          else if (g.kind === 'StructExpr' && g.syntax === 'tuple') g.fields.forEach((f) => add(f.expr));
          else add(g);
        };
        p.groupingItems.forEach(walk);
        groupItems.push(...p.groupingItems);
      }
      const groupBy: A.GroupBy | undefined = groupItems.length ? { kind: 'GroupBy', loc: p.loc, all: false, items: groupItems } : undefined;
      return viaSelect({ distinct: false, items, ...(groupBy ? { groupBy } : {}) }, false, order.length ? order : undefined);
    }
    case 'PipeJoin': {
      const from: A.JoinRef = { kind: 'JoinRef', loc: p.loc, joinType: p.joinType, natural: p.natural, left: pipeRef(out), right: p.right, ...(p.on ? { on: p.on } : {}), ...(p.using ? { using: p.using } : {}) };
      return viaSelect({ distinct: false, items: [star] }, true, undefined, from);
    }
    case 'PipeSetOp': {
      const others = p.queries.map((q) => resolveQuery(an, q, outer));
      const b: A.SetOperation = {
        kind: 'SetOperation', loc: p.loc, op: p.op, quantifier: p.quantifier,
        ...(p.outerMode ? { outerMode: p.outerMode } : {}), ...(p.corresponding ? { corresponding: p.corresponding } : {}), ...(p.byName ? { byName: p.byName } : {}),
        left: p.queries[0]!.body, right: p.queries[0]!.body,
      };
      return combineSetOp(an, b, [withoutPipeVars(an, out), ...others], [p, ...p.queries]);
    }
    case 'PipeTablesample':
      return { ...out, rel: sample(an, out.rel, p.sample) };
    case 'PipeAssert': {
      // Each row must satisfy the condition; otherwise the query fails with the payload (or the condition's text).
      const msg: A.Expr = p.payload.length
        ? { kind: 'FunctionCall', loc: p.loc, name: ['CONCAT'], safe: false, distinct: false, args: [{ kind: 'StringLiteral', loc: p.loc, value: 'Assertion failed: ', raw: false }, ...p.payload.flatMap((e, i): A.Expr[] => [...(i ? [{ kind: 'StringLiteral' as const, loc: e.loc, value: ' ', raw: false }] : []), { kind: 'CastExpr', loc: e.loc, safe: false, expr: e, type: { kind: 'ScalarType', loc: e.loc, name: 'STRING', params: [] } }])] }
        : { kind: 'StringLiteral', loc: p.loc, value: 'Assertion failed', raw: false };
      const check: A.Expr = {
        kind: 'FunctionCall', loc: p.loc, name: ['IF'], safe: false, distinct: false,
        args: [{ kind: 'IsExpr', loc: p.loc, expr: p.cond, not: false, what: 'TRUE' }, { kind: 'BoolLiteral', loc: p.loc, value: true }, { kind: 'IsExpr', loc: p.loc, not: false, what: 'NULL', expr: { kind: 'FunctionCall', loc: p.loc, name: ['ERROR'], safe: false, distinct: false, args: [msg] } }],
      };
      return viaSelect({ distinct: false, items: [star], where: check }, true);
    }
    case 'PipeCall': {
      // |> CALL tvf(args) [AS alias]: the current rows are the first (TABLE) argument.
      const q: A.Query = { kind: 'Query', loc: p.loc, body: { kind: 'Select', loc: p.loc, distinct: false, items: [star], from: pipeRef(withoutPipeVars(an, out)) }, pipes: [] };
      const from: A.TvfRef = { ...p.tvf, args: [q, ...p.tvf.args] };
      return aliased(viaSelect({ distinct: false, items: [star] }, false, undefined, from), p.tvf.alias);
    }
    case 'PipePivot':
    case 'PipeUnpivot': {
      const { kind, ...rest } = p;
      const from = { ...rest, kind: kind === 'PipePivot' ? 'PivotRef' : 'UnpivotRef', input: pipeRef(withoutPipeVars(an, out)) } as A.FromItem;
      return aliased(viaSelect({ distinct: false, items: [star] }, false, undefined, from), p.alias);
    }
    case 'PipeMatchRecognize': {
      const vis = withoutPipeVars(an, out);
      const alias = out.pipeVars?.length === 1 ? out.pipeVars[0]!.name : undefined;
      const from = pipeRef(vis, alias);
      const q = matchRecognizeQuery(an, from, alias, p.spec, p.loc);
      return resolveQuery(an, q, outer);
    }
    default:
      throw sqlError(`Pipe operator ${p.kind} is not supported yet`, p.loc);
  }
}

/** The columns a pipe operator sees by name (the trailing hidden ones only feed table aliases). */
function visibleNames(out: RelOut): string[] {
  return out.names.slice(0, out.names.length - (out.hidden ?? 0));
}

/**
 * The name rules of pipe SET, DROP and RENAME (pipe syntax reference): each name is
 * given once and is a column of the input table; RENAME also refuses a name that
 * is a table alias or that more than one column has. Wording as the service's analyzer.
 */
function checkPipeColumns(out: RelOut, op: 'SET' | 'DROP' | 'RENAME', names: readonly string[], loc: A.Loc): void {
  // A value table's fields are checked where the star expansion resolves them.
  if (out.isValueTable) return;
  const visible = visibleNames(out).map((n) => n.toLowerCase());
  const seen = new Set<string>();
  const verb = op.toLowerCase();
  for (const name of names) {
    const l = name.toLowerCase();
    if (seen.has(l)) throw sqlError(`Duplicate column name in pipe ${op}: ${name}`, loc);
    seen.add(l);
    const count = visible.filter((n) => n === l).length;
    const isAlias = (out.pipeVars ?? []).some((v) => v.name.toLowerCase() === l);
    if (count === 0 || (op === 'RENAME' && isAlias)) {
      if (isAlias) throw sqlError(`Name in pipe ${op} is a table alias; ${op} can only ${verb} columns: ${name}`, loc);
      throw sqlError(`Column name in pipe ${op} not found in input table: ${name}`, loc);
    }
    if (op === 'RENAME' && count > 1) throw sqlError(`Column name in pipe RENAME exists more than once in input table: ${name}`, loc);
  }
}

/** True when an AST expression calls an aggregate function outside subqueries and windows (a name that is no built-in may be a user aggregate: its resolution decides). */
function hasAggregateCall(e: unknown): boolean {
  return someCall(e, (c) => {
    if (c.over) return false;
    const def = lookupFunction(c.name!.join('.'));
    return !def || def.kind === 'aggregate';
  });
}

/** Pipe inputs are passed to resolveTableRef through this side table keyed by the synthetic TableRef. */
export const pipeInputs = new WeakMap<A.TableRef, RelOut>();

/** The identifier paths of an expression in source order (not those inside subqueries, which have their own scopes). */
function pathsOf(n: unknown, out: A.PathExpr[] = []): A.PathExpr[] {
  if (Array.isArray(n)) for (const x of n) pathsOf(x, out);
  else if (n && typeof n === 'object') {
    const k = (n as { kind?: unknown }).kind;
    if (k === 'PathExpr') out.push(n as A.PathExpr);
    else if (k !== 'ScalarSubquery' && k !== 'ArraySubquery' && k !== 'ExistsExpr' && k !== 'Query') for (const v of Object.values(n)) pathsOf(v, out);
  }
  return out;
}
