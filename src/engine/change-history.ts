// APPENDS and CHANGES over a stored table (time-series-functions.md): the
// window checked against the table's history, then its changes read by
// storage/change-history.ts.
import { CHANGE_IS_FOR_UPDATE, CHANGE_TIMESTAMP, CHANGE_TYPE, type HistoryRead, type TableId } from '../storage/api.js';
import { changeRows, transactionWithin } from '../storage/change-history.js';
import { timeTravelMs } from '../storage/table-history.js';
import { scanBatches } from '../storage/table-state.js';
import type { Storage, TableEntry } from '../storage/store.js';
import { QueryError } from '../types/errors.js';
import type { Batch } from '../types/vector.js';

const invalid = (message: string): QueryError => new QueryError(message, 'invalidQuery', 400);

/** CHANGES' largest window (time-series-functions.md, CHANGES: end_timestamp). */
const CHANGES_MAX_RANGE_MS = 24 * 3600 * 1000;

/**
 * The changes `h` asks of table `id` (entry `e`), columns `cols` (indexes
 * into its visible columns, or CHANGE_TYPE and the like). A window reaching
 * before time travel's is refused, as is a start left NULL on a table made
 * before it (the page's note: name a start within the window instead).
 */
export async function historyBatches(st: Storage, id: TableId, e: TableEntry, h: HistoryRead, cols: readonly number[]): Promise<Batch[]> {
  const fqn = `${id.projectId}:${id.datasetId}.${id.tableId}`;
  const now = Date.now();
  const created = Number(e.resource.creationTime ?? 0);
  const td = st.tableData(id.projectId, id.datasetId, id.tableId);
  await td.load();
  // The window is the dataset's (max_time_travel_hours), as the page's note on start_timestamp says.
  const earliest = Math.max(now - timeTravelMs(st.getDataset(id.projectId, id.datasetId)?.resource), td.truncatedBeforeMs);
  if (h.startMs === null && created < earliest) {
    throw invalid(`${h.fn} over ${fqn} with a NULL start: the table was created before the time travel window; give a start_timestamp within it (at or after ${new Date(earliest).toISOString()})`);
  }
  if (h.startMs !== null && h.startMs < earliest) {
    throw invalid(`${h.fn} over ${fqn}: start_timestamp ${new Date(h.startMs).toISOString()} is before the time travel window, which starts at ${new Date(earliest).toISOString()}`);
  }
  // A start before the table's creation reads from its creation: from its first commit (a CTAS's rows can be stamped just before the table's creation time).
  const from = h.startMs === null || h.startMs < created ? -Infinity : h.startMs;
  // The range between the arguments given (a NULL start: the table's creation).
  if (h.fn === 'CHANGES' && h.endMs - (h.startMs ?? created) > CHANGES_MAX_RANGE_MS) {
    throw invalid(`CHANGES over ${fqn}: the range between start_timestamp and end_timestamp can be at most one day`);
  }
  const gens = await td.changeGenerations();
  if (h.fn === 'CHANGES' && transactionWithin(gens, from, h.endMs)) {
    throw invalid(`CHANGES over ${fqn}: a multi-statement transaction committed to the table within the requested time range`);
  }
  // Only the table's columns the query reads are read.
  const columns = st.columnsOf(e);
  const wanted = [...new Set(cols.filter((c) => c >= 0))];
  const rows = await changeRows(gens, wanted.map((c) => columns[c]!), h.fn === 'CHANGES', from, h.endMs);
  const n = wanted.length;
  const at = (c: number): number => (c === CHANGE_TYPE ? n : c === CHANGE_TIMESTAMP ? n + 1 : c === CHANGE_IS_FOR_UPDATE ? n + 2 : wanted.indexOf(c));
  return [...scanBatches(rows, cols.map(at))];
}
