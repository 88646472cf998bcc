// CSV: parsing into insertAll rows (header/type autodetection) and writing
// rows as CSV. The parser is our own, incremental (loads stream through it):
// csv-parse, measured on the same data at the same time, was 2-9x slower
// (bench/swaps/README.md), most of it in the per-field hook that tells a
// quoted empty field ("" = empty string) from an unquoted one (NULL).
import { LOADED_BOOL } from '../types/json-values.js';
import { ioInvalid, type Json } from './errors.js';
import { maybeGunzip, type SourceFile } from './objects.js';
import { inferScalar, type Parsed, type ReadOptions, type RestField } from './schema.js';

/**
 * A parsed cell: its text, or null for an unquoted empty field (a quoted
 * empty field `""` is the empty string, as the real service loads it).
 */
export type CsvCell = string | null;

/**
 * RFC 4180-style CSV with a configurable delimiter (several characters
 * allowed) and quote ('' disables quoting), fed in chunks. A quote opens a
 * quoted field only at the start of a field; elsewhere it is text. Records
 * end at \n, \r\n or \r; blank lines are skipped.
 */
export class CsvParser {
  private cells: CsvCell[] = [];
  /** Text of the current field gathered so far (earlier chunks, quoted parts). */
  private field = '';
  private inQuotes = false;
  private quoted = false;
  private rest = '';
  private readonly hold: number;

  constructor(
    private readonly delimiter: string,
    private readonly quote: string,
    private readonly onRecord: (record: CsvCell[]) => void,
  ) {
    // Characters kept back at a chunk's end: a \r\n, an escaped quote or a delimiter may straddle chunks.
    this.hold = Math.max(delimiter.length, 2);
  }

  /** Feeds the next piece of text; `last` ends the input (the final record needs no line break). */
  push(chunk: string, last = false): void {
    const text = this.rest + chunk;
    const limit = last ? text.length : text.length - this.hold;
    const { delimiter, quote } = this;
    const d0 = delimiter.charCodeAt(0);
    const single = delimiter.length === 1;
    const q = quote ? quote.charCodeAt(0) : -1;
    let i = 0;
    let start = 0; // start of the unquoted text of the current field not yet in `field`
    while (i < limit) {
      if (this.inQuotes) {
        const j = text.indexOf(quote, i);
        if (j < 0 || j >= limit) {
          this.field += text.slice(i, limit);
          i = start = limit;
          break;
        }
        this.field += text.slice(i, j);
        if (j + 1 < text.length && text.charCodeAt(j + 1) === q) {
          this.field += quote;
          i = start = j + 2;
        } else {
          this.inQuotes = false;
          i = start = j + 1;
        }
        continue;
      }
      const c = text.charCodeAt(i);
      if (c === q && i === start && this.field === '' && !this.quoted) {
        this.inQuotes = this.quoted = true;
        i = start = i + 1;
      } else if (c === d0 && (single || text.startsWith(delimiter, i))) {
        this.endField(text.slice(start, i));
        i = start = i + delimiter.length;
      } else if (c === 10 || c === 13) {
        this.endField(text.slice(start, i));
        this.endRecord();
        i = start = i + (c === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1);
      } else i++;
    }
    if (start < i) this.field += text.slice(start, i);
    this.rest = text.slice(i);
    if (last) {
      if (this.field !== '' || this.quoted || this.cells.length) {
        this.endField('');
        this.endRecord();
      }
      this.rest = '';
    }
  }

  private endField(tail: string): void {
    const v = this.field + tail;
    this.cells.push(v === '' && !this.quoted ? null : v);
    this.field = '';
    this.quoted = false;
  }

  private endRecord(): void {
    const r = this.cells;
    this.cells = [];
    if (r.length === 1 && r[0] === null) return; // blank line
    this.onRecord(r);
  }
}

/** Every record of a whole text. */
export function parseCsv(text: string, delimiter: string, quote: string): CsvCell[][] {
  const out: CsvCell[][] = [];
  new CsvParser(delimiter, quote, (r) => out.push(r)).push(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, true);
  return out;
}

/** Header detection and column types from the first records of the first file (autodetect without a schema). */
export function csvSchema(sample: readonly CsvCell[][], skipLeadingRows: number | undefined): { fields: RestField[]; header: boolean } {
  // Header detection: skipLeadingRows=1, or a first row of non-numeric names over typed data.
  const first = sample[0] ?? [];
  const text = (c: CsvCell | undefined): string => c ?? '';
  const header =
    skipLeadingRows === 1 ||
    (skipLeadingRows === undefined &&
      sample.length > 1 &&
      first.every((v) => v !== null && /^[A-Za-z_][\w ]*$/.test(v)) &&
      sample.slice(1, 50).some((r) => r.some((c) => inferScalar([text(c)]) !== 'STRING')));
  const names = header ? first.map((h) => text(h).trim().replace(/\W/g, '_')) : undefined;
  const body = header ? sample.slice(1) : sample;
  const width = Math.max(...body.slice(0, 500).map((r) => r.length), names?.length ?? 0);
  const fields = Array.from({ length: width }, (_v, i): RestField => {
    const type = inferScalar(body.slice(0, 500).map((r) => text(r[i])));
    return { name: names?.[i] || `${type === 'STRING' ? 'string' : type.toLowerCase()}_field_${i}`, type, mode: 'NULLABLE' };
  });
  return { fields, header };
}

/** How a load reads a CSV record's cells (csvRules of its options). */
export interface CsvRules {
  readonly nullMarkers: ReadonlySet<string>;
  /**
   * An unquoted empty field is NULL unless custom null markers leave the empty
   * string out (loading-data-cloud-storage-csv.md, CSV options, nullMarker; Job.md,
   * nullMarkers): then it is an empty value, which only STRING and BYTES take.
   */
  readonly emptyIsNull: boolean;
  /** The load's preserveAsciiControlCharacters (or a 16- or 32-bit encoding); without it an ASCII 0 fails the load (CSV page, Encoding). */
  readonly keepNul: boolean;
  /** ignoreUnknownValues: a record with more fields than the schema is otherwise a bad record (CSV options). */
  readonly ignoreExtra: boolean;
}

export function csvRules(opts: ReadOptions): CsvRules {
  const nullMarkers = new Set<string>(opts.nullMarkers ?? []);
  return { nullMarkers, emptyIsNull: nullMarkers.size === 0 || nullMarkers.has(''), keepNul: (opts.preserveAsciiControlCharacters ?? false) || /^UTF-?(16|32)/i.test(opts.encoding ?? ''), ignoreExtra: opts.ignoreUnknownValues ?? true };
}

/** One record as an insertAll row of `fields`: missing and null-marker cells are NULL. */
export function csvRow(fields: readonly RestField[], record: readonly CsvCell[], rules: CsvRules, line: number): Json {
  if (!rules.ignoreExtra && record.length > fields.length) {
    throw ioInvalid(`Error while reading data, error message: Too many values in line ${line}: the schema has ${fields.length} columns, the line ${record.length}.`);
  }
  const o: Json = {};
  for (let i = 0; i < fields.length; i++) {
    let cell = record[i];
    const f = fields[i]!;
    if (cell === null && !rules.emptyIsNull) cell = '';
    if (!rules.keepNul && cell?.includes('\u0000')) throw ioInvalid(`Error while reading data, error message: Bad character (ASCII 0) encountered in line ${line}.`);
    o[f.name] = cell === undefined || cell === null || rules.nullMarkers.has(cell) ? null : f.type === 'BOOLEAN' || f.type === 'BOOL' ? (CSV_BOOL.get(cell.toLowerCase()) ?? cell) : cell;
  }
  return o;
}

/** CSV spellings of BOOL as insertAll's true/false. */
export const CSV_BOOL = LOADED_BOOL;

/** Node's name of a load job's character set. */
function bufferEncoding(encoding: string | undefined): BufferEncoding {
  const e = (encoding ?? 'UTF-8').toUpperCase();
  return e === 'ISO-8859-1' ? 'latin1' : e === 'UTF-16LE' ? 'utf16le' : 'utf8';
}

/** Records to skip at the start of each file: skipLeadingRows, or the header autodetect found. */
export function leadingRows(opts: ReadOptions, header: boolean): number {
  return opts.skipLeadingRows ?? (header ? 1 : 0);
}

/** CSV files -> rows of `schema`, or of an autodetected schema (header row and column types) when there is none. */
export function csvRows(files: readonly SourceFile[], opts: ReadOptions, schema: RestField[] | undefined, autodetect: boolean): Parsed {
  const rules = csvRules(opts);
  let fields = schema;
  let skip = opts.skipLeadingRows ?? 0;
  const rows: Json[] = [];
  for (const file of files) {
    const records = parseCsv(maybeGunzip(file.data).toString(bufferEncoding(opts.encoding)), opts.fieldDelimiter || ',', opts.quote ?? '"');
    if (!fields && autodetect) {
      const detected = csvSchema(records, opts.skipLeadingRows);
      fields = detected.fields;
      skip = leadingRows(opts, detected.header);
    }
    if (!fields) throw ioInvalid('No schema specified on job or table.');
    for (let i = skip; i < records.length; i++) {
      const r = records[i]!;
      // Without allow_jagged_rows a record short of the columns fails the load (its missing cells are not NULLs).
      if (opts.allowJaggedRows === false && r.length < fields.length) {
        throw ioInvalid(`Error while reading data, error message: CSV table references column position ${fields.length - 1}, but line ${i + 1} contains only ${r.length} columns.`);
      }
      rows.push(csvRow(fields, r, rules, i + 1));
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
