// Text analysis and search: SEARCH, TEXT_ANALYZE, BAG_OF_WORDS (search_functions and
// text-analysis-functions pages). A text analyzer turns a string into terms:
// LOG_ANALYZER (the default) splits at its delimiters and lower-cases; NO_OP_ANALYZER
// keeps the whole string as one term. SEARCH holds when every term of the query
// appears among the terms of the searched data; a backtick-quoted part of the
// query matches its terms in order, next to each other, within one value.
import { arrayOf, structOf, T, type SqlType } from '../types/types.js';
import { JsonValue, type JsonNode, type Value } from '../types/values.js';
import { named, sigf, defineScalar, type SigContext } from './signature.js';
import { fail, rowKernel } from './vec.js';

/** LOG_ANALYZER's default delimiters (text-analysis page); the percent-encoded ones are matched before `%`. */
const LOG_DELIMITERS = [
  '[', ']', '<', '>', '(', ')', '{', '}', '|', '!', ';', ',', "'", '"', '*', '&', '?', '+', '/', ':', '=', '@', '.', '-', '$', '%', '\\', '_',
  '\n', '\r', ' ', '\t', '%21', '%26', '%2526', '%3B', '%3b', '%7C', '%7c', '%20', '%2B', '%2b', '%3D', '%3d', '%2520', '%5D', '%5d', '%5B',
  '%5b', '%3A', '%3a', '%0A', '%0a', '%2C', '%2c', '%28', '%29',
];

interface Analyzer {
  readonly kind: 'LOG_ANALYZER' | 'NO_OP_ANALYZER';
  /** Longest first, so that a multi-character delimiter wins over its first character. */
  readonly delimiters: readonly string[];
}

const DEFAULT_ANALYZER: Analyzer = { kind: 'LOG_ANALYZER', delimiters: sortDelimiters(LOG_DELIMITERS) };

function sortDelimiters(ds: readonly string[]): string[] {
  return [...new Set(ds)].sort((a, b) => b.length - a.length);
}

function analyzerOf(name: Value, options: Value): Analyzer {
  const kind = name === null ? 'LOG_ANALYZER' : String(name).toUpperCase();
  if (kind !== 'LOG_ANALYZER' && kind !== 'NO_OP_ANALYZER') {
    if (kind === 'PATTERN_ANALYZER') fail('PATTERN_ANALYZER is not supported by this emulator');
    fail(`Unsupported analyzer: ${String(name)}`);
  }
  if (options === null) return kind === 'LOG_ANALYZER' ? DEFAULT_ANALYZER : { kind, delimiters: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(options));
  } catch {
    fail(`Invalid analyzer_options: ${String(options)}`);
  }
  const d = (parsed as { delimiters?: unknown } | null)?.delimiters;
  if (d === undefined) return kind === 'LOG_ANALYZER' ? DEFAULT_ANALYZER : { kind, delimiters: [] };
  if (kind !== 'LOG_ANALYZER') fail('delimiters can only be set for LOG_ANALYZER');
  if (!Array.isArray(d) || !d.every((x) => typeof x === 'string' && x !== '')) fail('analyzer_options delimiters must be an array of non-empty strings');
  return { kind, delimiters: sortDelimiters(d as string[]) };
}

/** The terms of one string. */
export function analyze(text: string, a: Analyzer): string[] {
  if (a.kind === 'NO_OP_ANALYZER') return [text];
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; ) {
    const d = a.delimiters.find((x) => text.startsWith(x, i));
    if (d === undefined) {
      cur += text[i]!;
      i++;
      continue;
    }
    if (cur) out.push(cur.toLowerCase());
    cur = '';
    i += d.length;
  }
  if (cur) out.push(cur.toLowerCase());
  return out;
}

type JsonScope = 'JSON_VALUES' | 'JSON_KEYS' | 'JSON_KEYS_AND_VALUES';

/** Every searchable string inside a value: STRING leaves of arrays and structs, and JSON text per scope. */
function strings(v: Value, t: SqlType, scope: JsonScope, out: string[]): void {
  if (v === null) return;
  if (t.kind === 'STRING') out.push(v as string);
  else if (t.kind === 'ARRAY') for (const e of v as Value[]) strings(e, t.element, scope, out);
  else if (t.kind === 'STRUCT') t.fields.forEach((f, i) => strings((v as Value[])[i]!, f.type, scope, out));
  else if (t.kind === 'JSON') jsonStrings((v as JsonValue).node, scope, out);
}

function jsonStrings(n: JsonNode, scope: JsonScope, out: string[]): void {
  if (n === null) return;
  if (Array.isArray(n)) for (const e of n) jsonStrings(e, scope, out);
  else if (typeof n === 'object') {
    for (const [k, e] of Object.entries(n)) {
      if (scope !== 'JSON_VALUES') out.push(k);
      jsonStrings(e, scope, out);
    }
  } else if (scope !== 'JSON_KEYS') out.push(String(n));
}

/** Query parts: plain terms (anywhere) and backtick phrases (terms in order, adjacent, in one value). */
function queryParts(q: string, a: Analyzer): { terms: string[]; phrases: string[][] } {
  const terms: string[] = [];
  const phrases: string[][] = [];
  const pieces = q.split('`');
  if (pieces.length % 2 === 0) fail(`Invalid search query: unmatched backtick in ${q}`);
  pieces.forEach((p, i) => {
    if (i % 2 === 1) {
      const ph = analyze(p, a);
      if (ph.length) phrases.push(ph);
    } else if (a.kind === 'NO_OP_ANALYZER') {
      if (p) terms.push(p);
    } else terms.push(...analyze(p, a));
  });
  return { terms, phrases };
}

function containsRun(hay: readonly string[], run: readonly string[]): boolean {
  outer: for (let i = 0; i + run.length <= hay.length; i++) {
    for (let k = 0; k < run.length; k++) if (hay[i + k] !== run[k]) continue outer;
    return true;
  }
  return false;
}

function search(data: Value, type: SqlType, query: string, a: Analyzer, scope: JsonScope): boolean {
  const parts = queryParts(query, a);
  if (!parts.terms.length && !parts.phrases.length) return false;
  const texts: string[] = [];
  strings(data, type, scope, texts);
  const perValue = texts.map((s) => analyze(s, a));
  const all = new Set(perValue.flat());
  return parts.terms.every((t) => all.has(t)) && parts.phrases.every((ph) => perValue.some((terms) => containsRun(terms, ph)));
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
      return rowKernel(T.BOOL, (v) => {
        const scope = (at(v, 2) ?? 'JSON_VALUES') as string;
        if (scope !== 'JSON_VALUES' && scope !== 'JSON_KEYS' && scope !== 'JSON_KEYS_AND_VALUES') fail(`Invalid json_scope: ${scope}`);
        return search(v[0]!, type, v[1] as string, analyzerOf(at(v, 3), at(v, 4)), scope);
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
