// Text analysis and search: SEARCH, TEXT_ANALYZE, BAG_OF_WORDS (search_functions and
// text-analysis-functions pages). A text analyzer turns a string into terms:
// LOG_ANALYZER (the default) splits at its delimiters; PATTERN_ANALYZER keeps the matches of
// its regular expression; NO_OP_ANALYZER keeps the whole string as one term. Without token
// filters the terms are ASCII lower-cased; given ones run in their order instead: stop_words
// drops terms, a normalizer sets case and Unicode form. SEARCH holds when one searched
// string satisfies the query (search-query.ts: terms, "phrases", `exact` terms, AND, OR, parentheses).
import { arrayOf, structOf, T, type SqlType } from '../types/types.js';
import { Decimal, JsonValue, type JsonNode, type Value } from '../types/values.js';
import { named, sigf, defineScalar, type SigContext } from './signature.js';
import { parseSearchQuery, type SearchNode } from './search-query.js';
import { fail, rowKernel } from './vec.js';

/** LOG_ANALYZER's default delimiters (text-analysis page); the percent-encoded ones are matched before `%`. */
const LOG_DELIMITERS = [
  '[', ']', '<', '>', '(', ')', '{', '}', '|', '!', ';', ',', "'", '"', '*', '&', '?', '+', '/', ':', '=', '@', '.', '-', '$', '%', '\\', '_',
  '\n', '\r', ' ', '\t', '%21', '%26', '%2526', '%3B', '%3b', '%7C', '%7c', '%20', '%2B', '%2b', '%3D', '%3d', '%2520', '%5D', '%5d', '%5B',
  '%5b', '%3A', '%3a', '%0A', '%0a', '%2C', '%2c', '%28', '%29',
];

/** A token filter: stop words, or a normalizer (text-analysis page, token filters). */
type TokenFilter = { readonly stopWords: ReadonlySet<string> } | { readonly normalize: (term: string) => string };

/** LOWER: ASCII letters only (the default when no token filters are given). */
const asciiLower = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

const ICU_FORMS = new Set(['NFC', 'NFKC', 'NFD', 'NFKD']);

/** A normalizer's function; UPPER is no mode of the page but was accepted before, so it stays. */
function normalizer(n: { mode?: unknown; icu_normalize_mode?: unknown; icu_case_folding?: unknown }): (term: string) => string {
  switch (n.mode) {
    case 'NONE':
      return (t) => t;
    case 'LOWER':
      return asciiLower;
    case 'UPPER':
      return (t) => t.toUpperCase();
    case 'UNICODE_LOWER':
      return (t) => t.toLowerCase();
    case 'ICU_NORMALIZE': {
      const form = n.icu_normalize_mode ?? 'NFKC';
      if (typeof form !== 'string' || !ICU_FORMS.has(form)) fail(`Unsupported icu_normalize_mode: ${JSON.stringify(form)}`);
      // Case folding (on by default) after normalizing; upper-then-lower folds as ICU does for ß and final sigma.
      return n.icu_case_folding === false ? (t) => t.normalize(form) : (t) => t.normalize(form).toUpperCase().toLowerCase();
    }
    default:
      return fail(`Unsupported normalizer mode: ${JSON.stringify(n.mode)}`);
  }
}

interface Analyzer {
  readonly kind: 'LOG_ANALYZER' | 'NO_OP_ANALYZER' | 'PATTERN_ANALYZER';
  /** Longest first, so that a multi-character delimiter wins over its first character. */
  readonly delimiters: readonly string[];
  /** PATTERN_ANALYZER's expression (global). */
  readonly pattern?: RegExp;
  readonly filters?: readonly TokenFilter[];
}

const DEFAULT_ANALYZER: Analyzer = { kind: 'LOG_ANALYZER', delimiters: sortDelimiters(LOG_DELIMITERS) };

/** PATTERN_ANALYZER's expression when no patterns are given: words of two or more characters (text-analysis page). */
function defaultPattern(): RegExp {
  return /\b\w{2,}\b/gu;
}

function sortDelimiters(ds: readonly string[]): string[] {
  return [...new Set(ds)].sort((a, b) => b.length - a.length);
}

function analyzerOf(name: Value, options: Value): Analyzer {
  const kind = name === null ? 'LOG_ANALYZER' : String(name).toUpperCase();
  if (kind !== 'LOG_ANALYZER' && kind !== 'NO_OP_ANALYZER' && kind !== 'PATTERN_ANALYZER') fail(`Unsupported analyzer: ${String(name)}`);
  if (options === null) {
    if (kind === 'PATTERN_ANALYZER') return { kind, delimiters: [], pattern: defaultPattern() };
    return kind === 'LOG_ANALYZER' ? DEFAULT_ANALYZER : { kind, delimiters: [] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(options));
  } catch {
    fail(`Invalid analyzer_options: ${String(options)}`);
  }
  const o = (parsed ?? {}) as { delimiters?: unknown; patterns?: unknown; token_filters?: unknown };
  if (kind === 'NO_OP_ANALYZER' && Object.keys(o).length) fail('NO_OP_ANALYZER does not take analyzer_options');
  let delimiters = kind === 'LOG_ANALYZER' ? DEFAULT_ANALYZER.delimiters : [];
  if (o.delimiters !== undefined) {
    if (kind !== 'LOG_ANALYZER') fail('delimiters can only be set for LOG_ANALYZER');
    if (!Array.isArray(o.delimiters) || !o.delimiters.every((x) => typeof x === 'string' && x !== '')) fail('analyzer_options delimiters must be an array of non-empty strings');
    // text-analysis page, delimiters option: a delimiter is at most 16 characters long.
    const long = (o.delimiters as string[]).find((d) => d.length > 16);
    if (long !== undefined) fail(`analyzer_options delimiter ${JSON.stringify(long)} is longer than 16 characters`);
    delimiters = sortDelimiters(o.delimiters as string[]);
  }
  let pattern: RegExp | undefined;
  if (kind === 'PATTERN_ANALYZER' && o.patterns === undefined) pattern = defaultPattern();
  else if (kind === 'PATTERN_ANALYZER') {
    const ps = o.patterns;
    if (!Array.isArray(ps) || ps.length !== 1 || typeof ps[0] !== 'string') fail('PATTERN_ANALYZER requires patterns with exactly one regular expression');
    try {
      pattern = new RegExp(ps[0] as string, 'gu');
    } catch {
      fail(`Invalid regular expression in patterns: ${String(ps[0])}`);
    }
  } else if (o.patterns !== undefined) fail('patterns can only be set for PATTERN_ANALYZER');
  return { kind, delimiters, ...(pattern ? { pattern } : {}), ...(o.token_filters !== undefined ? { filters: tokenFilters(o.token_filters) } : {}) };
}

function tokenFilters(fs: unknown): TokenFilter[] {
  if (!Array.isArray(fs)) fail('analyzer_options token_filters must be an array');
  return (fs as unknown[]).map((f): TokenFilter => {
    const x = (f ?? {}) as { stop_words?: unknown; normalizer?: { mode?: unknown; icu_normalize_mode?: unknown; icu_case_folding?: unknown } };
    if (x.stop_words !== undefined) {
      if (!Array.isArray(x.stop_words) || !x.stop_words.every((w) => typeof w === 'string')) fail('stop_words must be an array of strings');
      // text-analysis page, stop words: the array has at least one element.
      if (!x.stop_words.length) fail('stop_words must have at least one element');
      return { stopWords: new Set(x.stop_words as string[]) };
    }
    if (x.normalizer !== undefined && x.normalizer !== null && typeof x.normalizer === 'object') return { normalize: normalizer(x.normalizer) };
    return fail(`Unsupported token filter: ${JSON.stringify(f)}`);
  });
}

/** The terms of one string. */
export function analyze(text: string, a: Analyzer): string[] {
  if (a.kind === 'NO_OP_ANALYZER') return [text];
  const raw = a.pattern ? [...text.matchAll(a.pattern)].map((m) => m[0]).filter((m) => m !== '') : split(text, a.delimiters);
  const filters = a.filters ?? [];
  // Given token filters replace the default ASCII lower-casing; they run in their order.
  let terms = a.filters === undefined ? raw.map(asciiLower) : raw;
  for (const f of filters) {
    if ('stopWords' in f) terms = terms.filter((s) => !f.stopWords.has(s));
    else terms = terms.map(f.normalize);
  }
  return terms;
}

function split(text: string, delimiters: readonly string[]): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; ) {
    const d = delimiters.find((x) => text.startsWith(x, i));
    if (d === undefined) {
      cur += text[i]!;
      i++;
      continue;
    }
    if (cur) out.push(cur);
    cur = '';
    i += d.length;
  }
  if (cur) out.push(cur);
  return out;
}

type JsonScope = 'JSON_VALUES' | 'JSON_KEYS' | 'JSON_KEYS_AND_VALUES';

/** Every searchable string inside a value: STRING leaves of arrays and structs (a NULL one as null), and JSON text per scope. */
function strings(v: Value, t: SqlType, scope: JsonScope, out: (string | null)[]): void {
  if (v === null) {
    if (t.kind === 'STRING') out.push(null);
    return;
  }
  if (t.kind === 'STRING') out.push(v as string);
  else if (t.kind === 'ARRAY') for (const e of v as Value[]) strings(e, t.element, scope, out);
  else if (t.kind === 'STRUCT') t.fields.forEach((f, i) => strings((v as Value[])[i]!, f.type, scope, out));
  else if (t.kind === 'JSON') jsonStrings((v as JsonValue).node, scope, out);
}

function jsonStrings(n: JsonNode, scope: JsonScope, out: (string | null)[]): void {
  if (n === null) return;
  if (Array.isArray(n)) for (const e of n) jsonStrings(e, scope, out);
  else if (typeof n === 'object') {
    for (const [k, e] of Object.entries(n)) {
      if (scope !== 'JSON_VALUES') out.push(k);
      jsonStrings(e, scope, out);
    }
  } else if (scope !== 'JSON_KEYS') out.push(String(n));
}

/** A search query with its terms analyzed: all tokens of a term, a phrase's run of tokens, or a backtick's exact text. */
type Compiled =
  | { readonly kind: 'and' | 'or'; readonly items: readonly Compiled[] }
  | { readonly kind: 'tokens' | 'run'; readonly tokens: readonly string[] }
  | { readonly kind: 'exact'; readonly text: string };

function compile(n: SearchNode, a: Analyzer): Compiled {
  switch (n.kind) {
    case 'and':
    case 'or':
      return { kind: n.kind, items: n.items.map((x) => compile(x, a)) };
    case 'term':
      return { kind: 'tokens', tokens: analyze(n.text, a) };
    case 'exact':
      // An exact match for LOG_ANALYZER; under a pattern the backtick term keeps its tokens in order.
      return a.kind === 'LOG_ANALYZER' ? { kind: 'exact', text: n.text } : { kind: 'run', tokens: analyze(n.text, a) };
    case 'phrase':
      return { kind: 'run', tokens: analyze(n.text, a) };
  }
}

function tokenCount(c: Compiled): number {
  switch (c.kind) {
    case 'and':
    case 'or':
      return c.items.reduce((k, x) => k + tokenCount(x), 0);
    case 'exact':
      return c.text ? 1 : 0;
    default:
      return c.tokens.length;
  }
}

interface Field {
  readonly text: string;
  readonly terms: readonly string[];
  readonly set: ReadonlySet<string>;
}

function containsRun(hay: readonly string[], run: readonly string[]): boolean {
  outer: for (let i = 0; i + run.length <= hay.length; i++) {
    for (let k = 0; k < run.length; k++) if (hay[i + k] !== run[k]) continue outer;
    return true;
  }
  return false;
}

/** `sub` occurs in `text` starting at the start or after a delimiter, and ending at the end or before one. */
function exactIn(text: string, sub: string, delimiters: readonly string[]): boolean {
  for (let i = text.indexOf(sub); i >= 0; i = text.indexOf(sub, i + 1)) {
    const end = i + sub.length;
    const before = i === 0 || delimiters.some((d) => text.slice(0, i).endsWith(d));
    if (before && (end === text.length || delimiters.some((d) => text.startsWith(d, end)))) return true;
  }
  return false;
}

function holds(c: Compiled, f: Field, a: Analyzer): boolean {
  switch (c.kind) {
    case 'and':
      return c.items.every((x) => holds(x, f, a));
    case 'or':
      return c.items.some((x) => holds(x, f, a));
    case 'tokens':
      return c.tokens.every((t) => f.set.has(t));
    case 'run':
      return containsRun(f.terms, c.tokens);
    case 'exact':
      return exactIn(f.text, c.text, a.delimiters);
  }
}

/** The search query parsed and analyzed (NO_OP_ANALYZER takes it as one token). */
function compileQuery(query: string, a: Analyzer): Compiled {
  if (a.kind === 'NO_OP_ANALYZER') return { kind: 'tokens', tokens: [query] };
  const q = compile(parseSearchQuery(query), a);
  if (tokenCount(q) === 0) fail(`SEARCH: the search query ${JSON.stringify(query)} produces no search tokens`);
  return q;
}

/**
 * TRUE when one searched string satisfies the whole query; otherwise NULL when a STRING field is NULL,
 * else FALSE (search_functions, rules for data_to_search). NO_OP_ANALYZER takes the query as one token.
 */
function search(data: Value, type: SqlType, q: Compiled, a: Analyzer, scope: JsonScope): boolean | null {
  const texts: (string | null)[] = [];
  strings(data, type, scope, texts);
  let sawNull = false;
  for (const text of texts) {
    if (text === null) {
      sawNull = true;
      continue;
    }
    const terms = analyze(text, a);
    if (holds(q, { text, terms, set: new Set(terms) }, a)) return true;
  }
  return sawNull ? null : false;
}

/** Call argument positions by signature slot (named arguments may come in any order). */
function slots(c: SigContext): (v: readonly Value[], slot: number) => Value {
  return (v, slot) => {
    const k = c.assign.indexOf(slot);
    return k < 0 ? null : v[k]!;
  };
}

export function registerSearch(): void {
  defineScalar('SEARCH', [
    sigf(['ANY', 'STRING', named('json_scope', 'STRING'), named('analyzer', 'STRING'), named('analyzer_options', 'STRING')], 'BOOL', (c) => {
      const at = slots(c);
      const type = c.argTypes[0]!;
      // The query and analyzer are most often constants: the last ones' compiled form is kept, not redone per row.
      let last: { query: string; name: Value; options: Value; a: Analyzer; q: Compiled } | undefined;
      return rowKernel(T.BOOL, (v) => {
        const scope = (at(v, 2) ?? 'JSON_VALUES') as string;
        if (scope !== 'JSON_VALUES' && scope !== 'JSON_KEYS' && scope !== 'JSON_KEYS_AND_VALUES') fail(`Invalid json_scope: ${scope}`);
        // The kernel sees NULLs (a NULL string is searched as a NULL field); a NULL query is an error (search_functions).
        if (v[1] === null) fail('SEARCH: search_query must not be NULL');
        const query = v[1] as string;
        const name = at(v, 3);
        const options = at(v, 4);
        if (!last || last.query !== query || last.name !== name || last.options !== options) {
          const a = analyzerOf(name, options);
          last = { query, name, options, a, q: compileQuery(query, a) };
        }
        return search(v[0]!, type, last.q, last.a, scope);
      }, false);
    }),
  ], { pure: true });

  defineScalar('TEXT_ANALYZE', [
    sigf(['STRING', named('analyzer', 'STRING'), named('analyzer_options', 'STRING')], 'ARRAY<STRING>', (c) => {
      const at = slots(c);
      return rowKernel(arrayOf(T.STRING), (v) => (v[0] === null ? null : analyze(v[0] as string, analyzerOf(at(v, 1), at(v, 2)))), false);
    }),
  ], { pure: true });

  const bag = arrayOf(structOf([{ name: 'term', type: T.STRING }, { name: 'count', type: T.INT64 }]));
  defineScalar('BAG_OF_WORDS', [
    sigf(['ARRAY<STRING>'], () => bag, () =>
      rowKernel(bag, (v) => {
        const counts = new Map<string | null, bigint>();
        for (const t of v[0] as (string | null)[]) counts.set(t, (counts.get(t) ?? 0n) + 1n);
        return [...counts].map(([term, n]) => [term, n]);
      }),
    ),
  ], { pure: true });
}

/** Enough digits that ln(x) rounds to the nearest FLOAT64. */
const Precise = Decimal.clone({ precision: 40 });

/** TF_IDF's result type: ARRAY<STRUCT<term STRING, tf_idf FLOAT64>> (text-analysis-functions). */
export const TF_IDF_TYPE = arrayOf(structOf([{ name: 'term', type: T.STRING }, { name: 'tf_idf', type: T.FLOAT64 }]));

/**
 * TF_IDF(tokenized_document, max_distinct_tokens, frequency_threshold) OVER (): one result per document
 * of the window partition (text-analysis-functions). tf = count in the document / document size (NULL
 * tokens count in the size); idf = log(1 + documents / (1 + documents containing the term)). The
 * dictionary takes the terms found in at least frequency_threshold documents, most documents first
 * (ties by term), at most max_distinct_tokens of them; every other token, and a NULL token, is the
 * unknown term (NULL). The page gives no idf for the unknown term; both of its examples (two different
 * dictionaries) give it the mean idf of the dictionary's terms, which is what this uses (over an empty
 * dictionary that mean is 0/0: NaN, our choice). A document lists the unknown term first when it has
 * unknown tokens, then its dictionary terms by ascending count in it, ties by term (the page says "by
 * term frequency rather than alphabetically"; its examples fit both). A NULL document is an empty one.
 */
export function tfIdf(docs: readonly Value[], maxDistinct: number, threshold: number): Value[] {
  const n = docs.length;
  const df = new Map<string, number>();
  for (const d of docs) {
    for (const t of new Set((d ?? []) as (string | null)[])) if (t !== null) df.set(t, (df.get(t) ?? 0) + 1);
  }
  // log rounded correctly (as the service's C library does; V8's Math.log(3) is an ulp low), once per count.
  const logs = new Map<number, number>();
  const idf = (k: number): number => {
    let w = logs.get(k);
    if (w === undefined) logs.set(k, (w = new Precise(1 + n / (1 + k)).ln().toNumber()));
    return w;
  };
  const dict = new Map(
    [...df]
      .filter(([, k]) => k >= threshold)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, maxDistinct)
      .map(([t, k]) => [t, idf(k)] as const),
  );
  let sum = 0;
  for (const w of dict.values()) sum += w;
  const unknownIdf = sum / dict.size;
  return docs.map((d) => {
    const tokens = (d ?? []) as (string | null)[];
    const counts = new Map<string, number>();
    let unknown = 0;
    for (const t of tokens) {
      if (t !== null && dict.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
      else unknown++;
    }
    const size = tokens.length;
    const terms = [...counts].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const out: Value[] = unknown ? [[null, (unknown / size) * unknownIdf]] : [];
    for (const [t, c] of terms) out.push([t, (c / size) * dict.get(t)!]);
    return out;
  });
}
