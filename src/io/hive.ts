// Hive-partitioned sources (LOAD DATA / CREATE EXTERNAL TABLE ... WITH PARTITION
// COLUMNS, and the REST HivePartitioningOptions of load jobs, external tables
// and tableDefinitions; hive-partitioned-loads-gcs.md, hive-partitioned-queries.md,
// tables.md HivePartitioningOptions): the directories between the source URI
// prefix and a file's name encode `key=value` pairs, the same keys in the same
// order for every file (at most ten), and each key becomes a column after the
// files' own whose value in every row read from a file is the one its path gives.
import { IoError, type Json } from './errors.js';
import type { RestField } from '../types/schema.js';

export interface HiveKeys {
  readonly names: readonly string[];
  /** Decoded values (`%xx` escapes), in the order of `names`. */
  readonly values: readonly string[];
}

/** A partition key column: its name and REST type (INTEGER, DATE, TIMESTAMP, STRING, or a declared one). */
export interface HiveField {
  readonly name: string;
  readonly type: string;
}

/** Detection modes (tables.md, HivePartitioningOptions.mode); the SQL clause without a list is AUTO, with one CUSTOM. */
export type HiveMode = 'AUTO' | 'STRINGS' | 'CUSTOM';

/** hive-partitioned-queries.md, Limitations: a maximum of ten partition keys per table. */
export const MAX_HIVE_KEYS = 10;

const invalid = (message: string): IoError => new IoError(400, 'invalid', message);

/** The `key=value` directories of `uri` after `prefix` (both `file://` or both bare paths, or the same object-store scheme). */
export function hiveKeysOf(uri: string, prefix: string): HiveKeys {
  const bare = (u: string): string => u.replace(/^file:\/\//i, '');
  const p = bare(prefix).replace(/\/+$/, '') + '/';
  const u = bare(uri);
  if (!u.startsWith(p)) throw invalid(`Source URI ${uri} does not start with the hive partition URI prefix ${prefix}`);
  const dirs = u.slice(p.length).split('/').slice(0, -1);
  const names: string[] = [];
  const values: string[] = [];
  for (const d of dirs) {
    const eq = d.indexOf('=');
    if (eq <= 0) throw invalid(`Source URI ${uri}: directory ${d} after the hive partition URI prefix is not of the form key=value`);
    names.push(d.slice(0, eq));
    let v = d.slice(eq + 1);
    try {
      v = decodeURIComponent(v);
    } catch {
      // Not an escape sequence: the text as it stands.
    }
    values.push(v);
  }
  return { names, values };
}

const INT = /^[-+]?\d{1,19}$/;
const DATE = /^\d{4}-\d{1,2}-\d{1,2}$/;
// hive-partitioned-queries.md, Detection modes: /time=2018-10-18 16:00:00+00/ is a TIMESTAMP (a zone or offset may follow).
const TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}(:\d{2}(\.\d{1,6})?)?\s*(Z|UTC|[+-]\d{1,2}(:?\d{2})?)?$/i;

/** AUTO mode's type of one key from all its values: INTEGER, DATE, TIMESTAMP, else STRING. */
export function inferHiveType(values: readonly string[]): 'INTEGER' | 'DATE' | 'TIMESTAMP' | 'STRING' {
  const all = (re: RegExp): boolean => values.length > 0 && values.every((v) => re.test(v));
  if (all(/^-?\d{1,18}$/)) return 'INTEGER';
  if (all(DATE)) return 'DATE';
  if (all(TIMESTAMP)) return 'TIMESTAMP';
  return 'STRING';
}

/** Whether a key's text is a value of its declared type (custom-partition-key-schema: "the values must validly parse"). */
function parses(type: string, v: string): boolean {
  switch (type.toUpperCase()) {
    case 'INTEGER':
    case 'INT64':
      return INT.test(v);
    case 'DATE':
      return DATE.test(v);
    case 'TIMESTAMP':
      return TIMESTAMP.test(v) || DATE.test(v);
    case 'BOOL':
    case 'BOOLEAN':
      return /^(true|false)$/i.test(v);
    case 'FLOAT':
    case 'FLOAT64':
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return v.trim() !== '' && Number.isFinite(Number(v));
    default:
      return true;
  }
}

/**
 * CUSTOM mode: the key schema encoded after the common prefix, `gs://b/t/{dt:DATE}/{n:INTEGER}` (tables.md,
 * HivePartitioningOptions.sourceUriPrefix); the plain prefix and the keys. A prefix without it is refused.
 */
export function customPrefix(prefix: string): { prefix: string; fields: HiveField[] } {
  const parts = prefix.replace(/\/+$/, '').split('/');
  const fields: HiveField[] = [];
  while (parts.length) {
    const m = /^\{([A-Za-z_][A-Za-z0-9_]*):([A-Za-z0-9_]+)\}$/.exec(parts[parts.length - 1]!);
    if (!m) break;
    fields.unshift({ name: m[1]!, type: m[2]!.toUpperCase() });
    parts.pop();
  }
  if (!fields.length) throw invalid(`hivePartitioningOptions.mode CUSTOM needs the partition key schema after the source URI prefix, as ${prefix.replace(/\/+$/, '')}/{key1:TYPE1}/{key2:TYPE2}`);
  return { prefix: parts.join('/'), fields };
}

/** The key columns of files under `prefix` and each file's values (in `uris` order). */
export interface HiveLayout {
  readonly fields: HiveField[];
  readonly values: string[][];
}

/**
 * The hive layout of the files `uris`: every file's keys (the same names in the same order, at most ten), their
 * types (declared, all STRING, or inferred as AUTO does), and each file's values, checked against declared types.
 */
export function hiveLayout(uris: readonly string[], prefix: string, mode: HiveMode, declared?: readonly HiveField[]): HiveLayout {
  const keys = uris.map((u) => hiveKeysOf(u, prefix));
  const names = keys[0]?.names ?? [];
  const same = (a: readonly string[]): boolean => a.length === names.length && a.every((n, i) => n.toLowerCase() === names[i]!.toLowerCase());
  const odd = keys.findIndex((k) => !same(k.names));
  if (odd >= 0) throw invalid(`Hive partition keys of ${uris[odd]} (${keys[odd]!.names.join(', ')}) differ from those of ${uris[0]} (${names.join(', ')}): every file needs the same keys in the same order`);
  if (names.length > MAX_HIVE_KEYS) throw invalid(`Source URI ${uris[0]} has ${names.length} hive partition keys; a table takes at most ten`);
  if (declared && !same(declared.map((c) => c.name))) {
    throw invalid(`The partition columns (${declared.map((c) => c.name).join(', ')}) do not match the hive partition keys of the source URIs (${names.join(', ')})`);
  }
  const fields: HiveField[] = declared
    ? declared.map((d) => ({ name: d.name, type: d.type }))
    : names.map((n, i) => ({ name: n, type: mode === 'STRINGS' ? 'STRING' : inferHiveType(keys.map((k) => k.values[i]!)) }));
  keys.forEach((k, f) =>
    k.values.forEach((v, i) => {
      if (!parses(fields[i]!.type, v)) throw invalid(`Hive partition key ${fields[i]!.name} of ${uris[f]}: ${JSON.stringify(v)} is not a valid ${fields[i]!.type}`);
    }),
  );
  return { fields, values: keys.map((k) => k.values.slice()) };
}

/** hive-partitioned-queries.md, Limitations: the keys and the columns in the files cannot overlap. */
export function checkHiveOverlap(keys: readonly HiveField[], fileColumns: readonly string[]): void {
  const own = new Set(fileColumns.map((n) => n.toLowerCase()));
  const both = keys.find((k) => own.has(k.name.toLowerCase()));
  if (both) throw invalid(`Hive partition key ${both.name} is also a column of the files: the partition keys and the files' columns cannot overlap`);
}

/**
 * An external table's files parsed one at a time, noting the file each row came from (its _FILE_NAME pseudo-column,
 * query-cloud-storage-data.md), for CREATE EXTERNAL TABLE and tables.insert with externalDataConfiguration alike.
 * The fields are the first file's (each file of a self-describing or autodetected source is read alone).
 */
export async function parseEachFile<F extends { readonly uri: string }, P extends { fields: RestField[]; rows: Json[] }>(
  files: readonly F[],
  parse: (file: F, index: number) => Promise<P>,
): Promise<{ fields: RestField[]; rows: Json[]; fileOf: string[] }> {
  let fields: RestField[] = [];
  const rows: Json[] = [];
  const fileOf: string[] = [];
  for (const [i, f] of files.entries()) {
    const parsed = await parse(f, i);
    if (!fields.length) fields = parsed.fields;
    for (const row of parsed.rows) {
      rows.push(row);
      fileOf.push(f.uri);
    }
  }
  return { fields, rows, fileOf };
}

/**
 * `fileRows` of an external table's resource (a hidden field: analyzer/names.ts reads it): each file's URI, local ones
 * with the file:// scheme the URIs named, and how many of its rows the table kept, in row order.
 */
export function fileRowsOf(fileOf: readonly string[], keptRows: readonly number[], uris: readonly string[]): [string, number][] {
  const local = uris.some((u) => /^file:\/\//i.test(u));
  const out: [string, number][] = [];
  for (const r of keptRows) {
    const f = fileOf[r]!;
    const uri = local && f.startsWith('/') ? `file://${f}` : f;
    const last = out[out.length - 1];
    if (last && last[0] === uri) last[1]++;
    else out.push([uri, 1]);
  }
  return out;
}
