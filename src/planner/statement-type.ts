// The statementType a statement reports, known from its syntax alone: a dry
// run answers with it, and a script's child job keeps it when its statement
// fails (the real service still types a failed child: SELECT, INSERT, ...).
// The names match what the statements report when they run (the ddl-*.ts, dml.ts and data-statements.ts modules).
import type * as A from '../../grammar/ast.js';
import type { TableId } from '../storage/api.js';
import type { QueryResult } from './api.js';

/** A statement's result without rows (DDL, DML). */
export function statementResult(statementType: string, extra: Partial<QueryResult> = {}): QueryResult {
  return { columns: null, batches: [], statementType, totalBytesProcessed: 0, ...extra };
}

/** A table's name as the service's messages write it (`p:d.t`). */
export const fq = (id: TableId): string => `${id.projectId}:${id.datasetId}.${id.tableId}`;

const DROP_TYPES: Partial<Record<A.DropObjectType, string>> = {
  'AGGREGATE FUNCTION': 'DROP_FUNCTION',
  'ALL ROW ACCESS POLICIES': 'DROP_ROW_ACCESS_POLICY',
  'VECTOR INDEX': 'DROP_SEARCH_INDEX',
};

const ALTER_TYPES: Partial<Record<A.AlterStmt['objectType'], string>> = {
  SCHEMA: 'ALTER_SCHEMA',
  VIEW: 'ALTER_VIEW',
  'MATERIALIZED VIEW': 'ALTER_MATERIALIZED_VIEW',
  MODEL: 'ALTER_MODEL',
};

/** Undefined where the syntax does not tell (EXECUTE IMMEDIATE runs a statement known only at run time) or for script control flow. */
export function statementTypeOf(st: A.Statement): string | undefined {
  switch (st.kind) {
    case 'QueryStatement':
      return 'SELECT';
    case 'CreateTable':
      return st.external ? 'CREATE_EXTERNAL_TABLE' : st.snapshot ? 'CREATE_SNAPSHOT_TABLE' : st.asQuery ? 'CREATE_TABLE_AS_SELECT' : 'CREATE_TABLE';
    case 'CreateView':
      return st.materialized ? 'CREATE_MATERIALIZED_VIEW' : 'CREATE_VIEW';
    case 'CreateFunction':
      return st.tableFunction ? 'CREATE_TABLE_FUNCTION' : 'CREATE_FUNCTION';
    case 'CreateSchema':
      return 'CREATE_SCHEMA';
    case 'CreateProcedure':
      return 'CREATE_PROCEDURE';
    case 'CreateModel':
      return 'CREATE_MODEL';
    case 'CreateRowAccessPolicy':
      return 'CREATE_ROW_ACCESS_POLICY';
    case 'CreatePropertyGraph':
      return 'CREATE_PROPERTY_GRAPH';
    case 'CreateIndex':
      return 'CREATE_SEARCH_INDEX';
    case 'Drop':
      return DROP_TYPES[st.objectType] ?? `DROP_${st.objectType.replace(/ /g, '_')}`;
    case 'Alter':
      return ALTER_TYPES[st.objectType] ?? 'ALTER_TABLE';
    case 'UndropSchema':
      return 'UNDROP_SCHEMA';
    case 'Insert':
      return 'INSERT';
    case 'Update':
      return 'UPDATE';
    case 'Delete':
      return 'DELETE';
    case 'Merge':
      return 'MERGE';
    case 'Truncate':
      return 'TRUNCATE_TABLE';
    case 'Assert':
      return 'ASSERT';
    case 'ExportData':
      return 'EXPORT_DATA';
    case 'LoadData':
      return 'LOAD_DATA';
    case 'Transaction':
      return `${st.action}_TRANSACTION`;
    case 'Grant':
      return st.revoke ? 'REVOKE' : 'GRANT';
    case 'Call':
      return 'CALL';
    default:
      return undefined;
  }
}
