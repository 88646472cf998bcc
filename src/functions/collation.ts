// Collation (COLLATE 'und:ci', column/table collation): the annotation rules
// and the collation-aware forms of the functions it affects.
//
// A collation rides on the STRING type (`ScalarType.collation`, also as the
// element of ARRAY<STRING>). The analyzer asks `callCollation` for the common
// collation of a call's arguments (conflicts are errors, as in the service),
// then `collateScalar` swaps in a kernel that compares under that collation,
// and `propagatesCollation` tells whether the result carries it on.
import { QueryError } from '../types/errors.js';
import { T, arrayOf, type SqlType } from '../types/types.js';
import { defineScalar, sig, sigf } from './signature.js';
import type { Value } from '../types/values.js';
import { vectorFromValues, type Vector } from '../types/vector.js';
import type { GroupsAccumulator, ResolvedAggregate, ResolvedScalar, ScalarKernel } from './registry.js';
import { rowKernel, valuesOf } from './vec.js';

/** '' and 'binary' compare by code points: no collator. */
export function isBinaryCollation(spec: string | undefined): boolean {
  return spec === undefined || spec === '' || spec.toLowerCase() === 'binary';
}

/**
 * Validates a collation name the way the reference does (`language_tag[:ci|cs]`
 * or `binary`); returns the error text, or undefined when valid.
 */
export function collationNameError(name: string): string | undefined {
  if (name === '') return undefined;
  const parts = name.split(':');
  if (parts[0]!.toLowerCase() === 'binary') return parts.length > 1 ? `COLLATE has invalid collation name '${name}':binary cannot be combined with a suffix` : undefined;
  if (parts.length > 2) return `COLLATE has invalid collation name '${name}':only case sensitivity attribute is supported`;
  if (parts.length === 2 && parts[1] !== 'ci' && parts[1] !== 'cs') return `COLLATE has invalid collation name '${name}':case sensitivity attribute must be ci or cs`;
  if (!localeOf(parts[0]!)) return `COLLATE has invalid collation name '${name}'`;
  return undefined;
}

/** ICU language tag ('en_US', 'und') as an Intl locale ('en-US'); undefined when Intl rejects it. */
function localeOf(tag: string): string | undefined {
  const loc = tag === '' || tag.toLowerCase() === 'und' ? 'und' : tag.replace(/_/g, '-');
  try {
    return Intl.getCanonicalLocales(loc)[0] ?? 'und';
  } catch {
    return undefined;
  }
}

const collators = new Map<string, Intl.Collator | null>();
/** The ICU collator of a specification; null for binary (code point order). Invalid names are query errors. */
export function collatorFor(spec: string): Intl.Collator | null {
  let c = collators.get(spec);
  if (c !== undefined) return c;
  if (isBinaryCollation(spec)) c = null;
  else {
    const [tag, attr] = spec.split(':');
    const loc = localeOf(tag!);
    if (loc === undefined || collationNameError(spec)) throw new QueryError(collationNameError(spec) ?? `COLLATE has invalid collation name '${spec}'`, 'invalidQuery');
    // 'ci' = ICU secondary strength (accents matter, case does not); default tertiary.
    c = new Intl.Collator(loc, { sensitivity: attr === 'ci' ? 'accent' : 'variant', usage: 'sort' });
  }
  collators.set(spec, c);
  return c;
}

// ICU's completely ignorable code points: format characters and most controls
// (tab, newlines and the other whitespace controls still count).
const IGNORABLE = /[\p{Cf}\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F]/gu;

/**
 * A string whose code point equality stands for equality under `spec`
 * (hashing, LIKE, IN): compatibility-decomposed, ignorables removed, and
 * case-folded for ':ci'. Binary collation is the identity.
 */
export function collationKey(s: string, spec: string): string {
  if (isBinaryCollation(spec)) return s;
  const ci = spec.toLowerCase().endsWith(':ci');
  let k = s.normalize(ci ? 'NFKD' : 'NFD').replace(IGNORABLE, '');
  if (ci) k = k.toUpperCase().toLowerCase();
  return k.normalize('NFC');
}

/** The collation a type carries: STRING's own, or an ARRAY<STRING>'s element's. */
export function collationOf(t: SqlType): string | undefined {
  if (t.kind === 'STRING') return t.collation;
  if (t.kind === 'ARRAY' && t.element.kind === 'STRING') return t.element.collation;
  return undefined;
}

/** `t` with collation `spec` (STRING, ARRAY<STRING>); '' / undefined removes it. */
export function withCollation(t: SqlType, spec: string | undefined): SqlType {
  if (t.kind === 'STRING') {
    if ((t.collation ?? '') === (spec ?? '')) return t;
    const { collation: _c, ...rest } = t;
    return spec ? { ...rest, collation: spec } : rest.params ? rest : { kind: 'STRING' };
  }
  if (t.kind === 'ARRAY' && t.element.kind === 'STRING') {
    const el = withCollation(t.element, spec);
    return el === t.element ? t : arrayOf(el);
  }
  return t;
}

/**
 * Merges collations as the service propagates them: no collation (or '')
 * yields to an explicit one; two different explicit ones conflict.
 */
export function mergeCollations(specs: readonly (string | undefined)[]): { collation?: string; conflict?: [string, string, number] } {
  let out: string | undefined;
  for (let i = 0; i < specs.length; i++) {
    const s = specs[i];
    if (!s) continue;
    if (out === undefined) out = s;
    else if (out.toLowerCase() !== s.toLowerCase()) return { conflict: [s, out, i] };
  }
  return out === undefined ? {} : { collation: out };
}

/**
 * Per-field collations of a STRUCT (collation-concepts.md, Data types: a STRUCT's STRING fields may carry
 * different collations): a field's spec, a nested STRUCT's list, or null. Undefined when no field is collated.
 */
export type StructCollations = (string | null | StructCollations)[];
export function structCollations(t: SqlType): StructCollations | undefined {
  if (t.kind !== 'STRUCT') return undefined;
  let any = false;
  const out = t.fields.map((f): string | null | StructCollations => {
    if (f.type.kind === 'STRING' && !isBinaryCollation(f.type.collation)) {
      any = true;
      return f.type.collation!;
    }
    const inner = structCollations(f.type);
    if (inner) any = true;
    return inner ?? null;
  });
  return any ? out : undefined;
}

/**
 * The field-by-field merge of the operands' struct collations (`=`, `!=`, IN compare each STRING field under
 * its fields' common collation); the first conflict is returned as mergeCollations returns it.
 */
export function mergeStructCollations(types: readonly SqlType[]): { spec?: StructCollations; conflict?: [string, string, number] } {
  const specs = types.map(structCollations);
  if (!specs.some((x) => x)) return {};
  const merge = (parts: readonly (StructCollations | undefined)[]): { spec: StructCollations; conflict?: [string, string, number] } => {
    const width = Math.max(...parts.map((p) => p?.length ?? 0));
    const spec: StructCollations = [];
    for (let i = 0; i < width; i++) {
      const at = parts.map((p) => p?.[i] ?? null);
      if (at.some((x) => Array.isArray(x))) {
        const r = merge(at.map((x) => (Array.isArray(x) ? x : undefined)));
        if (r.conflict) return r;
        spec.push(r.spec);
      } else {
        const r = mergeCollations(at.map((x) => (typeof x === 'string' ? x : undefined)));
        if (r.conflict) return { spec, conflict: r.conflict };
        spec.push(r.collation ?? null);
      }
    }
    return { spec };
  };
  return merge(specs);
}

/** `t` without any collation on its STRING fields (the type of `$collation_key_struct`). */
function withoutCollations(t: SqlType): SqlType {
  if (t.kind === 'STRING') return withCollation(t, undefined);
  if (t.kind === 'STRUCT') return { kind: 'STRUCT', fields: t.fields.map((f) => ({ name: f.name, type: withoutCollations(f.type) })) };
  return t;
}

function structKey(v: Value[], spec: StructCollations): Value[] {
  return v.map((x, i) => {
    const s = spec[i];
    if (x === null || s === null || s === undefined) return x;
    return typeof s === 'string' ? collationKey(x as string, s) : structKey(x as Value[], s);
  });
}

/** Functions whose result carries the collation of their (merged) string arguments. */
const PROPAGATING = new Set([
  'ANY_VALUE', 'ARRAY_AGG', 'ARRAY_FIRST', 'ARRAY_LAST', 'ARRAY_SLICE', 'ARRAY_TO_STRING', 'ARRAY_REVERSE', 'ARRAY_CONCAT',
  'CONCAT', '$concat_op', 'FORMAT', 'GREATEST', 'LEAST', 'LEFT', 'LOWER', 'LPAD', 'LTRIM', 'MAX', 'MIN', 'NORMALIZE',
  'NORMALIZE_AND_CASEFOLD', 'REPEAT', 'REPLACE', 'REVERSE', 'RIGHT', 'RPAD', 'RTRIM', 'SPLIT', 'STRING_AGG', 'SUBSTR',
  'SUBSTRING', 'TRIM', 'UPPER', 'ARRAY_MIN', 'ARRAY_MAX', '$subscript', '$array_at_offset', '$array_at_ordinal',
  '$safe_array_at_offset', '$safe_array_at_ordinal', 'NULLIF', 'IFNULL', 'COALESCE', 'IF',
]);
export function propagatesCollation(name: string): boolean {
  return PROPAGATING.has(name) || PROPAGATING.has(name.toUpperCase());
}

/**
 * Functions that refuse a collated STRING argument. collation-concepts.md, Limitations: "Operations and functions
 * that don't support collation produce an error if they encounter collated values". Which ones is the reference
 * analyzer's choice (its rejects_collation signatures): the regular-expression functions, TRANSLATE, INITCAP, the
 * JSON functions over a JSON-formatted STRING and the approximate aggregates APPROX_TOP_COUNT / APPROX_TOP_SUM /
 * APPROX_QUANTILES; the others ignore or propagate the collation.
 */
const REJECTING = new Set([
  'REGEXP_CONTAINS', 'REGEXP_EXTRACT', 'REGEXP_SUBSTR', 'REGEXP_INSTR', 'REGEXP_REPLACE', 'REGEXP_EXTRACT_ALL',
  'TRANSLATE', 'INITCAP', 'JSON_EXTRACT', 'JSON_EXTRACT_SCALAR', 'JSON_EXTRACT_ARRAY', 'JSON_EXTRACT_STRING_ARRAY',
  'JSON_QUERY', 'JSON_QUERY_ARRAY', 'JSON_VALUE', 'JSON_VALUE_ARRAY', 'APPROX_TOP_COUNT', 'APPROX_TOP_SUM', 'APPROX_QUANTILES',
]);
/** The message for a collated argument `i` (0-based) of a function that refuses it, or undefined when none is. */
export function rejectedCollation(name: string, argTypes: readonly SqlType[]): string | undefined {
  if (!REJECTING.has(name)) return undefined;
  for (const [i, t] of argTypes.entries()) {
    const c = t.kind === 'STRING' ? t.collation : undefined;
    if (c && !isBinaryCollation(c)) return `Collation is not allowed on argument ${i + 1} ("${c}"). Use COLLATE(arg, '') to remove collation`;
  }
  return undefined;
}

/** Functions that compare strings under the collation (equality via `collationKey`). */
const KEYED = new Set([
  '$equal', '$not_equal', '$is_distinct_from', '$is_not_distinct_from', '$in', '$in_array', '$like', '$like_any',
  '$like_all', '$not_like_any', '$not_like_all', '$like_any_array', '$like_all_array', '$not_like_any_array',
  '$not_like_all_array', '$like_any_subquery', '$like_all_subquery', '$not_like_any_subquery', '$not_like_all_subquery', 'STARTS_WITH', 'ENDS_WITH',
]);
/** Ordering comparisons: the collator's order. */
const ORDERED: Record<string, (c: number) => boolean> = {
  $less: (c) => c < 0,
  $less_or_equal: (c) => c <= 0,
  $greater: (c) => c > 0,
  $greater_or_equal: (c) => c >= 0,
};
const SEARCH = new Set(['STRPOS', 'INSTR', 'REPLACE', 'SPLIT', 'GREATEST', 'LEAST', 'ARRAY_MIN', 'ARRAY_MAX', '$between']);

/** Function names (display) for conflict messages. */
export function collationAffects(name: string): boolean {
  return KEYED.has(name) || name in ORDERED || SEARCH.has(name) || propagatesCollation(name);
}

/** Equality operators: the analyzer compares `$collation_key` of their string arguments instead. */
const EQUALITY = new Set(['$equal', '$not_equal', '$is_distinct_from', '$is_not_distinct_from']);
export function collationByKeyArgs(name: string): boolean {
  return EQUALITY.has(name);
}

/** Whether the analyzer must replace the kernel of `name` for a non-binary collation. */
export function collationSensitive(name: string): boolean {
  return KEYED.has(name) || name in ORDERED || SEARCH.has(name);
}

function keyVector(v: Vector, n: number, spec: string): Vector {
  const t = v.type;
  if (t.kind === 'STRING') {
    const vals = valuesOf(v, n);
    return vectorFromValues(t, vals.map((x) => (x === null ? null : collationKey(x as string, spec))));
  }
  if (t.kind === 'ARRAY' && t.element.kind === 'STRING') {
    const vals = valuesOf(v, n);
    return vectorFromValues(t, vals.map((x) => (x === null ? null : (x as Value[]).map((e) => (e === null ? null : collationKey(e as string, spec))))));
  }
  return v;
}

/**
 * operators.md, LIKE operator: with a collation, an unescaped underscore in a pattern is an error (the reference
 * implementation's wording); patterns come as STRING values or as the elements of an ARRAY<STRING>.
 */
function refuseUnderscore(v: Vector, n: number): void {
  const check = (p: Value) => {
    if (typeof p !== 'string') return;
    for (let i = 0; i < p.length; i++) {
      if (p[i] === '\\') i++;
      else if (p[i] === '_') throw new QueryError(`LIKE pattern has '_' which is not allowed when its operands have collation: ${p}`, 'invalidQuery');
    }
  };
  if (v.type.kind !== 'STRING' && !(v.type.kind === 'ARRAY' && v.type.element.kind === 'STRING')) return;
  for (const x of valuesOf(v, n)) {
    if (Array.isArray(x)) x.forEach(check);
    else check(x);
  }
}

/** Start/end offsets (UTF-16) of the first match of `needle` in `s` at or after `from`, under `spec`. */
function findCollated(s: string, needle: string, spec: string, from: number): [number, number] | undefined {
  const key = collationKey(needle, spec);
  const cps = Array.from(s);
  const offs: number[] = [];
  let o = 0;
  for (const c of cps) {
    offs.push(o);
    o += c.length;
  }
  offs.push(o);
  for (let i = 0; i < cps.length; i++) {
    if (offs[i]! < from) continue;
    // Shortest match first: a candidate is equal when its key equals the needle's.
    for (let j = i + 1; j <= cps.length; j++) {
      const k = collationKey(s.slice(offs[i], offs[j]), spec);
      if (k === key) return [offs[i]!, offs[j]!];
      if (k.length > key.length && !k.startsWith(key)) break;
    }
  }
  return undefined;
}

function codePointIndex(s: string, utf16: number): number {
  return Array.from(s.slice(0, utf16)).length;
}

/** The collation-aware form of a resolved call; the same call when `name` ignores collation. */
export function collateScalar(name: string, fn: ResolvedScalar, spec: string): ResolvedScalar {
  if (isBinaryCollation(spec)) return fn;
  const coll = collatorFor(spec)!;
  const inner = fn.kernel;
  if (KEYED.has(name)) {
    const like = name.includes('like');
    const kernel: ScalarKernel = (args, n, ctx) => {
      if (like) for (let i = 1; i < args.length; i++) refuseUnderscore(args[i]!, n);
      return inner(args.map((a) => keyVector(a, n, spec)), n, ctx);
    };
    return { ...fn, kernel };
  }
  const ord = ORDERED[name];
  if (ord) return { ...fn, kernel: rowKernel(fn.returnType, (v) => ord(coll.compare(v[0] as string, v[1] as string))) };
  const cmp = (a: string, b: string) => coll.compare(a, b);
  switch (name) {
    case '$between':
      return { ...fn, kernel: rowKernel(fn.returnType, (v) => cmp(v[0] as string, v[1] as string) >= 0 && cmp(v[0] as string, v[2] as string) <= 0) };
    case 'GREATEST':
    case 'LEAST': {
      const sign = name === 'GREATEST' ? 1 : -1;
      return {
        ...fn,
        kernel: rowKernel(fn.returnType, (v) => {
          let best = v[0] as string;
          for (let i = 1; i < v.length; i++) if (sign * cmp(v[i] as string, best) > 0) best = v[i] as string;
          return best;
        }),
      };
    }
    case 'ARRAY_MIN':
    case 'ARRAY_MAX': {
      const sign = name === 'ARRAY_MAX' ? 1 : -1;
      return {
        ...fn,
        kernel: rowKernel(fn.returnType, (v) => {
          let best: string | null = null;
          for (const e of v[0] as Value[]) if (e !== null && (best === null || sign * cmp(e as string, best) > 0)) best = e as string;
          return best;
        }),
      };
    }
    case 'STRPOS':
      return {
        ...fn,
        kernel: rowKernel(fn.returnType, (v) => {
          const m = findCollated(v[0] as string, v[1] as string, spec, 0);
          return m ? BigInt(codePointIndex(v[0] as string, m[0]) + 1) : 0n;
        }),
      };
    case 'INSTR':
      return {
        ...fn,
        kernel: rowKernel(fn.returnType, (v) => {
          const s = v[0] as string;
          const pos = v.length > 2 ? Number(v[2] as bigint) : 1;
          const occ = v.length > 3 ? Number(v[3] as bigint) : 1;
          if (pos === 0) throw new QueryError('The position argument of INSTR must not be 0', 'invalidQuery');
          if (occ <= 0) throw new QueryError(`The occurrence argument of INSTR must be positive: ${occ}`, 'invalidQuery');
          if (pos < 0) return instrBackward(s, v[1] as string, spec, -pos, occ);
          const cps = Array.from(s);
          let from = cps.slice(0, pos - 1).join('').length;
          for (let k = 0; ; k++) {
            const m = findCollated(s, v[1] as string, spec, from);
            if (!m) return 0n;
            if (k + 1 === occ) return BigInt(codePointIndex(s, m[0]) + 1);
            from = m[0] + (s.codePointAt(m[0])! > 0xffff ? 2 : 1);
          }
        }),
      };
    case 'REPLACE':
      return {
        ...fn,
        kernel: rowKernel(fn.returnType, (v) => {
          const s = v[0] as string;
          const from = v[1] as string;
          if (from === '') return s;
          let out = '';
          let at = 0;
          for (;;) {
            const m = findCollated(s, from, spec, at);
            if (!m || m[1] === m[0]) break;
            out += s.slice(at, m[0]) + (v[2] as string);
            at = m[1];
          }
          return out + s.slice(at);
        }),
      };
    case 'SPLIT':
      return {
        ...fn,
        kernel: rowKernel(fn.returnType, (v) => {
          const s = v[0] as string;
          const d = v.length > 1 ? (v[1] as string) : ',';
          if (d === '') return Array.from(s);
          const parts: string[] = [];
          let at = 0;
          for (;;) {
            const m = findCollated(s, d, spec, at);
            if (!m || m[1] === m[0]) break;
            parts.push(s.slice(at, m[0]));
            at = m[1];
          }
          parts.push(s.slice(at));
          return parts;
        }),
      };
    default:
      return fn;
  }
}

/** INSTR with a negative position: search leftwards from the |pos|-th code point from the end. */
function instrBackward(s: string, needle: string, spec: string, back: number, occ: number): bigint {
  const cps = Array.from(s);
  const starts: number[] = [];
  let from = 0;
  for (;;) {
    const m = findCollated(s, needle, spec, from);
    if (!m) break;
    starts.push(codePointIndex(s, m[0]));
    from = m[0] + (s.codePointAt(m[0])! > 0xffff ? 2 : 1);
  }
  const limit = cps.length - back;
  const ok = starts.filter((i) => i <= limit).reverse();
  return ok.length >= occ ? BigInt(ok[occ - 1]! + 1) : 0n;
}


/** MIN/MAX of collated strings: the collator's order picks the value (other aggregates unchanged). */
export function collateAggregate(name: string, agg: ResolvedAggregate, spec: string): ResolvedAggregate {
  const upper = name.toUpperCase();
  if ((upper !== 'MIN' && upper !== 'MAX') || isBinaryCollation(spec) || agg.returnType.kind !== 'STRING') return agg;
  const coll = collatorFor(spec)!;
  const sign = upper === 'MAX' ? 1 : -1;
  const returnType = agg.returnType;
  return {
    ...agg,
    create: (): GroupsAccumulator => {
      let best: (string | null)[] = [];
      return {
        resize(numGroups) {
          while (best.length < numGroups) best.push(null);
        },
        update(args, groups, n) {
          const vals = valuesOf(args[0]!, n);
          for (let i = 0; i < n; i++) {
            const v = vals[i] as string | null;
            if (v === null) continue;
            const g = groups[i]!;
            const b = best[g];
            if (b === null || b === undefined || sign * coll.compare(v, b) > 0) best[g] = v;
          }
        },
        finish(numGroups) {
          const out = best.slice(0, numGroups);
          while (out.length < numGroups) out.push(null);
          best = [];
          return vectorFromValues(returnType, out);
        },
      };
    },
  };
}

/**
 * `$collation_canonical(x, spec)`: the first value seen with x's collation key
 * (one table per call site). Grouping keys, DISTINCT and set operations over
 * collated strings group by it: equal-under-collation strings become one
 * original value, which is also what the group outputs.
 */
export function registerCollationFunctions(): void {
  // `$collation_key(x, spec)`: equality under the collation as plain string
  // equality, so that = over collated strings stays a hash-join key.
  defineScalar('$collation_key', [sig(['STRING', 'STRING'], 'STRING', rowKernel(T.STRING, (v) => collationKey(v[0] as string, v[1] as string)))]);
  // `$collation_key_struct(x, spec)`: a STRUCT whose collated STRING fields are replaced by their keys (spec: the
  // JSON of mergeStructCollations), so struct equality and IN compare those fields under their collation.
  defineScalar('$collation_key_struct', [
    sigf(['ANY', 'STRING'], (c) => withoutCollations(c.argTypes[0]!), (c) =>
      rowKernel(c.returnType, (v) => structKey(v[0] as Value[], JSON.parse(v[1] as string) as StructCollations))),
  ]);
  defineScalar('$collation_canonical', [
    sigf(['STRING', 'STRING'], 'STRING', () => {
      const seen = new Map<string, string>();
      return rowKernel(T.STRING, (v) => {
        const s = v[0] as string;
        const k = collationKey(s, v[1] as string);
        const r = seen.get(k);
        if (r !== undefined) return r;
        seen.set(k, s);
        return s;
      });
    }),
  ]);
}

/**
 * A table's or dataset's default collation applied to a column type: STRING
 * fields without their own collation (nested ones too) take `spec`.
 */
export function withDefaultCollation(t: SqlType, spec: string): SqlType {
  switch (t.kind) {
    case 'STRING':
      return t.collation ? t : withCollation(t, spec);
    case 'ARRAY':
      return arrayOf(withDefaultCollation(t.element, spec));
    case 'STRUCT':
      return { kind: 'STRUCT', fields: t.fields.map((f) => ({ name: f.name, type: withDefaultCollation(f.type, spec) })) };
    default:
      return t;
  }
}
