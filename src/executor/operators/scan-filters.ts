// The conditions of a scan's pushed filters that storage can check against
// row-group statistics (ScanOptions.filters): `column op literal` comparisons,
// BETWEEN, IN lists and IS NULL on a plain column of the table, and
// comparisons of a TIMESTAMP column's date (_PARTITIONDATE, DATE(ts)) with a
// date. Anything else
// is left to the executor, which filters every row it gets anyway: these only
// let storage skip row groups that cannot hold a matching row.
import type { Expr, ScanRel } from '../../analyzer/resolved.js';
import type { ScanFilter, ScanValue } from '../../storage/api.js';
import type { SqlType } from '../../types/types.js';

const COMPARE: Record<string, ScanFilter['op']> = { $equal: '=', $less: '<', $less_or_equal: '<=', $greater: '>', $greater_or_equal: '>=' };
const MIRROR: Record<string, ScanFilter['op']> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

/** From the scan's pushed filters and `extra` predicates over its output (a filter right above it). */
export function scanFilters(rel: ScanRel, extra: readonly Expr[] = []): ScanFilter[] {
  const out: ScanFilter[] = [];
  for (const f of [...(rel.pushedFilters ?? []), ...extra]) collect(f, rel, out);
  return out;
}

function collect(e: Expr, rel: ScanRel, out: ScanFilter[]): void {
  if (e.kind === 'logical' && e.op === 'and') {
    for (const a of e.args) collect(a, rel, out);
    return;
  }
  if (e.kind !== 'call' || e.safe) return;
  const [a, b, c] = e.args;
  const op = COMPARE[e.name];
  if (op && e.args.length === 2) {
    if (dateOf(a, rel) || dateOf(b, rel)) return dateFilters(e, rel, out);
    const col = columnOf(a, rel);
    const v = valueOf(b);
    if (col !== undefined && v !== undefined) out.push({ column: col, op, values: [v] });
    const col2 = columnOf(b, rel);
    const v2 = valueOf(a);
    if (col2 !== undefined && v2 !== undefined) out.push({ column: col2, op: MIRROR[op]!, values: [v2] });
    return;
  }
  if (e.name === '$between' && e.args.length === 3) {
    if (dateOf(a, rel)) return dateFilters(e, rel, out);
    const col = columnOf(a, rel);
    const lo = valueOf(b);
    const hi = valueOf(c);
    if (col === undefined) return;
    if (lo !== undefined) out.push({ column: col, op: '>=', values: [lo] });
    if (hi !== undefined) out.push({ column: col, op: '<=', values: [hi] });
    return;
  }
  if (e.name === '$in' && e.args.length >= 2) {
    const col = columnOf(a, rel);
    const values = e.args.slice(1).map(valueOf);
    if (col !== undefined && values.every((v) => v !== undefined)) out.push({ column: col, op: 'in', values: values as ScanValue[] });
    return;
  }
  if (e.name === '$is_null' && e.args.length === 1) {
    const col = columnOf(a, rel);
    if (col !== undefined) out.push({ column: col, op: 'isNull', values: [] });
  }
}

/**
 * The date of a TIMESTAMP column (`_PARTITIONDATE`, `CAST(ts AS DATE)`,
 * `DATE(ts)`): the column, and whether the date is taken in UTC (else in a
 * zone known only when the statement runs).
 */
function dateOf(e: Expr | undefined, rel: ScanRel): { column: number; utc: boolean } | undefined {
  if (!e || e.type.kind !== 'DATE') return undefined;
  let arg: Expr | undefined;
  let zone: Expr | undefined;
  if (e.kind === 'cast' && !e.safe && e.format === undefined) [arg, zone] = [e.arg, e.timeZone];
  else if (e.kind === 'call' && !e.safe && e.name === 'DATE' && (e.args.length === 1 || e.args.length === 2)) [arg, zone] = e.args;
  if (arg?.type.kind !== 'TIMESTAMP') return undefined;
  const column = columnOf(arg, rel);
  if (column === undefined) return undefined;
  return { column, utc: zone?.kind === 'literal' && typeof zone.value === 'string' && zone.value.toUpperCase() === 'UTC' };
}

const DAY_MICROS = 86_400_000_000n;

/**
 * `date(ts) op d` (or BETWEEN) as bounds on the timestamp column: the UTC day
 * [d, d+1). In another zone a day starts at most 14 hours from the UTC one,
 * so the bounds widen by a day each way: fewer row groups skipped, none wrongly.
 */
function dateFilters(e: Expr & { kind: 'call' }, rel: ScanRel, out: ScanFilter[]): void {
  const [a, b, c] = e.args;
  const left = dateOf(a, rel);
  const target = left ?? dateOf(b, rel)!;
  const slack = target.utc ? 0n : DAY_MICROS;
  const day = (x: Expr | undefined): bigint | undefined => {
    const v = x?.kind === 'literal' && x.type.kind === 'DATE' ? x.value : null;
    return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) * DAY_MICROS : undefined;
  };
  const from = (d: bigint | undefined): void => void (d !== undefined && out.push({ column: target.column, op: '>=', values: [d - slack] }));
  const before = (d: bigint | undefined): void => void (d !== undefined && out.push({ column: target.column, op: '<', values: [d + slack] }));
  if (e.name === '$between') {
    from(day(b));
    const hi = day(c);
    before(hi === undefined ? undefined : hi + DAY_MICROS);
    return;
  }
  const d = day(left ? b : a);
  if (d === undefined) return;
  const op = left ? COMPARE[e.name]! : MIRROR[COMPARE[e.name]!]!;
  if (op === '=' || op === '>=') from(d);
  if (op === '>') from(d + DAY_MICROS);
  if (op === '=' || op === '<=') before(d + DAY_MICROS);
  if (op === '<') before(d);
}

/** The table column a plain column reference of the scan reads. */
function columnOf(e: Expr | undefined, rel: ScanRel): number | undefined {
  if (!e || e.kind !== 'column' || e.correlated || collated(e.type)) return undefined;
  const i = rel.columns.findIndex((c) => c.id === e.columnId);
  return i < 0 ? undefined : rel.tableColumns[i];
}

/** A literal's value in the form statistics compare with (NULL and other types: none). */
function valueOf(e: Expr | undefined): ScanValue | undefined {
  if (!e || e.kind !== 'literal' || e.value === null || collated(e.type)) return undefined;
  const v = e.value;
  switch (e.type.kind) {
    case 'INT64':
    case 'TIMESTAMP':
    case 'DATETIME':
      return typeof v === 'bigint' || typeof v === 'number' ? v : undefined;
    case 'FLOAT64':
    case 'DATE':
    case 'TIME':
      return typeof v === 'number' && !Number.isNaN(v) ? v : undefined;
    case 'STRING':
      return typeof v === 'string' ? v : undefined;
    default:
      return undefined;
  }
}

const collated = (t: SqlType): boolean => t.kind === 'STRING' && !!(t as { collation?: string }).collation;
