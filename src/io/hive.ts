// Hive-partitioned sources (LOAD DATA ... WITH PARTITION COLUMNS; the
// reference's "Load externally partitioned data"): the directories between
// the source URI prefix and a file's name encode `key=value` pairs, the same
// keys in the same order for every file, and each key becomes a column whose
// value in every row read from the file is the one its path gives.
import { IoError } from './errors.js';

export interface HiveKeys {
  readonly names: readonly string[];
  /** Decoded values (`%xx` escapes), in the order of `names`. */
  readonly values: readonly string[];
}

/** The `key=value` directories of `uri` after `prefix` (both `file://` or both bare paths, or the same object-store scheme). */
export function hiveKeysOf(uri: string, prefix: string): HiveKeys {
  const bare = (u: string): string => u.replace(/^file:\/\//i, '');
  const p = bare(prefix).replace(/\/+$/, '') + '/';
  const u = bare(uri);
  if (!u.startsWith(p)) throw new IoError(400, 'invalid', `Source URI ${uri} does not start with the hive partition URI prefix ${prefix}`);
  const dirs = u.slice(p.length).split('/').slice(0, -1);
  const names: string[] = [];
  const values: string[] = [];
  for (const d of dirs) {
    const eq = d.indexOf('=');
    if (eq <= 0) throw new IoError(400, 'invalid', `Source URI ${uri}: directory ${d} after the hive partition URI prefix is not of the form key=value`);
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

/** AUTO mode's type of one key from all its values: INT64, DATE, TIMESTAMP, else STRING. */
export function inferHiveType(values: readonly string[]): 'INT64' | 'DATE' | 'TIMESTAMP' | 'STRING' {
  const all = (re: RegExp): boolean => values.length > 0 && values.every((v) => re.test(v));
  if (all(/^-?\d{1,18}$/)) return 'INT64';
  if (all(/^\d{4}-\d{2}-\d{2}$/)) return 'DATE';
  if (all(/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/)) return 'TIMESTAMP';
  return 'STRING';
}
