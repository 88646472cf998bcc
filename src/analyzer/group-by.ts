// GROUP BY: its keys (ordinals, SELECT-list aliases, grouping sets, GROUP BY ALL) and the rewrite of what follows
// aggregation over the aggregate's output, where an ungrouped column reference is an error.
import type * as A from '../../grammar/ast.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { AggCollector, WindowCollector, resolveExpr } from './expr.js';
import { isPlainLiteral } from './order-keys.js';
import { locOf, refNameOf } from './coercion.js';
import { exprEquals } from './expr-equality.js';
import { mapRelExprs, rewriteExpr } from './rewrite.js';
import type { Expr, ResolvedColumn } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { groupByAllItems } from './group-by-all.js';
import { implicitAlias } from './query.js';
import type { SelItem } from './select.js';

function hasColumnIn(e: Expr, ids: ReadonlySet<number>): boolean {
  let found = false;
  rewriteExpr(e, (x) => {
    if (x.kind === 'column' && ids.has(x.columnId)) found = true;
    if (x.kind === 'subquery' && x.correlatedColumns.some((id) => ids.has(id))) found = true;
    return undefined;
  });
  return found;
}

export function allRangeColumns(scope: Scope): number[] {
  const ids: number[] = [];
  for (const rv of scope.rangeVars) {
    for (const c of rv.columns) ids.push(c.id);
    if (rv.value) ids.push(rv.value.id);
  }
  for (const c of scope.extra.values()) ids.push(c.id);
  return ids;
}

/** The end of the ungrouped-reference error: pipe AGGREGATE has no grouped select items, so its list says only 'not aggregated'. */
function ungrouped(clause: string): string {
  return clause === 'AGGREGATE list' ? 'which is not aggregated' : 'which is neither grouped nor aggregated';
}

/** Rewrites a pre-aggregation expression over the aggregate's output; ungrouped column refs are errors. */
export function postAggregate(e: Expr, keys: readonly { expr: Expr; selectRef?: boolean }[], keyCols: readonly ResolvedColumn[], fromIds: ReadonlySet<number>, clause: string, aliasIds: ReadonlyMap<number, string> = new Map()): Expr {
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
  const each = (x: Expr): Expr | undefined => {
    // (Keys named by a select alias or ordinal are that select item itself.)
    const shadowed = bare.length > 0 && !isPath(x) && containsBare(x);
    const k = keys.findIndex((kk) => exprEquals(kk.expr, x));
    if (k >= 0 && (!shadowed || keys[k]!.selectRef)) return colRef(keyCols[k]!);
    if (k >= 0) {
      // The grouped column inside wins only where that leaves nothing ungrouped: in
      // `GROUP BY b, IF(d > a, b, '')` the select item `IF(d > a, b, '')` is the second key.
      try {
        return rewriteExpr(x, (y) => (y === x ? undefined : each(y)));
      } catch (err) {
        if (err instanceof Error && /which is (neither grouped nor|not) aggregated/.test(err.message)) return colRef(keyCols[k]!);
        throw err;
      }
    }
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
        throw sqlError(`${clause} expression references ${[written, ...names].join('.')} ${ungrouped(clause)}`, locOf(x));
      }
    }
    if (x.kind === 'column' && !x.correlated && fromIds.has(x.columnId)) {
      const name = refNameOf(x) ?? String(x.columnId);
      // A lone name is a `column` (or a value table's `table alias`); `t.y` is named as written, as the reference does.
      const what = name.includes('.') ? name : `${aliasIds.get(x.columnId) === name.toLowerCase() ? 'table alias' : 'column'} ${name}`;
      throw sqlError(`${clause} expression references ${what} ${ungrouped(clause)}`, locOf(x));
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
  };
  return rewriteExpr(e, each);
}

export function resolveGroupBy(
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
    if (isPlainLiteral(e)) throw sqlError('Cannot GROUP BY literal values', e.loc);
    if (e.kind === 'IntLiteral') {
      const k = Number(e.text);
      if (!(k >= 1 && k <= items.length)) throw sqlError(`GROUP BY is out of SELECT column number range: ${k}`, e.loc);
      const it = items[k - 1]!;
      if (hasColumnIn(it.expr, aggIds())) throw sqlError(`Column ${k} contains an aggregation function, which is not allowed in GROUP BY`, e.loc);
      return keyIndex(it.expr, it.name, e.loc, true);
    }
    if (e.kind === 'PathExpr' && e.parts.length === 1) {
      const l = e.parts[0]!.toLowerCase();
      const named = items.filter((s) => s.aliasable && s.name.toLowerCase() === l);
      // query-syntax.md, Ambiguous aliases: a name the SELECT list gives two different expressions is ambiguous.
      if (named.some((s) => !exprEquals(s.expr, named[0]!.expr))) throw sqlError(`Column name ${e.parts[0]} is ambiguous`, e.loc);
      const it = named[0];
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
    for (const it of groupByAllItems(items, new Set(allRangeColumns(scope)), (x) => hasColumnIn(x.expr, ids))) keyIndex(it.expr, it.name, it.loc, true);
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
