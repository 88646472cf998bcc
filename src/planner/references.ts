// What a statement referenced, for its job statistics (Job.md, JobStatistics2: referencedTables, referencedRoutines;
// information-schema-jobs.md: referenced_tables): the stored tables its charged plans scan (a view's tables, not the
// view, since the view is expanded before planning; subqueries' scans too), a DML statement's target, and the
// persistent routines its analysis resolved. The emulator's own system tables (`_bqemu_*` datasets: the JOBS
// snapshot, unqualified routines) and tables without metadata (INFORMATION_SCHEMA rows) are left out.
import type { Rel } from '../analyzer/resolved.js';
import { relInputs, visitRelExprs } from '../analyzer/rewrite.js';
import type { TableId, TableInfo } from '../storage/api.js';

export interface RoutineRef {
  readonly projectId: string;
  readonly datasetId: string;
  readonly routineId: string;
}

const SYSTEM_DATASET = /^_bqemu_/;

export class References {
  private readonly tables = new Map<string, TableId>();
  private readonly routines = new Map<string, RoutineRef>();

  clear(): void {
    this.tables.clear();
    this.routines.clear();
  }

  /** Every scan of an optimized plan and of its subqueries' plans that reads a stored table. */
  notePlan(root: Rel, info: (id: TableId) => TableInfo | undefined): void {
    const plans: Rel[] = [root];
    visitRelExprs(root, (e) => void (e.kind === 'subquery' && plans.push(e.plan)));
    const walk = (r: Rel): void => {
      if (r.kind === 'scan' && info(r.table)) this.noteTable(r.table);
      for (const i of relInputs(r)) walk(i);
    };
    for (const p of plans) walk(p);
  }

  noteTable(id: TableId): void {
    if (SYSTEM_DATASET.test(id.datasetId)) return;
    this.tables.set(`${id.projectId}\u0000${id.datasetId}\u0000${id.tableId}`, { projectId: id.projectId, datasetId: id.datasetId, tableId: id.tableId });
  }

  noteRoutine(r: RoutineRef): void {
    if (SYSTEM_DATASET.test(r.datasetId)) return;
    this.routines.set(`${r.projectId}\u0000${r.datasetId}\u0000${r.routineId}`, { projectId: r.projectId, datasetId: r.datasetId, routineId: r.routineId });
  }

  get routineList(): readonly RoutineRef[] {
    return [...this.routines.values()];
  }

  /** The statistics fields, each left out when empty (as the service leaves them out). */
  statistics(): { referencedTables?: TableId[]; referencedRoutines?: RoutineRef[] } {
    return {
      ...(this.tables.size ? { referencedTables: [...this.tables.values()] } : {}),
      ...(this.routines.size ? { referencedRoutines: [...this.routines.values()] } : {}),
    };
  }
}
