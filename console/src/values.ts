// Cell values as the REST API sends them (rows of {f: [{v}]}, every scalar a
// string) turned into what people read: NUMERIC and INT64 exactly as sent
// (never through a JS number), TIMESTAMP from int64 microseconds in UTC with
// all six fraction digits kept, JSON pretty-printed without re-parsing its
// numbers, STRUCT/ARRAY as trees. Pure functions: tested in node
// (test/console/values.test.ts) as well as in the browser.
import type { CellValue, FieldSchema } from './api.js';

export type Value =
  | { kind: 'null' }
  | { kind: 'scalar'; type: string; raw: string; text: string }
  | { kind: 'array'; items: Value[] }
  | { kind: 'struct'; fields: { name: string; value: Value }[] };

const NULL: Value = { kind: 'null' };

/** The REST cell `v` of a field (mode REPEATED is an array of {v}). */
export function decode(field: FieldSchema, v: CellValue): Value {
  if (v === null || v === undefined) return field.mode === 'REPEATED' ? { kind: 'array', items: [] } : NULL;
  if (field.mode === 'REPEATED') {
    const items = Array.isArray(v) ? v : [];
    return { kind: 'array', items: items.map((c) => decode({ ...field, mode: 'NULLABLE' }, c.v)) };
  }
  if (field.type === 'RECORD' || field.type === 'STRUCT') {
    const cells = typeof v === 'object' && !Array.isArray(v) ? v.f : [];
    return { kind: 'struct', fields: (field.fields ?? []).map((f, i) => ({ name: f.name, value: decode(f, cells[i]?.v ?? null) })) };
  }
  const raw = typeof v === 'string' ? v : JSON.stringify(v);
  return { kind: 'scalar', type: field.type, raw, text: formatScalar(field.type, raw) };
}

export function formatScalar(type: string, raw: string): string {
  switch (type) {
    case 'TIMESTAMP':
      return formatTimestamp(raw);
    case 'BOOLEAN':
    case 'BOOL':
      return raw === 'true' || raw === 'false' ? raw : raw.toLowerCase();
    default:
      return raw;
  }
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/**
 * TIMESTAMP cell -> "2024-05-01 12:30:00.123456 UTC". The console asks for
 * int64 microseconds (formatOptions.useInt64Timestamp); float seconds
 * ("1.7E9") are still read, with the precision they carry.
 */
export function formatTimestamp(raw: string): string {
  let micros: bigint;
  if (/^-?\d+$/.test(raw)) micros = BigInt(raw);
  else {
    const secs = Number(raw);
    if (!Number.isFinite(secs)) return raw;
    micros = BigInt(Math.round(secs * 1e6));
  }
  let secs = micros / 1_000_000n;
  let frac = micros % 1_000_000n;
  if (frac < 0n) {
    frac += 1_000_000n;
    secs -= 1n;
  }
  const d = new Date(Number(secs) * 1000);
  if (Number.isNaN(d.getTime())) return raw;
  const y = d.getUTCFullYear();
  const date = `${y < 0 ? '-' + pad(-y, 4) : pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const fraction = frac === 0n ? '' : '.' + frac.toString().padStart(6, '0').replace(/0+$/, '');
  return `${date} ${time}${fraction} UTC`;
}

/** One line for a grid cell: scalars as text, arrays and structs in a compact literal form. */
export function preview(v: Value, max = 300): string {
  const out = compact(v);
  return out.length > max ? out.slice(0, max - 1) + '…' : out;
}

function compact(v: Value): string {
  switch (v.kind) {
    case 'null':
      return 'NULL';
    case 'scalar':
      return v.text;
    case 'array':
      return '[' + v.items.map(nested).join(', ') + ']';
    case 'struct':
      return '{' + v.fields.map((f) => `${f.name}: ${nested(f.value)}`).join(', ') + '}';
  }
}

/** Inside an array or struct strings are quoted, so ["a, b"] reads as one element. */
function nested(v: Value): string {
  return v.kind === 'scalar' && v.type === 'STRING' ? JSON.stringify(v.text) : compact(v);
}

/** A plain JSON value for export: scalars as the API's strings (exact), TIMESTAMP as UTC text, nesting kept. */
export function toPlain(v: Value): unknown {
  switch (v.kind) {
    case 'null':
      return null;
    case 'scalar':
      return v.type === 'BOOL' || v.type === 'BOOLEAN' ? v.raw === 'true' : v.type === 'TIMESTAMP' ? v.text : v.raw;
    case 'array':
      return v.items.map(toPlain);
    case 'struct':
      return Object.fromEntries(v.fields.map((f) => [f.name, toPlain(f.value)]));
  }
}

function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

/** RFC 4180 CSV: a header line, NULL as an empty field, nested values as JSON. */
export function toCsv(fields: readonly FieldSchema[], rows: readonly Value[][]): string {
  const lines = [fields.map((f) => csvField(f.name)).join(',')];
  for (const r of rows) {
    lines.push(r.map((v) => (v.kind === 'null' ? '' : v.kind === 'scalar' ? csvField(v.text) : csvField(JSON.stringify(toPlain(v))))).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

/** Newline-delimited JSON, one object per row (what `bq` and the cloud console export). */
export function toJsonLines(fields: readonly FieldSchema[], rows: readonly Value[][]): string {
  return rows.map((r) => JSON.stringify(Object.fromEntries(fields.map((f, i) => [f.name, toPlain(r[i] ?? NULL)])))).join('\n') + (rows.length ? '\n' : '');
}

/**
 * Indents JSON text token by token, so 12345678901234567890 and 1.10 stay as
 * written (JSON.parse would round or reformat them). Invalid text is returned as is.
 */
export function prettyJson(text: string, indent = '  '): string {
  let out = '';
  let depth = 0;
  let i = 0;
  const nl = (): string => '\n' + indent.repeat(depth);
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === close) {
        out += c + close;
        i = j + 1;
        continue;
      }
      depth++;
      out += c + nl();
    } else if (c === '}' || c === ']') {
      depth = Math.max(0, depth - 1);
      out += nl() + c;
    } else if (c === ',') out += ',' + nl();
    else if (c === ':') out += ': ';
    else out += c;
    i++;
  }
  return depth === 0 ? out : text;
}

/** Numeric columns a chart can plot (exact types are plotted as doubles: a chart is an overview). */
export function isNumericType(type: string): boolean {
  return ['INTEGER', 'INT64', 'FLOAT', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC'].includes(type);
}

export function formatBytes(n: number | string | undefined): string {
  const b = Number(n ?? 0);
  if (!Number.isFinite(b)) return String(n);
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let u = 0;
  let x = b;
  while (x >= 1024 && u < units.length - 1) {
    x /= 1024;
    u++;
  }
  return `${u === 0 ? x : x.toFixed(x < 10 ? 2 : 1)} ${units[u]}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** An epoch-milliseconds string (creationTime and friends) as local-free UTC text. */
export function formatMillis(ms: string | number | undefined): string {
  if (ms === undefined || ms === '') return '';
  return formatTimestamp(String(BigInt(Math.trunc(Number(ms))) * 1000n));
}
