// Rewrites the GoogleSQL used by the bench cases into DuckDB's dialect, so the
// same case can be timed on DuckDB as a reference engine in the same run.
//
// Not a parser: a quote- and paren-aware scanner that rewrites function calls
// through a small rule table (FUNCTION_RULES) plus two special forms
// (`UNNEST(...) AS x` and `TIMESTAMP '... UTC'`). The table is driven by what
// /work/shared/bench/cases actually use; anything it cannot express goes into
// bench/duckdb-overrides.yaml instead of a cleverer rewrite.

/** GoogleSQL type name → DuckDB type name, for CAST / SAFE_CAST. */
const TYPE_MAP: Readonly<Record<string, string>> = {
  INT64: 'BIGINT',
  INTEGER: 'BIGINT',
  FLOAT64: 'DOUBLE',
  FLOAT: 'DOUBLE',
  STRING: 'VARCHAR',
  BOOL: 'BOOLEAN',
  BOOLEAN: 'BOOLEAN',
  BYTES: 'BLOB',
  NUMERIC: 'DECIMAL(38, 9)',
  BIGNUMERIC: 'DECIMAL(38, 9)', // DuckDB tops out at 38 digits; close enough for timing
  DATE: 'DATE',
  DATETIME: 'TIMESTAMP',
  TIMESTAMP: 'TIMESTAMP', // cases treat TIMESTAMP as UTC wall time; naive is equivalent
  TIME: 'TIME',
  JSON: 'JSON',
};

export function translateType(bqType: string): string {
  const t = bqType.trim();
  return TYPE_MAP[t.toUpperCase()] ?? t;
}

type Rule = (args: string[], name: string) => string;

/** `INTERVAL <expr> <UNIT>` → DuckDB `INTERVAL (<expr>) <UNIT>` (expr may be any expression). */
function interval(arg: string): { expr: string; unit: string } {
  const m = /^\s*INTERVAL\s+([\s\S]+?)\s+([A-Za-z_]+)\s*$/i.exec(arg);
  if (!m) throw new Error(`cannot translate interval argument: ${arg.trim()}`);
  return { expr: m[1]!.trim(), unit: m[2]!.toUpperCase() };
}

function arity(name: string, args: string[], n: number): void {
  if (args.length !== n) throw new Error(`${name} expects ${n} arguments, got ${args.length}`);
}

function dateArith(op: '+' | '-', castTo: string | null): Rule {
  return (args, name) => {
    arity(name, args, 2);
    const { expr, unit } = interval(args[1]!);
    const sum = `${args[0]!.trim()} ${op} INTERVAL (${expr}) ${unit}`;
    // DuckDB's DATE ± INTERVAL yields TIMESTAMP; BigQuery keeps DATE.
    return castTo ? `CAST(${sum} AS ${castTo})` : `(${sum})`;
  };
}

function castRule(duckName: string): Rule {
  return (args, name) => {
    arity(name, args, 1);
    const m = /^([\s\S]*)\s+AS\s+([A-Za-z0-9_]+(?:\s*\([^)]*\))?)\s*$/i.exec(args[0]!);
    if (!m) throw new Error(`cannot translate ${name}(${args[0]})`);
    return `${duckName}(${m[1]!.trim()} AS ${translateType(m[2]!)})`;
  };
}

const FUNCTION_RULES: Readonly<Record<string, Rule>> = {
  CAST: castRule('CAST'),
  SAFE_CAST: castRule('TRY_CAST'),
  IF: (a, n) => (arity(n, a, 3), `(CASE WHEN ${a[0]!.trim()} THEN ${a[1]!.trim()} ELSE ${a[2]!.trim()} END)`),
  COUNTIF: (a, n) => (arity(n, a, 1), `count_if(${a[0]!.trim()})`),
  SAFE_DIVIDE: (a, n) => (arity(n, a, 2), `(CASE WHEN (${a[1]!.trim()}) = 0 THEN NULL ELSE (${a[0]!.trim()}) / (${a[1]!.trim()}) END)`),
  TIMESTAMP_ADD: dateArith('+', null),
  TIMESTAMP_SUB: dateArith('-', null),
  DATETIME_ADD: dateArith('+', null),
  DATETIME_SUB: dateArith('-', null),
  DATE_ADD: dateArith('+', 'DATE'),
  DATE_SUB: dateArith('-', 'DATE'),
  // Scalar context (UNNEST context is handled separately): inclusive bounds in both.
  GENERATE_ARRAY: (a) => `generate_series(${a.map((x) => x.trim()).join(', ')})`,
  FORMAT_DATE: (a, n) => (arity(n, a, 2), `strftime(${a[1]!.trim()}, ${a[0]!.trim()})`),
  FORMAT_TIMESTAMP: (a, n) => (arity(n, a, 2), `strftime(${a[1]!.trim()}, ${a[0]!.trim()})`),
  ARRAY_LENGTH: (a, n) => (arity(n, a, 1), `len(${a[0]!.trim()})`),
  DIV: (a, n) => (arity(n, a, 2), `((${a[0]!.trim()}) // (${a[1]!.trim()}))`),
  // GoogleSQL's FORMAT takes printf-style specifiers, as DuckDB's printf does.
  FORMAT: (a) => `printf(${a.map((x) => x.trim()).join(', ')})`,
};

const IDENT_START = /[A-Za-z_]/;
const IDENT_CHAR = /[A-Za-z0-9_]/;

/** Index just past the quoted literal starting at `start` (handles backslash escapes). */
function skipQuoted(sql: string, start: number): number {
  const q = sql[start]!;
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === '\\') i += 2;
    else if (ch === q) return i + 1;
    else i++;
  }
  throw new Error(`unterminated ${q} literal in SQL`);
}

/** Index of the `)` matching the `(` at `open`. */
function matchParen(sql: string, open: number): number {
  let depth = 0;
  for (let i = open; i < sql.length; ) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"' || ch === '`') { i = skipQuoted(sql, i); continue; }
    if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return i;
    i++;
  }
  throw new Error('unbalanced parentheses in SQL');
}

/** Splits on commas that are outside quotes, parentheses and brackets. */
export function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let last = 0;
  for (let i = 0; i < s.length; ) {
    const ch = s[i]!;
    if (ch === "'" || ch === '"' || ch === '`') { i = skipQuoted(s, i); continue; }
    if (ch === '(' || ch === '[') depth++;
    else if (ch === ')' || ch === ']') depth--;
    else if (ch === ',' && depth === 0) { out.push(s.slice(last, i)); last = i + 1; }
    i++;
  }
  out.push(s.slice(last));
  return s.trim() === '' ? [] : out;
}

interface ScanState { aliasCounter: number }

function rewrite(sql: string, st: ScanState): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      const end = skipQuoted(sql, i);
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    if (ch === '`') {
      // DuckDB quotes identifiers with double quotes.
      const end = skipQuoted(sql, i);
      out += `"${sql.slice(i + 1, end - 1)}"`;
      i = end;
      continue;
    }
    if (ch === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      const end = nl < 0 ? sql.length : nl;
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    if (!IDENT_START.test(ch) || (i > 0 && IDENT_CHAR.test(sql[i - 1]!))) {
      out += ch;
      i++;
      continue;
    }
    let j = i;
    while (j < sql.length && IDENT_CHAR.test(sql[j]!)) j++;
    const word = sql.slice(i, j);
    const upper = word.toUpperCase();
    let k = j;
    while (k < sql.length && /\s/.test(sql[k]!)) k++;

    // TIMESTAMP '2024-03-01 10:00:00 UTC' → naive UTC literal.
    if ((upper === 'TIMESTAMP' || upper === 'DATETIME') && sql[k] === "'") {
      const end = skipQuoted(sql, k);
      const body = sql.slice(k + 1, end - 1).replace(/\s*(UTC|Z|[+-]00(:?00)?)$/i, '');
      out += `TIMESTAMP '${body}'`;
      i = end;
      continue;
    }

    // Preceded by '.', it is a qualified name, never a function call we rewrite.
    const qualified = out.trimEnd().endsWith('.');
    if (sql[k] === '(' && !qualified) {
      const close = matchParen(sql, k);
      const inner = sql.slice(k + 1, close);
      if (upper === 'UNNEST') {
        const r = rewriteUnnest(sql, inner, close, st);
        out += r.text;
        i = r.next;
        continue;
      }
      const rule = FUNCTION_RULES[upper];
      if (rule) {
        out += rule(splitTopLevel(inner).map((a) => rewrite(a, st)), upper);
      } else {
        out += `${word}${sql.slice(j, k)}(${rewrite(inner, st)})`;
      }
      i = close + 1;
      continue;
    }
    out += word;
    i = j;
  }
  return out;
}

/**
 * BigQuery `UNNEST(GENERATE_ARRAY(a, b)) AS x` is a one-column table; DuckDB's
 * equivalent is `generate_series(a, b) AS _g(x)` (inclusive, BIGINT). Other
 * `UNNEST(expr) AS x` become DuckDB's lateral `unnest(expr) AS _u(x)`.
 */
function rewriteUnnest(sql: string, inner: string, close: number, st: ScanState): { text: string; next: number } {
  const aliasMatch = /^\s+(?:AS\s+)?([A-Za-z_][A-Za-z0-9_]*)/i.exec(sql.slice(close + 1));
  const reserved = /^(ON|USING|WHERE|GROUP|ORDER|LIMIT|JOIN|CROSS|LEFT|RIGHT|INNER|FULL|UNION|WITH|HAVING|QUALIFY|WINDOW)$/i;
  const alias = aliasMatch && !reserved.test(aliasMatch[1]!) ? aliasMatch[1]! : null;
  const next = alias ? close + 1 + aliasMatch![0].length : close + 1;
  const n = ++st.aliasCounter;
  const gen = /^\s*GENERATE_ARRAY\s*\(([\s\S]*)\)\s*$/i.exec(inner);
  if (gen && matchParen(inner, inner.indexOf('(')) === inner.lastIndexOf(')')) {
    const args = splitTopLevel(gen[1]!).map((a) => rewrite(a, st).trim());
    return { text: `generate_series(${args.join(', ')}) AS _g${n}(${alias ?? 'unnest'})`, next };
  }
  return { text: `unnest(${rewrite(inner, st)}) AS _u${n}(${alias ?? 'unnest'})`, next };
}

/**
 * Translates one case statement: `{{ds}}` → `schema` then the rule table.
 * Throws with a readable message on a shape the table does not know.
 */
export function translateToDuckdb(sql: string, schema: string): string {
  return rewrite(sql.replaceAll('{{ds}}', schema), { aliasCounter: 0 });
}
