// Joins: the right side's scope (lateral or not), ON and USING (key columns merged across joins), CROSS JOIN.
import type * as A from '../../grammar/ast.js';
import { T, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { resolveExpr } from './expr.js';
import { coerce, requireBool } from './coercion.js';
import { callScalar } from './calls.js';
import type { Expr, Rel, ResolvedColumn } from './resolved.js';
import { Scope, colRef, type RangeVar } from './scope.js';
import { Origin, supertype } from './types.js';
import { checkSample } from './sample.js';
import { project } from './query.js';
import { resolveFrom, addFromRangeVar, resolveLeaf, unqualifiedNames, isLateralCandidate } from './from.js';

export function resolveJoin(an: Analyzer, j: A.JoinRef, scope: Scope, outer: Scope | undefined): Rel {
  if (j.sample) checkSample(an, j.sample, { kind: 'not a table', what: 'a join' }, j.loc);
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
  // A USING key merged on one side names no column of the join when the other side has a column of
  // that name too: `t JOIN u USING (a) JOIN v ON a = v.a` is ambiguous (a USING of `a` here merges it again).
  const leftNames = unqualifiedNames(leftRvs, leftExtra), rightNames = unqualifiedNames(rightRvs, rightExtra);
  for (const [side, other] of [[leftExtra, rightNames], [rightExtra, leftNames]] as const) {
    for (const k of side.keys()) {
      if (!other.has(k)) continue;
      scope.extra.delete(k);
      scope.ambiguous.add(k);
    }
  }
  const joinType = j.joinType === 'COMMA' || j.joinType === 'CROSS' ? 'cross' : j.joinType === 'INNER' ? 'inner' : (j.joinType.toLowerCase() as 'left' | 'right' | 'full');
  let condition: Expr | undefined;
  let star = [...leftStar, ...rightStar];
  let rel: Rel;
  if (j.natural) throw sqlError('Natural join not supported', j.loc);
  // The documented grammar gives CROSS JOIN no join condition (query syntax, CROSS JOIN); the reference's wording
  // for USING (it lets an ON through).
  if (j.joinType === 'CROSS' && (j.on || j.using)) throw sqlError(`${j.on ? 'ON' : 'USING'} clause cannot be used with CROSS JOIN`, (j.on ?? j).loc);
  if (j.using) {
    // A name listed twice is one key (the reference).
    const names = j.using.filter((n, i, all) => all.findIndex((m) => m.toLowerCase() === n.toLowerCase()) === i);
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
