// The one call the engine's gRPC service makes into the SQL pipeline
// (grammar -> analyzer -> planner -> executor) for jobs.query / jobs.insert.
import type { QueryCatalog, TableId } from '../storage/api.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import type { Batch } from '../types/vector.js';

export interface TypedValue {
  readonly type: SqlType;
  readonly value: Value;
}

export interface QueryParameters {
  /** Lower-cased names (parameter names are case-insensitive). */
  readonly named: ReadonlyMap<string, TypedValue>;
  readonly positional: readonly TypedValue[];
  /**
   * The request's parameter mode (parameterMode, else what its parameters are):
   * a query uses named or positional parameters, never both (parameterized-queries.md).
   */
  readonly mode?: 'NAMED' | 'POSITIONAL';
}

export interface QueryContext {
  readonly sql: string;
  readonly projectId: string;
  /** Request defaultDataset, else the server's --dataset, else undefined. */
  readonly defaultDataset?: { readonly projectId: string; readonly datasetId: string };
  readonly params: QueryParameters;
  readonly catalog: QueryCatalog;
  readonly jobId: string;
  /** Aborted when the job is cancelled or the client goes away: stop at the next batch. */
  readonly signal: AbortSignal;
  readonly dryRun: boolean;
  /** Statement start instant in epoch microseconds: CURRENT_TIMESTAMP() etc. are stable within a job. */
  readonly nowMicros: bigint;
  /** The principal's e-mail (SESSION_USER()). */
  readonly sessionUser: string;
  /** Default time zone (the request's `time_zone` connection property); UTC when absent. */
  readonly timeZone?: string;
  /** The job names a destination table (configuration.query.destinationTable): only a single query may have one. */
  readonly hasDestination?: boolean;
  /** A session's state its queries share (createSession / connectionProperties session_id); absent for a lone query. */
  readonly session?: SessionState;
  /** Ends the session `id` of this project (CALL BQ.ABORT_SESSION('id')); false when there is none. */
  readonly abortSession?: (id: string) => boolean;
  /** The job's location (engine/location.ts: read when the analysis has resolved it), named in not-found errors; US when absent. */
  readonly location?: { readonly value: string };
  /** The request's tableDefinitions, read into tables (spec §1.6.4): bare name -> table, resolved before the default dataset. */
  readonly externalTables?: ReadonlyMap<string, TableId>;
  /** The job's maximumBytesBilled (0 or absent: no limit). */
  readonly maximumBytesBilled?: number;
  /** The query is a view's body (the check of a view inserted over REST): no default dataset, a stored body's names. */
  readonly viewBody?: boolean;
}

/** What a session keeps between its queries (with its catalog's temporary tables and open transaction). */
export interface SessionState {
  /** The session's id (@@session_id). */
  readonly id: string;
  readonly variables: Map<string, TypedValue>;
  readonly tempFunctions: Map<string, import('../../grammar/ast.js').CreateFunctionStmt>;
  readonly tempTables: Map<string, TableId>;
  /** Ends the session after the running query (CALL BQ.ABORT_SESSION()). */
  readonly abort: () => void;
}

export interface ResultColumn {
  readonly name: string;
  readonly type: SqlType;
}

export interface QueryResult {
  /** Null for statements that return no rows (DDL, DML without THEN RETURN). */
  readonly columns: readonly ResultColumn[] | null;
  readonly batches: readonly Batch[];
  /** SELECT, CREATE_TABLE, CREATE_TABLE_AS_SELECT, CREATE_VIEW, DROP_TABLE, INSERT, UPDATE, DELETE, MERGE, SCRIPT, ... */
  readonly statementType: string;
  readonly numDmlAffectedRows?: number;
  /** CREATE, REPLACE, SKIP, DROP, ALTER. */
  readonly ddlOperationPerformed?: string;
  readonly ddlTargetTable?: TableId;
  readonly ddlTargetRoutine?: { readonly projectId: string; readonly datasetId: string; readonly routineId: string };
  readonly totalBytesProcessed: number;
  /** What the service bills for it (planner/billing.ts); absent: nothing. */
  readonly totalBytesBilled?: number;
  /** More JobStatistics2 fields (REST names: referencedTables, dmlStats, ddlTargetDataset, ...), merged into the job's. */
  readonly statistics?: Readonly<Record<string, unknown>>;
}

// The pipeline's error type lives on the ground floor (storage and the engine raise it too).
export { MAX_ROW_BYTES, QueryError, resourceError, rowTooLarge } from '../types/errors.js';

/** The id of a script's child job `index` (0-based, in the order the statements ran): the real service's `script_job_...` form, under which the gateway registers it. */
export function childJobId(parentJobId: string, index: number): string {
  return `script_job_${parentJobId}_${index}`;
}

export type RunQuery = (ctx: QueryContext) => Promise<QueryResult>;
