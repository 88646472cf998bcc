// Type-level rules the analyzer applies: type names, literal forms, implicit
// coercion, supertypes and cast validity. The function library owns the
// run-time conversions (castVector); here we only decide what is legal and
// parse typed literals into scalar value forms (values.ts).
import { collationOf, mergeCollations, withCollation } from '../functions/collation.js';
import type { Loc, TypeNode } from '../../grammar/ast.js';
import {
  T,
  arrayOf,
  isNumericKind,
  rangeOf,
  scalar,
  structOf,
  typeEquals,
  typeToSql,
  type ScalarKind,
  type ScalarType,
  type SqlType,
} from '../types/types.js';
import { Decimal, JsonValue, RangeValue, type JsonNode, type Value } from '../types/values.js';
import { sqlError } from './errors.js';
import { canCoerce as sharedCanCoerce, commonSupertype, type CoercibleArg } from '../types/coercion.js';
import { parseDateString, parseDatetimeString, parseTimeString, parseTimestampString } from '../functions/civil.js';
import { fitDecimal } from '../functions/numeric.js';
import { checkRangeOrder, rangeParts } from '../functions/conversion.js';
import { QueryError } from '../types/errors.js';
import { parseJsonText } from '../functions/json-core.js';
import { parseTimestampPicosString } from '../functions/timestamp-picos.js';

const TYPE_NAMES: Record<string, ScalarKind> = {
  INT64: 'INT64', INT: 'INT64', INTEGER: 'INT64', SMALLINT: 'INT64', BIGINT: 'INT64', TINYINT: 'INT64', BYTEINT: 'INT64',
  FLOAT64: 'FLOAT64', FLOAT: 'FLOAT64', DOUBLE: 'FLOAT64',
  NUMERIC: 'NUMERIC', DECIMAL: 'NUMERIC', BIGNUMERIC: 'BIGNUMERIC', BIGDECIMAL: 'BIGNUMERIC',
  BOOL: 'BOOL', BOOLEAN: 'BOOL', STRING: 'STRING', BYTES: 'BYTES', DATE: 'DATE', TIME: 'TIME',
  DATETIME: 'DATETIME', TIMESTAMP: 'TIMESTAMP', INTERVAL: 'INTERVAL', JSON: 'JSON', GEOGRAPHY: 'GEOGRAPHY',
};

export function scalarKindOf(name: string): ScalarKind | undefined {
  return TYPE_NAMES[name.toUpperCase()];
}

/** AST type -> SqlType; parameters (STRING(10)) are kept for schema echo. */
export function typeFromNode(n: TypeNode): SqlType {
  switch (n.kind) {
    case 'ScalarType': {
      const k = scalarKindOf(n.name);
      if (!k) throw sqlError(`Type not found: ${n.name}`, n.loc);
      // COLLATE on a STRING column type (DDL) is an annotation of the type.
      const coll = k === 'STRING' && n.collate ? { collation: n.collate } : {};
      // TIMESTAMP(12) is its own kind (picoseconds, src/types/README.md); TIMESTAMP(6) is TIMESTAMP.
      if (k === 'TIMESTAMP' && n.params.length) return timestampOfPrecision(n.params, n.loc);
      if (n.params.length) return { kind: k, params: checkedParams(k, n.params.map(Number), n.loc), ...coll };
      return coll.collation ? { kind: k, ...coll } : scalar(k);
    }
    case 'ArrayType': {
      const el = typeFromNode(n.element);
      if (el.kind === 'ARRAY') throw sqlError('Arrays of arrays are not supported', n.loc);
      return arrayOf(el);
    }
    case 'StructType':
      return structOf(n.fields.map((f) => ({ name: f.name ?? '', type: typeFromNode(f.type) })));
    case 'RangeType': {
      const el = typeFromNode(n.element);
      if (el.kind !== 'DATE' && el.kind !== 'DATETIME' && el.kind !== 'TIMESTAMP') {
        throw sqlError(`Unsupported type: RANGE<${typeToSql(el)}> is not supported`, n.loc);
      }
      return rangeOf(el as ScalarType);
    }
    default:
      throw sqlError(`Type ${n.kind} is not allowed here`, n.loc);
  }
}

/**
 * The parameters of STRING(L), BYTES(L), NUMERIC(P[, S]) and BIGNUMERIC(P[, S]) within their ranges
 * (data-types.md, Parameterized data types: L > 0; 0 <= S <= 9 or 38; max(1, S) <= P <= S + 29 or S + 38).
 * Parameters that aren't numbers (BIGNUMERIC(MAX)) pass through unchanged.
 */
function checkedParams(k: ScalarKind, params: number[], loc: Loc): number[] {
  if (params.some((p) => !Number.isInteger(p))) return params;
  if (k === 'STRING' || k === 'BYTES') {
    if (params.length !== 1) throw sqlError(`${k} type can only have one parameter. Found ${params.length} parameters`, loc);
    if (params[0]! <= 0) throw sqlError(`${k} length must be greater than 0`, loc);
  } else if (k === 'NUMERIC' || k === 'BIGNUMERIC') {
    if (params.length > 2) throw sqlError(`${k} type can only have 1 or 2 parameters. Found ${params.length} parameters`, loc);
    const [maxScale, maxDigits] = k === 'NUMERIC' ? [9, 29] : [38, 38];
    const scale = params[1] ?? 0;
    if (scale < 0 || scale > maxScale) throw sqlError(`In ${k}(P, S), S must be between 0 and ${maxScale}`, loc);
    const p = params[0]!;
    if (p < Math.max(1, scale) || p > maxDigits + scale) {
      throw sqlError(params.length === 1 ? `In ${k}(P), P must be between 1 and ${maxDigits}` : `In ${k}(P, ${scale}), P must be between ${Math.max(1, scale)} and ${maxDigits + scale}`, loc);
    }
  }
  return params;
}

function timestampOfPrecision(params: readonly (string | number)[], loc: Loc): ScalarType {
  const p = params.length === 1 ? Number(params[0]) : NaN;
  if (p === 12) return T.TIMESTAMP_PICOS;
  if (p === 6) return T.TIMESTAMP;
  throw sqlError(`TIMESTAMP precision must be 6 or 12, but was ${params.join(', ')}`, loc);
}

/** Strip parameters: STRING(10) and STRING are the same type for expressions. */
export function baseType(t: SqlType): SqlType {
  if ((t.kind === 'ARRAY' || t.kind === 'STRUCT' || t.kind === 'RANGE')) return t;
  if (!t.params) return t;
  return t.collation ? { kind: t.kind, collation: t.collation } : scalar(t.kind);
}

// ---------------------------------------------------------------- coercion
// Implicit coercion and supertypes come from src/types/coercion.ts (shared
// with the function library); the analyzer only tracks where a value came from.

/** How an expression may coerce: literals, parameters and untyped NULLs coerce more freely than columns. */
export const enum Origin {
  Column = 0,
  Literal = 1,
  Null = 2,
  Param = 3,
}

export function coercionOpts(o: Origin): CoercibleArg extends infer _ ? { isLiteral?: boolean; isParameter?: boolean; untypedNull?: boolean } : never {
  switch (o) {
    case Origin.Literal:
      return LIT;
    case Origin.Null:
      return NUL;
    case Origin.Param:
      return PAR;
    default:
      return COL;
  }
}
const LIT = { isLiteral: true };
const NUL = { isLiteral: true, untypedNull: true };
const PAR = { isParameter: true };
const COL = {};

export interface Typed {
  readonly type: SqlType;
  readonly origin: Origin;
  /** A literal's value: NULL fields of a STRUCT literal coerce to any field type. */
  readonly value?: unknown;
}

export function canCoerce(from: SqlType, to: SqlType, origin: Origin = Origin.Column, value?: unknown): boolean {
  return sharedCanCoerce(from, to, value === undefined ? coercionOpts(origin) : { ...coercionOpts(origin), value });
}

/** Common supertype of CASE/IF/COALESCE branches, set-operation columns, IN lists, array elements. */
export function supertype(items: readonly Typed[]): SqlType | undefined {
  const t = commonSupertype(items.map((i) => ({ type: i.type, ...coercionOpts(i.origin), ...(i.value !== undefined ? { value: i.value } : {}) })));
  // The supertype of collated strings carries their common collation (array literals, CASE, set operations).
  if (!t) return t;
  const coll = mergeCollations(items.map((i) => collationOf(i.type))).collation;
  return coll || collationOf(t) ? withCollation(t, coll) : t;
}

/** Equal types but for the names of struct fields. */
function sameShape(a: SqlType, b: SqlType): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'ARRAY' || a.kind === 'RANGE') return sameShape(a.element, (b as { element: SqlType }).element);
  if (a.kind !== 'STRUCT') return true;
  const bf = (b as { fields: readonly { type: SqlType }[] }).fields;
  return a.fields.length === bf.length && a.fields.every((x, i) => sameShape(x.type, bf[i]!.type));
}

/** Explicit CAST validity (the conversion matrix of the reference). */
export function canCast(from: SqlType, to: SqlType): boolean {
  const f = from.kind;
  const t = to.kind;
  if (f === t && f !== 'STRUCT' && f !== 'ARRAY' && f !== 'RANGE') return true;
  const num = (k: string) => isNumericKind(k as ScalarKind);
  switch (t) {
    case 'INT64':
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return num(f) || f === 'STRING' || (t === 'INT64' && f === 'BOOL');
    case 'FLOAT64':
      return num(f) || f === 'STRING';
    case 'BOOL':
      return f === 'INT64' || f === 'STRING';
    case 'STRING':
      // conversion_functions.md, CAST AS STRING: every scalar type but JSON and GEOGRAPHY (their own functions).
      return f !== 'ARRAY' && f !== 'STRUCT' && f !== 'GEOGRAPHY' && f !== 'JSON';
    case 'BYTES':
      return f === 'STRING';
    case 'DATE':
      return f === 'STRING' || f === 'DATETIME' || f === 'TIMESTAMP' || f === 'TIMESTAMP_PICOS';
    case 'TIME':
      return f === 'STRING' || f === 'DATETIME' || f === 'TIMESTAMP' || f === 'TIMESTAMP_PICOS';
    case 'DATETIME':
      return f === 'STRING' || f === 'DATE' || f === 'TIMESTAMP' || f === 'TIMESTAMP_PICOS';
    case 'TIMESTAMP':
      return f === 'STRING' || f === 'DATE' || f === 'DATETIME' || f === 'TIMESTAMP_PICOS';
    case 'TIMESTAMP_PICOS':
      return f === 'STRING' || f === 'DATE' || f === 'DATETIME' || f === 'TIMESTAMP';
    case 'INTERVAL':
      return f === 'STRING';
    case 'JSON':
      return false;
    case 'GEOGRAPHY':
      // No CAST AS GEOGRAPHY in conversion_functions.md (nor in conversion_rules.md's table): ST_GEOGFROM* convert.
      return false;
    case 'RANGE':
      return f === 'STRING' || (f === 'RANGE' && typeEquals(from, to));
    case 'ARRAY':
      // conversion_functions.md, CAST AS ARRAY: "Must be the exact same array type" (struct field names aside, as
      // for the reference's Equivalent); the element-wise casts of the reference are a feature the service lacks.
      return f === 'ARRAY' && sameShape((from as { element: SqlType }).element, (to as { element: SqlType }).element);
    case 'STRUCT': {
      if (f !== 'STRUCT') return false;
      const ff = (from as { fields: readonly { type: SqlType }[] }).fields;
      const tf = (to as { fields: readonly { type: SqlType }[] }).fields;
      return ff.length === tf.length && ff.every((x, i) => canCast(x.type, tf[i]!.type));
    }
    default:
      return false;
  }
}

// ---------------------------------------------------------------- literals

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** Integer literal text -> INT64 value, or undefined when it does not fit. */
export function parseIntLiteral(text: string, negate = false): bigint | undefined {
  let v: bigint;
  try {
    v = BigInt(text);
  } catch {
    return undefined;
  }
  if (negate) v = -v;
  return v > INT64_MAX || v < INT64_MIN ? undefined : v;
}

// Literals read their text as CAST does (functions/civil.ts: the canonical forms only).
export const parseDateValue = (s: string): number | undefined => parseDateString(s);
export const parseTimeValue = (s: string): number | undefined => parseTimeString(s);
export const parseDatetimeValue = (s: string): bigint | undefined => parseDatetimeString(s);

let literalZone = 'UTC';
/**
 * The statement's default time zone, for zone-less TIMESTAMP literals. Analysis
 * is synchronous, so the session sets it right before analyzing a statement.
 */
export function setLiteralTimeZone(zone: string): void {
  literalZone = zone;
}

/** Runs `f` with `zone` as the zone-less literals' zone (an expression whose default zone is not the statement's). */
export function withLiteralTimeZone<R>(zone: string, f: () => R): R {
  const prev = literalZone;
  literalZone = zone;
  try {
    return f();
  } finally {
    literalZone = prev;
  }
}

/**
 * Timestamp text with an optional zone (Z, +hh[:mm], UTC, IANA name) -> epoch
 * micros, with the same second-exact zone rules as CAST (functions/civil.ts).
 */
export function parseTimestampValue(s: string, defaultZone = literalZone): bigint | undefined {
  return parseTimestampString(s, defaultZone);
}

/** TIMESTAMP(12) text -> epoch picoseconds (a STRING literal coerced to TIMESTAMP(12)). */
export function parseTimestampPicosValue(s: string): bigint | undefined {
  return parseTimestampPicosString(s, literalZone);
}

/** The function library's JSON parser keeps integers beyond 2^53 exact (Node 20's JSON.parse reviver cannot). */
function jsonNode(text: string): JsonNode {
  return parseJsonText(text);
}

const NUMERIC_RE = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/** DATE '...', NUMERIC '...', JSON '...' etc. -> [type, value]; errors as the service words them. */
export function typedLiteral(typeName: string, text: string, loc: Loc): { type: SqlType; value: Value } {
  const k = scalarKindOf(typeName);
  const bad = (): never => {
    throw sqlError(`Invalid ${k === 'NUMERIC' || k === 'BIGNUMERIC' ? k : k} literal: ${JSON.stringify(text)}`, loc);
  };
  switch (k) {
    case 'DATE': {
      const v = parseDateValue(text);
      return { type: T.DATE, value: v ?? bad() };
    }
    case 'TIME': {
      const v = parseTimeValue(text);
      return { type: T.TIME, value: v ?? bad() };
    }
    case 'DATETIME': {
      const v = parseDatetimeValue(text);
      return { type: T.DATETIME, value: v ?? bad() };
    }
    case 'TIMESTAMP': {
      const v = parseTimestampValue(text);
      return { type: T.TIMESTAMP, value: v ?? bad() };
    }
    case 'NUMERIC':
    case 'BIGNUMERIC': {
      if (!NUMERIC_RE.test(text)) bad();
      // A literal must be exact: no digits beyond the type's scale, no value beyond its range.
      const d = new Decimal(text.trim());
      const fit = fitDecimal(d, k);
      if (fit === undefined || !fit.eq(d)) bad();
      return { type: scalar(k), value: fit! };
    }
    case 'JSON':
      try {
        return { type: T.JSON, value: new JsonValue(jsonNode(text)) };
      } catch {
        throw sqlError(`Invalid JSON literal: ${text}`, loc);
      }
    default:
      throw sqlError(`Unsupported typed literal ${typeName}`, loc);
  }
}

/** RANGE<T> '...': the cast's text rules and errors, prefixed as the reference prefixes a literal's. */
export function rangeLiteral(type: SqlType, text: string, loc: Loc): Value {
  if (type.kind !== 'RANGE') throw sqlError(`Invalid RANGE literal: ${text}`, loc);
  const el = type.element.kind;
  const invalid = (why: string): never => {
    throw sqlError(`Invalid RANGE literal value: ${why}`, loc);
  };
  const one = (s: string | null): Value => {
    if (s === null) return null;
    const v = el === 'DATE' ? parseDateValue(s) : el === 'DATETIME' ? parseDatetimeValue(s) : parseTimestampValue(s);
    if (v === undefined) invalid(el === 'DATE' ? `Invalid date: '${s}'` : el === 'DATETIME' ? `Invalid datetime string "${s}"` : `Invalid timestamp: '${s}'`);
    return v!;
  };
  try {
    const [a, b] = rangeParts(text);
    const start = one(a), end = one(b);
    checkRangeOrder(start, end);
    return new RangeValue(start, end);
  } catch (e) {
    if (e instanceof QueryError && !e.message.startsWith('Invalid RANGE literal value')) invalid(e.message);
    throw e;
  }
}

