// CSV: RFC 4180 parsing into insertAll rows (with header/type autodetection)
// and writing rows as CSV.
import { ioInvalid, type Json } from './errors.js';
import { maybeGunzip, type SourceFile } from './objects.js';
import { inferScalar, type Parsed, type ReadOptions, type RestField } from './schema.js';

export interface CsvCell {
  value: string;
  quoted: boolean;
}

/** RFC 4180-style CSV with a configurable delimiter and quote; `quoted` marks fields that were quoted. */
export function parseCsv(text: string, delimiter: string, quote: string): CsvCell[][] {
  const rows: CsvCell[][] = [];
  let row: CsvCell[] = [];
  let field = '';
  let quoted = false;
  let inQuotes = false;
  let i = 0;
  const n = text.length;
  const endField = (): void => {
    row.push({ value: field, quoted });
    field = '';
    quoted = false;
  };
  while (i < n) {
    const c = text[i]!;
    if (inQuotes) {
      if (quote && c === quote) {
        if (text[i + 1] === quote) {
          field += quote;
          i += 2;
          continue;
        }
        inQuotes = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (quote && c === quote && field === '') {
      inQuotes = true;
      quoted = true;
      i++;
      continue;
    }
    if (text.startsWith(delimiter, i)) {
      endField();
      i += delimiter.length;
      continue;
    }
    if (c === '\n' || c === '\r') {
      endField();
      rows.push(row);
      row = [];
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      continue;
    }
    field += c;
    i++;
  }
  if (field !== '' || quoted || row.length) {
    endField();
    rows.push(row);
  }
  return rows;
}

/** CSV files -> rows of `schema`, or of an autodetected schema (header row and column types) when there is none. */
export function csvRows(files: readonly SourceFile[], opts: ReadOptions, schema: RestField[] | undefined, autodetect: boolean): Parsed {
  const delimiter = opts.fieldDelimiter || ',';
  const quote = opts.quote ?? '"';
  const skip = opts.skipLeadingRows;
  const nullMarkers = new Set<string>(opts.nullMarkers ?? []);
  let fields = schema;
  const rows: Json[] = [];
  for (const file of files) {
    let records = parseCsv(maybeGunzip(file.data).toString('utf8'), delimiter, quote).filter((r) => !(r.length === 1 && r[0]!.value === '' && !r[0]!.quoted));
    let header: string[] | undefined;
    if (!fields && autodetect) {
      // Header detection: skipLeadingRows=1 or a first row of non-numeric names over typed data.
      const first = records[0]?.map((c) => c.value) ?? [];
      const looksLikeHeader = skip === 1 || (skip === undefined && records.length > 1 && first.every((v) => /^[A-Za-z_][\w ]*$/.test(v)) && records.slice(1, 50).some((r) => r.some((c) => inferScalar([c.value]) !== 'STRING')));
      if (looksLikeHeader) header = first.map((h) => h.trim().replace(/\W/g, '_'));
      const body = looksLikeHeader ? records.slice(1) : records;
      const width = Math.max(...body.slice(0, 500).map((r) => r.length), header?.length ?? 0);
      fields = Array.from({ length: width }, (_v, i) => ({
        name: header?.[i] || `string_field_${i}`,
        type: inferScalar(body.slice(0, 500).map((r) => r[i]?.value ?? '')),
        mode: 'NULLABLE',
      }));
      if (!header) fields = fields.map((f, i) => ({ ...f, name: `${f.type === 'STRING' ? 'string' : f.type.toLowerCase()}_field_${i}` }));
      records = body;
    } else if (skip) {
      records = records.slice(skip);
    }
    if (!fields) throw ioInvalid('No schema specified on job or table.');
    for (const r of records) {
      const o: Json = {};
      fields.forEach((f, i) => {
        const cell = r[i];
        if (!cell || (!cell.quoted && cell.value === '') || nullMarkers.has(cell.value)) o[f.name] = null;
        else o[f.name] = cell.value;
      });
      rows.push(o);
    }
  }
  return { fields: fields ?? [], rows };
}

/** One CSV cell: quoted when it holds the delimiter, a quote or a line break. */
export function csvCell(v: unknown, delimiter: string): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s.includes(delimiter) || s.includes('"') || s.includes('\n') || s.includes('\r') ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The real service refuses CSV for nested or repeated columns. */
export function checkFlatForCsv(fields: readonly RestField[]): void {
  for (const f of fields) {
    const t = f.type.toUpperCase();
    if ((f.mode ?? '').toUpperCase() === 'REPEATED' || t === 'RECORD' || t === 'STRUCT') {
      throw ioInvalid(`Operation cannot be performed on a nested schema. Field: ${f.name}`);
    }
  }
}

/** Rows (already in export form) as CSV text lines, with an optional header line. */
export function writeCsv(fields: readonly RestField[], rows: readonly Json[], delimiter: string, header: boolean): string {
  const lines: string[] = [];
  if (header) lines.push(fields.map((f) => csvCell(f.name, delimiter)).join(delimiter));
  for (const row of rows) lines.push(fields.map((f) => csvCell(row[f.name], delimiter)).join(delimiter));
  return lines.join('\n') + (lines.length ? '\n' : '');
}
