// Name scopes. A Scope holds the range variables of one FROM clause (plus
// extra names such as USING-merged columns); scopes chain outward to the
// enclosing query. A Correlation marks a subquery (or lateral) boundary:
// a name found beyond it is a correlated reference, recorded on every
// boundary crossed so each SubqueryExpr lists the outer ids it reads.
import type { ColumnRefExpr, Expr, ResolvedColumn } from './resolved.js';
import type { SqlType } from '../types/types.js';

export interface RangeVar {
  /** Alias as written; lookups are case-insensitive. */
  readonly name: string;
  readonly lname: string;
  /** Columns in star-expansion order. */
  readonly columns: readonly ResolvedColumn[];
  /** Value table (UNNEST alias, SELECT AS VALUE source): the range variable is this one column. */
  readonly value?: ResolvedColumn;
  /** Column ids that `*` skips (the right copy of a USING key). */
  readonly hidden?: ReadonlySet<number>;
  /**
   * A pipe table alias carried past operators that changed the visible columns
   * (`|> SET`, `|> DROP`, ...): reached only as `alias` or `alias.column`, never
   * by an unqualified column name nor by `*`.
   */
  readonly qualifiedOnly?: boolean;
}

/** Column ids a correlated reference to range variable `rv` reads: `rv.member` reads that one column, `rv` alone all of them. */
function rangeIds(rv: RangeVar, member: string | undefined): number[] {
  if (member !== undefined && !rv.value) {
    const lm = member.toLowerCase();
    const cols = rv.columns.filter((c) => c.name.toLowerCase() === lm);
    if (cols.length === 1) return [cols[0]!.id];
  }
  return rv.columns.map((c) => c.id).concat(rv.value ? [rv.value.id] : []);
}

export class Correlation {
  readonly ids = new Set<number>();
}

export type Lookup =
  | { readonly kind: 'column'; readonly column: ResolvedColumn; readonly correlated: boolean }
  | { readonly kind: 'field'; readonly column: ResolvedColumn; readonly fieldIndex: number; readonly type: SqlType; readonly correlated: boolean }
  | { readonly kind: 'range'; readonly rv: RangeVar; readonly correlated: boolean }
  | { readonly kind: 'ambiguous' }
  | undefined;

export class Scope {
  rangeVars: RangeVar[] = [];
  /** Unqualified names that shadow range-variable columns (USING keys, pipe renames). */
  readonly extra = new Map<string, ResolvedColumn>();
  /** `SELECT *` columns in order (USING joins merge keys, so this is kept explicitly). */
  starList?: ResolvedColumn[];
  /** Names that may not be referenced unqualified: ambiguous after a join. */
  readonly ambiguous = new Set<string>();
  /**
   * The parameters of a SQL function whose body starts at this scope (the
   * arguments' expressions, in the caller's terms): visible to every query of
   * the body, subqueries included, after the names of their own FROM clauses.
   */
  udfArgs?: ReadonlyMap<string, Expr>;
  /**
   * Names of the scopes outside this one are not visible through it (a WITH
   * clause's query stands alone, ZetaSQL's resolver); SQL function parameters still are.
   */
  opaque = false;

  constructor(
    readonly parent?: Scope,
    /** Set when this scope starts a subquery/lateral boundary. */
    readonly correlation?: Correlation,
  ) {}

  addRangeVar(rv: RangeVar): void {
    this.rangeVars.push(rv);
  }

  findRangeVar(lname: string): RangeVar | undefined {
    for (const rv of this.rangeVars) if (rv.lname === lname) return rv;
    return undefined;
  }

  /** Local (this scope only) lookup of one identifier. */
  /**
   * A column (or value-table field) of this scope by name, never a table's range variable: JOIN ... USING names
   * columns only. A value table of scalars (UNNEST([1, 2]) AS e) is one column named by its alias (the reference).
   */
  columnLookup(name: string): Lookup {
    return this.local(name.toLowerCase(), true);
  }

  private local(lname: string, columnsOnly = false): Lookup {
    const e = this.extra.get(lname);
    if (e) return { kind: 'column', column: e, correlated: false };
    if (this.ambiguous.has(lname)) return { kind: 'ambiguous' };
    const rv = columnsOnly ? undefined : this.findRangeVar(lname);
    if (rv) return { kind: 'range', rv, correlated: false };
    let hit: Lookup;
    for (const r of this.rangeVars) {
      if (r.qualifiedOnly) continue;
      if (r.value) {
        const t = r.value.type;
        if (t.kind === 'STRUCT') {
          const i = t.fields.findIndex((f) => f.name.toLowerCase() === lname);
          if (i >= 0) {
            if (hit) return { kind: 'ambiguous' };
            hit = { kind: 'field', column: r.value, fieldIndex: i, type: t.fields[i]!.type, correlated: false };
          }
        } else if (columnsOnly && r.lname === lname) {
          if (hit) return { kind: 'ambiguous' };
          hit = { kind: 'column', column: r.value, correlated: false };
        }
        continue;
      }
      for (const c of r.columns) {
        if (c.name.toLowerCase() === lname) {
          if (hit) {
            if (hit.kind === 'column' && hit.column.id === c.id) continue;
            return { kind: 'ambiguous' };
          }
          hit = { kind: 'column', column: c, correlated: false };
        }
      }
    }
    return hit;
  }

  /** Every unqualified name visible here and outward (for "Did you mean" suggestions). */
  visibleNames(): string[] {
    const out: string[] = [];
    for (let s: Scope | undefined = this; s; s = s.opaque ? undefined : s.parent) {
      out.push(...s.extra.keys());
      for (const r of s.rangeVars) {
        out.push(r.name);
        if (r.qualifiedOnly) continue;
        if (r.value?.type.kind === 'STRUCT') out.push(...r.value.type.fields.map((f) => f.name));
        else out.push(...r.columns.map((c) => c.name));
      }
    }
    return out;
  }

  /** Like lookup, without recording correlation (a probe that may not become a reference). */
  peek(name: string): Lookup {
    const lname = name.toLowerCase();
    for (let s: Scope | undefined = this; s; s = s.opaque ? undefined : s.parent) {
      const hit = s.local(lname);
      if (hit) return hit;
    }
    return undefined;
  }

  /**
   * Looks a name up here and outward, recording correlation on every boundary
   * crossed. `member`: the next part of a path (`t.k`): when the name is a
   * range variable with one column of that name, only that column is
   * recorded (a correlated subquery then runs once per distinct value of the
   * columns it reads, not once per outer row).
   */
  lookup(name: string, member?: string): Lookup {
    const lname = name.toLowerCase();
    let crossed: Correlation[] | undefined;
    for (let s: Scope | undefined = this; s; s = s.opaque ? undefined : s.parent) {
      const hit = s.local(lname);
      if (hit) {
        if (!crossed || hit.kind === 'ambiguous') return hit;
        const ids = hit.kind === 'range' ? rangeIds(hit.rv, member) : [hit.column.id];
        for (const c of crossed) for (const id of ids) c.ids.add(id);
        return { ...hit, correlated: true };
      }
      if (s.correlation) (crossed ??= []).push(s.correlation);
    }
    return undefined;
  }

  /**
   * A SQL function parameter visible from here: the argument's expression, and
   * the subquery boundaries between here and the function body, which read the
   * argument's columns as correlated ones.
   */
  lookupUdfArg(name: string): { expr: Expr; crossed: Correlation[] } | undefined {
    const lname = name.toLowerCase();
    const crossed: Correlation[] = [];
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const e = s.udfArgs?.get(lname);
      if (e) return { expr: e, crossed };
      if (s.correlation) crossed.push(s.correlation);
    }
    return undefined;
  }

  /** All columns for `SELECT *`, in FROM order. */
  starColumns(): ResolvedColumn[] {
    if (this.starList) return this.starList;
    const out: ResolvedColumn[] = [];
    for (const rv of this.rangeVars) {
      if (rv.qualifiedOnly) continue;
      if (rv.value) {
        out.push(rv.value);
        continue;
      }
      for (const c of rv.columns) if (!rv.hidden?.has(c.id)) out.push(c);
    }
    return out;
  }
}

export function colRef(c: ResolvedColumn, correlated = false): ColumnRefExpr {
  return correlated ? { kind: 'column', type: c.type, columnId: c.id, correlated: true } : { kind: 'column', type: c.type, columnId: c.id };
}

export function isColRef(e: Expr): e is ColumnRefExpr {
  return e.kind === 'column';
}
