// Shared/exclusive gate for one table: appends run shared (so concurrent
// inserts can share one fsync), compaction/replace/alter/drop run exclusive.
export class Gate {
  private shared = 0;
  private exclusiveTail: Promise<void> = Promise.resolve();
  private exclusiveActive = false;
  private waiters: (() => void)[] = [];

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  async runShared<T>(fn: () => Promise<T>): Promise<T> {
    while (this.exclusiveActive) await new Promise<void>((r) => this.waiters.push(r));
    this.shared++;
    try {
      return await fn();
    } finally {
      this.shared--;
      if (this.shared === 0) this.wake();
    }
  }

  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.exclusiveActive = true;
      try {
        while (this.shared > 0) await new Promise<void>((r) => this.waiters.push(r));
        return await fn();
      } finally {
        this.exclusiveActive = false;
        this.wake();
      }
    };
    const p = this.exclusiveTail.then(run, run);
    this.exclusiveTail = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }
}
