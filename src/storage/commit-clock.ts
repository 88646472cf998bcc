// Commit times and the statement clock kept in order, to the microsecond
// (time travel, FOR SYSTEM_TIME AS OF, reads `commit time <= instant`). A
// statement's clock never reads before the last commit, and a commit is
// stamped after every instant already handed out. So an instant read before
// a commit never sees it and one read after it always does, also within one
// millisecond: with Date.now() for both, a change in the same millisecond as
// an earlier CURRENT_TIMESTAMP() was seen by `AS OF` that timestamp. Steps of
// 1 µs keep the clocks off real time only past 1,000 alternations per ms.
let lastHandedMicros = 0;
let lastCommitMicros = 0;

/** A statement's clock (CURRENT_TIMESTAMP and friends), in microseconds: now, but never before the last commit. */
export function statementClockMicros(): bigint {
  const t = Math.max(Date.now() * 1000, lastCommitMicros);
  if (t > lastHandedMicros) lastHandedMicros = t;
  return BigInt(t);
}

/** The time to stamp a commit happening now with, in milliseconds (microsecond fractions). */
export function commitClockMs(): number {
  const t = Math.max(Date.now() * 1000, lastHandedMicros + 1, lastCommitMicros);
  lastCommitMicros = t;
  return t / 1000;
}

/** Whether some commit came after the instant `ms` (else the current state is the state as of it). */
export function committedAfter(ms: number): boolean {
  return lastCommitMicros > Math.round(ms * 1000);
}
