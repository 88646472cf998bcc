// APPENDS(TABLE t, start, end) and CHANGES(TABLE t, start, end) in FROM
// (time-series-functions.md): a scan of the table's change history
// (ScanRel.history; storage/change-history.ts reads it) with the table's
// columns as they are today and _CHANGE_TYPE, _CHANGE_TIMESTAMP (and
// CHANGES' _CHANGE_IS_FOR_UPDATE). What the window may be is checked where
// the history is (engine/change-history.ts); here, what the call may name.
import type * as A from '../../grammar/ast.js';
import { CHANGE_IS_FOR_UPDATE, CHANGE_TIMESTAMP, CHANGE_TYPE } from '../storage/api.js';
import { T, typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { coerce } from './coercion.js';
import { resolveExpr } from './expr.js';
import { constantValue, rowAccessFilter, tableIdOf, tableNotFound } from './names.js';
import { rangeOver, type Leaf } from './from.js';
import type { Rel } from './resolved.js';
import { Scope } from './scope.js';

export function changeHistoryTvf(an: Analyzer, item: A.TvfRef, fn: 'APPENDS' | 'CHANGES'): Leaf {
  // APPENDS' timestamps default to NULL; CHANGES' end_timestamp has no default.
  const min = fn === 'APPENDS' ? 1 : 3;
  if (item.args.length < min || item.args.length > 3) throw sqlError(`Number of arguments does not match for table-valued function ${fn}: it takes ${fn === 'APPENDS' ? '1 to 3' : '3'}`, item.loc);
  const t = item.args[0]!;
  if (t.kind !== 'TableArg') throw sqlError(`${fn}'s first argument must be a table, preceded by the word TABLE: ${fn}(TABLE dataset.table, ...)`, t.loc);
  const id = tableIdOf(an, t.path, t.loc);
  const fqn = `${id.projectId}.${id.datasetId}.${id.tableId}`;
  if (id.tableId.endsWith('*')) throw sqlError(`${fn} does not support wildcard tables: ${fqn}`, t.loc);
  const info = an.getTable(id);
  if (!info) throw tableNotFound(an, id);
  // Limitations: only regular tables (APPENDS: no clones or snapshots either; CHANGES reads a clone's own history).
  const what =
    info.kind === 'VIEW' ? 'views'
    : info.kind === 'MATERIALIZED_VIEW' ? 'materialized views'
    : info.kind === 'EXTERNAL' ? 'external tables'
    : info.resource.type === 'SNAPSHOT' ? 'table snapshots'
    : fn === 'APPENDS' && info.resource.cloneDefinition ? 'table clones'
    : info.kind !== 'TABLE' ? `${info.kind.toLowerCase()}s`
    : undefined;
  if (what) throw sqlError(`${fn} does not support ${what}: ${fqn}`, t.loc);
  if (fn === 'CHANGES' && (info.resource.options as Record<string, unknown> | undefined)?.enable_change_history !== true) {
    throw sqlError(`CHANGES requires the table option enable_change_history = TRUE, which table ${fqn} does not have`, t.loc);
  }
  an.env.onClock?.();
  const now = an.env.nowMs ?? Date.now();
  const startMs = timestampArg(an, item.args[1], fn, 'start_timestamp');
  const endMs = timestampArg(an, item.args[2], fn, 'end_timestamp');
  if (endMs !== null && endMs > now + 1) throw sqlError(`${fn}'s end_timestamp ${new Date(endMs).toISOString()} is in the future`, item.args[2]!.loc);
  if (startMs !== null && endMs !== null && startMs > endMs) throw sqlError(`${fn}'s start_timestamp is after its end_timestamp`, item.args[1]!.loc);
  const extra = [
    an.newColumn('_CHANGE_TYPE', T.STRING),
    an.newColumn('_CHANGE_TIMESTAMP', T.TIMESTAMP),
    ...(fn === 'CHANGES' ? [an.newColumn('_CHANGE_IS_FOR_UPDATE', T.BOOL)] : []),
  ];
  // No partition pseudo-columns (Limitations): the table's own columns only.
  const columns = [...info.columns.map((c) => an.newColumn(c.name, c.type)), ...extra];
  const tableColumns = [...info.columns.map((_, i) => i), CHANGE_TYPE, CHANGE_TIMESTAMP, ...(fn === 'CHANGES' ? [CHANGE_IS_FOR_UPDATE] : [])];
  // end NULL: every change up to the query's start (nowMs is that instant's millisecond, commits are stamped to the microsecond).
  const scan: Rel = { kind: 'scan', table: info.id, tableColumns, columns, history: { fn, startMs, endMs: endMs ?? now + 1 } };
  const rel = rowAccessFilter(an, info, scan);
  const names = columns.map((c) => c.name);
  const rv = rangeOver(item.alias ?? fn, rel, names);
  return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
}

/** A constant TIMESTAMP argument in epoch ms (NULL or absent: null); a STRING literal reads as a TIMESTAMP. */
function timestampArg(an: Analyzer, a: A.TvfRef['args'][number] | undefined, fn: string, name: string): number | null {
  if (a === undefined) return null;
  if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError(`${fn}'s ${name} must be a TIMESTAMP`, a.loc);
  let x = resolveExpr(an, a, { scope: new Scope(), clause: `${fn} argument` });
  if (x.type.kind === 'STRING') x = coerce(x, T.TIMESTAMP, a.loc);
  if (x.type.kind !== 'TIMESTAMP' && !(x.kind === 'literal' && x.value === null)) {
    throw sqlError(`No matching signature for ${fn}: ${name} must be TIMESTAMP, got ${typeToSql(x.type)}`, a.loc);
  }
  const v = constantValue(x, an.env.timeZone ?? 'UTC');
  if (v === null) return null;
  if (typeof v !== 'bigint') throw sqlError(`${fn}'s ${name} must be a constant TIMESTAMP`, a.loc);
  return Number(v) / 1000;
}
