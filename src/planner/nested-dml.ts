// Nested DML inside UPDATE ... SET: `(DELETE arr WHERE ...)`, `(UPDATE arr SET
// ... WHERE ...)`, `(INSERT arr VALUES ... | query)` become ordinary SET items
// whose value is an array expression over the current value of `arr`
// (several nested statements on one array apply in order). The rewrite is at
// AST level: SQL templates with placeholders, parsed once per use, into which
// the user's expressions are substituted.
import type * as A from '../../grammar/ast.js';
import { sqlError } from '../analyzer/errors.js';

type ParseExpr = (sql: string) => A.Expr;

let counter = 0;

/** Deep copy of `node` with placeholder paths replaced by `subst` and placeholder names renamed. */
function fill(node: unknown, subst: Record<string, A.Expr>, names: Record<string, string>): unknown {
  if (Array.isArray(node)) return node.map((x) => fill(x, subst, names));
  if (node === null || typeof node !== 'object' || node instanceof Uint8Array) {
    return typeof node === 'string' && Object.hasOwn(names, node) ? names[node] : node;
  }
  const o = node as Record<string, unknown>;
  if (o.kind === 'PathExpr') {
    const parts = o.parts as string[];
    if (parts.length === 1 && Object.hasOwn(subst, parts[0]!)) return subst[parts[0]!];
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = fill(v, subst, names);
  return out;
}

function template(parse: ParseExpr, sql: string, subst: Record<string, A.Expr>, names: Record<string, string>, loc: A.Loc): A.Expr {
  return withLoc(fill(parse(sql), subst, names) as A.Expr, loc);
}

/** Gives template-made nodes (which carry template positions) the statement's location. */
function withLoc(e: A.Expr, loc: A.Loc): A.Expr {
  const seen = new Set<unknown>();
  const walk = (x: unknown, own: boolean): void => {
    if (x === null || typeof x !== 'object' || seen.has(x) || x instanceof Uint8Array) return;
    seen.add(x);
    if (Array.isArray(x)) {
      for (const y of x) walk(y, own);
      return;
    }
    const o = x as Record<string, unknown>;
    if (o.__user) return;
    if (own && o.loc && typeof o.loc === 'object') o.loc = loc;
    for (const [k, v] of Object.entries(o)) if (k !== 'loc') walk(v, own);
  };
  walk(e, true);
  return e;
}

/** Marks user-written subtrees so that withLoc keeps their positions. */
function user<T>(e: T): T {
  if (e && typeof e === 'object') Object.defineProperty(e, '__user', { value: true, enumerable: false });
  return e;
}

/**
 * The error of a SET target that names no column or field path: an array element (`a[OFFSET(0)]`, `s.xs[0].f`), which
 * the service refuses to update, or anything else (a tuple, a call, a literal), a syntax error in its grammar, where
 * an update item is a path, `=` and a value.
 */
export function setTargetError(t: A.Expr): Error {
  let e = t;
  let element = false;
  while (e.kind === 'FieldAccess' || e.kind === 'Subscript') {
    element ||= e.kind === 'Subscript';
    e = e.expr;
  }
  if (element && e.kind === 'PathExpr') return sqlError('UPDATE of array elements is not supported', t.loc);
  return sqlError('Syntax error: Expected a column or field path before "=" in SET', t.loc);
}

function pathOf(t: A.Expr): string[] | undefined {
  if (t.kind === 'PathExpr') return t.parts;
  if (t.kind === 'FieldAccess') {
    const p = pathOf(t.expr);
    return p ? [...p, t.field] : undefined;
  }
  return undefined;
}

function pathExpr(parts: string[], loc: A.Loc): A.Expr {
  return { kind: 'PathExpr', parts, loc };
}

/** ERROR(msg) as an expression of __n's type (ERROR itself is typed INT64). */
const fail = (msg: string) => `IF(ERROR(${msg}) IS NULL, __n, __n)`;

const withAssert = (cnt: string) =>
  `IF(__A__ IS NULL, ${fail("'ASSERT_ROWS_MODIFIED must have a non-NULL argument'")},
     IF(${cnt} = __A__, __n, ${fail(`CONCAT('ASSERT_ROWS_MODIFIED expected ', CAST(__A__ AS STRING), ' array elements modified, but found ', CAST(${cnt} AS STRING))`)}))`;

/** The new value of the nested statement's array given its current value `base`. */
function nestedValue(parse: ParseExpr, st: A.InsertStmt | A.UpdateStmt | A.DeleteStmt, base: A.Expr): A.Expr {
  const target = st.kind === 'Insert' ? st.target : st.target;
  const elem = (st.kind !== 'Insert' ? st.alias : undefined) ?? target[target.length - 1]!;
  const off = (st.kind !== 'Insert' ? st.withOffset?.alias ?? (st.withOffset ? 'offset' : undefined) : undefined) ?? `__nd_off${++counter}`;
  const names = { __ELEM__: elem, __OFF__: off };
  const subst: Record<string, A.Expr> = { __b: base };
  if (st.assertRowsModified) subst.__A__ = user(st.assertRowsModified);
  const what = st.kind.toUpperCase();
  const nullCheck = (body: string) => `IF(__b IS NULL, ${fail(`'Cannot execute a nested ${what} statement on a NULL array value'`)}, ${body})`;
  if (st.kind === 'Delete') {
    if (!st.where) throw sqlError('DELETE must have a WHERE clause', st.loc);
    subst.__COND__ = user(st.where);
    const cnt = 'ARRAY_LENGTH(__b) - ARRAY_LENGTH(__n)';
    subst.__n = template(parse, 'ARRAY(SELECT __ELEM__ FROM UNNEST(__b) AS __ELEM__ WITH OFFSET AS __OFF__ WHERE NOT IFNULL(__COND__, FALSE) ORDER BY __OFF__)', subst, names, st.loc);
    return template(parse, nullCheck(st.assertRowsModified ? withAssert(cnt) : '__n'), subst, names, st.loc);
  }
  if (st.kind === 'Update') {
    if (!st.where) throw sqlError('UPDATE must have a WHERE clause', st.loc);
    subst.__COND__ = user(st.where);
    subst.__NEW__ = updatedElement(parse, st, elem);
    const cnt = '(SELECT COUNT(*) FROM UNNEST(__b) AS __ELEM__ WITH OFFSET AS __OFF__ WHERE __COND__)';
    subst.__n = template(parse, 'ARRAY(SELECT IF(IFNULL(__COND__, FALSE), __NEW__, __ELEM__) FROM UNNEST(__b) AS __ELEM__ WITH OFFSET AS __OFF__ ORDER BY __OFF__)', subst, names, st.loc);
    return template(parse, nullCheck(st.assertRowsModified ? withAssert(cnt) : '__n'), subst, names, st.loc);
  }
  if (st.values) {
    for (const r of st.values) if (r.length !== 1) throw sqlError(`Nested INSERT VALUES rows must have one value; has ${r.length}`, r[0]?.loc ?? st.loc);
    subst.__i = { kind: 'ArrayExpr', elements: st.values.map((r) => user(r[0]!)), loc: st.loc };
  } else subst.__i = { kind: 'ArraySubquery', query: user(st.query!), loc: st.loc };
  subst.__n = template(parse, 'ARRAY_CONCAT(__b, __i)', subst, names, st.loc);
  return template(parse, nullCheck(st.assertRowsModified ? withAssert('ARRAY_LENGTH(__i)') : '__n'), subst, names, st.loc);
}

/** The element after a nested UPDATE's SET items (and nested DML on its fields). */
function updatedElement(parse: ParseExpr, st: A.UpdateStmt, elem: string): A.Expr {
  const lelem = elem.toLowerCase();
  const rel = (parts: string[]) => (parts.length > 0 && parts[0]!.toLowerCase() === lelem ? parts.slice(1) : parts);
  const items = applyNested(parse, st.set, st.nestedDml, (parts, loc) => {
    const r = rel(parts);
    return r.length ? pathExpr([elem, ...r], loc) : pathExpr([elem], loc);
  });
  let cur: A.Expr = pathExpr([elem], st.loc);
  for (const it of items) {
    const parts = pathOf(it.target);
    if (!parts) throw setTargetError(it.target);
    const r = rel(parts);
    if (r.length === 0) cur = it.value;
    else cur = { kind: 'ReplaceFieldsExpr', expr: cur, fields: [{ value: it.value, path: r }], loc: it.target.loc };
  }
  return cur;
}

/**
 * The SET items of an UPDATE with its nested DML folded in: each nested
 * statement becomes (or extends) an assignment of its array path.
 */
export function applyNested(
  parse: ParseExpr,
  set: readonly A.UpdateItem[],
  nested: readonly A.NestedDmlItem[] | undefined,
  baseOf: (parts: string[], loc: A.Loc) => A.Expr = pathExpr,
): A.UpdateItem[] {
  if (!nested?.length) return [...set];
  const out: A.UpdateItem[] = [...set];
  const byPath = new Map<string, A.UpdateItem>();
  for (const { stmt } of [...nested].sort((a, b) => a.position - b.position)) {
    const key = stmt.target.join('.').toLowerCase();
    const prev = byPath.get(key);
    const base = prev ? prev.value : baseOf(stmt.target, stmt.loc);
    const value = nestedValue(parse, stmt, base);
    if (prev) prev.value = value;
    else {
      const item: A.UpdateItem = { target: pathExpr(stmt.target, stmt.loc), value };
      byPath.set(key, item);
      out.push(item);
    }
  }
  return out;
}
