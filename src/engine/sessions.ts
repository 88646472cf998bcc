// Sessions (jobs.query / jobs.insert with createSession, then
// connectionProperties session_id): the queries of a session share its
// variables, temporary functions and tables, and an open transaction. A
// session lives in engine memory only: it ends after 24 hours idle (the
// service's limit), by CALL BQ.ABORT_SESSION(), or with the process; its
// temporary tables go with it.
import type { SessionState } from '../planner/api.js';
import type { Storage } from '../storage/store.js';
import { QueryError } from '../types/errors.js';
import type { EngineCatalog } from './catalog.js';
import { SessionCatalog } from './session-catalog.js';

/** The service ends a session after this long without a query. */
export const SESSION_IDLE_MS = 24 * 3600 * 1000;

interface Session {
  readonly projectId: string;
  readonly catalog: SessionCatalog;
  readonly state: SessionState;
  busy: boolean;
  lastUsedMs: number;
  /** BQ.ABORT_SESSION named it while it ran a query: it ends after that query. */
  ending?: boolean;
}

export class Sessions {
  private readonly byId = new Map<string, Session>();

  constructor(
    private readonly catalog: EngineCatalog,
    private readonly st: Storage,
  ) {}

  /**
   * Runs one query of session `id` (made first when `create`): only one at a
   * time, as the service allows.
   */
  async run<T>(id: string, projectId: string, create: boolean, fn: (catalog: SessionCatalog, state: SessionState) => Promise<T>): Promise<T> {
    this.expire();
    let s = this.byId.get(id);
    if (!s || s.projectId !== projectId) {
      if (!create) throw new QueryError(`Session ${id} was not found or has expired`, 'notFound', 404);
      const catalog = new SessionCatalog(this.catalog, this.st);
      s = {
        projectId,
        catalog,
        state: { id, variables: new Map(), tempFunctions: new Map(), tempTables: new Map(), abort: () => this.end(id) },
        busy: false,
        lastUsedMs: Date.now(),
      };
      this.byId.set(id, s);
    }
    if (s.busy) throw new QueryError('Concurrent jobs in the same session are not allowed', 'invalidQuery');
    s.busy = true;
    try {
      return await fn(s.catalog, s.state);
    } finally {
      s.busy = false;
      s.lastUsedMs = Date.now();
      if (s.ending) this.end(id);
    }
  }

  /**
   * Ends session `id` of `projectId` for a query outside it (BQ.ABORT_SESSION with an id); false when there is no
   * such session. One running a query now ends when that query is done.
   */
  endIn(id: string, projectId: string): boolean {
    const s = this.byId.get(id);
    if (!s || s.projectId !== projectId) return false;
    if (s.busy) s.ending = true;
    else this.end(id);
    return true;
  }

  /** Ends a session: its open transaction rolls back, its temporary tables go. */
  end(id: string): void {
    const s = this.byId.get(id);
    if (!s) return;
    this.byId.delete(id);
    s.catalog.close();
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, s] of this.byId) if (!s.busy && now - s.lastUsedMs > SESSION_IDLE_MS) this.end(id);
  }
}
