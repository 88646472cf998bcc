// GROUP BY ALL: which SELECT items become grouping keys (query-syntax.md "Group rows by ALL").
// Aggregates, window calls and items naming nothing from FROM are left out; of several paths over one FROM
// column only the shortest prefix groups; an item whose every path already has a chosen key as prefix is left
// out too. A volatile or non-groupable item that remains is an error (the reference resolver's wording).
import { isGroupable, typeToSql } from '../types/types.js';
import { sqlError } from './errors.js';
import { isVolatileExpr, rewriteExpr } from './rewrite.js';
import type { Expr } from './resolved.js';
import type { SelItem } from './select.js';

interface Path {
  id: number;
  fields: number[];
}

function pathOf(e: Expr): Path | undefined {
  if (e.kind === 'column') return { id: e.columnId, fields: [] };
  if (e.kind === 'field') {
    const p = pathOf(e.arg);
    return p && { id: p.id, fields: [...p.fields, e.fieldIndex] };
  }
  return undefined;
}

const isPrefix = (c: Path, p: Path) => c.id === p.id && c.fields.length <= p.fields.length && c.fields.every((f, i) => p.fields[i] === f);

/** The SELECT items GROUP BY ALL groups by, in SELECT order. `skip` marks aggregate / window items. */
export function groupByAllItems(items: readonly SelItem[], fromIds: ReadonlySet<number>, skip: (it: SelItem) => boolean): SelItem[] {
  const paths: { path: Path; i: number }[] = [];
  const rest: number[] = [];
  items.forEach((it, i) => {
    if (skip(it)) return;
    const p = pathOf(it.expr);
    if (!p) rest.push(i);
    else if (fromIds.has(p.id)) paths.push({ path: p, i });
  });
  paths.sort((a, b) => a.path.fields.length - b.path.fields.length || a.i - b.i);
  const chosen: Path[] = [];
  const picked: number[] = [];
  for (const { path, i } of paths) {
    if (chosen.some((c) => isPrefix(c, path))) continue;
    chosen.push(path);
    picked.push(i);
  }
  for (const i of rest) {
    let uncovered = false;
    rewriteExpr(items[i]!.expr, (x) => {
      const p = pathOf(x);
      if (p) {
        if (fromIds.has(p.id) && !chosen.some((c) => isPrefix(c, p))) uncovered = true;
        return x;
      }
      if (x.kind === 'subquery' && x.correlatedColumns.some((id) => fromIds.has(id) && !chosen.some((c) => c.id === id && c.fields.length === 0))) uncovered = true;
      return undefined;
    });
    if (uncovered) picked.push(i);
  }
  picked.sort((a, b) => a - b);
  return picked.map((i) => {
    const it = items[i]!;
    const what = it.aliasable && it.name ? `Column \`${it.name}\`` : `Column in position ${i + 1}`;
    if (isVolatileExpr(it.expr)) {
      throw sqlError(
        `${what}, which is included in the grouping list by GROUP BY ALL, contains a volatile expression which must be explicitly listed as a group by key. To include this expression in GROUP BY, explicitly enumerate group by columns`,
        it.loc,
      );
    }
    if (!isGroupable(it.expr.type)) {
      throw sqlError(`${what}, which is included in the grouping list by GROUP BY ALL, has type ${typeToSql(it.expr.type)} which cannot be used in a grouping key`, it.loc);
    }
    return it;
  });
}
