// PARTITION BY partition_expression as a table's REST timePartitioning / rangePartitioning (CREATE TABLE, CREATE
// MATERIALIZED VIEW, CREATE EXTERNAL TABLE, and CREATE VECTOR INDEX, whose PARTITION BY must be the table's).
import type * as A from '../../grammar/ast.js';
import { sqlError } from '../analyzer/errors.js';
import type { Column } from '../types/schema.js';
import type { Session } from './session.js';
export { partitionSpecText } from '../types/partition-spec-text.js';

const PARTITION_BY_FORMS =
  'PARTITION BY expression must be DATE(<timestamp_column>), DATE(<datetime_column>), DATETIME_TRUNC(<datetime_column>, DAY/HOUR/MONTH/YEAR), ' +
  'a DATE-type column, TIMESTAMP_TRUNC(<timestamp_column>, DAY/HOUR/MONTH/YEAR), DATE_TRUNC(<date_column>, MONTH/YEAR), ' +
  'or RANGE_BUCKET(<int64_column>, GENERATE_ARRAY(<int64_value>, <int64_value>[, <int64_value>]))';

/**
 * The REST `timePartitioning` / `rangePartitioning` of a CREATE TABLE's PARTITION BY
 * (what tables.get shows, and what dbt compares to decide whether a table is replaceable).
 * `partition_expiration_days` from OPTIONS becomes timePartitioning.expirationMs.
 */
export async function partitioning(s: Session, e: A.Expr, columns: readonly Column[], resource: Record<string, unknown>): Promise<Record<string, unknown>> {
  const bad = (): Error => sqlError(PARTITION_BY_FORMS, e.loc);
  const column = (x: A.Expr | undefined): Column | 'ingestion' => {
    if (x?.kind !== 'PathExpr' || x.parts.length !== 1) throw bad();
    const name = x.parts[0]!;
    if (/^_PARTITION(TIME|DATE)$/i.test(name)) return 'ingestion';
    const c = columns.find((k) => k.name.toLowerCase() === name.toLowerCase());
    if (!c) throw sqlError(`Unrecognized name: ${name}`, x.loc);
    return c;
  };
  const unit = (x: A.Expr | undefined, allowed: readonly string[]): string => {
    const u = x?.kind === 'PathExpr' && x.parts.length === 1 ? x.parts[0]!.toUpperCase() : '';
    if (!allowed.includes(u)) throw bad();
    return u;
  };
  const time = (c: Column | 'ingestion', type: string): Record<string, unknown> => {
    const options = resource.options as Record<string, unknown> | undefined;
    const days = options?.['partition_expiration_days'];
    const tp: Record<string, unknown> = { type, ...(c === 'ingestion' ? {} : { field: c.name }) };
    if (days !== undefined && days !== null) tp.expirationMs = String(Math.round(Number(days) * 86_400_000));
    return { timePartitioning: tp };
  };
  const kindOf = (c: Column | 'ingestion'): string => (c === 'ingestion' ? 'TIMESTAMP' : c.type.kind);
  if (e.kind === 'PathExpr') {
    const c = column(e);
    if (c !== 'ingestion' && c.type.kind !== 'DATE') throw bad();
    return time(c, 'DAY');
  }
  if (e.kind !== 'FunctionCall' || e.name.length !== 1) throw bad();
  const fn = e.name[0]!.toUpperCase();
  const [a0, a1] = e.args;
  switch (fn) {
    case 'DATE': {
      const c = column(a0);
      if (e.args.length !== 1 || !['TIMESTAMP', 'DATETIME'].includes(kindOf(c))) throw bad();
      return time(c, 'DAY');
    }
    case 'TIMESTAMP_TRUNC':
    case 'DATETIME_TRUNC':
    case 'DATE_TRUNC': {
      const c = column(a0);
      // creating-partitioned-tables.md, Create an ingestion-time partitioned table (SQL): monthly or yearly ingestion-time
      // partitions are also written DATE_TRUNC(_PARTITIONTIME, MONTH | YEAR).
      if (fn === 'DATE_TRUNC' && c === 'ingestion' && e.args.length === 2) return time(c, unit(a1, ['MONTH', 'YEAR']));
      const want = fn === 'TIMESTAMP_TRUNC' ? 'TIMESTAMP' : fn === 'DATETIME_TRUNC' ? 'DATETIME' : 'DATE';
      if (e.args.length !== 2 || kindOf(c) !== want) throw bad();
      return time(c, unit(a1, fn === 'DATE_TRUNC' ? ['MONTH', 'YEAR'] : ['DAY', 'HOUR', 'MONTH', 'YEAR']));
    }
    case 'RANGE_BUCKET': {
      const c = column(a0);
      if (c === 'ingestion' || c.type.kind !== 'INT64' || a1?.kind !== 'FunctionCall' || a1.name.join('.').toUpperCase() !== 'GENERATE_ARRAY') throw bad();
      if (a1.args.length < 2 || a1.args.length > 3) throw bad();
      const nums: bigint[] = [];
      for (const x of a1.args) {
        const v = (await s.evalScalar(x)).value;
        if (typeof v !== 'bigint') throw bad();
        nums.push(v);
      }
      const [start, end, interval = 1n] = nums as [bigint, bigint, bigint?];
      // GENERATE_ARRAY's own refusal; then at most 10,000 partitions (partitioned-tables: integer range partitioning).
      if (interval === 0n) throw sqlError('Sequence step cannot be 0.', a1.loc);
      if (interval < 0n || end <= start) throw sqlError(`RANGE_BUCKET partitioning needs GENERATE_ARRAY(start, end, interval) with start < end and a positive interval`, a1.loc);
      const count = (end - start + interval - 1n) / interval;
      if (count > 10_000n) throw sqlError(`Too many partitions: RANGE_BUCKET over GENERATE_ARRAY(${start}, ${end}, ${interval}) makes ${count} partitions; a table has at most 10000`, a1.loc);
      return { rangePartitioning: { field: c.name, range: { start: String(start), end: String(end), interval: String(interval) } } };
    }
    default:
      throw bad();
  }
}
