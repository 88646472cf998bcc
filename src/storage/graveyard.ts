// Work that must wait until no reader can still be reading what it removes:
// deleting fragment files that no table state names any more (folded into a
// bigger file, superseded by a replace whose history expired) and moving a
// dropped table's files to the trash. It runs once no snapshot older than
// the commit that let the files go is open (clock.ts), and not before a
// short grace for readers that take a state without a snapshot (a page of
// tabledata.list). What a crash leaves undone is redone on start-up (orphan
// fragments are removed by the table's next load; moves by Storage.reconcile).
import * as fsp from 'node:fs/promises';
import { chunkCache } from './chunk-cache.js';
import type { CommitClock } from './clock.js';

/** How long work waits at least (readers without a snapshot); a table's own graveyard (tests, tools) runs it at once. */
export const GRACE_MS = 5000;

interface Deferred {
  readonly csn: number;
  readonly at: number;
  readonly run: () => Promise<void>;
}

export class Graveyard {
  private waiting: Deferred[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly clock: CommitClock,
    private readonly graceMs = GRACE_MS,
  ) {}

  /** Deletes `paths` (fragment files) once no reader can need them. */
  bury(paths: readonly string[]): Promise<void> {
    return paths.length > 0 ? this.defer(() => remove(paths)) : Promise.resolve();
  }

  /** Runs `run` once no reader of a state from before now can need what it removes (at once when none can and there is no grace). */
  async defer(run: () => Promise<void>): Promise<void> {
    if (this.graceMs === 0 && this.clock.oldest() > this.clock.now) return run();
    this.waiting.push({ csn: this.clock.now, at: Date.now(), run });
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.waiting.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.sweep().finally(() => this.schedule());
    }, Math.max(this.graceMs, 50));
    this.timer.unref();
  }

  /** Runs what no reader can need any more. */
  async sweep(now = Date.now()): Promise<void> {
    const oldest = this.clock.oldest();
    const due = (d: Deferred): boolean => oldest > d.csn && now - d.at >= this.graceMs;
    const ready = this.waiting.filter(due);
    this.waiting = this.waiting.filter((d) => !due(d));
    for (const d of ready) await d.run().catch((e: unknown) => console.error('storage: deferred cleanup failed:', e));
  }

  /** Runs everything waiting, readers or not (the storage is closing). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const all = this.waiting;
    this.waiting = [];
    for (const d of all) await d.run().catch((e: unknown) => console.error('storage: deferred cleanup failed:', e));
  }
}

async function remove(paths: readonly string[]): Promise<void> {
  for (const p of paths) {
    chunkCache.forget(p);
    await fsp.rm(p, { force: true });
  }
}
