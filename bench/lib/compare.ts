// Compares the emulator's answer with DuckDB's after normalising both to one
// canonical form: numbers as JS numbers (compared within 1e-9 relative),
// TIMESTAMP as epoch microseconds, DATE/STRING as strings, arrays as arrays.
// Column names are not compared: DuckDB names unaliased expressions its own way.

export type Canon = null | boolean | number | string | Canon[];
export type CanonRow = Canon[];

export interface RestField {
  name: string;
  type: string;
  mode?: string;
  fields?: RestField[];
}

export interface RestCell {
  v: unknown;
}

const REL_TOL = 1e-9;

function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (v === 'NaN') return Number.NaN;
    if (v === 'Infinity' || v === '+Infinity') return Number.POSITIVE_INFINITY;
    if (v === '-Infinity') return Number.NEGATIVE_INFINITY;
    return Number(v);
  }
  return Number.NaN;
}

/** Epoch µs from a wire TIMESTAMP: int64 µs string (useInt64Timestamp) or float seconds. */
function restTimestampMicros(v: unknown): number {
  const s = String(v);
  if (/^-?\d+$/.test(s)) return Number(s);
  if (/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(s)) return Math.round(Number(s) * 1e6);
  return isoMicros(s);
}

/** Epoch µs from 'YYYY-MM-DD HH:MM:SS[.ffffff][+TZ]' read as UTC when no zone is given. */
export function isoMicros(s: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?)?$/i.exec(s.trim());
  if (!m) return Number.NaN;
  let zone = m[4] ?? 'Z';
  if (/^utc$/i.test(zone)) zone = 'Z';
  else if (/^[+-]\d{2}$/.test(zone)) zone += ':00';
  const ms = Date.parse(`${m[1]}T${m[2]}${zone}`);
  const frac = Number(((m[3] ?? '') + '000000').slice(0, 6));
  return ms * 1000 + frac;
}

export function canonRestValue(field: RestField, v: unknown): Canon {
  if (v === null || v === undefined) return null;
  if (field.mode === 'REPEATED') {
    const items = Array.isArray(v) ? (v as RestCell[]) : [];
    return items.map((c) => canonRestValue({ ...field, mode: 'NULLABLE' }, c.v));
  }
  switch (field.type.toUpperCase()) {
    case 'INTEGER': case 'INT64': case 'FLOAT': case 'FLOAT64': case 'NUMERIC': case 'BIGNUMERIC':
      return toNumber(v);
    case 'BOOLEAN': case 'BOOL':
      return v === true || v === 'true';
    case 'TIMESTAMP':
      return restTimestampMicros(v);
    case 'RECORD': case 'STRUCT': {
      const f = (v as { f?: RestCell[] }).f ?? [];
      return (field.fields ?? []).map((sub, i) => canonRestValue(sub, f[i]?.v));
    }
    default:
      return String(v);
  }
}

export function canonRestRows(fields: readonly RestField[], rows: readonly { f: RestCell[] }[]): CanonRow[] {
  return rows.map((r) => fields.map((fld, i) => canonRestValue(fld, r.f[i]?.v)));
}

/** DuckDB side: values from getRowsJson(), typed by the column's type name. */
export function canonDuckValue(typeName: string, v: unknown): Canon {
  if (v === null || v === undefined) return null;
  const t = typeName.toUpperCase();
  if (Array.isArray(v)) {
    const inner = t.endsWith('[]') ? t.slice(0, -2) : t;
    return v.map((x) => canonDuckValue(inner, x));
  }
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/.test(t)) {
    return toNumber(v);
  }
  if (t === 'BOOLEAN') return v === true;
  if (t.startsWith('TIMESTAMP')) return isoMicros(String(v));
  if (typeof v === 'object') return JSON.stringify(v);
  return typeof v === 'number' || typeof v === 'boolean' ? v : String(v);
}

function canonEqual(a: Canon, b: Canon): boolean {
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a) && Number.isNaN(b)) return true;
    if (a === b) return true;
    return Math.abs(a - b) <= REL_TOL * Math.max(Math.abs(a), Math.abs(b));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => canonEqual(x, b[i]!));
  }
  return a === b;
}

/** Sort key that is stable under float noise below the comparison tolerance. */
function sortKey(row: CanonRow): string {
  return JSON.stringify(row, (_k, val: unknown) =>
    typeof val === 'number' && Number.isFinite(val) ? Number(val.toPrecision(12)) : val,
  );
}

/** True when the statement orders its final result (ORDER BY outside parentheses). */
export function hasTopLevelOrderBy(sql: string): boolean {
  let depth = 0;
  let flat = '';
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      const end = sql.indexOf(ch, i + 1);
      i = end < 0 ? sql.length : end;
      flat += ' ';
      continue;
    }
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0) flat += ch;
  }
  return /\border\s+by\b/i.test(flat);
}

export interface CompareResult {
  equal: boolean;
  detail: string;
}

export function compareRows(emulator: CanonRow[], duck: CanonRow[], ordered: boolean): CompareResult {
  if (emulator.length !== duck.length) {
    return { equal: false, detail: `row count ${emulator.length} vs DuckDB ${duck.length}` };
  }
  const sorted = (rows: CanonRow[]): CanonRow[] =>
    rows.map((r) => ({ r, k: sortKey(r) })).sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : 0)).map((e) => e.r);
  const a = ordered ? emulator : sorted(emulator);
  const b = ordered ? duck : sorted(duck);
  for (let i = 0; i < a.length; i++) {
    const ra = a[i]!;
    const rb = b[i]!;
    if (ra.length !== rb.length) return { equal: false, detail: `column count ${ra.length} vs DuckDB ${rb.length}` };
    for (let c = 0; c < ra.length; c++) {
      if (!canonEqual(ra[c]!, rb[c]!)) {
        return {
          equal: false,
          detail: `row ${i} col ${c}: ${JSON.stringify(ra[c])} vs DuckDB ${JSON.stringify(rb[c])}`,
        };
      }
    }
  }
  return { equal: true, detail: `${a.length} rows equal${ordered ? '' : ' (order-insensitive)'}` };
}
