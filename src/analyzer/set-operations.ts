// Set operations (UNION / INTERSECT / EXCEPT, ALL or DISTINCT, CORRESPONDING
// and BY NAME): each input is coerced to the common supertype per column.

import type * as A from '../../grammar/ast.js';
import { T, isGroupable, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { coerce, literal, locOf, originOf } from './coercion.js';
import { collationGrouper } from './calls.js';
import type { Rel, SetOpRel } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { Origin, supertype } from './types.js';
import { type RelOut, project, resolveQueryExpr } from './query.js';

function flattenSetOp(b: A.SetOperation, out: A.QueryExpr[]): void {
  for (const side of [b.left, b.right]) {
    if (side.kind === 'SetOperation' && side.op === b.op && side.quantifier === b.quantifier && !side.corresponding && !b.corresponding) flattenSetOp(side, out);
    else out.push(side);
  }
}

export function castTo(an: Analyzer, out: RelOut, types: readonly SqlType[], loc: A.Loc, what: string): RelOut {
  void what;
  const cols = out.rel.columns;
  if (cols.every((c, i) => typeEquals(c.type, types[i]!))) return out;
  // A branch's literal coerces in place (a float literal becomes NUMERIC from its exact text; a STRING one that is no
  // value of the column's date/time type fails the analysis).
  const rel = out.rel;
  if (rel.kind === 'project' && rel.exprs.every((e, i) => typeEquals(e.type, types[i]!) || e.kind === 'literal')) {
    return { ...out, rel: project(an, rel.input, rel.exprs.map((e, i) => coerce(e, types[i]!, locOf(e) ?? loc)), out.names) };
  }
  const exprs = cols.map((c, i) => coerce(colRef(c), types[i]!));
  return { ...out, rel: project(an, out.rel, exprs, out.names) };
}

/** How an error names input `i` (0-based) of a set operation. */
export type InputLabel = (i: number) => string;
const queryLabel: InputLabel = (i) => `query ${i + 1}`;
/** Pipe syntax: the pipe input table, then the argument queries from 1 (the reference resolver's GetQueryLabel). */
export const pipeInputLabel: InputLabel = (i) => (i === 0 ? 'pipe input table' : `pipe argument query ${i}`);

/**
 * CORRESPONDING / BY NAME: columns match by name. INNER (default) keeps names
 * common to every input, LEFT the first input's names, FULL every name (first
 * appearance order); BY (list) fixes the list. Missing columns are NULL.
 */
export function correspondingInputs(an: Analyzer, b: A.SetOperation, outs0: RelOut[], what: string, parts: readonly unknown[] = [], label: InputLabel = queryLabel): RelOut[] {
  // query-syntax.md, BY NAME or CORRESPONDING: input queries that produce value tables (SELECT AS STRUCT / AS VALUE,
  // the page's "Return query results as a value table") aren't supported.
  const vt = parts.findIndex(selectsValueTable);
  if (vt >= 0) throw sqlError(`Value table inputs are not supported in set operations with ${b.byName ? 'BY NAME' : 'CORRESPONDING'}: ${label(vt)} produces a value table`, b.loc);
  // Other value tables of STRUCTs (a pipe's FROM UNNEST of structs) match by their fields' names, the columns that
  // SELECT * shows (query-syntax.md, UNNEST and structs).
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
      if (!n) throw sqlError(`Anonymous columns are not allowed in set operations when ${b.byName ? 'BY NAME' : 'CORRESPONDING'} is used: ${label(qi)}, column ${ci + 1}`, b.loc);
      if (seen.has(n.toLowerCase())) throw sqlError(`Duplicate columns found when using ${b.byName ? 'BY NAME' : 'CORRESPONDING'} in set operations: ${n} in ${label(qi)}`, b.loc);
      seen.add(n.toLowerCase());
    });
  });
  if (strict && !b.corresponding?.by) {
    // The reference analyzer's wording: the first input whose name set differs from the first one's, both listed.
    const first = lower(outs[0]!);
    const qi = outs.findIndex((o) => o.names.length !== first.length || lower(o).some((n) => !first.includes(n)));
    if (qi > 0) {
      const list = (o: RelOut) => `[${o.names.join(', ')}]`;
      throw sqlError(`${b.byName ? 'BY NAME' : 'STRICT CORRESPONDING'} requires all input queries to have identical column names, but ${label(0)} has ${list(outs[0]!)} and ${label(qi)} has ${list(outs[qi]!)}`, b.loc);
    }
  }
  let names: string[];
  if (b.corresponding?.by) names = b.corresponding.by.slice();
  else if (mode === 'FULL') {
    names = [];
    for (const o of outs) for (const n of o.names) if (n && !names.some((x) => x.toLowerCase() === n.toLowerCase())) names.push(n);
  } else if (mode === 'LEFT') names = outs[0]!.names.filter((n, i) => n && lower(outs[0]!).indexOf(n.toLowerCase()) === i);
  else names = outs[0]!.names.filter((n, i) => n && lower(outs[0]!).indexOf(n.toLowerCase()) === i && outs.every((o) => lower(o).includes(n.toLowerCase())));
  // query-syntax.md, BY NAME or CORRESPONDING: INNER and LEFT need a column common to the inputs (FULL does not).
  const disjoint = mode === 'LEFT' && !b.corresponding?.by && outs.some((o, qi) => qi > 0 && !lower(o).some((n) => n && lower(outs[0]!).includes(n)));
  if (names.length === 0 || disjoint) throw sqlError(`Queries of the set operation using ${b.byName ? 'BY NAME' : 'CORRESPONDING'} do not have any columns in common`, b.loc);
  return outs.map((o, qi) => {
    const ln = lower(o);
    const exprs = names.map((n) => {
      const i = ln.indexOf(n.toLowerCase());
      if (i >= 0) return colRef(o.rel.columns[i]!);
      if (mode === 'INNER' || (mode === 'LEFT' && qi === 0)) {
        throw sqlError(`Column ${n} is not found in ${label(qi)} of ${full}`, b.loc);
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

/** A set operation input written as SELECT AS STRUCT / SELECT AS VALUE (possibly parenthesized). */
function selectsValueTable(part: unknown): boolean {
  const p = part as A.QueryExpr;
  if (p?.kind === 'Select') return !!p.asMode;
  if (p?.kind === 'Query') return p.pipes.length === 0 && selectsValueTable(p.body);
  return false;
}

/** Literal origin of output column `c` of a projection, looking through CORRESPONDING's reordering projection. */
export function literalOrigin(rel: Rel, c: number): Origin {
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
export function literalValue(rel: Rel, c: number): unknown {
  if (rel.kind !== 'project') return undefined;
  const e = rel.exprs[c]!;
  if (e.kind === 'literal') return e.value;
  if (e.kind === 'column' && !e.correlated && correspondingProjections.has(rel) && rel.input.kind === 'project') {
    const k = rel.input.columns.findIndex((x) => x.id === e.columnId);
    if (k >= 0) return literalValue(rel.input, k);
  }
  return undefined;
}

export function resolveSetOp(an: Analyzer, b: A.SetOperation, outer: Scope | undefined): RelOut {
  const parts: A.QueryExpr[] = [];
  flattenSetOp(b, parts);
  return combineSetOp(an, b, parts.map((p) => resolveQueryExpr(an, p, outer)), parts);
}

/** Combines resolved inputs of one set operation (also used by pipe UNION/INTERSECT/EXCEPT). */
export function combineSetOp(an: Analyzer, b: A.SetOperation, inputs: RelOut[], parts: readonly { loc: A.Loc }[], label: InputLabel = queryLabel): RelOut {
  const what = `${b.op} ${b.quantifier}`;
  // query-syntax.md, Set operators: the ALL modifier is supported by only the UNION set operator.
  if (b.quantifier === 'ALL' && b.op !== 'UNION') throw sqlError(`${what} is not supported`, b.loc);
  let outs = inputs;
  if (b.corresponding || b.byName) outs = correspondingInputs(an, b, outs, what, parts, label);
  const n = outs[0]!.rel.columns.length;
  outs.forEach((o, i) => {
    if (o.rel.columns.length !== n) {
      throw sqlError(`Queries in ${what} have mismatched column count; ${label(0)} has ${n} column${n === 1 ? '' : 's'}, ${label(i)} has ${o.rel.columns.length} column${o.rel.columns.length === 1 ? '' : 's'}`, parts[i]!.loc);
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
  // query-syntax.md, Use a set operation on a value table: tables and value tables can't be combined.
  const vt = outs.findIndex((o) => o.isValueTable !== outs[0]!.isValueTable);
  if (vt > 0) {
    const which = (o: RelOut) => (o.isValueTable ? 'a value table' : 'not a value table');
    throw sqlError(`Queries in ${what} must all be value tables or all not: ${label(0)} is ${which(outs[0]!)}, ${label(vt)} is ${which(outs[vt]!)}`, parts[vt]!.loc);
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
