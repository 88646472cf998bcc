// Values as a table holds them, applied to every row a SQL write stores
// (INSERT, UPDATE, MERGE, CREATE TABLE AS SELECT, query destination tables):
// - an ARRAY in a table is never NULL: a NULL array is written as the empty
//   array (data-types#array_nulls: "BigQuery translates a NULL ARRAY into an
//   empty ARRAY"; data type properties: "ARRAYs cannot be NULL");
// - parameterized types (data-types#parameterized_data_types) are enforced when
//   a value is written: STRING(L) / BYTES(L) refuse a longer value (characters /
//   bytes); NUMERIC(P, S) / BIGNUMERIC(P, S) round the value to S decimal places
//   half away from zero (RoundingMode ROUND_HALF_AWAY_FROM_ZERO, the default of
//   tables and datasets; a field's roundingMode ROUND_HALF_EVEN rounds half to even) and refuse it when it then has more than P - S integer
//   digits. Parameters of STRUCT fields (STRUCT<a STRING(5)>) count too.
// The parameters come from the table's REST schema (maxLength, precision,
// scale); a column's SqlType is the base type queries compute with.
import { QueryError } from './errors.js';
import type { Column, RestField } from './schema.js';
import type { SqlType } from './types.js';
import { Decimal, type Value } from './values.js';
import { getValue, vectorFromValues, type Batch, type Vector } from './vector.js';

type Fix = (v: Value) => Value;

const fieldOf = (fields: readonly RestField[] | undefined, name: string): RestField | undefined => {
  if (!fields) return undefined;
  const l = name.toLowerCase();
  return fields.find((f) => f.name === name) ?? fields.find((f) => f.name.toLowerCase() === l);
};

/** The decimal range text of NUMERIC(P, S): `999.99` for (5, 2), `0.99` for (2, 2). */
function maxText(p: number, s: number): string {
  const int = p - s > 0 ? '9'.repeat(p - s) : '0';
  return s > 0 ? `${int}.${'9'.repeat(s)}` : int;
}

/** Why a value does not fit a parameterized type (the wording of CAST to that type). */
export class ParamRefusal {
  constructor(readonly message: string) {}
}

/**
 * A non-NULL value fitted to a parameterized type's parameters (STRING(L) /
 * BYTES(L): [L]; NUMERIC/BIGNUMERIC(P[, S]): [P] or [P, S]): the value, a
 * decimal rounded half away from zero to the scale; a ParamRefusal when a
 * string is too long or a decimal then has more than P - S integer digits.
 * Shared by CAST to such a type and by every write into such a column.
 */
export function fitParams(kind: SqlType['kind'], params: readonly number[], v: Value, halfEven = false): Value | ParamRefusal {
  if (kind === 'STRING' || kind === 'BYTES') {
    const max = params[0]!;
    const n = typeof v === 'string' ? (v.length <= max ? v.length : [...v].length) : (v as Uint8Array).length;
    return n > max ? new ParamRefusal(`${kind}(${max}) has maximum length ${max} but got a value with length ${n}`) : v;
  }
  if (kind === 'NUMERIC' || kind === 'BIGNUMERIC') {
    const p = params[0]!;
    const s = params[1] ?? 0;
    const r = (v as Decimal).toDecimalPlaces(s, halfEven ? Decimal.ROUND_HALF_EVEN : Decimal.ROUND_HALF_UP);
    if (r.abs().lt(new Decimal(10).pow(p - s))) return r;
    const max = maxText(p, s);
    return new ParamRefusal(`${kind}(${params.join(', ')}) has precision ${p} and scale ${s} but got a value that is not in range of [-${max}, ${max}]`);
  }
  return v;
}

/** A nested FLOAT64's -0 as 0 (a top-level column's are made 0 a column at a time: positiveZeros). */
const nestedZero: Fix = (v) => (v === 0 && Object.is(v, -0) ? 0 : v);

function fixOf(t: SqlType, f: RestField | undefined, path: string, paramsOnly: boolean, nested = false): Fix | undefined {
  // data-types.md, Floating point semantics: no stored -0.0, in an ARRAY or a STRUCT either.
  if (t.kind === 'FLOAT64') return nested ? nestedZero : undefined;
  if (t.kind === 'ARRAY') {
    // A REPEATED field's parameters apply to its elements.
    const el = fixOf(t.element, f, path, paramsOnly, true);
    if (paramsOnly && !el) return undefined;
    return (v) => {
      if (v === null) return paramsOnly ? v : [];
      if (!el) return v;
      const a = v as Value[];
      let out: Value[] | undefined;
      for (let i = 0; i < a.length; i++) {
        const x = a[i] === null ? null : el(a[i]!);
        if (!Object.is(x, a[i])) (out ??= a.slice())[i] = x; // Object.is: -0 made 0 is a change
      }
      return out ?? v;
    };
  }
  if (t.kind === 'STRUCT') {
    const subs = t.fields.map((sf) => fixOf(sf.type, fieldOf(f?.fields, sf.name), `${path}.${sf.name}`, paramsOnly, true));
    if (!subs.some((x) => x !== undefined)) return undefined;
    return (v) => {
      if (v === null) return v;
      const a = v as Value[];
      let out: Value[] | undefined;
      subs.forEach((fix, i) => {
        if (!fix) return;
        const x = fix(a[i]!);
        if (!Object.is(x, a[i])) (out ??= a.slice())[i] = x; // Object.is: -0 made 0 is a change
      });
      return out ?? v;
    };
  }
  const params =
    (t.kind === 'STRING' || t.kind === 'BYTES') && f?.maxLength !== undefined
      ? [Number(f.maxLength)]
      : (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') && f?.precision !== undefined
        ? [Number(f.precision), ...(f.scale === undefined ? [] : [Number(f.scale)])]
        : undefined;
  if (!params) return undefined;
  // The field's rounding_mode (ROUND_HALF_EVEN), else half away from zero.
  const halfEven = f?.roundingMode === 'ROUND_HALF_EVEN';
  return (v) => {
    if (v === null) return v;
    const r = fitParams(t.kind, params, v, halfEven);
    if (r instanceof ParamRefusal) throw new QueryError(`Field ${path}: ${r.message}`, 'invalidQuery');
    // An unchanged decimal stays the same object, so the column is not rebuilt.
    return r instanceof Decimal && r.eq(v as Decimal) ? v : r;
  };
}

/**
 * How rows of `columns` (the table's stored columns, matched to the REST
 * schema `fields` by name) are made table values; undefined when every value
 * is stored as it comes (no ARRAY anywhere, no parameterized type).
 * `paramsOnly`: the parameterized types alone (writers whose rows never hold a NULL array: insertAll).
 */
export type TableValueRule = (b: Batch, onError?: (row: number, message: string, column: string) => void) => Batch;

export function tableValueRule(columns: readonly Column[], fields: readonly RestField[] | undefined, paramsOnly = false): TableValueRule | undefined {
  const fixes = columns.map((c) => fixOf(c.type, fieldOf(fields, c.name), c.name, paramsOnly));
  const floats = columns.some((c) => c.type.kind === 'FLOAT64');
  if (!floats && !fixes.some((x) => x !== undefined)) return undefined;
  return (b, onError) => {
    let cols: Vector[] | undefined;
    // data-types.md, Floating point semantics: a table can't store a negative zero (a FLOAT64 column's -0.0 is 0).
    if (floats) {
      columns.forEach((c, i) => {
        const v = b.columns[i];
        if (c.type.kind !== 'FLOAT64' || !v || !(v.data instanceof Float64Array)) return;
        const z = positiveZeros(v.data);
        if (z !== v.data) (cols ??= b.columns.slice())[i] = { ...v, data: z };
      });
    }
    fixes.forEach((fix, i) => {
      if (!fix) return;
      const v = b.columns[i];
      if (!v) return;
      let out: Value[] | undefined;
      for (let r = 0; r < b.length; r++) {
        const x = getValue(v, r);
        let y: Value;
        try {
          y = fix(x);
        } catch (e) {
          // `onError`: the row's refusal is reported and the row left as it was (insertAll rejects rows one by one).
          if (!onError || !(e instanceof QueryError)) throw e;
          onError(r, e.message, columns[i]!.name);
          y = x;
        }
        if (y !== x) {
          if (!out) {
            out = new Array<Value>(b.length);
            for (let k = 0; k < r; k++) out[k] = getValue(v, k);
          }
        }
        if (out) out[r] = y;
      }
      if (out) (cols ??= b.columns.slice())[i] = vectorFromValues(v.type, out);
    });
    return cols ? { length: b.length, columns: cols } : b;
  };
}

/** `data` with each -0 made 0; the same array when it holds none. */
function positiveZeros(data: Float64Array): Float64Array {
  let out: Float64Array | undefined;
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0 && Object.is(data[i], -0)) (out ??= data.slice())[i] = 0;
  }
  return out ?? data;
}

/** `rows` with `rule` applied to each batch, as they come (a stream stays a stream). */
export function withTableValues<R extends readonly Batch[] | AsyncIterable<Batch>>(rule: ((b: Batch) => Batch) | undefined, rows: R): R {
  if (!rule) return rows;
  if (Array.isArray(rows)) return (rows as readonly Batch[]).map(rule) as unknown as R;
  const source = rows as AsyncIterable<Batch>;
  return (async function* (): AsyncGenerator<Batch> {
    for await (const b of source) yield rule(b);
  })() as unknown as R;
}
