// GoogleSQL implicit coercion, supertypes and coercion costs.
//
// The rules follow ZetaSQL's Coercer:
//   - INT64 -> NUMERIC -> BIGNUMERIC -> FLOAT64 (each step implicit), INT64 -> FLOAT64.
//   - DATE -> DATETIME (implicit, used for supertypes).
//   - TIMESTAMP -> TIMESTAMP(12) (implicit and exact: a microsecond instant is a picosecond one).
//   - STRING literals and query parameters coerce to DATE, TIME, DATETIME, TIMESTAMP(12) and RANGE<T>.
//   - Untyped NULL and the untyped empty array `[]` coerce to any type.
//   - STRUCT coerces field-wise (same arity); ARRAY only to an ARRAY of the exact same element
//     type (ARRAY<INT64> does not coerce to ARRAY<FLOAT64>).
import { T, arrayOf, structOf, typeEquals, type ArrayType, type ScalarKind, type SqlType, type StructField, type StructType } from './types.js';

export interface CoercionOpts {
  readonly value?: unknown;
  readonly isLiteral?: boolean;
  readonly isParameter?: boolean;
  readonly untypedNull?: boolean;
}

/** Minimal argument shape the supertype logic needs (registry.ArgInfo satisfies it). */
export interface CoercibleArg {
  readonly type: SqlType;
  /** The literal's value when known: NULL fields of a STRUCT literal coerce to any field type. */
  readonly value?: unknown;
  readonly isLiteral?: boolean;
  readonly isParameter?: boolean;
  readonly untypedNull?: boolean;
}

// Widening rank of the numeric kinds: a lower rank coerces to any higher one.
const NUMERIC_RANK: Partial<Record<string, number>> = { INT64: 0, NUMERIC: 1, BIGNUMERIC: 2, FLOAT64: 3 };
// Distances tuned so overload choice matches the service: INT64 prefers FLOAT64
// over NUMERIC when both need a coercion of every argument (1/2, ROUND(5)).
const NUMERIC_DISTANCE: Partial<Record<string, Partial<Record<string, number>>>> = {
  INT64: { FLOAT64: 1, NUMERIC: 2, BIGNUMERIC: 3 },
  NUMERIC: { BIGNUMERIC: 1, FLOAT64: 2 },
  BIGNUMERIC: { FLOAT64: 1 },
};
const STRING_LITERAL_TARGETS = new Set(['DATE', 'TIME', 'DATETIME', 'TIMESTAMP', 'TIMESTAMP_PICOS', 'RANGE']);

/** Whether a value of `from` may be used where `to` is expected without an explicit CAST. */
export function canCoerce(from: SqlType, to: SqlType, opts: CoercionOpts = {}): boolean {
  return coercionCost(from, to, opts) >= 0;
}

/**
 * The cost of coercing `from` to `to`: 0 for the same type, a small positive
 * number for implicit widenings (closer types cost less, as ZetaSQL's
 * signature matcher prefers them), -1 when no implicit coercion exists.
 */
export function coercionCost(from: SqlType, to: SqlType, opts: CoercionOpts = {}): number {
  if (opts.untypedNull) {
    // An untyped NULL/[] fits anything; [] only fits arrays.
    if (from.kind === 'ARRAY' && to.kind !== 'ARRAY') return -1;
    return 1;
  }
  if (typeEquals(from, to)) return 0;
  const fr = NUMERIC_RANK[from.kind];
  const tr = NUMERIC_RANK[to.kind];
  if (fr !== undefined && tr !== undefined) {
    if (tr > fr) return NUMERIC_DISTANCE[from.kind]![to.kind]!;
    // FLOAT64 literals may become NUMERIC/BIGNUMERIC (ZetaSQL literal coercion), never INT64.
    // Closer than either decimal type is to FLOAT64 the other way: NUMERIC '1' / 2.5 is NUMERIC.
    if (from.kind === 'FLOAT64' && to.kind !== 'INT64' && (opts.isLiteral || opts.isParameter)) return 0.5;
    return -1;
  }
  if (from.kind === 'DATE' && to.kind === 'DATETIME') return 1;
  if (from.kind === 'TIMESTAMP' && to.kind === 'TIMESTAMP_PICOS') return 1;
  if (from.kind === 'STRING' && (opts.isLiteral || opts.isParameter) && STRING_LITERAL_TARGETS.has(to.kind)) return 1;
  if (from.kind === 'STRUCT' && to.kind === 'STRUCT') {
    if (from.fields.length !== to.fields.length) return -1;
    let cost = 0;
    const vals = (opts.isLiteral || opts.isParameter) && Array.isArray(opts.value) ? (opts.value as unknown[]) : undefined;
    for (let i = 0; i < from.fields.length; i++) {
      const fv = vals?.[i];
      const c = coercionCost(from.fields[i]!.type, to.fields[i]!.type, {
        isLiteral: opts.isLiteral,
        isParameter: opts.isParameter,
        value: fv,
        untypedNull: vals !== undefined && fv === null,
      });
      if (c < 0) return -1;
      cost += c;
    }
    return cost;
  }
  if (from.kind === 'ARRAY' && to.kind === 'ARRAY') {
    // Element structs that differ only in field names are the same shape.
    if (sameShape(from.element, to.element)) return 1;
    // Literal arrays ([1, 2] written inline) may widen their elements, like their elements could.
    if (opts.isLiteral || opts.isParameter) {
      const c = coercionCost(from.element, to.element, opts);
      return c < 0 ? -1 : c;
    }
    return -1;
  }
  if (from.kind === 'RANGE' && to.kind === 'RANGE') return -1;
  // Parameterized types (STRING(10)) behave as their base type.
  if (from.kind === to.kind) return 0;
  return -1;
}

/**
 * The common supertype of a set of arguments (for CASE, COALESCE, IN, UNION,
 * array literals, templated function arguments), or undefined if none exists.
 * All-untyped-NULL sets yield INT64, as GoogleSQL does.
 */
export function commonSupertype(inputArgs: readonly CoercibleArg[]): SqlType | undefined {
  // A NULL that already has a concrete type (CAST(NULL AS DATE)) takes part as that type.
  const args = inputArgs.map((a) =>
    a.untypedNull && !(a.type.kind === 'INT64' || (a.type.kind === 'ARRAY' && a.type.element.kind === 'INT64')) ? { ...a, untypedNull: false } : a,
  );
  const typed = args.filter((a) => !a.untypedNull);
  if (typed.length === 0) {
    // `[]` alone is ARRAY<INT64>; NULL alone is INT64.
    const arr = args.find((a) => a.type.kind === 'ARRAY');
    return arr ? arrayOf(T.INT64) : T.INT64;
  }
  // STRUCTs unify field by field, each field with the literal-ness of its
  // value: the NULL field of STRUCT(NULL AS f) takes any type (ZetaSQL).
  if (typed.every((a) => a.type.kind === 'STRUCT')) return structSupertype(typed);
  // Non-literal arguments fix the type; then non-STRING literals; STRING literals
  // (which may become DATE/TIME/...) are the softest.
  const soft = (a: CoercibleArg) => !!(a.isLiteral || a.isParameter);
  // FLOAT64 literals are softer than other numeric literals: GREATEST(NUMERIC '1', 2.5) is NUMERIC.
  const tiers = [
    typed.filter((a) => !soft(a)),
    typed.filter((a) => !soft(a) || (a.type.kind !== 'STRING' && a.type.kind !== 'FLOAT64')),
    typed.filter((a) => !soft(a) || a.type.kind !== 'STRING'),
    typed,
  ];
  for (const tier of tiers) {
    if (tier.length === 0) continue;
    const candidate = supertypeOfTypes(tier.map((a) => a.type));
    if (candidate !== undefined && typed.every((a) => canCoerce(a.type, candidate, a))) return candidate;
  }
  // An array literal coerces element by element (canCoerce), so IF(c, [1, 2], [1.5]) is ARRAY<FLOAT64> and
  // IF(c, ['2020-01-01'], [DATE '2020-01-01']) ARRAY<DATE>: the element types' supertype, with each array's
  // literal-ness, when every array can take it (the reference; the documentation's supertype rules are silent).
  if (typed.every((a) => a.type.kind === 'ARRAY') && typed.some(soft)) {
    const el = commonSupertype(typed.map((a) => ({ type: (a.type as ArrayType).element, isLiteral: a.isLiteral, isParameter: a.isParameter })));
    const candidate = el === undefined ? undefined : arrayOf(el);
    if (candidate !== undefined && typed.every((a) => canCoerce(a.type, candidate, a))) return candidate;
  }
  return undefined;
}

// The field types an untyped literal can have: a STRUCT of only these (and NULLs) is a plain tuple literal.
const PLAIN_LITERAL_KINDS = new Set(['INT64', 'FLOAT64', 'STRING', 'BYTES', 'BOOL']);

function isPlainTuple(a: CoercibleArg): boolean {
  if (!a.isLiteral || !Array.isArray(a.value)) return false;
  const t = a.type as StructType;
  return t.fields.every((f, i) => PLAIN_LITERAL_KINDS.has(f.type.kind) && !Array.isArray((a.value as unknown[])[i]));
}

function structSupertype(args: readonly CoercibleArg[]): SqlType | undefined {
  const first = args[0]!.type as StructType;
  if (args.some((a) => (a.type as StructType).fields.length !== first.fields.length)) return undefined;
  // Among plain tuple literals only, the first one's NULL field keeps its INT64 type and a later one's takes any
  // type: [(2, 'x'), (1, NULL)] is ARRAY<STRUCT<INT64, STRING>>, [(1, NULL), (2, 'x')] has no supertype. Beside any
  // other STRUCT (a column, a typed literal such as DATE '...', a nested ARRAY or STRUCT) every NULL field takes
  // any type. The reference, in arrays, set operations, CASE, IF and COALESCE alike; the documentation is silent.
  const firstNullTyped = args.every(isPlainTuple);
  const fields: StructField[] = [];
  for (let i = 0; i < first.fields.length; i++) {
    const sub = args.map((a, k): CoercibleArg => {
      const soft = !!(a.isLiteral || a.isParameter);
      const vals = soft && Array.isArray(a.value) ? (a.value as unknown[]) : undefined;
      const v = vals?.[i];
      const untypedNull = v === null && !(firstNullTyped && k === 0);
      return { type: (a.type as StructType).fields[i]!.type, isLiteral: a.isLiteral, isParameter: a.isParameter, ...(vals ? { value: v, untypedNull } : {}) };
    });
    // A NULL field value keeps its own type only when every input's field is NULL.
    const t = sub.every((x) => x.untypedNull) ? supertypeOfTypes(sub.map((x) => x.type)) : commonSupertype(sub.map((x) => (x.untypedNull ? { ...x, type: T.INT64 } : x)));
    if (t === undefined) return undefined;
    // ZetaSQL keeps the first struct's field names.
    fields.push({ name: first.fields[i]!.name, type: t });
  }
  return keepElementTag(structOf(fields), args.map((a) => a.type as StructType));
}

/** A supertype of graph elements is a graph element (the tag a user STRUCT never has: graph-values.ts). */
function keepElementTag(t: StructType, from: readonly StructType[]): StructType {
  return from.every((x) => x.graphElement) ? { ...t, graphElement: true } : t;
}

/** The supertype of plain (non-literal) types. */
export function supertypeOfTypes(types: readonly SqlType[]): SqlType | undefined {
  if (types.length === 0) return undefined;
  let acc: SqlType | undefined = types[0]!;
  for (let i = 1; i < types.length && acc !== undefined; i++) acc = supertypeOf2(acc, types[i]!);
  return acc;
}

function supertypeOf2(a: SqlType, b: SqlType): SqlType | undefined {
  if (typeEquals(a, b)) return a;
  if (a.kind === b.kind && a.kind !== 'STRUCT' && a.kind !== 'ARRAY' && a.kind !== 'RANGE') return T[a.kind];
  const ar = NUMERIC_RANK[a.kind];
  const br = NUMERIC_RANK[b.kind];
  if (ar !== undefined && br !== undefined) return T[(ar >= br ? a.kind : b.kind) as ScalarKind];
  if ((a.kind === 'DATE' && b.kind === 'DATETIME') || (a.kind === 'DATETIME' && b.kind === 'DATE')) return T.DATETIME;
  if ((a.kind === 'TIMESTAMP' && b.kind === 'TIMESTAMP_PICOS') || (a.kind === 'TIMESTAMP_PICOS' && b.kind === 'TIMESTAMP')) return T.TIMESTAMP_PICOS;
  if (a.kind === 'STRUCT' && b.kind === 'STRUCT') {
    if (a.fields.length !== b.fields.length) return undefined;
    const fields: StructField[] = [];
    for (let i = 0; i < a.fields.length; i++) {
      const t = supertypeOf2(a.fields[i]!.type, b.fields[i]!.type);
      if (t === undefined) return undefined;
      // ZetaSQL keeps the first struct's field names.
      fields.push({ name: a.fields[i]!.name, type: t });
    }
    return keepElementTag(structOf(fields), [a, b]);
  }
  // Arrays whose elements differ only in STRUCT field names are equivalent (the first's names win).
  if (a.kind === 'ARRAY' && b.kind === 'ARRAY') return sameShape(a.element, b.element) ? a : undefined;
  return undefined;
}

/** Equal types up to STRUCT field names. */
export function sameShape(a: SqlType, b: SqlType): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'ARRAY') return sameShape(a.element, (b as typeof a).element);
  if (a.kind === 'STRUCT') {
    const bf = (b as typeof a).fields;
    return a.fields.length === bf.length && a.fields.every((f, i) => sameShape(f.type, bf[i]!.type));
  }
  return typeEquals(a, b) || a.kind === b.kind;
}

/** Normalizes scalar type objects to the shared frozen instances where possible. */
export function canonicalType(t: SqlType): SqlType {
  switch (t.kind) {
    case 'ARRAY':
      return arrayOf(canonicalType(t.element));
    case 'STRUCT':
      return keepElementTag(structOf(t.fields.map((f) => ({ name: f.name, type: canonicalType(f.type) }))), [t]);
    case 'RANGE':
      return t;
    default:
      return t.params ? t : T[t.kind];
  }
}
