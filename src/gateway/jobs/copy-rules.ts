// The rules a copy job's tables must meet before anything is written (managing-tables.md, Limitations on copying
// tables; managing-partitioned-tables.md, Copy a partitioned table), and what a new destination takes from its
// source. Partition-decorated copies (partition-copy.ts) write one partition and are not held to them.
import { invalid } from '../errors.js';
import { isObj, str, type Json } from '../validate.js';
import { partitionSpecText } from '../../types/partition-spec-text.js';

export interface CopyTable {
  /** `project:dataset.table`, for messages. */
  readonly name: string;
  readonly resource: Json;
}

const fieldsOf = (r: Json): Json[] => {
  const s = r['schema'];
  return isObj(s) && Array.isArray(s['fields']) ? (s['fields'] as Json[]) : [];
};

/** A schema's shape for comparing: names (case-insensitive), types, modes, nested fields. */
function shape(fields: readonly Json[]): string {
  return fields
    .map((f) => {
      const type = (str(f['type']) ?? 'STRING').toUpperCase().replace(/^INTEGER$/, 'INT64').replace(/^FLOAT$/, 'FLOAT64').replace(/^BOOLEAN$/, 'BOOL').replace(/^RECORD$/, 'STRUCT');
      const nested = Array.isArray(f['fields']) ? `<${shape(f['fields'] as Json[])}>` : '';
      return `${String(f['name']).toLowerCase()} ${type}${nested} ${(str(f['mode']) ?? 'NULLABLE').toUpperCase()}`;
    })
    .join(', ');
}

const partitioned = (r: Json): boolean => isObj(r['timePartitioning']) || isObj(r['rangePartitioning']);
const byIngestionTime = (r: Json): boolean => isObj(r['timePartitioning']) && !str(r['timePartitioning']['field']);

function incompatible(expected: Json, input: Json): Error {
  return invalid(`Incompatible table partitioning specification. Expects partitioning specification ${partitionSpecText(expected).text}, but input partitioning specification is ${partitionSpecText(input).text}`);
}

/**
 * Refuses a copy of `sources` into `dest` (undefined: a table the copy makes) with `write` that the pages rule out:
 * several sources of different schemas, partitioning or clustering (a mixture of partitioned and non-partitioned
 * ones included); into an existing table, a partitioning and clustering other than the source's (a non-partitioned
 * source may go into an ingestion-time partitioned table, a partitioned one into a non-partitioned table); an append
 * of a column the destination lacks or has as another type, or into a table whose columns beyond the source's have
 * default values.
 */
export function checkCopyRules(sources: readonly CopyTable[], dest: CopyTable | undefined, write: string): void {
  const first = sources[0]!;
  for (const s of sources.slice(1)) {
    if (shape(fieldsOf(s.resource)) !== shape(fieldsOf(first.resource))) {
      throw invalid(`Copying multiple source tables needs identical schemas: ${s.name} has a schema other than ${first.name}'s`);
    }
    if (partitionSpecText(s.resource).text !== partitionSpecText(first.resource).text) throw incompatible(first.resource, s.resource);
  }
  if (!dest) return;
  const d = dest.resource;
  const src = first.resource;
  const allowed = (partitioned(src) && !partitioned(d)) || (!partitioned(src) && byIngestionTime(d) && partitionSpecText(src).text === 'none');
  if (!allowed && partitionSpecText(src).text !== partitionSpecText(d).text) throw incompatible(d, src);
  if (write === 'WRITE_APPEND' || write === 'WRITE_EMPTY') {
    // The rows join the destination's schema: a source column it lacks, or has as another type, would be dropped or
    // mangled, which no page allows.
    const destFields = new Map(fieldsOf(d).map((f) => [String(f['name']).toLowerCase(), f]));
    for (const f of fieldsOf(src)) {
      const to = destFields.get(String(f['name']).toLowerCase());
      if (!to) throw invalid(`Provided Schema does not match Table ${dest.name}. Cannot add fields (field: ${String(f['name'])})`);
      const [a, b] = [shape([f]).split(' ').slice(1, -1).join(' '), shape([to]).split(' ').slice(1, -1).join(' ')];
      if (a !== b) throw invalid(`Provided Schema does not match Table ${dest.name}. Field ${String(f['name'])} has changed type from ${b} to ${a}`);
    }
    const have = new Set(fieldsOf(src).map((f) => String(f['name']).toLowerCase()));
    const defaulted = fieldsOf(d).find((f) => !have.has(String(f['name']).toLowerCase()) && f['defaultValueExpression'] !== undefined && f['defaultValueExpression'] !== null);
    if (defaulted) {
      throw invalid(`Cannot append ${first.name} to ${dest.name}: the destination's column ${String(defaulted['name'])} is not in the source and has a default value; use INSERT ... SELECT instead`);
    }
  }
}

/** What a new destination takes from its (first) source: its partitioning and clustering (managing-partitioned-tables.md). */
export function specOfSource(source: Json): Json {
  const out: Json = {};
  for (const k of ['timePartitioning', 'rangePartitioning', 'clustering', 'requirePartitionFilter']) if (source[k] !== undefined) out[k] = source[k];
  return out;
}
