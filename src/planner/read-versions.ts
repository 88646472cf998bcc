// One point in time per table per statement (query-syntax.md, FOR SYSTEM_TIME AS OF, Limitations: a statement may
// reference a table several times at one instant, never its current version beside a historical one nor two
// historical ones; DML reads its destination as it is now, so every other reference to it must too).
import type { Rel } from '../analyzer/resolved.js';
import { relInputs, visitRelExprs } from '../analyzer/rewrite.js';
import { sqlError } from '../analyzer/errors.js';
import type { TableId } from '../storage/api.js';

/** The instant each table is read at in the running statement (undefined: its current version). */
export class ReadVersions {
  private readonly byTable = new Map<string, number | undefined>();

  clear(): void {
    this.byTable.clear();
  }

  /** Notes every scan of an optimized plan (and of its subqueries' plans); `nowMs`: the statement's clock, an AS OF at or past it reads the current version. */
  notePlan(root: Rel, nowMs: number): void {
    const plans: Rel[] = [root];
    visitRelExprs(root, (e) => void (e.kind === 'subquery' && plans.push(e.plan)));
    const walk = (r: Rel): void => {
      if (r.kind === 'scan') this.note(r.table, r.asOfMs !== undefined && r.asOfMs < nowMs ? r.asOfMs : undefined);
      for (const i of relInputs(r)) walk(i);
    };
    for (const p of plans) walk(p);
  }

  /** A DML statement's target: read and written as it is now. */
  noteCurrent(id: TableId): void {
    this.note(id, undefined);
  }

  private note(id: TableId, at: number | undefined): void {
    const key = `${id.projectId}:${id.datasetId}.${id.tableId}`;
    if (!this.byTable.has(key)) {
      this.byTable.set(key, at);
      return;
    }
    if (this.byTable.get(key) === at) return;
    throw sqlError(
      `Table ${key} is read at more than one point in time in one statement: every reference to it must name the same FOR SYSTEM_TIME AS OF instant, and a DML statement's target is read as it is now`,
    );
  }
}
