// Per-statement analysis state: the column-id counter, the environment the
// statement runs in (catalog, default dataset, parameters, script variables,
// temporary functions) and the CTEs visible at the current nesting level.
import type * as A from '../../grammar/ast.js';
import type { QueryParameters, TypedValue } from '../planner/api.js';
import type { QueryCatalog, TableId, TableInfo } from '../storage/api.js';
import type { SqlType } from '../types/types.js';
import type { Expr, ResolvedColumn } from './resolved.js';

export interface CteDef {
  readonly id: number;
  readonly name: string;
  readonly columns: readonly ResolvedColumn[];
  /** Value-table CTE (SELECT AS VALUE). */
  readonly isValueTable: boolean;
}

/** A row source the analyzer builds itself (INFORMATION_SCHEMA views, the job registry). */
export interface VirtualTable {
  readonly columns: readonly { readonly name: string; readonly type: SqlType }[];
  readonly rows: readonly (readonly import('../types/values.js').Value[])[];
}

export interface AnalyzerEnv {
  readonly catalog: QueryCatalog;
  readonly projectId: string;
  readonly defaultDataset?: { readonly projectId: string; readonly datasetId: string };
  readonly params: QueryParameters;
  /** Default time zone of the request (@@time_zone); UTC when absent. */
  readonly timeZone?: string;
  /** Default time zone of FOR SYSTEM_TIME AS OF expressions: America/Los_Angeles unless a zone was chosen (analyzer/as-of.ts). */
  readonly asOfTimeZone?: string;
  /** Parses view bodies and persistent SQL function bodies. */
  readonly parse: (sql: string) => A.Script;
  /** CREATE TEMP FUNCTION definitions of the current script (upper-cased names). */
  readonly tempFunctions: Map<string, A.CreateFunctionStmt>;
  /** Script variables (DECLARE), lower-cased. */
  readonly variables: Map<string, TypedValue>;
  /** Session temp tables: bare name -> storage id. */
  readonly tempTables: Map<string, TableId>;
  /** The request's tableDefinitions (spec §1.6.4): bare name -> the table they were read into; before the default dataset. */
  readonly externalTables?: ReadonlyMap<string, TableId>;
  /** Rows of region-*.INFORMATION_SCHEMA.JOBS (job registry snapshot). */
  readonly jobs?: () => VirtualTable;
  /** Statement start (epoch ms): time-travel window checks. */
  readonly nowMs?: number;
  /**
   * Analysing a materialized view's query: it may not read another materialized view, a wildcard table or a
   * system variable (materialized-views-intro.md, Limitations).
   */
  readonly materializedViewQuery?: boolean;
  /**
   * Resolving a stored body (a view's query, a persistent function's body): a bare function name names no persistent
   * function, since such a body must qualify it with its dataset (user-defined-functions.md, Limitations).
   */
  readonly storedBody?: boolean;
  /**
   * Analysing the body of a view made in another project than the one running the DDL: it has no default project, so
   * every reference names its project (data-definition-language.md, Default project in view body).
   */
  readonly noDefaultProject?: boolean;
  /** Analysing EXPORT DATA's query: it may not read metatables (INFORMATION_SCHEMA, __TABLES__) or wildcard tables. */
  readonly exportQuery?: boolean;
  /** Called when the analysis reads `nowMs`: the plan cache never reuses such a plan. */
  readonly onClock?: () => void;
  /** Called with each persistent routine the analysis resolves (job statistics' referencedRoutines). */
  readonly onRoutine?: (r: { readonly projectId: string; readonly datasetId: string; readonly routineId: string }) => void;
  /** The principal (row-access policy grantees). */
  readonly sessionUser?: string;
  /** The running job's id (@@current_job_id). */
  readonly jobId?: string;
  /** The job's location, named in not-found errors (US when absent); `admits` fixes or checks it (a region qualifier). */
  readonly location?: { readonly value: string; admits?(location: string): boolean };
  /** Views being expanded (cycle guard). */
  readonly expanding?: Set<string>;
}

/** A view's aggregation_threshold_policy (analysis-rules.md), as read by a query. */
export interface ThresholdView {
  readonly name: string;
  readonly alias: string;
  readonly threshold: number;
  readonly unit: string;
}

/** The equalities on object_name / object_schema a SELECT's WHERE clause holds (its top-level AND terms). */
export interface ObjectFilter {
  readonly name: boolean;
  readonly schema: boolean;
}

export class Analyzer {
  private nextId = 1;
  /** Innermost last: CTE names visible at each query nesting level. */
  readonly ctes: Map<string, CteDef>[] = [];
  /** How many queries deep resolveQuery is (0: about to resolve a statement's or a view's own query). */
  queryDepth = 0;
  /** Innermost last: parameters of table-valued functions being expanded (lower-cased names). */
  readonly tvfParams: ReadonlyMap<string, Expr>[] = [];
  /**
   * Set while the FROM clause of a SELECT WITH AGGREGATION_THRESHOLD resolves: the views with an aggregation
   * threshold analysis rule it reads (analyzer/privacy.ts). Undefined elsewhere, where such a view is refused.
   */
  thresholdViews: ThresholdView[] | undefined;
  /**
   * Set while the FROM clause of a SELECT resolves: which of OBJECT_PRIVILEGES' object_name and object_schema its
   * WHERE clause pins with `=` (information-schema-object-privileges, Limitations). Undefined elsewhere.
   */
  objectFilter: ObjectFilter | undefined;

  constructor(readonly env: AnalyzerEnv) {}

  newColumn(name: string, type: SqlType): ResolvedColumn {
    return { id: this.nextId++, name, type };
  }

  newId(): number {
    return this.nextId++;
  }

  findCte(name: string): CteDef | undefined {
    const l = name.toLowerCase();
    for (let i = this.ctes.length - 1; i >= 0; i--) {
      const c = this.ctes[i]!.get(l);
      if (c) return c;
    }
    return undefined;
  }

  getTable(id: TableId): TableInfo | undefined {
    const info = this.env.catalog.getTable(id);
    if (info) return info;
    // Datasets created with isCaseInsensitive resolve table names case-insensitively.
    const ds = this.env.catalog.getDataset(id.projectId, id.datasetId);
    if (ds?.resource.isCaseInsensitive !== true) return undefined;
    const l = id.tableId.toLowerCase();
    return this.env.catalog.listTables(id.projectId, id.datasetId).find((t) => t.id.tableId.toLowerCase() === l);
  }
}
