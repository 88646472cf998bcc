// GQL queries (graph-query-statements.md, graph-patterns.md) compiled into SQL: the planner and executor never see a
// graph. A graph element is a STRUCT column: its properties as fields (the union over the element tables its
// pattern may bind, NULL where a table lacks one, as `MATCH (n) RETURN n.name` shows on the patterns page) plus
// hidden fields: __id (element table alias + key values), __labels, and for edges __src / __dst (the endpoint
// nodes' __id). A node or edge pattern is a derived table (UNION ALL over its candidate element tables); edges join
// nodes on those ids. Each GQL statement wraps the working table in one more SELECT. The text built here holds
// placeholders (`__gph<n>`) where the user's expressions go; they are spliced in as parsed, so errors point at them.
import type * as A from '../../grammar/ast.js';
import { parseStatement } from '../../grammar/index.js';
import { typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { checkCheapest, checkCost, flatPatterns, type GroupVar, type PathModeScope } from './graph-pattern.js';
import { loadGraphDef, type GraphDef, type GraphElement } from './graph-schema.js';
import { tableIdOf } from './names.js';

const q = (s: string) => '`' + s.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
const str = (s: string) => "'" + s.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";
const lower = (s: string) => s.toLowerCase();

/** Aggregates a LET / FILTER / WHERE applies to the elements of one array (horizontal aggregation). */
const HORIZONTAL = new Set(['SUM', 'AVG', 'COUNT', 'COUNTIF', 'MIN', 'MAX', 'ARRAY_AGG', 'STRING_AGG', 'ARRAY_CONCAT_AGG', 'LOGICAL_AND', 'LOGICAL_OR', 'ANY_VALUE', 'BIT_AND', 'BIT_OR', 'BIT_XOR', 'MAX_BY', 'MIN_BY', 'STDDEV', 'VARIANCE']);

/** Working table: its columns in order, and which hold graph elements. */
interface Work {
  sql: string;
  cols: string[];
  elems: Map<string, GraphElement[]>;
}

class Compiler {
  private readonly slots: unknown[] = [];
  private n = 0;
  constructor(
    private readonly an: Analyzer,
    private readonly g: GraphDef,
  ) {}

  /** A placeholder for a user expression (graph functions rewritten first). */
  ph(e: unknown): string {
    this.slots.push(this.rewrite(e));
    return `__gph${this.slots.length - 1}`;
  }
  /** A query kept whole (its ORDER BY / LIMIT), named by a table reference `__gq<n>` in generated text. */
  hold(query: A.Query): string {
    this.slots.push({ kind: 'QueryHolder', query });
    return `__gq${this.slots.length - 1}`;
  }
  fresh(p: string): string {
    return `__${p}${this.n++}`;
  }

  /** Element variables of the working table where the expressions being compiled stand. */
  elemVars = new Map<string, GraphElement[]>();

  /**
   * Graph functions and predicates over element values, as SQL over the element's fields: LABELS, ELEMENT_ID,
   * SOURCE/DESTINATION_NODE_ID, PROPERTY_EXISTS, TO_JSON of an element (graph-gql-functions.md), IS LABELED,
   * IS SOURCE / DESTINATION OF, SAME, ALL_DIFFERENT (graph-operators.md).
   */
  private rewrite<T>(e: T): T {
    if (Array.isArray(e)) return e.map((x) => this.rewrite(x)) as T;
    if (e === null || typeof e !== 'object') return e;
    const o = e as Record<string, unknown>;
    const done = this.graphExpr(o as unknown as A.Expr);
    if (done) return done as T;
    const out: Record<string, unknown> = {};
    for (const k in o) out[k] = k === 'loc' ? o[k] : this.rewrite(o[k]);
    return out as T;
  }

  /** An expression over placeholders, parsed and filled. */
  private sqlExpr(sql: string): A.Expr {
    const q = this.parse(`SELECT ${sql}`);
    return ((q.body as A.Select).items[0] as A.SelectExprItem).expr;
  }

  private labelSql(x: string, l: A.GraphLabelExpr): string {
    switch (l.kind) {
      case 'any':
        return 'TRUE';
      case 'name':
        if (!this.g.elements.some((e) => e.labels.some((y) => lower(y) === lower(l.name)))) throw sqlError(`The label ${l.name} is not defined in property graph ${this.g.name}`, l.loc);
        return `EXISTS(SELECT 1 FROM UNNEST(${x}.__labels) AS __l WHERE LOWER(__l) = ${str(lower(l.name))})`;
      case 'or':
      case 'and':
        return `(${l.items.map((i) => this.labelSql(x, i)).join(l.kind === 'or' ? ' OR ' : ' AND ')})`;
      case 'not':
        return `NOT ${this.labelSql(x, l.item)}`;
    }
  }

  /** The working table where the expressions being compiled stand (graph subqueries see its columns). */
  current: Work | undefined;

  /** While set: aggregates are horizontal, over the one array variable of these their argument names. */
  private arrays: Set<string> | undefined;

  /** Compiles LET / FILTER / WHERE expressions, where an aggregate is horizontal (graph-gql-functions.md). */
  horizontal<R>(arrays: Set<string>, f: () => R): R {
    const saved = this.arrays;
    this.arrays = arrays;
    try {
      return f();
    } finally {
      this.arrays = saved;
    }
  }

  /** Working columns that may hold arrays: all but its graph elements. */
  arrayCols(w: Work): Set<string> {
    return new Set(w.cols.map(lower).filter((c) => !w.elems.has(c) && c !== '__gdummy'));
  }

  /**
   * `SUM(arr.x)` in LET / FILTER / WHERE: the aggregate over the elements of the one array variable its argument
   * names, in array order for ARRAY_AGG / STRING_AGG (graph-gql-functions.md, horizontal aggregate function calls).
   */
  private horizontalAggregate(f: A.FunctionCall): A.Expr | undefined {
    if (!this.arrays || f.over || f.name.length !== 1 || !HORIZONTAL.has(f.name[0]!.toUpperCase())) return undefined;
    const named = new Set<string>();
    const walk = (x: unknown): void => {
      if (Array.isArray(x)) return x.forEach(walk);
      if (x === null || typeof x !== 'object') return;
      const o = x as Record<string, unknown>;
      if (o.kind === 'PathExpr' && this.arrays!.has(lower((o.parts as string[])[0]!))) named.add(lower((o.parts as string[])[0]!));
      for (const k in o) if (k !== 'loc') walk(o[k]);
    };
    walk([f.args, f.where, f.orderBy]);
    // graph-gql-functions.md: the argument must reference exactly one array-typed value.
    if (named.size !== 1) throw sqlError(named.size ? `Horizontal aggregation on more than one array-typed variable is not allowed. First variable: ${[...named][0]}` : `${f.name[0]} is not allowed here: an aggregate in LET, FILTER or WHERE aggregates one array variable`, f.loc);
    const v = [...named][0]!;
    const byOffset: A.OrderByItem = { kind: 'OrderByItem', loc: f.loc, expr: { kind: 'PathExpr', loc: f.loc, parts: ['__ho'] } };
    const ordered = ['ARRAY_AGG', 'STRING_AGG', 'ARRAY_CONCAT_AGG'].includes(f.name[0]!.toUpperCase());
    const call: A.FunctionCall = { ...renameVar(f, v, '__h'), ...(ordered && !f.orderBy ? { orderBy: [byOffset] } : {}) };
    const saved = this.arrays;
    this.arrays = undefined;
    try {
      return this.sqlExpr(`(SELECT ${this.ph(call)} FROM UNNEST(${q(v)}) AS __h WITH OFFSET AS __ho)`);
    } finally {
      this.arrays = saved;
    }
  }

  /** `n.p`: p must be a property of an element table n's pattern can bind (graph-query-statements.md, FILTER). */
  private checkProperty(e: A.PathExpr): void {
    const cands = this.elemVars.get(lower(e.parts[0]!));
    const p = e.parts[1]!;
    if (!cands?.length || p.startsWith('__')) return;
    if (!cands.some((c) => c.properties.some((x) => lower(x.name) === lower(p)))) throw sqlError(`Property ${p} is not defined for graph element ${e.parts[0]} (labels ${[...new Set(cands.flatMap((c) => c.labels))].join(', ')})`, e.loc);
  }

  private isElem(e: A.Expr): boolean {
    return e.kind === 'PathExpr' && e.parts.length === 1 && this.elemVars.has(lower(e.parts[0]!));
  }

  private graphExpr(o: A.Expr): A.Expr | undefined {
    if (o.kind === 'GraphSubquery') return this.subquery(o);
    if (o.kind === 'PathExpr' && o.parts.length > 1) this.checkProperty(o);
    // Elements compare by identity (graph-patterns.md: `WHERE a != b`), which STRUCT values cannot do in SQL.
    if (o.kind === 'BinaryExpr' && (o.op === '=' || o.op === '!=') && (this.isElem(o.left) || this.isElem(o.right))) {
      return this.sqlExpr(`${this.ph(o.left)}.__id ${o.op} ${this.ph(o.right)}.__id`);
    }
    if (o.kind === 'GraphIsLabeled') {
      const x = this.ph(o.expr);
      return this.sqlExpr(`IF(${x} IS NULL, NULL, ${o.not ? 'NOT ' : ''}(${this.labelSql(x, o.label)}))`);
    }
    if (o.kind === 'GraphIsEndpoint') return this.sqlExpr(`${this.ph(o.node)}.__id ${o.not ? '!=' : '='} ${this.ph(o.edge)}.${o.which === 'SOURCE' ? '__src' : '__dst'}`);
    if (o.kind !== 'FunctionCall' || o.name.length !== 1) return undefined;
    const horizontal = this.horizontalAggregate(o);
    if (horizontal) return horizontal;
    const name = o.name[0]!.toUpperCase();
    const args = o.args;
    const field = name === 'LABELS' ? '__labels' : name === 'ELEMENT_ID' ? '__id' : name === 'SOURCE_NODE_ID' ? '__src' : name === 'DESTINATION_NODE_ID' ? '__dst' : undefined;
    if (field && args.length === 1) return { kind: 'FieldAccess', loc: o.loc, expr: this.rewrite(args[0]!), field };
    // Path functions (graph-gql-functions.md) over a path value: STRUCT<nodes ARRAY, edges ARRAY>.
    const path = { PATH_LENGTH: 'ARRAY_LENGTH(X.edges)', NODES: 'X.nodes', EDGES: 'X.edges', PATH_FIRST: 'X.nodes[SAFE_OFFSET(0)]', PATH_LAST: 'X.nodes[SAFE_ORDINAL(ARRAY_LENGTH(X.nodes))]' }[name];
    if (path && args.length === 1) return this.sqlExpr(path.replace(/X/g, this.ph(args[0])));
    if ((name === 'SAME' || name === 'ALL_DIFFERENT') && args.length >= 2) {
      const xs = args.map((a) => this.ph(a));
      const pairs: string[] = [];
      if (name === 'SAME') for (let i = 1; i < xs.length; i++) pairs.push(`${xs[0]}.__id = ${xs[i]}.__id`);
      else for (let i = 0; i < xs.length; i++) for (let j = i + 1; j < xs.length; j++) pairs.push(`${xs[i]}.__id != ${xs[j]}.__id`);
      // graph-operators.md: an error if an element is NULL.
      return this.sqlExpr(`IF(${xs.map((x) => `${x} IS NULL`).join(' OR ')}, ERROR('${name} does not take a NULL graph element'), ${pairs.join(' AND ')})`);
    }
    if (name === 'PROPERTY_EXISTS' && args.length === 2) {
      const p = args[1]!;
      if (p.kind !== 'PathExpr' || p.parts.length !== 1) throw sqlError('PROPERTY_EXISTS takes a property name as its second argument', p.loc);
      const x = this.ph(args[0]);
      const having = this.g.elements.filter((el) => el.properties.some((y) => lower(y.name) === lower(p.parts[0]!)));
      return this.sqlExpr(`IF(${x} IS NULL, NULL, ${having.length ? having.map((el) => `STARTS_WITH(${x}.__id, ${str(el.alias + ':')})`).join(' OR ') : 'FALSE'})`);
    }
    if (name === 'TO_JSON' && args.length >= 1 && args[0]!.kind === 'PathExpr' && args[0]!.parts.length === 1 && this.elemVars.has(lower(args[0]!.parts[0]!))) {
      // graph-sql-queries.md: TO_JSON of an element: identifier, kind, labels, properties (and an edge's endpoints).
      const cands = this.elemVars.get(lower(args[0]!.parts[0]!))!;
      const x = this.ph(args[0]);
      const edge = cands[0]?.kind === 'edge';
      const props: string[] = [];
      for (const c of cands) for (const p of c.properties) if (!props.some((n) => lower(n) === lower(p.name))) props.push(p.name);
      const fields = [`${x}.__id AS identifier`, `'${edge ? 'edge' : 'node'}' AS kind`, `${x}.__labels AS labels`, `STRUCT(${props.length ? props.map((p) => `${x}.${q(p)} AS ${q(p)}`).join(', ') : ''}) AS properties`];
      if (edge) fields.push(`${x}.__src AS source_node_identifier`, `${x}.__dst AS destination_node_identifier`);
      return this.sqlExpr(`TO_JSON(IF(${x} IS NULL, NULL, STRUCT(${fields.join(', ')}))${args.length > 1 ? `, ${args.slice(1).map((a) => this.ph(a)).join(', ')}` : ''})`);
    }
    return undefined;
  }

  /** Parses generated text and puts the user's expressions in place of the placeholders. */
  parse(sql: string): A.Query {
    const st = parseStatement(sql);
    if (st.kind !== 'QueryStatement') throw new Error('graph compile: not a query');
    const fill = (x: unknown): unknown => {
      if (Array.isArray(x)) return x.map(fill);
      if (x === null || typeof x !== 'object') return x;
      const o = x as Record<string, unknown>;
      if (o.kind === 'PathExpr') {
        const parts = (o as unknown as A.PathExpr).parts;
        const m = /^__gph(\d+)$/.exec(parts[0]!);
        if (m) {
          const base = this.slots[Number(m[1])] as A.Expr;
          return parts.slice(1).reduce<A.Expr>((acc, f) => ({ kind: 'FieldAccess', loc: acc.loc, expr: acc, field: f }), base);
        }
      }
      // The element constructors this compiler wrote (user expressions come from slots, above, and are never marked).
      if (o.kind === 'StructExpr' && (o as unknown as A.StructExpr).fields[0]?.alias === '__id' && (o as unknown as A.StructExpr).fields[1]?.alias === '__labels') {
        const out: Record<string, unknown> = { graphElement: true };
        for (const k in o) out[k] = fill(o[k]);
        return out;
      }
      if (o.kind === 'SelectExpr' && (o.expr as A.PathExpr).kind === 'PathExpr') {
        const m = /^__gph(\d+)$/.exec((o.expr as A.PathExpr).parts[0]!);
        if (m && (this.slots[Number(m[1])] as { kind: string }).kind === 'SelectItemHolder') return (this.slots[Number(m[1])] as unknown as { item: A.SelectItem }).item;
      }
      const out: Record<string, unknown> = {};
      for (const k in o) out[k] = fill(o[k]);
      return out;
    };
    return fill(st.query) as A.Query;
  }

  /** A whole select item (alias kept, or computed from the spliced expression by the analyzer). */
  item(it: A.SelectItem): string {
    this.slots.push({ kind: 'SelectItemHolder', item: it.kind === 'SelectExpr' ? { ...it, expr: this.rewrite(it.expr) } : it });
    return `__gph${this.slots.length - 1}`;
  }

  /**
   * A graph subquery: compiled over the working table's columns (correlated references), so a variable of the
   * enclosing query named again in the subquery's pattern is the same element (graph-subqueries.md).
   */
  private subquery(o: A.GraphSubquery): A.Expr {
    const g = o.query.graph.length ? graphDef(this.an, o.query) : this.g;
    const inner = new Compiler(this.an, g);
    const cur = this.current;
    const cols = cur ? cur.cols.filter((c) => c !== '__gdummy') : [];
    const input: Work | undefined = cur && cols.length ? { sql: `SELECT ${cols.map(q).join(', ')}`, cols, elems: cur.elems } : undefined;
    const query = inner.compile(o.query, input, false);
    const loc = o.loc;
    switch (o.mode) {
      case 'EXISTS':
        return { kind: 'ExistsExpr', loc, query };
      case 'ARRAY':
        return { kind: 'ArraySubquery', loc, query };
      case 'VALUE':
        return { kind: 'ScalarSubquery', loc, query };
      case 'IN':
        return { kind: 'InExpr', loc, expr: this.rewrite(o.value!), not: !!o.not, query };
    }
  }

  /** The linear queries chained by NEXT, set operations between their branches. */
  compile(gq: A.GraphQuery, start: Work | undefined, topLevel: boolean): A.Query {
    let input = start;
    let result: A.Query | undefined;
    gq.parts.forEach((part, pi) => {
      const last = pi === gq.parts.length - 1;
      const outs = part.branches.map((b) => this.simple(b, input, topLevel && last, gq.noReturn === true));
      let body: A.QueryExpr = outs[0]!.query;
      part.ops.forEach((op, i) => {
        body = { kind: 'SetOperation', loc: op.loc, op: op.op, quantifier: op.quantifier, left: body, right: outs[i + 1]!.query };
      });
      const query: A.Query = body.kind === 'Query' && !part.ops.length ? body : { kind: 'Query', loc: part.loc, body, pipes: [] };
      input = { sql: `SELECT * FROM ${this.hold(query)}`, cols: outs[0]!.work.cols, elems: outs[0]!.work.elems };
      result = query;
    });
    return this.resolveHolders(result) as A.Query;
  }

  // ------------------------------------------------------------------------ element tables

  private matches(el: GraphElement, l: A.GraphLabelExpr | undefined): boolean {
    if (!l) return true;
    switch (l.kind) {
      case 'any':
        return true;
      case 'name':
        return el.labels.some((x) => lower(x) === lower(l.name));
      case 'or':
        return l.items.some((i) => this.matches(el, i));
      case 'and':
        return l.items.every((i) => this.matches(el, i));
      case 'not':
        return !this.matches(el, l.item);
    }
  }

  candidates(p: A.GraphElementPattern): GraphElement[] {
    const kind = p.kind === 'edge' ? 'edge' : 'node';
    const check = (l: A.GraphLabelExpr | undefined) => {
      if (!l) return;
      if (l.kind === 'name' && !this.g.elements.some((e) => e.labels.some((x) => lower(x) === lower(l.name)))) throw sqlError(`The label ${l.name} is not defined in property graph ${this.g.name}`, l.loc);
      if (l.kind === 'or' || l.kind === 'and') l.items.forEach(check);
      if (l.kind === 'not') check(l.item);
    };
    check(p.label);
    return this.g.elements.filter((e) => e.kind === kind && this.matches(e, p.label));
  }

  private idSql(alias: string, cols: readonly string[]): string {
    return `CONCAT(${[str(alias + ':'), ...cols.map((c, i) => (i ? `',', ` : '') + `TO_JSON_STRING(${q(c)})`)].join(', ')})`;
  }

  /**
   * The derived table of one element pattern: a STRUCT column `col` over the union of its candidate tables. Every
   * node (every edge) has one STRUCT type, all the graph's node (edge) properties, so that a path's nodes make one
   * ARRAY; which properties a pattern exposes is checked where they are read (`checkProperty`).
   */
  elementTable(cands: GraphElement[], col: string, isEdge: boolean): string {
    const names: string[] = [];
    for (const c of this.g.elements) if (c.kind === (isEdge ? 'edge' : 'node')) for (const p of c.properties) if (!names.some((n) => lower(n) === lower(p.name))) names.push(p.name);
    if (!cands.length) {
      const fields = ['CAST(NULL AS STRING) AS __id', 'CAST(NULL AS ARRAY<STRING>) AS __labels', ...(isEdge ? ['CAST(NULL AS STRING) AS __src', 'CAST(NULL AS STRING) AS __dst'] : []), ...names.map((n) => `CAST(NULL AS ${typeToSql(this.g.propertyTypes.get(lower(n))!.type)}) AS ${q(n)}`)];
      return `(SELECT STRUCT(${fields.join(', ')}) AS ${q(col)} FROM UNNEST(ARRAY<INT64>[]))`;
    }
    const parts = cands.map((c) => {
      const fields = [`${this.idSql(c.alias, c.key)} AS __id`, `[${c.labels.map(str).join(', ')}] AS __labels`];
      if (isEdge) fields.push(`${this.idSql(c.source!.ref, c.source!.columns)} AS __src`, `${this.idSql(c.destination!.ref, c.destination!.columns)} AS __dst`);
      for (const n of names) {
        const p = c.properties.find((x) => lower(x.name) === lower(n));
        const t = this.g.propertyTypes.get(lower(n))!.type;
        fields.push(p ? `${this.ph(p.expr)} AS ${q(n)}` : `CAST(NULL AS ${typeToSql(t)}) AS ${q(n)}`);
      }
      return `SELECT STRUCT(${fields.join(', ')}) AS ${q(col)} FROM ${q(`${c.table.projectId}.${c.table.datasetId}.${c.table.tableId}`)}`;
    });
    return `(${parts.join(' UNION ALL ')})`;
  }

  // ------------------------------------------------------------------------ MATCH

  /**
   * One MATCH's pattern as a table of its named variables (anonymous ones dropped). A pattern with subpaths or
   * quantifiers is the union of its flat patterns (graph-pattern.ts), a group variable an ARRAY of its copies in path
   * order; conditions of such a MATCH apply within each branch.
   */
  match(pattern: A.GraphPattern): Work & { bare: string; anon: string[]; where: string[] } {
    const prefixes = pattern.paths.map(pathPrefix);
    if (!prefixes.some((p) => p.search)) return this.matchExpanded(pattern);
    // graph-patterns.md (path search prefix): each searched path pattern is matched on its own (its element and
    // subpath conditions included), one path kept per pair of endpoints; then the paths of the MATCH are joined on
    // the variables they share, and the MATCH's WHERE filters the joined rows.
    flatPatterns(pattern, (p) => this.fresh(p));
    checkSearchReuse(pattern, prefixes);
    const parts: { sql: string; cols: string[]; elems: Map<string, GraphElement[]> }[] = [];
    const rest = pattern.paths.filter((_, i) => !prefixes[i]!.search);
    pattern.paths.forEach((path, i) => {
      const kind = prefixes[i]!.search;
      if (!kind) return;
      if (kind === 'ANY CHEAPEST') checkCheapest(path);
      const out = this.matchExpanded({ loc: path.loc, paths: [path] });
      const order = kind === 'ANY CHEAPEST' ? '__pcost' : '__plen';
      const cols = out.cols.map(q).join(', ');
      parts.push({ sql: `SELECT ${cols} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY __pf, __pl ORDER BY ${order}) AS __rn FROM (${out.sql})) WHERE __rn = 1`, cols: out.cols, elems: out.elems });
    });
    if (rest.length) {
      const out = this.matchExpanded({ loc: pattern.loc, paths: rest });
      parts.push({ sql: out.sql, cols: out.cols, elems: out.elems });
    }
    const elems = new Map<string, GraphElement[]>();
    const cols: string[] = [];
    const from: string[] = [];
    parts.forEach((p, i) => {
      const on: string[] = [];
      for (const c of p.cols) {
        const j = parts.slice(0, i).findIndex((x) => x.cols.some((y) => lower(y) === lower(c)));
        if (j >= 0) on.push(`__s${j}.${q(c)}.__id = __s${i}.${q(c)}.__id`);
        else if (c !== '__gdummy') cols.push(c);
      }
      for (const [k, v] of p.elems) if (!elems.has(k)) elems.set(k, v);
      from.push(i === 0 ? `(${p.sql}) AS __s0` : `JOIN (${p.sql}) AS __s${i} ON ${on.length ? on.join(' AND ') : 'TRUE'}`);
    });
    const owner = (c: string) => parts.findIndex((x) => x.cols.some((y) => lower(y) === lower(c)));
    const sel = cols.length ? cols.map((c) => `__s${owner(c)}.${q(c)}`).join(', ') : 'TRUE AS __gdummy';
    const joined = `SELECT ${sel} FROM ${from.join(' ')}`;
    if (!pattern.where) return { sql: joined, bare: joined, anon: [], where: [], cols: cols.length ? cols : ['__gdummy'], elems };
    const saved = { vars: this.elemVars, cur: this.current };
    this.elemVars = new Map([...saved.vars, ...elems]);
    const prior = saved.cur ? saved.cur.cols.filter((c) => c !== '__gdummy') : [];
    this.current = { sql: '', cols: [...prior, ...cols.filter((c) => !prior.some((x) => lower(x) === lower(c)))], elems: this.elemVars };
    const groupCols = new Set(cols.map(lower).filter((c) => !elems.has(c)));
    const where = this.horizontal(groupCols, () => `(${this.ph(pattern.where)})`);
    this.elemVars = saved.vars;
    this.current = saved.cur;
    return { sql: `SELECT * FROM (${joined}) WHERE ${where}`, bare: joined, anon: [], where: [where], cols: cols.length ? cols : ['__gdummy'], elems };
  }

  private matchExpanded(pattern: A.GraphPattern): Work & { bare: string; anon: string[]; where: string[] } {
    const flats = flatPatterns(pattern, (p) => this.fresh(p));
    if (!flats) return this.matchOne(pattern, new Map(), [], []);
    const branches = flats.map((f) => this.matchOne(f.pattern, f.groups, f.conds, f.modes));
    const sql = branches.map((b) => `(${b.sql})`).join(' UNION ALL ');
    // The MATCH's own WHERE (the same in every branch) is left to the caller, as for an unquantified MATCH, so that
    // it may name variables of an earlier MATCH; element conditions stay within each branch.
    const where = branches[0]!.patternWhere;
    const bare = where ? branches.map((b) => `(${b.unlessWhere})`).join(' UNION ALL ') : sql;
    return { sql, bare, anon: [], where: where ? [where] : [], cols: branches[0]!.cols, elems: branches[0]!.elems };
  }

  matchOne(pattern: A.GraphPattern, groups: Map<string, GroupVar>, subpathConds: A.Expr[], modes: PathModeScope[]): Work & { bare: string; anon: string[]; where: string[]; search?: string; unlessWhere: string; patternWhere?: string } {
    interface Occ {
      col: string;
      table: string;
      name: string;
      cands: GraphElement[];
      edge: boolean;
    }
    const occs: Occ[] = [];
    const conds: { needs: number; sql: string }[] = [];
    const userConds: string[] = [];
    let patternWhere: string | undefined;
    // Conditions are compiled once every variable of the pattern is known (element comparisons need them).
    const later: (() => void)[] = [];
    const firstOf = new Map<string, Occ>();
    const paths = new Map<string, { name: string; sql: string }>();
    let search: { kind: string; cols?: string } | undefined;
    const costs: string[] = [];
    // The occurrence each flat element became (a node joined to the one before it: that one).
    const occOf = new Map<A.GraphElementPattern, Occ>();
    const elems = new Map<string, GraphElement[]>();
    const addOcc = (p: A.GraphElementPattern): Occ => {
      if (p.cost) checkCost(p);
      const edge = p.kind === 'edge';
      const cands = this.candidates(p);
      const name = p.variable ?? this.fresh('anon');
      const o: Occ = { col: this.fresh('e'), table: this.fresh('g'), name, cands, edge };
      occs.push(o);
      const first = firstOf.get(lower(name));
      if (first) {
        if (first.edge !== edge) throw sqlError(`Variable ${name} is bound to both a node and an edge`, p.loc);
        conds.push({ needs: occs.length - 1, sql: `${first.table}.${q(first.col)}.__id = ${o.table}.${q(o.col)}.__id` });
        elems.set(lower(name), first.cands.filter((c) => cands.includes(c)));
      } else {
        firstOf.set(lower(name), o);
        if (p.variable) elems.set(lower(name), cands);
      }
      const ref = p.variable ? q(p.variable) : q(name);
      for (const pr of p.props ?? []) {
        if (!cands.some((c) => c.properties.some((x) => lower(x.name) === lower(pr.name)))) throw sqlError(`Property ${pr.name} is not exposed by the element tables the pattern ${p.variable ?? ''} can match`, pr.loc);
      }
      later.push(() => {
        if (p.where) userConds.push(`(${this.ph(p.where)})`);
        if (p.cost) {
          // graph-patterns.md: a cost must be a finite positive number, else a runtime error (reference wording).
          const c = this.ph(p.cost);
          const bad = (cond: string, what: string) => `IF(${cond}, ERROR('Graph cost expression must ${what}'), `;
          costs.push(`${bad(`${c} IS NULL`, 'not be NULL')}${bad(`IS_INF(${c})`, 'not be Inf')}${bad(`IS_NAN(${c})`, 'not be NaN')}${bad(`${c} <= 0`, 'be positive')}${c}))))`);
        }
        for (const pr of p.props ?? []) userConds.push(`${ref}.${q(pr.name)} = (${this.ph(pr.value)})`);
      });
      return o;
    };
    for (const path of pattern.paths) {
      const prefix = pathPrefix(path);
      if (prefix.search) search = { kind: prefix.search };
      // Implicit nodes: a path may begin or end with an edge, and two edges may follow each other.
      const els: A.GraphElementPattern[] = [];
      for (const e of path.elements) {
        const prev = els[els.length - 1];
        if (e.kind === 'edge' && (!prev || prev.kind === 'edge')) els.push({ kind: 'node', loc: e.loc });
        els.push(e);
      }
      if (els[els.length - 1]!.kind === 'edge') els.push({ kind: 'node', loc: els[els.length - 1]!.loc });
      let left: Occ | undefined;
      let prevEl: A.GraphElementPattern | undefined;
      let edge: { occ: Occ; dir: 'right' | 'left' | 'any' } | undefined;
      const pathNodes: Occ[] = [];
      const pathEdges: Occ[] = [];
      for (const e of els) {
        const o = addOcc(e);
        if (e.kind === 'node' && left && !edge) {
          // Two node patterns next to each other are one node (graph-patterns.md, subpath pattern: SAME).
          conds.push({ needs: occs.length - 1, sql: `${left.table}.${q(left.col)}.__id = ${o.table}.${q(o.col)}.__id` });
          occOf.set(e, occOf.get(prevEl!) ?? left);
          left = o;
          prevEl = e;
          continue;
        }
        occOf.set(e, o);
        prevEl = e;
        (e.kind === 'edge' ? pathEdges : pathNodes).push(o);
        if (e.kind === 'edge') edge = { occ: o, dir: e.direction ?? 'any' };
        else {
          if (edge && left) {
            const E = `${edge.occ.table}.${q(edge.occ.col)}`;
            const L = `${left.table}.${q(left.col)}.__id`;
            const R = `${o.table}.${q(o.col)}.__id`;
            const right = `(${E}.__src = ${L} AND ${E}.__dst = ${R})`;
            const leftDir = `(${E}.__src = ${R} AND ${E}.__dst = ${L})`;
            conds.push({ needs: occs.length - 1, sql: edge.dir === 'right' ? right : edge.dir === 'left' ? leftDir : `(${right} OR ${leftDir})` });
          }
          left = o;
          edge = undefined;
        }
      }
      // Path modes (graph-patterns.md): TRAIL keeps paths without a repeated edge, ACYCLIC without a repeated node.
      const distinct = prefix.mode === 'TRAIL' ? pathEdges : prefix.mode === 'ACYCLIC' ? pathNodes : [];
      for (let i = 0; i < distinct.length; i++) for (let j = i + 1; j < distinct.length; j++) conds.push({ needs: occs.length - 1, sql: `${distinct[i]!.table}.${q(distinct[i]!.col)}.__id != ${distinct[j]!.table}.${q(distinct[j]!.col)}.__id` });
      // A search prefix keeps paths per pair of endpoints: their ids and the path's length ride along, hidden.
      if (search && prefix.search) {
        const ref = (o: Occ) => `${o.table}.${q(o.col)}.__id`;
        search.cols = `${ref(pathNodes[0]!)} AS __pf, ${ref(pathNodes[pathNodes.length - 1]!)} AS __pl, ${pathEdges.length} AS __plen`;
      }
      // `p = ...`: the path's nodes and edges in order (graph-patterns.md, path_variable).
      if (path.variable) {
        if (firstOf.has(lower(path.variable)) || paths.has(lower(path.variable))) throw sqlError(`Path variable ${path.variable} is already a variable of the pattern`, path.loc);
        const ref = (o: Occ) => `${o.table}.${q(o.col)}`;
        // A path of one node has no edges: an empty ARRAY of the edge type (it meets longer paths in a UNION).
        const edgeList = pathEdges.length ? `[${pathEdges.map(ref).join(', ')}]` : `ARRAY(SELECT __x FROM ${this.elementTable([], '__x', true)})`;
        paths.set(lower(path.variable), { name: path.variable, sql: `STRUCT([${pathNodes.map(ref).join(', ')}] AS nodes, ${edgeList} AS edges) AS ${q(path.variable)}` });
      }
    }
    // Path modes of subpaths: TRAIL / ACYCLIC over the elements each holds (one node per SAME chain).
    for (const m of modes) {
      const held = [...new Set([...m.els].map((e) => occOf.get(e)).filter((o): o is Occ => o !== undefined))].filter((o) => o.edge === (m.mode === 'TRAIL'));
      for (let i = 0; i < held.length; i++) for (let j = i + 1; j < held.length; j++) conds.push({ needs: occs.length - 1, sql: `${held[i]!.table}.${q(held[i]!.col)}.__id != ${held[j]!.table}.${q(held[j]!.col)}.__id` });
    }
    const saved = this.elemVars;
    this.elemVars = new Map([...saved, ...elems]);
    // Graph subqueries in the conditions see the working table's columns and this pattern's variables.
    const savedCur = this.current;
    const prior = savedCur ? savedCur.cols.filter((c) => c !== '__gdummy') : [];
    const own = [...firstOf.values()].map((o) => o.name).concat([...groups.keys()], [...paths.values()].map((p) => p.name));
    this.current = { sql: '', cols: [...prior, ...own.filter((c) => !prior.some((x) => lower(x) === lower(c)))], elems: this.elemVars };
    this.horizontal(new Set([...groups.keys()].map(lower)), () => {
      for (const f of later) f();
      for (const c of subpathConds) userConds.push(`(${this.ph(c)})`);
      if (pattern.where) patternWhere = `(${this.ph(pattern.where)})`;
    });
    if (patternWhere) userConds.push(patternWhere);
    this.elemVars = saved;
    this.current = savedCur;
    // FROM g0 JOIN g1 ON (conditions reaching back) ...
    let from = '';
    occs.forEach((o, i) => {
      const t = `${this.elementTable(o.cands, o.col, o.edge)} AS ${o.table}`;
      if (i === 0) from = t;
      else {
        const on = conds.filter((c) => c.needs === i).map((c) => c.sql);
        from += ` JOIN ${t} ON ${on.length ? on.join(' AND ') : 'TRUE'}`;
      }
    });
    const named = [...firstOf.values()];
    const groupNames = [...groups.keys()];
    // Group variables are built here, where the pattern's conditions can read them too; no repetition, no element
    // (an empty ARRAY of the element type).
    const groupCols = groupNames.map((g) => {
      const { kind, copies } = groups.get(g)!;
      if (!copies.length) return `ARRAY(SELECT __x FROM ${this.elementTable([], '__x', kind === 'edge')}) AS ${q(g)}`;
      return `[${copies.map((c) => { const o = firstOf.get(lower(c))!; return `${o.table}.${q(o.col)}`; }).join(', ')}] AS ${q(g)}`;
    });
    const inner = `SELECT ${[...named.map((o) => `${o.table}.${q(o.col)} AS ${q(o.name)}`), ...groupCols, ...[...paths.values()].map((p) => p.sql), ...(search?.cols ? [search.cols] : [])].join(', ')} FROM ${from}`;
    const visible = named.filter((o) => !o.name.startsWith('__anon') && !o.name.startsWith('__q'));
    const pathNames = [...paths.values()].map((p) => p.name);
    const selected = [...visible.map((o) => q(o.name)), ...groupNames.map(q), ...pathNames.map(q), ...(search ? ['__pf', '__pl', '__plen', `${costs.length ? costs.join(' + ') : '0'} AS __pcost`] : [])];
    const sel = selected.length ? selected.join(', ') : 'TRUE AS __gdummy';
    const anon = named.filter((o) => o.name.startsWith('__anon') || o.name.startsWith('__q')).map((o) => o.name);
    const filtered = `SELECT ${sel} FROM (${inner})${userConds.length ? ` WHERE ${userConds.join(' AND ')}` : ''}`;
    // Unfiltered, with the anonymous elements the conditions may still read.
    const bare = `SELECT ${[sel, ...anon.map(q)].join(', ')} FROM (${inner})`;
    const cols = [...visible.map((o) => o.name), ...groupNames, ...pathNames];
    // Filtered by all but the MATCH's own WHERE, which a quantified MATCH applies after the union of its branches.
    const elementConds = userConds.filter((c) => c !== patternWhere);
    const unlessWhere = `SELECT ${sel} FROM (${inner})${elementConds.length ? ` WHERE ${elementConds.join(' AND ')}` : ''}`;
    return { sql: filtered, bare, anon, where: userConds, cols: cols.length ? cols : ['__gdummy'], elems, search: search?.kind, unlessWhere, patternWhere };
  }

  // ------------------------------------------------------------------------ linear statements

  private nameIn(w: Work, n: string): boolean {
    return w.cols.some((c) => lower(c) === lower(n));
  }

  simple(sq: A.GraphSimpleQuery, input: Work | undefined, final: boolean, noReturn = false): { query: A.Query; work: Work } {
    let w: Work = input ?? { sql: 'SELECT TRUE AS __gdummy', cols: ['__gdummy'], elems: new Map() };
    let pending: { orderBy?: A.OrderByItem[]; limit?: A.Expr; offset?: A.Expr } = {};
    const wrap = (sql: string, cols: string[], elems = w.elems) => {
      w = { sql, cols, elems };
    };
    const visible = (x: Work) => x.cols.filter((c) => c !== '__gdummy');
    const star = (x: Work, alias: string) => (visible(x).length ? visible(x).map((c) => `${alias}.${q(c)}`).join(', ') : '');
    // ORDER BY / LIMIT / OFFSET statements apply to the working table where they stand.
    const flush = () => {
      if (!pending.orderBy && !pending.limit && !pending.offset) return;
      const inner = this.parse(`SELECT * FROM (${w.sql})`);
      const query: A.Query = { ...inner, ...(pending.orderBy ? { orderBy: pending.orderBy.map((o) => this.rewrite(o)) } : {}), ...(pending.limit ? { limit: pending.limit } : {}), ...(pending.offset ? { offset: pending.offset } : {}) };
      wrap(`SELECT * FROM ${this.hold(query)}`, w.cols);
      pending = {};
    };
    for (const s of sq.stmts) {
      if (s.kind !== 'GOrderBy' && s.kind !== 'GLimit') flush();
      this.elemVars = w.elems;
      this.current = w;
      switch (s.kind) {
        case 'GMatch': {
          const m = this.match(s.pattern);
          const shared = visible(m).filter((c) => this.nameIn(w, c));
          for (const c of shared) if (w.elems.has(lower(c)) !== m.elems.has(lower(c))) throw sqlError(`Variable ${c} is not a graph element in the working table`, s.loc);
          const on = shared.map((c) => `__wl.${q(c)}.__id = __wr.${q(c)}.__id`);
          const add = visible(m).filter((c) => !this.nameIn(w, c));
          const cols = [...visible(w), ...add];
          const sel = [star(w, '__wl'), ...add.map((c) => `__wr.${q(c)}`)].filter((x) => x).join(', ') || 'TRUE AS __gdummy';
          const elems = new Map(w.elems);
          for (const [k, v] of m.elems) if (!k.startsWith('__anon')) elems.set(k, v);
          // A MATCH's conditions may name variables of the working table: they filter the joined rows. An OPTIONAL
          // MATCH's conditions join the ON of its left join, where they may name the working table's variables too
          // (its own copies of the shared ones renamed away, so that each name means one column).
          const filterAfter = !s.optional && m.where.length > 0;
          const optionalOn = s.optional && m.where.length > 0;
          let right = filterAfter ? m.bare : m.sql;
          if (optionalOn) {
            right = shared.length ? `SELECT * EXCEPT (${shared.map(q).join(', ')}), ${shared.map((c, i) => `${q(c)} AS __oj${i}`).join(', ')} FROM (${m.bare})` : m.bare;
            on.splice(0, on.length, ...shared.map((c, i) => `__wl.${q(c)}.__id = __wr.__oj${i}.__id`), ...m.where.map((c) => `(${c})`));
          }
          const joinSel = filterAfter ? [sel, ...m.anon.map((a) => `__wr.${q(a)}`)].join(', ') : sel;
          const joined = `SELECT ${joinSel} FROM (${w.sql}) AS __wl ${s.optional ? 'LEFT JOIN' : 'JOIN'} (${right}) AS __wr ON ${on.length ? on.join(' AND ') : 'TRUE'}`;
          const outCols = cols.length ? cols : ['__gdummy'];
          wrap(filterAfter ? `SELECT ${outCols.map(q).join(', ')} FROM (${joined}) WHERE ${m.where.join(' AND ')}` : joined, outCols, elems);
          break;
        }
        case 'GFilter':
          wrap(`SELECT * FROM (${w.sql}) WHERE ${this.horizontal(this.arrayCols(w), () => this.ph(s.cond))}`, w.cols);
          break;
        case 'GLet': {
          const seen = new Set<string>();
          for (const d of s.defs) {
            if (this.nameIn(w, d.name) || seen.has(lower(d.name))) throw sqlError(`Variable ${d.name} has already been defined`, d.loc);
            seen.add(lower(d.name));
          }
          const elems = new Map(w.elems);
          for (const d of s.defs) if (d.expr.kind === 'PathExpr' && d.expr.parts.length === 1 && w.elems.has(lower(d.expr.parts[0]!))) elems.set(lower(d.name), w.elems.get(lower(d.expr.parts[0]!))!);
          const values = this.horizontal(this.arrayCols(w), () => s.defs.map((d) => `${this.ph(d.expr)} AS ${q(d.name)}`));
          wrap(`SELECT *, ${values.join(', ')} FROM (${w.sql})`, [...w.cols, ...s.defs.map((d) => d.name)], elems);
          break;
        }
        case 'GFor': {
          for (const n of [s.name, ...(s.offset ? [s.offset] : [])]) if (this.nameIn(w, n)) throw sqlError(`Variable ${n} has already been defined`, s.loc);
          const cols = [...visible(w), s.name, ...(s.offset ? [s.offset] : [])];
          const sel = [star(w, '__wf'), q(s.name), ...(s.offset ? [`__o AS ${q(s.offset)}`] : [])].filter((x) => x).join(', ');
          // The array is read per row of the working table: a correlated UNNEST over a spliced expression.
          wrap(`SELECT ${sel} FROM (${w.sql}) AS __wf, UNNEST(${this.ph(s.expr)}) AS ${q(s.name)}${s.offset ? ' WITH OFFSET AS __o' : ''}`, cols);
          break;
        }
        case 'GOrderBy':
          if (pending.orderBy || pending.limit || pending.offset) flush();
          pending.orderBy = s.items;
          break;
        case 'GLimit':
          if (s.offset) {
            if (pending.offset || pending.limit) flush();
            pending.offset = s.offset;
          } else {
            if (pending.limit) flush();
            pending.limit = s.limit;
          }
          break;
        case 'GReturn':
        case 'GWith': {
          if (final && s.kind === 'GReturn') {
            for (const it of s.items) {
              const bare = it.kind === 'SelectStar' ? visible(w).find((c) => w.elems.has(lower(c))) : it.expr.kind === 'PathExpr' && it.expr.parts.length === 1 && w.elems.has(lower(it.expr.parts[0]!)) ? it.expr.parts[0] : undefined;
              if (bare) throw sqlError(`Returning a graph element (${bare}) from a graph query is not supported; return its properties, or TO_JSON of it`, it.loc);
            }
          }
          const items = s.items.map((it) => (it.kind === 'SelectStar' ? (visible(w).length ? visible(w).map(q).join(', ') : '') : this.item(it))).filter((x) => x);
          if (!items.length) throw sqlError('RETURN * needs at least one column in the working table', s.loc);
          let sql = `SELECT ${s.distinct ? 'DISTINCT ' : ''}${items.join(', ')} FROM (${w.sql})`;
          if (s.groupBy) sql += s.groupBy.all ? ' GROUP BY ALL' : ` GROUP BY ${s.groupBy.items.map((e) => this.ph(e)).join(', ')}`;
          const parsed = this.parse(sql);
          const query: A.Query = { ...parsed, ...(s.orderBy ? { orderBy: s.orderBy.map((o) => this.rewrite(o)) } : {}), ...(s.limit ? { limit: s.limit } : {}), ...(s.offset ? { offset: s.offset } : {}) };
          // Output names: explicit aliases, else the last name of a path (the analyzer's implicit alias).
          const names = s.items.flatMap((it) => (it.kind === 'SelectStar' ? visible(w) : [it.alias ?? (it.expr.kind === 'PathExpr' ? it.expr.parts[it.expr.parts.length - 1]! : `$col`)]));
          const elems = new Map<string, GraphElement[]>();
          s.items.forEach((it) => {
            if (it.kind === 'SelectStar') for (const c of visible(w)) if (w.elems.has(lower(c))) elems.set(lower(c), w.elems.get(lower(c))!);
            if (it.kind === 'SelectExpr' && it.expr.kind === 'PathExpr' && it.expr.parts.length === 1 && w.elems.has(lower(it.expr.parts[0]!))) elems.set(lower(it.alias ?? it.expr.parts[0]!), w.elems.get(lower(it.expr.parts[0]!))!);
          });
          const holder = this.hold(query);
          if (s.kind === 'GReturn') return { query, work: { sql: `SELECT * FROM ${holder}`, cols: names, elems } };
          wrap(`SELECT * FROM ${holder}`, names, elems);
          break;
        }
      }
    }
    flush();
    // EXISTS { MATCH ... } / EXISTS { pattern } asks only whether rows remain.
    if (noReturn) return { query: this.resolveHolders(this.parse(`SELECT TRUE AS __x FROM (${w.sql})`)) as A.Query, work: w };
    throw sqlError('A linear graph query must end with RETURN', sq.loc);
  }

  /** Replaces `FROM __gq<n>` table references by the queries held (ORDER BY / LIMIT kept on them). */
  resolveHolders(x: unknown): unknown {
    if (Array.isArray(x)) return x.map((y) => this.resolveHolders(y));
    if (x === null || typeof x !== 'object') return x;
    const o = x as Record<string, unknown>;
    if (o.kind === 'TableRef') {
      const path = (o as unknown as { path: string[] }).path;
      const m = path.length === 1 ? /^__gq(\d+)$/.exec(path[0]!) : null;
      if (m) {
        const held = (this.slots[Number(m[1])] as unknown as { query: A.Query }).query;
        return { kind: 'SubqueryRef', loc: o.loc, query: this.resolveHolders(held), ...(o.alias ? { alias: o.alias } : {}) };
      }
    }
    const out: Record<string, unknown> = {};
    for (const k in o) out[k] = this.resolveHolders(o[k]);
    return out;
  }
}

const PATH_MODES = new Set(['WALK', 'TRAIL', 'ACYCLIC', 'SIMPLE']);

/** A path pattern's search prefix (ANY, ANY SHORTEST, ANY CHEAPEST; ALL is none) and path mode (TRAIL, ACYCLIC). */
function pathPrefix(p: A.GraphPathPattern): { search?: string; mode?: string } {
  if (!p.prefix) return {};
  const words = p.prefix.split(' ').filter((w) => w !== 'PATH' && w !== 'PATHS');
  const modes = words.filter((w) => PATH_MODES.has(w));
  const search = words.filter((w) => !PATH_MODES.has(w)).join(' ');
  // graph-patterns.md (path mode): a path has either a path mode or a path search prefix, not both.
  if (modes.length && search) throw sqlError('Path pattern with path mode and search prefix is not allowed', p.loc);
  const text = modes.length ? modes.join(' ') : search;
  if (text === 'ALL' || text === 'WALK' || text === '') return {};
  if (text === 'TRAIL' || text === 'ACYCLIC') return { mode: text };
  if (text === 'ANY' || text === 'ANY SHORTEST' || text === 'ANY CHEAPEST') return { search: text };
  throw sqlError(`The path search prefix or path mode ${p.prefix} is not supported by this emulator (served: ALL, ANY, ANY SHORTEST, ANY CHEAPEST, WALK, TRAIL, ACYCLIC)`, p.loc);
}

/**
 * graph-patterns.md (path search prefix): a variable of a path under a prefix other than ALL may be named in another
 * path of the same MATCH only where it is an endpoint of the searched path (reference resolver's wording).
 */
function checkSearchReuse(pattern: A.GraphPattern, prefixes: { search?: string }[]): void {
  const names = (els: readonly A.GraphElementPattern[], out = new Set<string>()): Set<string> => {
    for (const e of els) {
      if (e.variable) out.add(lower(e.variable));
      if (e.path) names(e.path.elements, out);
    }
    return out;
  };
  pattern.paths.forEach((path, i) => {
    const kind = prefixes[i]!.search;
    if (!kind) return;
    const els = path.elements;
    const ends = new Set([els[0], els[els.length - 1]].filter((e) => e?.kind === 'node' && e.variable && !e.quantifier).map((e) => lower(e!.variable!)));
    const others = new Set(pattern.paths.flatMap((p, j) => (j === i ? [] : [...names(p.elements)])));
    for (const v of names(els)) {
      if (!others.has(v) || ends.has(v)) continue;
      const type = kind === 'ANY' ? 'ANY' : kind === 'ANY SHORTEST' ? 'SHORTEST' : 'CHEAPEST';
      throw sqlError(`Variable \`${v}\` is inside a path under a selection prefix (\`${type}\`). It cannot be reused in other paths within the same MATCH statement, unless it is the endpoint node of such paths. Maybe use separated MATCHes for each path?`, path.loc);
    }
  });
}

/** `e` renamed `to` where a path starts with it (an element WHERE of a quantified edge, per copy). */
function renameVar<T>(x: T, from: string, to: string): T {
  if (Array.isArray(x)) return x.map((y) => renameVar(y, from, to)) as T;
  if (x === null || typeof x !== 'object') return x;
  const o = x as Record<string, unknown>;
  if (o.kind === 'PathExpr' && lower((o.parts as string[])[0]!) === lower(from)) return { ...o, parts: [to, ...(o.parts as string[]).slice(1)] } as T;
  const out: Record<string, unknown> = {};
  for (const k in o) out[k] = k === 'loc' ? o[k] : renameVar(o[k], from, to);
  return out as T;
}

/** The graph a query names, rebuilt from its CREATE statement in the catalog. */
function graphDef(an: Analyzer, gq: A.GraphQuery): GraphDef {
  const id = tableIdOf(an, gq.graph, gq.loc);
  const res = an.env.catalog.getDataset(id.projectId, id.datasetId) ? an.env.catalog.getChild('propertyGraphs', id.projectId, id.datasetId, id.tableId) : undefined;
  if (!res) throw sqlError(`Property graph not found: ${gq.graph.join('.')}`, gq.loc);
  return loadGraphDef(an, id, res);
}

/** A GQL query (GRAPH_TABLE's body, or a whole GRAPH query when `topLevel`) as an SQL query. */
export function compileGraphQuery(an: Analyzer, gq: A.GraphQuery, topLevel: boolean): A.Query {
  return new Compiler(an, graphDef(an, gq)).compile(gq, undefined, topLevel);
}
