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

/**
 * One holder at a time per key, first come first served: DDL on one name
 * (validate, log, apply) and mutating DML on one table run one after another.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(key);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Waits for the key; the returned function releases it (call it exactly once). */
  async acquire(key: string): Promise<() => void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }

  /** Whether someone holds or waits for the key. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }
}
