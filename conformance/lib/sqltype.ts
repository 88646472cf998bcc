// GoogleSQL type model for the conformance harness: parses the type syntax the
// .test files print (ARRAY<STRUCT<a INT64, ARRAY<>>>, RANGE<DATE>, ...) and
// maps types onto the REST schema vocabulary.

export type SqlType =
  | { kind: 'scalar'; name: string }
  /** element null: the file printed `ARRAY<>` and each value names its own type */
  | { kind: 'array'; element: SqlType | null }
  | { kind: 'struct'; fields: StructField[] }
  | { kind: 'range'; element: SqlType }
  /** PROTO<...>, ENUM<...> and other types BigQuery has no counterpart for */
  | { kind: 'other'; name: string };

export interface StructField {
  name: string | null;
  type: SqlType;
}

/** Canonical scalar names; aliases fold onto these. */
const SCALAR_ALIASES: Record<string, string> = {
  INT64: 'INT64', INTEGER: 'INT64', INT: 'INT64', BIGINT: 'INT64', SMALLINT: 'INT64', TINYINT: 'INT64', BYTEINT: 'INT64',
  INT32: 'INT32', UINT32: 'UINT32', UINT64: 'UINT64',
  FLOAT64: 'DOUBLE', DOUBLE: 'DOUBLE', FLOAT: 'FLOAT', FLOAT32: 'FLOAT',
  BOOL: 'BOOL', BOOLEAN: 'BOOL',
  STRING: 'STRING', BYTES: 'BYTES',
  DATE: 'DATE', DATETIME: 'DATETIME', TIME: 'TIME', TIMESTAMP: 'TIMESTAMP',
  NUMERIC: 'NUMERIC', DECIMAL: 'NUMERIC', BIGNUMERIC: 'BIGNUMERIC', BIGDECIMAL: 'BIGNUMERIC',
  JSON: 'JSON', GEOGRAPHY: 'GEOGRAPHY', INTERVAL: 'INTERVAL', UUID: 'UUID',
};

export class TypeParseError extends Error {}

/** Parses one type starting at `pos` (leading whitespace allowed). */
export function parseTypeAt(text: string, pos: number): { type: SqlType; end: number } {
  let i = skipWs(text, pos);
  const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(text.slice(i));
  if (!m) throw new TypeParseError(`type expected at ${i}: ${JSON.stringify(text.slice(i, i + 30))}`);
  const word = m[0];
  const upper = word.toUpperCase();
  i += word.length;
  const afterWord = skipWs(text, i);
  if (upper === 'ARRAY') {
    i = expect(text, afterWord, '<');
    const j = skipWs(text, i);
    if (text[j] === '>') return { type: { kind: 'array', element: null }, end: j + 1 };
    const inner = parseTypeAt(text, j);
    return { type: { kind: 'array', element: inner.type }, end: expect(text, skipWs(text, inner.end), '>') };
  }
  if (upper === 'RANGE') {
    i = expect(text, afterWord, '<');
    const inner = parseTypeAt(text, i);
    return { type: { kind: 'range', element: inner.type }, end: expect(text, skipWs(text, inner.end), '>') };
  }
  if (upper === 'STRUCT') {
    i = expect(text, afterWord, '<');
    const fields: StructField[] = [];
    i = skipWs(text, i);
    if (text[i] === '>') return { type: { kind: 'struct', fields }, end: i + 1 };
    for (;;) {
      i = skipWs(text, i);
      // A field is `name TYPE` or just `TYPE`. Names may be backquoted or even
      // contain spaces (`GROUPING SETS INT64`): the type starts at the first
      // type word that is followed by `,`, `>` or `<`.
      let name: string | null = null;
      const bq = /^`((?:[^`\\]|\\.)*)`\s+/.exec(text.slice(i));
      if (bq) {
        name = bq[1]!;
        i += bq[0].length;
      } else {
        const words: string[] = [];
        let j = i;
        for (;;) {
          const w = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(text.slice(j));
          if (!w) break;
          const after = skipWs(text, j + w[0].length);
          if (isTypeStart(text, j) && /[,<>]/.test(text[after] ?? '')) break;
          words.push(w[0]);
          j = after;
        }
        if (words.length > 0) {
          name = words.join(' ');
          i = j;
        }
      }
      const ft = parseTypeAt(text, i);
      fields.push({ name, type: ft.type });
      i = skipWs(text, ft.end);
      if (text[i] === ',') { i++; continue; }
      if (text[i] === '>') return { type: { kind: 'struct', fields }, end: i + 1 };
      throw new TypeParseError(`',' or '>' expected in STRUCT at ${i}`);
    }
  }
  if (upper === 'PROTO' || upper === 'ENUM') {
    i = expect(text, afterWord, '<');
    const close = text.indexOf('>', i);
    if (close < 0) throw new TypeParseError('unterminated ' + upper);
    return { type: { kind: 'other', name: `${upper}<${text.slice(i, close).trim()}>` }, end: close + 1 };
  }
  const canon = SCALAR_ALIASES[upper];
  if (canon) return { type: { kind: 'scalar', name: canon }, end: i };
  // Unqualified proto/enum names print as dotted identifiers.
  return { type: { kind: 'other', name: word }, end: i };
}

export function parseType(text: string): SqlType {
  const r = parseTypeAt(text, 0);
  if (skipWs(text, r.end) !== text.length) throw new TypeParseError(`trailing text after type: ${text.slice(r.end)}`);
  return r.type;
}

function isTypeStart(text: string, i: number): boolean {
  const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
  if (!m) return false;
  const u = m[0].toUpperCase();
  return u in SCALAR_ALIASES || u === 'ARRAY' || u === 'STRUCT' || u === 'RANGE' || u === 'PROTO' || u === 'ENUM';
}

export function skipWs(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

function expect(text: string, i: number, ch: string): number {
  i = skipWs(text, i);
  if (text[i] !== ch) throw new TypeParseError(`'${ch}' expected at ${i}, found ${JSON.stringify(text.slice(i, i + 20))}`);
  return i + 1;
}

export function typeToString(t: SqlType): string {
  switch (t.kind) {
    case 'scalar': return t.name;
    case 'other': return t.name;
    case 'array': return `ARRAY<${t.element ? typeToString(t.element) : ''}>`;
    case 'range': return `RANGE<${typeToString(t.element)}>`;
    case 'struct': return `STRUCT<${t.fields.map((f) => (f.name ? `${f.name} ` : '') + typeToString(f.type)).join(', ')}>`;
  }
}

/**
 * The REST schema type a GoogleSQL type surfaces as. The narrower integer and
 * float types of the reference implementation have no BigQuery counterpart;
 * BigQuery widens them, so they map to INTEGER / FLOAT.
 */
export function restTypeName(t: SqlType): string {
  if (t.kind === 'struct') return 'RECORD';
  if (t.kind === 'range') return 'RANGE';
  if (t.kind === 'array') return t.element ? restTypeName(t.element) : '?';
  if (t.kind === 'other') return t.name;
  switch (t.name) {
    case 'INT64': case 'INT32': case 'UINT32': case 'UINT64': return 'INTEGER';
    case 'DOUBLE': case 'FLOAT': return 'FLOAT';
    case 'BOOL': return 'BOOLEAN';
    default: return t.name;
  }
}

/** Folds REST and standard-SQL spellings of a schema type onto one name. */
export function normalizeRestType(name: string): string {
  const u = name.toUpperCase();
  switch (u) {
    case 'INT64': case 'INTEGER': return 'INTEGER';
    case 'FLOAT64': case 'FLOAT': return 'FLOAT';
    case 'BOOL': case 'BOOLEAN': return 'BOOLEAN';
    case 'STRUCT': case 'RECORD': return 'RECORD';
    case 'DECIMAL': return 'NUMERIC';
    case 'BIGDECIMAL': return 'BIGNUMERIC';
    default: return u;
  }
}

/** True when BigQuery cannot return a value of this type in a result. */
export function unsupportedInBigQuery(t: SqlType): string | null {
  switch (t.kind) {
    case 'other': return `type ${t.name}`;
    case 'scalar': return t.name === 'UUID' ? 'type UUID' : null;
    case 'range': return unsupportedInBigQuery(t.element);
    case 'array':
      if (t.element?.kind === 'array') return 'ARRAY of ARRAY';
      return t.element ? unsupportedInBigQuery(t.element) : null;
    case 'struct':
      for (const f of t.fields) {
        const r = unsupportedInBigQuery(f.type);
        if (r) return r;
      }
      return null;
  }
}
