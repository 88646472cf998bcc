// insertAll bodies are forwarded to the engine without being parsed or even
// decoded here: the `rows` array (the bulk of the body) is located by a
// structural scan over the body's bytes (or, when it is the last key, taken to
// run to the body's final `]`: see arrayToEnd) and that slice of the request buffer
// goes to the engine as is (proto `rows_utf8`); only the small rest of the body
// is decoded and parsed. Parsing and re-stringifying 500 rows cost the gateway
// ~10 µs per row; decoding the body into a string put ~100 KB per request on
// the gateway's small young generation. The scan is byte-wise: every JSON
// structural character is ASCII, and UTF-8 continuation and lead bytes are
// all >= 0x80, so a multi-byte character can never look like one.

type Json = Record<string, unknown>;

/** A parsed insertAll body: every top-level field but `rows`, plus the `rows` value's bytes. */
export class InsertAllBody {
  constructor(
    readonly rest: Json,
    /** UTF-8 JSON of `rows` exactly as sent (a view of the request body; not validated here, the engine parses it). */
    readonly rows: Buffer,
    /** The whole body, for precise parse-error messages should the engine reject the rows. */
    readonly body: Buffer,
    /**
     * false: `rows` was taken to run to the body's last `]` without scanning it
     * (see arrayToEnd). Right whenever the engine can parse those bytes as JSON;
     * if it cannot, the caller must parse the whole body and use its `rows`.
     */
    readonly scanned: boolean,
  ) {}

  get text(): string {
    return this.body.toString('utf8');
  }
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipWs(s: Buffer, i: number): number {
  while (i < s.length && isWs(s[i]!)) i++;
  return i;
}

/** i at a '"'; returns the index after the closing quote, or -1. */
function skipString(s: Buffer, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return -1;
}

/** Skips one JSON value starting at i (not validated); returns the index after it, or -1. */
function skipValue(s: Buffer, i: number): number {
  const c0 = s[i];
  if (c0 === 0x22) return skipString(s, i);
  if (c0 === 0x5b || c0 === 0x7b) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s[j]!;
      if (c === 0x22) {
        // Strings are skipped whole: brackets inside them do not count.
        j = skipString(s, j);
        if (j < 0) return -1;
        j--;
      } else if (c === 0x5b || c === 0x7b) depth++;
      else if (c === 0x5d || c === 0x7d) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < s.length) {
    const c = s[j]!;
    if (c === 0x2c || c === 0x7d || c === 0x5d || isWs(c)) break;
    j++;
  }
  return j > i ? j : -1;
}

/**
 * For a `rows` value starting with `[` at i: the end of the last `]` when the
 * body ends with `] }` (whitespace aside), else -1. Whether that `]` closes the
 * array at i is not checked (scanning ~100 KB of rows byte by byte was about a
 * tenth of the gateway's CPU per insertAll): if it does not, the bytes from i
 * to it are not one JSON value (a value followed by more than whitespace never
 * parses), so the engine rejects them and the caller falls back to parsing the
 * whole body; if they parse, they are exactly the `rows` value, since JSON
 * allows nothing after a complete value. Bodies with `rows` last (what the
 * client libraries send) never need the scan.
 */
function arrayToEnd(s: Buffer, i: number): number {
  let e = s.length - 1;
  while (e > i && isWs(s[e]!)) e--;
  if (s[e] !== 0x7d) return -1;
  e--;
  while (e > i && isWs(s[e]!)) e--;
  return s[e] === 0x5d ? e + 1 : -1;
}

/** `"rows"` as bytes. */
const ROWS_KEY = Buffer.from('"rows"');

/**
 * Splits an insertAll body into its `rows` bytes and the parsed rest.
 * undefined when the body is not a plain object with a `rows` key (or the scan
 * finds anything odd): the caller then parses the whole body as usual, which
 * also produces the exact parse errors.
 */
export function splitInsertAllBody(body: Buffer): InsertAllBody | undefined {
  let i = skipWs(body, 0);
  if (body[i] !== 0x7b) return undefined;
  i = skipWs(body, i + 1);
  let rowsStart = -1;
  let rowsEnd = -1;
  let scanned = true;
  if (body[i] !== 0x7d) {
    for (;;) {
      if (body[i] !== 0x22) return undefined;
      const keyEnd = skipString(body, i);
      if (keyEnd < 0) return undefined;
      const isRows = keyEnd - i === ROWS_KEY.length && body.compare(ROWS_KEY, 0, ROWS_KEY.length, i, keyEnd) === 0;
      i = skipWs(body, keyEnd);
      if (body[i] !== 0x3a) return undefined;
      i = skipWs(body, i + 1);
      const toEnd = isRows && body[i] === 0x5b ? arrayToEnd(body, i) : -1;
      const vEnd = toEnd >= 0 ? toEnd : skipValue(body, i);
      if (vEnd < 0) return undefined;
      if (isRows) {
        rowsStart = i;
        rowsEnd = vEnd;
        scanned = toEnd < 0;
      }
      i = skipWs(body, vEnd);
      const c = body[i];
      if (c === 0x2c) {
        i = skipWs(body, i + 1);
        continue;
      }
      if (c === 0x7d) break;
      return undefined;
    }
  }
  if (rowsStart < 0) return undefined;
  if (skipWs(body, i + 1) !== body.length) return undefined;
  let rest: unknown;
  try {
    rest = JSON.parse(body.toString('utf8', 0, rowsStart) + 'null' + body.toString('utf8', rowsEnd));
  } catch {
    return undefined;
  }
  if (rest === null || typeof rest !== 'object' || Array.isArray(rest)) return undefined;
  delete (rest as Json)['rows'];
  return new InsertAllBody(rest as Json, body.subarray(rowsStart, rowsEnd), body, scanned);
}

/** What the rows JSON holds, as far as the gateway's checks need: an array with items, an empty array, null, or something else. */
export function rowsKind(rows: Buffer): 'items' | 'empty' | 'null' | 'other' {
  const c = rows[0];
  if (c === 0x5b) return rows[skipWs(rows, 1)] === 0x5d ? 'empty' : 'items';
  if (rows.length === 4 && rows.toString('latin1') === 'null') return 'null';
  return 'other';
}
