// Scalar value forms: how one SQL value is held in JS when it is not inside a
// typed array. Every module that sees single values (function kernels, wire
// encoders, storage) uses exactly these forms, decided by the static SqlType:
//
//   NULL of any type          null
//   INT64                     bigint
//   FLOAT64                   number
//   NUMERIC, BIGNUMERIC       Decimal (decimal.js)
//   BOOL                      boolean
//   STRING                    string
//   BYTES                     Uint8Array
//   DATE                      number  (days since 1970-01-01)
//   TIME                      number  (microseconds since midnight)
//   DATETIME                  bigint  (microseconds since 1970-01-01T00:00:00, civil, no zone)
//   TIMESTAMP                 bigint  (microseconds since the Unix epoch, UTC)
//   TIMESTAMP(12)             bigint  (picoseconds since the Unix epoch, UTC; kind TIMESTAMP_PICOS, picos.ts)
//   INTERVAL                  Interval
//   JSON                      JsonValue
//   GEOGRAPHY                 Geography
//   ARRAY<T>                  Value[]  (elements in T's form; never null elements in stored results)
//   STRUCT<...>               Value[]  (positional, fields in their own forms)
//   RANGE<T>                  RangeValue
import { Decimal } from 'decimal.js';

export { Decimal };

/** Months, days and microseconds are kept apart, as GoogleSQL does. */
export class Interval {
  constructor(
    readonly months: number,
    readonly days: number,
    readonly micros: bigint,
  ) {}
}

/** Parsed JSON. Numbers that do not fit a double exactly are kept as bigint or as their source text. */
export type JsonNode = null | boolean | number | bigint | string | JsonNode[] | { [key: string]: JsonNode };

export class JsonValue {
  protected parsed: JsonNode;
  constructor(node: JsonNode) {
    this.parsed = node;
  }
  /** The value (a JSON text read lazily, functions/json-core.ts JsonText, is parsed at the first read). */
  get node(): JsonNode {
    return this.parsed;
  }
  /** The value's storage-form text when it is held as that text (a stored value read lazily, functions/json-core.ts JsonText); else undefined. */
  get storedText(): string | undefined {
    return undefined;
  }
}

/**
 * A geography on the sphere. The geography function family owns its inner
 * representation; everything else treats it as opaque and uses `wkt` for I/O.
 */
export class Geography {
  constructor(
    /** Set by the geography functions when they parse `wkt` (values read from storage carry only their text). */
    public shape: unknown,
    readonly wkt: string,
  ) {}
}

export class RangeValue {
  constructor(
    readonly start: Value,
    readonly end: Value,
  ) {}
}

export type Value =
  | null
  | bigint
  | number
  | boolean
  | string
  | Uint8Array
  | Decimal
  | Interval
  | JsonValue
  | Geography
  | RangeValue
  | Value[];
