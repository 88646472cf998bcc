// Newline-delimited JSON: parsing into insertAll rows and writing rows.
import { ioInvalid, isObj, type Json } from './errors.js';
import { maybeGunzip, type SourceFile } from './objects.js';
import { inferFromRows, type Parsed, type RestField } from './schema.js';

export function jsonRows(files: readonly SourceFile[], schema: RestField[] | undefined, autodetect: boolean): Parsed {
  const rows: Json[] = [];
  for (const file of files) {
    const lines = maybeGunzip(file.data).toString('utf8').split(/\r?\n/);
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch (e) {
        throw ioInvalid(`Error while reading data, error message: JSON parsing error in row starting at position ${i}: ${(e as Error).message} File: ${file.uri}`);
      }
      if (!isObj(v)) throw ioInvalid(`Error while reading data, error message: JSON table encountered a non-object row ${i + 1} in ${file.uri}`);
      rows.push(v);
    });
  }
  const fields = schema ?? (autodetect ? inferFromRows(rows) : undefined);
  if (!fields) throw ioInvalid('No schema specified on job or table.');
  return { fields, rows };
}

/** Rows (already in export form) as newline-delimited JSON; NULL values are left out, as the real service does. */
export function writeNdjson(fields: readonly RestField[], rows: readonly Json[]): string {
  const lines = rows.map((row) => {
    const o: Json = {};
    for (const f of fields) if (row[f.name] !== null && row[f.name] !== undefined) o[f.name] = row[f.name];
    return JSON.stringify(o);
  });
  return lines.join('\n') + (lines.length ? '\n' : '');
}
