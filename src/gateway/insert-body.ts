// insertAll bodies are forwarded to the engine without being parsed here: the
// `rows` array (the bulk of the body) is located by a structural scan and its
// text is passed on as is; only the small rest of the body is parsed. Parsing
// and re-stringifying 500 rows cost the gateway ~10 µs per row, the scan a
// fraction of one.

type Json = Record<string, unknown>;

/** A parsed insertAll body: every top-level field but `rows`, plus the `rows` value's JSON text. */
export class InsertAllBody {
  constructor(
    readonly rest: Json,
    /** JSON text of `rows` exactly as sent (not validated here; the engine parses it). */
    readonly rowsText: string,
    /** The whole body, for precise parse-error messages should the engine reject the rows text. */
    readonly text: string,
  ) {}
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipWs(s: string, i: number): number {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  return i;
}

/** i at a '"'; returns the index after the closing quote, or -1. */
function skipString(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return -1;
}

/** Skips one JSON value starting at i (not validated); returns the index after it, or -1. */
function skipValue(s: string, i: number): number {
  const c0 = s.charCodeAt(i);
  if (c0 === 0x22) return skipString(s, i);
  if (c0 === 0x5b || c0 === 0x7b) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c === 0x22) {
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
    const c = s.charCodeAt(j);
    if (c === 0x2c || c === 0x7d || c === 0x5d || isWs(c)) break;
    j++;
  }
  return j > i ? j : -1;
}

/**
 * Splits an insertAll body into its `rows` text and the parsed rest.
 * undefined when the body is not a plain object with a `rows` key (or the scan
 * finds anything odd): the caller then parses the whole body as usual, which
 * also produces the exact parse errors.
 */
export function splitInsertAllBody(text: string): InsertAllBody | undefined {
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  i = skipWs(text, i + 1);
  let rowsStart = -1;
  let rowsEnd = -1;
  if (text.charCodeAt(i) !== 0x7d) {
    for (;;) {
      if (text.charCodeAt(i) !== 0x22) return undefined;
      const keyEnd = skipString(text, i);
      if (keyEnd < 0) return undefined;
      const isRows = keyEnd - i === 6 && text.startsWith('"rows"', i);
      i = skipWs(text, keyEnd);
      if (text.charCodeAt(i) !== 0x3a) return undefined;
      i = skipWs(text, i + 1);
      const vEnd = skipValue(text, i);
      if (vEnd < 0) return undefined;
      if (isRows) {
        rowsStart = i;
        rowsEnd = vEnd;
      }
      i = skipWs(text, vEnd);
      const c = text.charCodeAt(i);
      if (c === 0x2c) {
        i = skipWs(text, i + 1);
        continue;
      }
      if (c === 0x7d) break;
      return undefined;
    }
  }
  if (rowsStart < 0) return undefined;
  if (skipWs(text, i + 1) !== text.length) return undefined;
  let rest: unknown;
  try {
    rest = JSON.parse(text.slice(0, rowsStart) + 'null' + text.slice(rowsEnd));
  } catch {
    return undefined;
  }
  if (rest === null || typeof rest !== 'object' || Array.isArray(rest)) return undefined;
  delete (rest as Json)['rows'];
  return new InsertAllBody(rest as Json, text.slice(rowsStart, rowsEnd), text);
}

/** What the rows text holds, as far as the gateway's checks need: an array with items, an empty array, null, or something else. */
export function rowsTextKind(rowsText: string): 'items' | 'empty' | 'null' | 'other' {
  const c = rowsText.charCodeAt(0);
  if (c === 0x5b) return rowsText.charCodeAt(skipWs(rowsText, 1)) === 0x5d ? 'empty' : 'items';
  if (rowsText === 'null') return 'null';
  return 'other';
}
