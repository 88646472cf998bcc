// The columns of INFORMATION_SCHEMA.JOBS (JOBS_BY_PROJECT, JOBS_BY_USER) and JOBS_TIMELINE (_BY_PROJECT, _BY_USER) as
// information-schema-jobs.md and information-schema-jobs-timeline.md list them (Schema). The records linked to the
// REST reference (job_stages: ExplainQueryStage, timeline: QueryTimelineSample, bi_engine_statistics,
// search_statistics, ...) carry the REST fields in snake_case, as dml_statistics does dmlStats'. The rows come from
// the gateway's job registry (spec §1.6.5: `_bqemu_jobs.JOBS` and `_bqemu_jobs.JOBS_TIMELINE`, engine/query.ts).
import { T, arrayOf, type SqlType, type StructType } from '../types/types.js';

const S = T.STRING;
const I = T.INT64;
const col = (name: string, type: SqlType = S) => ({ name, type });
const struct = (fields: Record<string, SqlType>): StructType => ({ kind: 'STRUCT', fields: Object.entries(fields).map(([name, type]) => ({ name, type })) });

const tableRef = struct({ project_id: S, dataset_id: S, table_id: S });
const errorProto = struct({ reason: S, location: S, debug_info: S, message: S });
const labels = arrayOf(struct({ key: S, value: S }));

/** Job.md, ExplainQueryStep. */
const step = struct({ kind: S, substeps: arrayOf(S) });
/** Job.md, ExplainQueryStage. */
const stage = struct({
  name: S, id: I, start_ms: I, end_ms: I, input_stages: arrayOf(I),
  wait_ratio_avg: T.FLOAT64, wait_ms_avg: I, wait_ratio_max: T.FLOAT64, wait_ms_max: I,
  read_ratio_avg: T.FLOAT64, read_ms_avg: I, read_ratio_max: T.FLOAT64, read_ms_max: I,
  compute_ratio_avg: T.FLOAT64, compute_ms_avg: I, compute_ratio_max: T.FLOAT64, compute_ms_max: I,
  write_ratio_avg: T.FLOAT64, write_ms_avg: I, write_ratio_max: T.FLOAT64, write_ms_max: I,
  shuffle_output_bytes: I, shuffle_output_bytes_spilled: I, records_read: I, records_written: I,
  parallel_inputs: I, completed_parallel_inputs: I, status: S, steps: arrayOf(step), slot_ms: I, compute_mode: S,
});
/** Job.md, QueryTimelineSample. */
const timelineSample = struct({ elapsed_ms: I, total_slot_ms: I, pending_units: I, completed_units: I, active_units: I, estimated_runnable_units: I });
const reason = struct({ code: S, message: S });

export const JOBS_COLUMNS = [
  col('creation_time', T.TIMESTAMP), col('project_id'), col('project_number', I), col('user_email'), col('principal_subject'), col('job_id'),
  col('job_type'), col('statement_type'), col('priority'), col('start_time', T.TIMESTAMP), col('end_time', T.TIMESTAMP), col('query'),
  col('state'), col('reservation_id'), col('total_bytes_processed', I), col('total_slot_ms', I), col('error_result', errorProto),
  col('cache_hit', T.BOOL), col('destination_table', tableRef), col('referenced_tables', arrayOf(tableRef)), col('labels', labels),
  col('parent_job_id'), col('total_bytes_billed', I), col('total_modified_partitions', I), col('job_stages', arrayOf(stage)),
  col('timeline', arrayOf(timelineSample)),
  col('dml_statistics', struct({ inserted_row_count: I, deleted_row_count: I, updated_row_count: I })),
  col('session_info', struct({ session_id: S })), col('transaction_id'), col('query_dialect'), col('continuous', T.BOOL),
  col('continuous_query_info', struct({ output_watermark: T.TIMESTAMP })),
  col('job_creation_reason', struct({ code: S })),
  col('query_info', struct({
    resource_warning: S,
    query_hashes: struct({ normalized_literals: S }),
    performance_insights: struct({ avg_previous_execution_ms: I }),
  })),
  col('bi_engine_statistics', struct({ bi_engine_mode: S, acceleration_mode: S, bi_engine_reasons: arrayOf(reason) })),
  col('search_statistics', struct({ index_usage_mode: S, index_unused_reasons: arrayOf(struct({ code: S, message: S, base_table: tableRef, index_name: S })) })),
  col('vector_search_statistics', struct({ index_usage_mode: S, index_unused_reasons: arrayOf(struct({ code: S, message: S, base_table: tableRef, index_name: S })) })),
  col('materialized_view_statistics', struct({ materialized_view: arrayOf(struct({ table_reference: tableRef, chosen: T.BOOL, estimated_bytes_saved: I, rejected_reason: S })) })),
  col('metadata_cache_statistics', struct({ table_metadata_cache_usage: arrayOf(struct({ table_reference: tableRef, unused_reason: S, explanation: S, staleness: T.INTERVAL, table_type: S })) })),
  col('external_service_costs', arrayOf(struct({ external_service: S, bytes_processed: I, bytes_billed: I, slot_ms: I, reserved_slot_count: I, billing_method: S }))),
  col('transferred_bytes', I), col('total_services_sku_slot_ms', I),
  // Reservations (edition, reservation_group_path) the emulator has none of: NULL.
  col('edition'), col('reservation_group_path', arrayOf(S)),
];

/** information-schema-jobs-timeline.md, Schema: one row per second of each job's execution. */
export const JOBS_TIMELINE_COLUMNS = [
  col('period_start', T.TIMESTAMP), col('period_slot_ms', I), col('project_id'), col('project_number', I), col('user_email'),
  col('principal_subject'), col('job_id'), col('job_type'), col('labels', labels), col('statement_type'), col('priority'),
  col('parent_job_id'), col('job_creation_time', T.TIMESTAMP), col('job_start_time', T.TIMESTAMP), col('job_end_time', T.TIMESTAMP),
  col('state'), col('reservation_id'), col('reservation_group_path', arrayOf(S)), col('edition'), col('total_bytes_billed', I),
  col('total_bytes_processed', I), col('error_result', errorProto), col('cache_hit', T.BOOL), col('period_shuffle_ram_usage_ratio', T.FLOAT64),
  col('period_estimated_runnable_units', I), col('transaction_id'),
];

/** The registry table a JOBS* view name reads (`JOBS` or `JOBS_TIMELINE`), undefined for other names. */
export function jobsTableOf(view: string): 'JOBS' | 'JOBS_TIMELINE' | undefined {
  if (view === 'JOBS' || view === 'JOBS_BY_PROJECT' || view === 'JOBS_BY_USER') return 'JOBS';
  if (view === 'JOBS_TIMELINE' || view === 'JOBS_TIMELINE_BY_PROJECT' || view === 'JOBS_TIMELINE_BY_USER') return 'JOBS_TIMELINE';
  return undefined;
}
