// The warehouse's type system, shared by storage, analyzer, executor and the
// function library. One `SqlType` value describes a column or an expression.

export type ScalarKind =
  | 'INT64'
  | 'FLOAT64'
  | 'NUMERIC'
  | 'BIGNUMERIC'
  | 'BOOL'
  | 'STRING'
  | 'BYTES'
  | 'DATE'
  | 'TIME'
  | 'DATETIME'
  | 'TIMESTAMP'
  /** TIMESTAMP(12): picosecond precision (REST `timestampPrecision: "12"`); see README.md. */
  | 'TIMESTAMP_PICOS'
  | 'INTERVAL'
  | 'JSON'
  | 'GEOGRAPHY';

export interface ScalarType {
  readonly kind: ScalarKind;
  /** Parameterized types (STRING(10), NUMERIC(10,2)) keep their parameters for schema echo and checks. */
  readonly params?: readonly number[];
  /**
   * STRING only: collation specification ('und:ci', 'binary', ...) of a column
   * or expression. An annotation, not part of type identity (typeEquals ignores it).
   */
  readonly collation?: string;
}

export interface ArrayType {
  readonly kind: 'ARRAY';
  readonly element: SqlType;
}

export interface StructField {
  /** Empty string for anonymous fields (`STRUCT<INT64>`, `(1, 2)`). */
  readonly name: string;
  readonly type: SqlType;
}

export interface StructType {
  readonly kind: 'STRUCT';
  readonly fields: readonly StructField[];
  /** A graph element (graph-data-types.md, GRAPH_ELEMENT) compiled to a STRUCT: set only by the graph compiler. */
  readonly graphElement?: true;
}

export interface RangeType {
  readonly kind: 'RANGE';
  /** DATE, DATETIME or TIMESTAMP. */
  readonly element: ScalarType;
}

export type SqlType = ScalarType | ArrayType | StructType | RangeType;
export type TypeKind = SqlType['kind'];

const scalarCache = new Map<ScalarKind, ScalarType>();
export function scalar(kind: ScalarKind): ScalarType {
  let t = scalarCache.get(kind);
  if (!t) {
    t = Object.freeze({ kind });
    scalarCache.set(kind, t);
  }
  return t;
}

export const T = {
  INT64: scalar('INT64'),
  FLOAT64: scalar('FLOAT64'),
  NUMERIC: scalar('NUMERIC'),
  BIGNUMERIC: scalar('BIGNUMERIC'),
  BOOL: scalar('BOOL'),
  STRING: scalar('STRING'),
  BYTES: scalar('BYTES'),
  DATE: scalar('DATE'),
  TIME: scalar('TIME'),
  DATETIME: scalar('DATETIME'),
  TIMESTAMP: scalar('TIMESTAMP'),
  TIMESTAMP_PICOS: scalar('TIMESTAMP_PICOS'),
  INTERVAL: scalar('INTERVAL'),
  JSON: scalar('JSON'),
  GEOGRAPHY: scalar('GEOGRAPHY'),
} as const;

export function arrayOf(element: SqlType): ArrayType {
  return { kind: 'ARRAY', element };
}

export function structOf(fields: readonly StructField[]): StructType {
  return { kind: 'STRUCT', fields };
}

export function rangeOf(element: ScalarType): RangeType {
  return { kind: 'RANGE', element };
}

export function typeEquals(a: SqlType, b: SqlType): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'ARRAY':
      return typeEquals(a.element, (b as ArrayType).element);
    case 'RANGE':
      return typeEquals(a.element, (b as RangeType).element);
    case 'STRUCT': {
      const bf = (b as StructType).fields;
      return (
        a.fields.length === bf.length &&
        a.fields.every((f, i) => f.name === bf[i]!.name && typeEquals(f.type, bf[i]!.type))
      );
    }
    default:
      return true;
  }
}

/** GoogleSQL spelling, as used in error messages: `ARRAY<STRUCT<a INT64>>`. */
export function typeToSql(t: SqlType): string {
  switch (t.kind) {
    case 'ARRAY':
      return `ARRAY<${typeToSql(t.element)}>`;
    case 'RANGE':
      return `RANGE<${typeToSql(t.element)}>`;
    case 'STRUCT':
      return `STRUCT<${t.fields.map((f) => (f.name ? `${f.name} ${typeToSql(f.type)}` : typeToSql(f.type))).join(', ')}>`;
    case 'TIMESTAMP_PICOS':
      return 'TIMESTAMP(12)';
    default:
      return t.params?.length ? `${t.kind}(${t.params.join(', ')})` : t.kind;
  }
}

export const isNumericKind = (k: TypeKind): boolean =>
  k === 'INT64' || k === 'FLOAT64' || k === 'NUMERIC' || k === 'BIGNUMERIC';

/** Types that support ordering comparisons (ORDER BY, <, MIN/MAX). */
export function isOrderable(t: SqlType): boolean {
  switch (t.kind) {
    case 'JSON':
    case 'GEOGRAPHY':
    case 'STRUCT':
    case 'ARRAY':
      return false;
    default:
      return true;
  }
}

/** Types that support grouping equality (GROUP BY, DISTINCT, IS DISTINCT FROM). */
export function isGroupable(t: SqlType): boolean {
  return ungroupablePart(t) === undefined;
}

/** The part of `t` that makes it ungroupable (JSON inside a STRUCT gives JSON), as the reference names it; undefined when groupable. */
export function ungroupablePart(t: SqlType): SqlType | undefined {
  switch (t.kind) {
    case 'JSON':
    case 'GEOGRAPHY':
      return t;
    case 'ARRAY':
      return ungroupablePart(t.element);
    case 'STRUCT':
      for (const f of t.fields) {
        const u = ungroupablePart(f.type);
        if (u) return u;
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Types the `=` family compares (=, !=, IN, simple CASE, NULLIF, join keys):
 * the groupable ones without an ARRAY anywhere (BigQuery groups arrays but
 * has no array equality operator).
 */
export function isEqualityComparable(t: SqlType): boolean {
  switch (t.kind) {
    case 'ARRAY':
      return false;
    case 'STRUCT':
      return t.fields.every((f) => isEqualityComparable(f.type));
    default:
      return isGroupable(t);
  }
}
