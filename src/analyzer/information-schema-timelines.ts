// INFORMATION_SCHEMA.STREAMING_TIMELINE[_BY_PROJECT | _BY_FOLDER | _BY_ORGANIZATION]
// (information-schema-streaming*.md) and WRITE_API_TIMELINE[...] (information-schema-write-api*.md): per minute,
// table and error code (the Storage Write API's also per stream type), the requests the service received
// (QueryCatalog.ingestionTimeline). The emulator has no folders: _BY_FOLDER reads the project's rows with an empty
// folder_numbers; its one organization holds every project, which _BY_ORGANIZATION reads.
import type { TimelineRow } from '../storage/api.js';
import { T, arrayOf, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import type { VirtualTable } from './context.js';

const col = (name: string, type: SqlType = T.STRING) => ({ name, type });

/** The timeline a view name reads and its scope, undefined for other names. */
export function timelineView(view: string): { kind: TimelineRow['kind']; scope: 'PROJECT' | 'FOLDER' | 'ORGANIZATION' } | undefined {
  const m = /^(STREAMING|WRITE_API)_TIMELINE(?:_BY_(PROJECT|FOLDER|ORGANIZATION))?$/.exec(view);
  if (!m) return undefined;
  return { kind: m[1] as TimelineRow['kind'], scope: (m[2] ?? 'PROJECT') as 'PROJECT' | 'FOLDER' | 'ORGANIZATION' };
}

/**
 * The view's rows: `rows` (every project's) narrowed to `projectId` unless the scope is the organization, and to
 * tables whose dataset is in the region (`inRegion`; a dataset since deleted keeps its rows).
 */
export function timelineTable(view: { kind: TimelineRow['kind']; scope: string }, rows: readonly TimelineRow[], projectId: string, inRegion: (p: string, d: string) => boolean): VirtualTable {
  const folder = view.scope === 'FOLDER';
  const write = view.kind === 'WRITE_API';
  const columns = [
    col('start_timestamp', T.TIMESTAMP),
    ...(folder ? [col('folder_numbers', arrayOf(T.INT64))] : []),
    col('project_id'), col('project_number', T.INT64), col('dataset_id'), col('table_id'),
    ...(write ? [col('stream_type')] : []),
    col('error_code'), col('total_requests', T.INT64), col('total_rows', T.INT64), col('total_input_bytes', T.INT64),
  ];
  const out: Value[][] = [];
  for (const r of rows) {
    if (view.scope !== 'ORGANIZATION' && r.projectId !== projectId) continue;
    if (!inRegion(r.projectId, r.datasetId)) continue;
    out.push([
      BigInt(r.minuteMs) * 1000n,
      ...(folder ? [[] as Value[]] : []),
      r.projectId, null, r.datasetId, r.tableId,
      ...(write ? [r.streamType] : []),
      r.errorCode, BigInt(r.requests), BigInt(r.rows), BigInt(r.bytes),
    ]);
  }
  return { columns, rows: out };
}
