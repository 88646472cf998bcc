// Writes a draft .sqltest of random queries for a differential run of query
// shapes against the GoogleSQL reference implementation (dev-only):
//
//   node --import tsx conformance/qfuzz.ts [--seed N] [--count N] > /tmp/q.sqltest
//   node --import tsx conformance/sqltest-ref.ts --emu /tmp/q.sqltest
//
// Each query reads two or three small tables given inline as CTEs (random rows
// with NULLs, duplicates and ties; sometimes empty) and composes joins (ON,
// USING, comma joins with UNNEST), correlated and uncorrelated subqueries,
// GROUP BY (ordinals, ROLLUP/CUBE/GROUPING SETS, GROUPING()), HAVING,
// aggregates with DISTINCT/IGNORE NULLS/ORDER BY/LIMIT, windows with frames,
// QUALIFY, set operations, derived tables, DISTINCT, * EXCEPT/REPLACE, CASE/IF/
// COALESCE and IS DISTINCT FROM over INT64/FLOAT64/NUMERIC, scalar functions
// (string, math, LIKE, CAST), SELECT AS STRUCT subqueries, PIVOT/UNPIVOT,
// a recursive CTE and named windows. The generator only
// writes deterministic queries: results compare as multisets (@unordered)
// unless the outer ORDER BY covers every column; LIMIT only under such an
// ORDER BY; order-sensitive aggregates and window functions order by every
// column they could tie on. FLOAT64 values are halves, so sums are exact.

type Ty = 'INT64' | 'STRING' | 'FLOAT64' | 'NUMERIC' | 'BOOL';
interface Col { q?: string; name: string; ty: Ty }

// mulberry32: small, seeded, reproducible.
let state = 1;
function rnd(): number {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n: number) => Math.floor(rnd() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const chance = (p: number) => rnd() < p;

const VALUES: Record<Ty, string[]> = {
  INT64: ['NULL', '1', '2', '2', '3', '0', '-1'],
  STRING: ['NULL', "'x'", "'y'", "'y'", "'z'", "''"],
  FLOAT64: ['NULL', '1.5', '-0.5', '2.0', '1.0', '0.0'],
  NUMERIC: ['NULL', "NUMERIC '1.5'", "NUMERIC '2'", "NUMERIC '-3.25'", "NUMERIC '1'"],
  BOOL: ['NULL', 'TRUE', 'FALSE'],
};

// Table shapes: t1 has an ARRAY column for UNNEST; t3 is sometimes empty.
const TABLES: Record<string, Col[]> = {
  t1: [{ name: 'a', ty: 'INT64' }, { name: 'b', ty: 'STRING' }, { name: 'c', ty: 'FLOAT64' }, { name: 'n', ty: 'NUMERIC' }],
  t2: [{ name: 'a', ty: 'INT64' }, { name: 'b', ty: 'STRING' }, { name: 'd', ty: 'INT64' }],
  t3: [{ name: 'a', ty: 'INT64' }, { name: 'c', ty: 'FLOAT64' }, { name: 'f', ty: 'BOOL' }],
};
const ARRAYS = ['[1, 2]', '[]', 'NULL', '[2, 2, 3]', '[0]'];

function tableCte(name: string): string {
  const cols = TABLES[name]!;
  const withArr = name === 't1';
  const ty = `STRUCT<${cols.map((c) => `${c.name} ${c.ty}`).join(', ')}${withArr ? ', arr ARRAY<INT64>' : ''}>`;
  const rows = name === 't3' && chance(0.25) ? 0 : 1 + int(6);
  const list: string[] = [];
  for (let i = 0; i < rows; i++) {
    // A duplicate of an earlier row now and then.
    if (i > 0 && chance(0.2)) { list.push(list[int(i)]!); continue; }
    list.push(`(${cols.map((c) => pick(VALUES[c.ty])).join(', ')}${withArr ? `, ${pick(ARRAYS)}` : ''})`);
  }
  return `${name} AS (SELECT * FROM UNNEST(ARRAY<${ty}>[${list.join(', ')}]))`;
}

const ref = (c: Col) => (c.q ? `${c.q}.${c.name}` : c.name);
const numeric = (t: Ty) => t === 'INT64' || t === 'FLOAT64' || t === 'NUMERIC';
const ofType = (scope: Col[], pred: (t: Ty) => boolean) => scope.filter((c) => pred(c.ty));

/** A random expression over the scope, of a type the caller can learn from the result. */
function expr(scope: Col[], depth: number, want?: Ty): { sql: string; ty: Ty } {
  const cols = want ? ofType(scope, (t) => t === want || (numeric(want) && numeric(t) && want !== 'INT64' && t === 'INT64')) : scope;
  if (depth <= 0 || chance(0.45)) {
    if (cols.length && chance(0.85)) {
      const c = pick(cols);
      return { sql: ref(c), ty: want ?? c.ty };
    }
    const t = want ?? pick(['INT64', 'STRING', 'FLOAT64', 'NUMERIC', 'BOOL'] as Ty[]);
    const v = pick(VALUES[t]);
    return { sql: v === 'NULL' ? `CAST(NULL AS ${t})` : v, ty: t };
  }
  const t = want ?? pick(['INT64', 'STRING', 'FLOAT64', 'NUMERIC', 'BOOL', 'INT64'] as Ty[]);
  switch (int(7)) {
    case 6:
      return scalarFunction(scope, depth, t);
    case 0:
      if (numeric(t)) {
        // Mixed INT64/FLOAT64/NUMERIC arithmetic, typed by its supertype.
        const l = expr(scope, depth - 1, t === 'INT64' ? 'INT64' : pick(['INT64', t] as Ty[]));
        const r = expr(scope, depth - 1, t);
        return { sql: `(${l.sql} ${pick(['+', '-', '*'])} ${r.sql})`, ty: t };
      }
      if (t === 'BOOL') return { sql: pred(scope, depth - 1), ty: t };
      return { sql: `CONCAT(${expr(scope, depth - 1, 'STRING').sql}, ${expr(scope, depth - 1, 'STRING').sql})`, ty: t };
    case 1:
      return { sql: `COALESCE(${expr(scope, depth - 1, t).sql}, ${expr(scope, depth - 1, t).sql})`, ty: t };
    case 2:
      return { sql: `IF(${pred(scope, depth - 1)}, ${expr(scope, depth - 1, t).sql}, ${expr(scope, depth - 1, t).sql})`, ty: t };
    case 3:
      return { sql: `CASE WHEN ${pred(scope, depth - 1)} THEN ${expr(scope, depth - 1, t).sql}${chance(0.6) ? ` ELSE ${expr(scope, depth - 1, t).sql}` : ''} END`, ty: t };
    case 4:
      return { sql: `IFNULL(${expr(scope, depth - 1, t).sql}, ${expr(scope, depth - 1, t).sql})`, ty: t };
    default:
      return { sql: scalarSubquery(scope, t), ty: t };
  }
}

/** A scalar function call of result type t (no call that can fail: divisors are non-zero constants). */
function scalarFunction(scope: Col[], depth: number, t: Ty): { sql: string; ty: Ty } {
  const a = (w: Ty) => expr(scope, depth - 1, w).sql;
  switch (t) {
    case 'STRING':
      return { sql: pick([
        () => `${pick(['UPPER', 'LOWER', 'TRIM', 'REVERSE'])}(${a('STRING')})`,
        () => `SUBSTR(${a('STRING')}, ${pick(['1', '2', '-1', '0'])}${chance(0.5) ? `, ${pick(['1', '2'])}` : ''})`,
        () => `REPLACE(${a('STRING')}, 'y', ${pick(["'q'", "''", "'yy'"])})`,
        () => `LPAD(${a('STRING')}, ${pick(['0', '1', '3'])}, '-')`,
        () => `CAST(${a(pick(['INT64', 'NUMERIC', 'BOOL'] as Ty[]))} AS STRING)`,
        () => `NULLIF(${a('STRING')}, ${a('STRING')})`,
      ])(), ty: t };
    case 'INT64':
      return { sql: pick([
        () => `${pick(['LENGTH', 'BYTE_LENGTH'])}(${a('STRING')})`,
        () => `${pick(['ABS', 'SIGN'])}(${a('INT64')})`,
        () => `${pick(['MOD', 'DIV'])}(${a('INT64')}, ${pick(['2', '3', '-2'])})`,
        () => `${pick(['GREATEST', 'LEAST'])}(${a('INT64')}, ${a('INT64')})`,
        () => `NULLIF(${a('INT64')}, ${a('INT64')})`,
        () => `CAST(${a(pick(['FLOAT64', 'NUMERIC'] as Ty[]))} AS INT64)`,
        () => `STRPOS(${a('STRING')}, ${pick(["'y'", "''", "'z'"])})`,
      ])(), ty: t };
    case 'FLOAT64':
      return { sql: pick([
        () => `SAFE_DIVIDE(${a('FLOAT64')}, ${a('INT64')})`,
        () => `${pick(['ROUND', 'FLOOR', 'CEIL', 'ABS', 'TRUNC'])}(${a('FLOAT64')})`,
        () => `${pick(['GREATEST', 'LEAST'])}(${a('FLOAT64')}, ${a(pick(['INT64', 'FLOAT64'] as Ty[]))})`,
      ])(), ty: t };
    case 'NUMERIC':
      return { sql: pick([
        () => `ROUND(${a('NUMERIC')}, ${pick(['0', '1'])})`,
        () => `${pick(['ABS', 'FLOOR', 'CEIL', 'TRUNC'])}(${a('NUMERIC')})`,
        () => `${pick(['GREATEST', 'LEAST'])}(${a('NUMERIC')}, ${a(pick(['INT64', 'NUMERIC'] as Ty[]))})`,
      ])(), ty: t };
    default:
      return { sql: pick([
        () => `${a('STRING')} ${chance(0.3) ? 'NOT ' : ''}LIKE ${pick(["'y%'", "'%'", "'_'", "''"])}`,
        () => `STARTS_WITH(${a('STRING')}, ${pick(["'y'", "''"])})`,
        () => `${a('INT64')} ${chance(0.3) ? 'NOT ' : ''}BETWEEN ${a('INT64')} AND ${a('INT64')}`,
      ])(), ty: 'BOOL' };
  }
}

/** A predicate: comparisons across numeric types, IS [NOT] DISTINCT FROM, IN, EXISTS, AND/OR/NOT. */
function pred(scope: Col[], depth: number): string {
  const k = int(depth > 0 ? 10 : 5);
  const cmpTy = (): Ty => pick(['INT64', 'STRING', 'FLOAT64', 'NUMERIC', 'INT64'] as Ty[]);
  switch (k) {
    case 0: case 1: {
      const t = cmpTy();
      const l = expr(scope, depth - 1, t);
      // The other side of a numeric comparison may be any numeric type.
      const r = expr(scope, depth - 1, numeric(t) ? pick(['INT64', 'FLOAT64', 'NUMERIC'] as Ty[]) : t);
      return `${l.sql} ${pick(['=', '<', '>', '<=', '>=', '!='])} ${r.sql}`;
    }
    case 2: {
      const t = cmpTy();
      return `${expr(scope, depth - 1, t).sql} IS ${chance(0.5) ? 'NOT ' : ''}DISTINCT FROM ${expr(scope, depth - 1, numeric(t) ? pick(['INT64', 'FLOAT64', 'NUMERIC'] as Ty[]) : t).sql}`;
    }
    case 3: {
      const c = scope.length ? pick(scope) : undefined;
      return c ? `${ref(c)} IS ${chance(0.5) ? 'NOT ' : ''}NULL` : 'TRUE';
    }
    case 4: {
      const t = cmpTy();
      const vals = [0, 1, 2].map(() => pick(VALUES[t]));
      return `${expr(scope, depth - 1, t).sql} ${chance(0.3) ? 'NOT ' : ''}IN (${vals.join(', ')})`;
    }
    case 5: {
      // IN / NOT IN a (possibly correlated) subquery: NULL semantics of NOT IN.
      const t = pick(['INT64', 'STRING'] as Ty[]);
      return `${expr(scope, depth - 1, t).sql} ${chance(0.4) ? 'NOT ' : ''}IN (${columnSubquery(scope, t)})`;
    }
    case 6: {
      const { from, inner } = subFrom();
      const corr = scope.length && chance(0.7) ? correlation(inner, scope) : undefined;
      return `${chance(0.3) ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${from}${corr ? ` WHERE ${corr}` : ''})`;
    }
    case 7: {
      // Over a t1 row's array: IN UNNEST, or a correlated EXISTS over its elements.
      const arrs = [...new Set(scope.filter((c) => c.q?.startsWith('t1_')).map((c) => c.q!))];
      if (arrs.length && chance(0.5)) {
        const q = pick(arrs);
        return chance(0.5)
          ? `${expr(scope, depth - 1, 'INT64').sql} ${chance(0.3) ? 'NOT ' : ''}IN UNNEST(${q}.arr)`
          : `EXISTS (SELECT 1 FROM UNNEST(${q}.arr) AS e WITH OFFSET AS p WHERE e ${pick(['=', '>', 'IS DISTINCT FROM'])} ${expr(scope, depth - 1, 'INT64').sql}${chance(0.3) ? ' AND p > 0' : ''})`;
      }
      return `(${pred(scope, depth - 1)} ${pick(['AND', 'OR'])} ${pred(scope, depth - 1)})`;
    }
    case 8: return `NOT (${pred(scope, depth - 1)})`;
    default: {
      const c = ofType(scope, (t) => t === 'BOOL');
      return c.length ? ref(pick(c)) : `${expr(scope, depth - 1, 'INT64').sql} BETWEEN ${pick(VALUES.INT64)} AND ${pick(VALUES.INT64)}`;
    }
  }
}

let subSeq = 0;
/** A base table under a fresh alias, for subqueries. */
function subFrom(): { from: string; inner: Col[] } {
  const t = pick(Object.keys(TABLES));
  const q = `s${++subSeq}`;
  return { from: `${t} AS ${q}`, inner: TABLES[t]!.map((c) => ({ ...c, q })) };
}

/** An equality between an inner and an outer column of comparable types, when there is one. */
function correlation(inner: Col[], outer: Col[]): string | undefined {
  const pairs = inner.flatMap((i) => outer.filter((o) => o.ty === i.ty || (numeric(o.ty) && numeric(i.ty))).map((o) => [i, o] as const));
  if (!pairs.length) return undefined;
  const [i, o] = pick(pairs);
  return `${ref(i)} ${chance(0.8) ? '=' : '<'} ${ref(o)}`;
}

/** A scalar subquery that returns at most one row: an aggregate, or LIMIT 1 under a total order. */
function scalarSubquery(outer: Col[], t: Ty): string {
  const { from, inner } = subFrom();
  const corr = outer.length && chance(0.6) ? correlation(inner, outer) : undefined;
  const where = corr ? ` WHERE ${corr}` : '';
  if (t === 'BOOL') return `(SELECT LOGICAL_OR(${pred(inner, 0)}) FROM ${from}${where})`;
  const e = expr(inner, 1, t).sql;
  // An ARRAY subquery, read back as its length or (in a total order) as text: its NULL elements are kept.
  if (t === 'INT64' && chance(0.15)) return `ARRAY_LENGTH(ARRAY(SELECT ${e} FROM ${from}${where}))`;
  if (t === 'STRING' && chance(0.2)) return `ARRAY_TO_STRING(ARRAY(SELECT IFNULL(${e}, 'N') FROM ${from}${where} ORDER BY ${totalOrder(inner, [])}), ',')`;
  if (chance(0.3)) return `(SELECT ${e} AS v FROM ${from}${where} ORDER BY ${totalOrder(inner, [e])} LIMIT 1)`;
  // A STRUCT row, one field read back.
  if (chance(0.15)) return `(SELECT AS STRUCT ${e} AS v, ${expr(inner, 1).sql} AS w FROM ${from}${where} ORDER BY ${totalOrder(inner, [e])} LIMIT 1).v`;
  const agg = t === 'STRING' ? pick(['MIN', 'MAX']) : numeric(t) && t !== 'INT64' ? pick(['MIN', 'MAX', 'SUM']) : pick(['MIN', 'MAX', 'SUM', 'COUNT']);
  return agg === 'COUNT' ? `(SELECT COUNT(${chance(0.5) ? 'DISTINCT ' : ''}${e}) FROM ${from}${where})` : `(SELECT ${agg}(${e}) FROM ${from}${where})`;
}

function columnSubquery(outer: Col[], t: Ty): string {
  const { from, inner } = subFrom();
  const corr = outer.length && chance(0.4) ? correlation(inner, outer) : undefined;
  return `SELECT ${expr(inner, 1, t).sql} FROM ${from}${corr ? ` WHERE ${corr}` : ''}`;
}

/** ORDER BY keys that leave no ties between rows that differ: the given keys, then every scope column. */
function totalOrder(scope: Col[], first: string[]): string {
  const keys = [...first, ...scope.map(ref).filter((k) => !first.includes(k))];
  // t1 rows may differ only in their array column.
  for (const q of new Set(scope.filter((c) => c.q?.startsWith('t1_')).map((c) => c.q))) keys.push(`TO_JSON_STRING(${q}.arr)`);
  return keys.map((k) => `${k}${chance(0.5) ? ' DESC' : ''}${chance(0.3) ? pick([' NULLS FIRST', ' NULLS LAST']) : ''}`).join(', ');
}

let aliasSeq = 0;
/** A FROM clause and the columns it brings into scope. `arrays` says whether an UNNEST alias may appear. */
function fromClause(depth: number): { sql: string; scope: Col[] } {
  const k = int(depth > 0 ? 13 : 4);
  if (k === 10) return pivotFrom();
  if (k === 11) return unpivotFrom();
  if (k === 12) return recursiveFrom();
  if (k <= 3) {
    const t = pick(Object.keys(TABLES));
    const q = `${t}_${++aliasSeq}`;
    const scope = TABLES[t]!.map((c) => ({ ...c, q }));
    if (t === 't1' && chance(0.3)) {
      // Comma join with UNNEST of the array column (a correlated join), sometimes LEFT JOIN UNNEST with the offset.
      const u = `u${aliasSeq}`;
      if (chance(0.5)) return { sql: `${t} AS ${q}, UNNEST(${q}.arr) AS ${u}`, scope: [...scope, { name: u, ty: 'INT64' }] };
      return { sql: `${t} AS ${q} LEFT JOIN UNNEST(${q}.arr) AS ${u} WITH OFFSET AS o${aliasSeq}`, scope: [...scope, { name: u, ty: 'INT64' }, { name: `o${aliasSeq}`, ty: 'INT64' }] };
    }
    return { sql: `${t} AS ${q}`, scope };
  }
  if (k <= 7) {
    const l0 = fromClause(depth - 1);
    // A comma join followed by JOIN must be parenthesized.
    const l = { ...l0, sql: /^\w+ AS \w+, UNNEST/.test(l0.sql) ? paren(l0.sql) : l0.sql };
    const r = fromClause(depth - 1);
    const kind = pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN', 'CROSS JOIN', 'INNER JOIN', 'LEFT OUTER JOIN']);
    if (kind === 'CROSS JOIN') return { sql: `${l.sql} CROSS JOIN ${paren(r.sql)}`, scope: [...l.scope, ...r.scope] };
    const eqs = l.scope.flatMap((a) => r.scope.filter((b) => a.ty === b.ty || (numeric(a.ty) && numeric(b.ty))).map((b) => [a, b] as const));
    if (!eqs.length) return { sql: `${l.sql} CROSS JOIN ${paren(r.sql)}`, scope: [...l.scope, ...r.scope] };
    const [a, b] = pick(eqs);
    // The service wants an equality in a FULL/RIGHT join condition; extra conditions are ANDed on.
    const extra = chance(0.3) ? ` AND ${pred([...l.scope, ...r.scope], 0)}` : '';
    return { sql: `${l.sql} ${kind} ${paren(r.sql)} ON ${ref(a)} = ${ref(b)}${extra}`, scope: [...l.scope, ...r.scope] };
  }
  if (k === 8) {
    // USING over two base tables that share a column name.
    const [x, y] = pick([['t1', 't2'], ['t1', 't3'], ['t2', 't3'], ['t2', 't1']] as const);
    const qx = `${x}_${++aliasSeq}`, qy = `${y}_${++aliasSeq}`;
    const shared = TABLES[x]!.filter((c) => TABLES[y]!.some((d) => d.name === c.name && d.ty === c.ty));
    const on = pick(shared);
    const kind = pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN']);
    const scope: Col[] = [
      { name: on.name, ty: on.ty },
      ...TABLES[x]!.filter((c) => c.name !== on.name).map((c) => ({ ...c, q: qx })),
      ...TABLES[y]!.filter((c) => c.name !== on.name).map((c) => ({ ...c, q: qy })),
    ];
    return { sql: `${x} AS ${qx} ${kind} ${y} AS ${qy} USING (${on.name})`, scope };
  }
  // A derived table: a whole query, its columns under a new alias.
  const q = query(depth - 1, false);
  const d = `d${++aliasSeq}`;
  return { sql: `(${q.sql}) AS ${d}`, scope: q.cols.map((c) => ({ name: c.name, ty: c.ty, q: d })) };
}
const aggType = (agg: string, t: Ty): Ty => (agg === 'COUNT' ? 'INT64' : agg === 'AVG' ? (t === 'NUMERIC' ? 'NUMERIC' : 'FLOAT64') : t);

/** PIVOT over a base table's columns: the rest of the input's columns group; one column per IN value. */
function pivotFrom(): { sql: string; scope: Col[] } {
  const t = pick(Object.keys(TABLES));
  const cols = TABLES[t]!;
  const keys = cols.filter((c) => c.ty === 'INT64' || c.ty === 'STRING' || c.ty === 'BOOL');
  const p = pick(keys);
  const v = pick(cols.filter((c) => c !== p));
  const groups = cols.filter((c) => c !== p && c !== v && c.ty !== 'FLOAT64' && chance(0.6));
  const agg = numeric(v.ty) ? pick(['SUM', 'MIN', 'MAX', 'COUNT', 'AVG']) : pick(['MIN', 'MAX', 'COUNT']);
  const vals = [...new Set([0, 1, 2].map(() => pick(VALUES[p.ty].filter((x) => x !== 'NULL'))))];
  const q = `q${++aliasSeq}`, d = `d${aliasSeq}`;
  const inner = [...groups, p, v].map((c) => c.name).join(', ');
  const where = chance(0.3) ? ` WHERE ${pred(cols.map((c) => ({ ...c, q })), 0)}` : '';
  const ins = vals.map((x, i) => `${x} AS p${i}`).join(', ');
  const ty = aggType(agg, v.ty);
  const scope: Col[] = [...groups.map((c) => ({ ...c, q: d })), ...vals.map((_, i) => ({ name: `p${i}`, ty, q: d }))];
  return { sql: `(SELECT ${inner} FROM ${t} AS ${q}${where}) PIVOT(${agg}(${v.name}) FOR ${p.name} IN (${ins})) AS ${d}`, scope };
}

/** UNPIVOT of two same-typed expressions of a base table's row, NULLs kept or not. */
function unpivotFrom(): { sql: string; scope: Col[] } {
  const t = pick(Object.keys(TABLES));
  const q = `q${++aliasSeq}`, d = `d${aliasSeq}`;
  const scope0 = TABLES[t]!.map((c) => ({ ...c, q }));
  const ty = pick(['INT64', 'STRING', 'NUMERIC'] as Ty[]);
  const keep = TABLES[t]!.filter((c) => c.name === 'a');
  const labels = chance(0.4);
  // Each unpivoted column is computed: the reference treats two aliases of one input column (or of a kept
  // column) as the same column and refuses or drops it (its resolver's TODO in UNPIVOT).
  const u = () => { const e = `CAST(${expr(scope0, 1, ty).sql} AS ${ty})`; return `IFNULL(${e}, ${e})`; };
  const body = `(SELECT ${keep.map((c) => `${c.name}, `).join('')}${u()} AS u1, ${u()} AS u2 FROM ${t} AS ${q})`;
  const ins = labels ? "u1 AS 'one', u2 AS 'two'" : 'u1, u2';
  const nulls = pick(['', ' INCLUDE NULLS', ' EXCLUDE NULLS']);
  return { sql: `${body} UNPIVOT${nulls} (v FOR k IN (${ins})) AS ${d}`, scope: [...keep.map((c) => ({ ...c, q: d })), { name: 'v', ty, q: d }, { name: 'k', ty: 'STRING', q: d }] };
}

/** The query's recursive CTE `r`, if it reads one (the service allows WITH RECURSIVE only at the top level). */
let recursive: { cte: string; ty: Ty } | undefined;

/** A read of the recursive CTE `r`: chains that grow from t2's rows, sometimes through a join with t3. */
function recursiveFrom(): { sql: string; scope: Col[] } {
  const d = `d${++aliasSeq}`;
  if (!recursive) {
    const q = `q${aliasSeq}`;
    const base = TABLES.t2!.map((c) => ({ ...c, q }));
    const ty = pick(['INT64', 'STRING'] as Ty[]);
    const join = chance(0.5);
    const rs: Col[] = [{ name: 'n', ty: 'INT64', q: 'r' }, { name: 's', ty, q: 'r' }, ...(join ? TABLES.t3!.map((c) => ({ ...c, q: 'j' })) : [])];
    const step = `SELECT r.n + 1, ${expr(rs, 1, ty).sql} FROM r${join ? ' JOIN t3 AS j ON r.n = j.a' : ''} WHERE r.n < 3`;
    recursive = { cte: `r AS (SELECT a AS n, ${expr(base, 1, ty).sql} AS s FROM t2 AS ${q} WHERE a IS NOT NULL UNION ALL ${step})`, ty };
  }
  return { sql: `r AS ${d}`, scope: [{ name: 'n', ty: 'INT64', q: d }, { name: 's', ty: recursive.ty, q: d }] };
}

// The right side of a JOIN: a join in parentheses, where the reference wants CROSS JOIN for a comma.
const paren = (s: string) => (/ JOIN |^\w+ AS \w+, UNNEST/.test(s) && !/^\(.*\) AS d\d+$/.test(s) ? `(${s.replace(', UNNEST', ' CROSS JOIN UNNEST')})` : s);

interface Q { sql: string; cols: Col[] }

function selectList(scope: Col[], n: number): { items: string[]; cols: Col[] } {
  const items: string[] = [], cols: Col[] = [];
  for (let i = 0; i < n; i++) {
    const e = expr(scope, 2);
    const name = `c${i}`;
    items.push(`${e.sql} AS ${name}`);
    cols.push({ name, ty: e.ty });
  }
  return { items, cols };
}

/** An aggregate call over the scope; the result type. */
function aggregate(scope: Col[]): { sql: string; ty: Ty } {
  const num = ofType(scope, numeric), str = ofType(scope, (t) => t === 'STRING');
  switch (int(9)) {
    case 0: return { sql: chance(0.5) ? 'COUNT(*)' : `COUNT(${chance(0.5) ? 'DISTINCT ' : ''}${expr(scope, 1).sql})`, ty: 'INT64' };
    case 1: if (num.length) { const c = pick(num); return { sql: `SUM(${chance(0.3) ? 'DISTINCT ' : ''}${ref(c)})`, ty: c.ty }; } return { sql: 'COUNT(*)', ty: 'INT64' };
    case 2: { const e = expr(scope, 1); return { sql: `${pick(['MIN', 'MAX'])}(${e.sql})`, ty: e.ty }; }
    case 3: if (num.length) { const c = pick(num); return { sql: `AVG(${chance(0.3) ? 'DISTINCT ' : ''}${ref(c)})`, ty: c.ty === 'NUMERIC' ? 'NUMERIC' : 'FLOAT64' }; } return { sql: 'COUNT(*)', ty: 'INT64' };
    case 4: return { sql: `COUNTIF(${pred(scope, 1)})`, ty: 'INT64' };
    case 5: return { sql: `${pick(['LOGICAL_AND', 'LOGICAL_OR'])}(${pred(scope, 0)})`, ty: 'BOOL' };
    case 6: if (str.length) {
      // Ordered by the aggregated value itself, equal values are interchangeable.
      const c = ref(pick(str));
      const d = chance(0.3);
      return { sql: `STRING_AGG(${d ? 'DISTINCT ' : ''}${c}, ',' ORDER BY ${c}${chance(0.5) ? ' DESC' : ''}${chance(0.3) ? ' LIMIT 2' : ''})`, ty: 'STRING' };
    } return { sql: 'COUNT(*)', ty: 'INT64' };
    case 7: {
      // An ARRAY result cannot hold NULL, so IGNORE NULLS; read back as its length and a joined text.
      const c = scope.length ? ref(pick(scope)) : '1';
      const tail = ` IGNORE NULLS ORDER BY ${c}${chance(0.5) ? ' DESC' : ''}${chance(0.4) ? ` LIMIT ${1 + int(3)}` : ''})`;
      // DISTINCT wants the ORDER BY to be the argument itself, so the text form has none.
      return chance(0.5) ? { sql: `ARRAY_LENGTH(ARRAY_AGG(${chance(0.3) ? 'DISTINCT ' : ''}${c}${tail})`, ty: 'INT64' } : { sql: `ARRAY_TO_STRING(ARRAY_AGG(CAST(${c} AS STRING)${tail}, '|')`, ty: 'STRING' };
    }
    default: return { sql: `COUNT(DISTINCT ${scope.length ? ref(pick(scope)) : '1'})`, ty: 'INT64' };
  }
}

function whereClause(scope: Col[]): string {
  return chance(0.4) ? ` WHERE ${pred(scope, 2)}` : '';
}

/** SELECT [DISTINCT] expressions [WHERE]. */
function plainQuery(depth: number): Q {
  const f = fromClause(depth);
  if (chance(0.15)) {
    // SELECT * EXCEPT / REPLACE over a single base table: names of the table.
    const t = pick(Object.keys(TABLES));
    const q = `${t}_${++aliasSeq}`;
    const cols = TABLES[t]!;
    const drop = pick(cols);
    const rep = pick(cols.filter((c) => c !== drop));
    const repl = expr(cols.map((c) => ({ ...c, q })), 1, rep.ty).sql;
    const kept = cols.filter((c) => c !== drop);
    return { sql: `SELECT${chance(0.2) ? ' DISTINCT' : ''} * EXCEPT (${drop.name}${t === 't1' ? ', arr' : ''}) REPLACE (${repl} AS ${rep.name}) FROM ${t} AS ${q}${whereClause(cols.map((c) => ({ ...c, q })))}`, cols: kept.map((c) => ({ name: c.name, ty: c.ty })) };
  }
  const s = selectList(f.scope, 1 + int(3));
  return { sql: `SELECT${chance(0.2) ? ' DISTINCT' : ''} ${s.items.join(', ')} FROM ${f.sql}${whereClause(f.scope)}`, cols: s.cols };
}

/** GROUP BY keys (by expression or ordinal, or ROLLUP/CUBE/GROUPING SETS), aggregates, HAVING. */
function groupQuery(depth: number): Q {
  const f = fromClause(depth);
  const nk = int(3);
  const keys: { sql: string; ty: Ty }[] = [];
  for (let i = 0; i < nk; i++) keys.push(chance(0.7) && f.scope.length ? (() => { const c = pick(f.scope); return { sql: ref(c), ty: c.ty }; })() : expr(f.scope, 1));
  const items = keys.map((k, i) => `${k.sql} AS k${i}`);
  const cols: Col[] = keys.map((k, i) => ({ name: `k${i}`, ty: k.ty }));
  const na = 1 + int(2);
  for (let i = 0; i < na; i++) {
    const a = aggregate(f.scope);
    items.push(`${a.sql} AS g${i}`);
    cols.push({ name: `g${i}`, ty: a.ty });
  }
  let having = '';
  if (chance(0.35)) {
    const a = aggregate(f.scope);
    having = a.ty === 'BOOL' ? ` HAVING ${a.sql}` : numeric(a.ty) ? ` HAVING ${a.sql} ${pick(['>', '<=', '='])} ${pick(['0', '1', '2', '1.5'])}` : ` HAVING ${a.sql} IS NOT NULL`;
  }
  let group = '';
  if (nk) {
    // The packaged reference refuses a select item matched to an expression key when there is a HAVING
    // clause, and one matched to a subquery key at all: such keys are named by ordinal.
    const byOrdinal = (k: { sql: string }) => chance(0.4) || k.sql.includes('(SELECT') || (having !== '' && !/^[\w.]+$/.test(k.sql));
    const refs = keys.map((k, i) => (byOrdinal(k) ? String(i + 1) : k.sql));
    // The packaged reference evaluates none of ROLLUP, CUBE, GROUPING SETS, GROUPING().
    group = ` GROUP BY ${refs.join(', ')}`;
  }
  if (chance(0.25)) {
    // A window over the groups: an aggregate of an aggregate, or a rank by one; ties get equal answers. Ordered
    // by an aggregate or a grouped column: the packaged reference matches no expression key there.
    const exprs = items.map((it) => it.replace(/ AS \w+$/, ''));
    const by = `${pick(exprs.filter((x, i) => i >= nk || /^[\w.]+$/.test(x)))}${chance(0.5) ? ' DESC' : ''}`;
    items.push(chance(0.5) ? `SUM(COUNT(*)) OVER (ORDER BY ${by}) AS wg` : `DENSE_RANK() OVER (ORDER BY ${by}) AS wg`);
    cols.push({ name: 'wg', ty: 'INT64' });
  }
  return { sql: `SELECT ${items.join(', ')} FROM ${f.sql}${whereClause(f.scope)}${group}${having}`, cols };
}

/** Window functions over PARTITION BY / ORDER BY / frames, with QUALIFY now and then. */
function windowQuery(depth: number): Q {
  const f = fromClause(depth);
  const s = selectList(f.scope, 1 + int(2));
  // FLOAT64 partition keys are refused (both error), so rarely.
  const pk = ofType(f.scope, (t) => t !== 'FLOAT64' || chance(0.1));
  const part = pk.length && chance(0.6) ? `PARTITION BY ${ref(pick(pk))}` : '';
  const num = ofType(f.scope, numeric);
  const okey = f.scope.length ? ref(pick(f.scope)) : '1';
  const okeyDir = `${okey}${chance(0.4) ? ' DESC' : ''}${chance(0.3) ? pick([' NULLS FIRST', ' NULLS LAST']) : ''}`;
  let w: { sql: string; ty: Ty };
  switch (int(7)) {
    // Functions that give tied rows equal answers: any ORDER BY.
    case 0: w = { sql: `${pick(['RANK', 'DENSE_RANK'])}() OVER (${part} ORDER BY ${okeyDir})`, ty: 'INT64' }; break;
    case 1: w = { sql: `${pick(['PERCENT_RANK', 'CUME_DIST'])}() OVER (${part} ORDER BY ${okeyDir})`, ty: 'FLOAT64' }; break;
    case 2: {
      const c = num.length ? pick(num) : undefined;
      const agg = c ? `${pick(['SUM', 'MIN', 'MAX', 'COUNT'])}(${ref(c)})` : 'COUNT(*)';
      const ty: Ty = c && !agg.startsWith('COUNT') ? c.ty : 'INT64';
      const frame = chance(0.5) && !okey.match(/^\d/) && numeric(f.scope.find((x) => ref(x) === okey)?.ty ?? 'STRING')
        ? ` RANGE BETWEEN ${pick(['UNBOUNDED PRECEDING', '1 PRECEDING', 'CURRENT ROW'])} AND ${pick(['CURRENT ROW', '1 FOLLOWING', 'UNBOUNDED FOLLOWING'])}`
        : '';
      w = { sql: `${agg} OVER (${part}${chance(0.7) ? ` ORDER BY ${okeyDir}${frame}` : ''})`, ty };
      break;
    }
    // Functions that tell tied rows apart: ORDER BY every column, so only identical rows tie.
    case 3: w = { sql: `ROW_NUMBER() OVER (${part} ORDER BY ${totalOrder(f.scope, [])})`, ty: 'INT64' }; break;
    case 4: {
      const e = expr(f.scope, 1);
      w = { sql: `${pick(['LAG', 'LEAD', 'FIRST_VALUE', 'LAST_VALUE'])}(${e.sql}) OVER (${part} ORDER BY ${totalOrder(f.scope, [])})`, ty: e.ty };
      break;
    }
    case 5: {
      const c = num.length ? pick(num) : undefined;
      const frame = `ROWS BETWEEN ${pick(['UNBOUNDED PRECEDING', '1 PRECEDING', 'CURRENT ROW'])} AND ${pick(['CURRENT ROW', '1 FOLLOWING', '2 FOLLOWING', 'UNBOUNDED FOLLOWING'])}`;
      w = { sql: `${c ? `SUM(${ref(c)})` : 'COUNT(*)'} OVER (${part} ORDER BY ${totalOrder(f.scope, [])} ${frame})`, ty: c?.ty ?? 'INT64' };
      break;
    }
    default: w = { sql: `NTILE(${1 + int(3)}) OVER (${part} ORDER BY ${totalOrder(f.scope, [])})`, ty: 'INT64' };
  }
  // A named window holding the PARTITION BY, which the call's own OVER extends.
  let named = '';
  if (part && chance(0.3)) {
    w = { ...w, sql: w.sql.replace(`OVER (${part}`, 'OVER (wn') };
    named = ` WINDOW wn AS (${part})`;
  }
  const qualify = chance(0.3) ? ` QUALIFY ${w.sql} ${pick(['=', '<=', '>'])} 1` : '';
  return { sql: `SELECT ${s.items.join(', ')}, ${w.sql} AS w FROM ${f.sql}${whereClause(f.scope)}${qualify}${named}`, cols: [...s.cols, { name: 'w', ty: w.ty }] };
}

/** Two queries of the same column types joined by a set operation. */
function setQuery(depth: number): Q {
  const l = query(depth - 1, false);
  // The right side: a plain query made to the left's types.
  const f = fromClause(depth - 1);
  const items = l.cols.map((c) => `${expr(f.scope, 1, c.ty).sql}`);
  const r = `SELECT ${items.join(', ')} FROM ${f.sql}${whereClause(f.scope)}`;
  // ALL is UNION's only (query-syntax.md, Set operators).
  const op = pick(['UNION ALL', 'UNION DISTINCT', 'INTERSECT DISTINCT', 'EXCEPT DISTINCT', 'UNION ALL', 'INTERSECT DISTINCT', 'EXCEPT DISTINCT']);
  const floats = l.cols.some((c) => c.ty === 'FLOAT64');
  // Set operations that compare rows need groupable columns; FLOAT64 is groupable, so nothing to avoid.
  void floats;
  return { sql: `(${l.sql}) ${op} (${r})`, cols: l.cols };
}

function query(depth: number, top: boolean): Q {
  const k = int(10);
  const q = k < 3 ? plainQuery(depth) : k < 6 ? groupQuery(depth) : k < 8 ? windowQuery(depth) : depth > 0 ? setQuery(depth) : plainQuery(depth);
  if (!top && chance(0.15)) {
    // A derived table's own ORDER BY + LIMIT, over every column so the kept rows are determined.
    const outer = q.cols.map((c) => ({ name: c.name, ty: c.ty }));
    return { sql: `SELECT * FROM (${q.sql}) ORDER BY ${totalOrder(outer, [])} LIMIT ${int(4)}${chance(0.3) ? ` OFFSET ${int(2)}` : ''}`, cols: q.cols };
  }
  return q;
}

function main(): void {
  const args = process.argv.slice(2);
  const arg = (name: string, d: number) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : d; };
  const seed = arg('--seed', 1), count = arg('--count', 200);
  state = seed;
  const out: string[] = [`# qfuzz --seed ${seed} --count ${count}`];
  for (let i = 0; i < count; i++) {
    subSeq = 0; aliasSeq = 0; recursive = undefined;
    const q = query(2, true);
    // query() may have set it (TypeScript's narrowing cannot see that).
    const rec = recursive as { cte: string } | undefined;
    const ctes = [...Object.keys(TABLES).map(tableCte), ...(rec ? [rec.cte] : [])].join(',\n     ');
    const ordered = chance(0.3);
    const tail = ordered ? `\nORDER BY ${totalOrder(q.cols.map((c) => ({ name: c.name, ty: c.ty })), [])}${chance(0.5) ? ` LIMIT ${int(5)}${chance(0.3) ? ` OFFSET ${int(3)}` : ''}` : ''}` : '';
    const body = ordered ? `SELECT * FROM (${q.sql})${tail}` : q.sql;
    out.push(`=== q${seed}-${i}${ordered ? '' : '\n@unordered'}\n--- query\nWITH ${rec ? 'RECURSIVE ' : ''}${ctes}\n${body}\n`);
  }
  console.log(out.join('\n'));
}

main();
