// The order of commits across all tables, for snapshot isolation. Every
// change of a table's rows takes the next commit number in the synchronous
// step that makes it visible; a reader (a statement, a transaction) opens a
// snapshot at the current number and reads each table as it was then. A table
// keeps the states it replaced only while an open snapshot may still read
// them (TableData.stateAt), so with no reader open nothing is kept.
export class CommitClock {
  /** The number of the last commit. */
  private last = 0;
  /** Open snapshots: number -> how many readers hold it. */
  private readonly open = new Map<number, number>();

  get now(): number {
    return this.last;
  }

  /** The number of a commit happening now. */
  tick(): number {
    return ++this.last;
  }

  /** Opens a snapshot of everything committed so far; close it with `release`. */
  acquire(): number {
    const s = this.last;
    this.open.set(s, (this.open.get(s) ?? 0) + 1);
    return s;
  }

  release(s: number): void {
    const n = this.open.get(s) ?? 0;
    if (n <= 1) this.open.delete(s);
    else this.open.set(s, n - 1);
  }

  /** Whether an open snapshot reads a state that was current over commits [from, until). */
  needed(from: number, until: number): boolean {
    for (const s of this.open.keys()) if (s >= from && s < until) return true;
    return false;
  }

  get readers(): number {
    return this.open.size;
  }

  /** The oldest snapshot open now (Infinity when none is). */
  oldest(): number {
    let min = Infinity;
    for (const s of this.open.keys()) if (s < min) min = s;
    return min;
  }
}
