// One emulator per data dir: `catalog.lock` holds the owner's pid. A lock whose
// pid is gone (kill -9, reboot) is stale and taken over; a live owner makes
// start-up fail with a clear message instead of two processes sharing files.
import * as fs from 'node:fs';
import * as path from 'node:path';

export class DataDirLockedError extends Error {}

/** The kernel's start time of a process (Linux), to tell a reused pid from the owner. */
function startTimeOf(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/** Process state letter from /proc (Linux); '' when unknown. */
function stateOf(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return '';
  }
}

function ownerAlive(pid: number, startTime: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A killed owner not yet reaped (zombie) or exiting (X) holds nothing any more.
  const st = stateOf(pid);
  if (st === 'Z' || st === 'X') return false;
  // A lock copied along with a data dir (or left by a reboot) may name a pid that now belongs to someone else.
  const now = startTimeOf(pid);
  return startTime === '' || now === '' || now === startTime;
}

export interface DirLock {
  readonly file: string;
  release(): void;
}

/**
 * Takes the lock. A live owner is waited for up to `waitMs` (a previous engine
 * still shutting down when the gateway restarts one), then refused.
 */
export function acquireDirLock(dataDir: string, waitMs = 5000): DirLock {
  const file = path.join(dataDir, 'catalog.lock');
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 1000) throw new DataDirLockedError(`could not lock data dir ${dataDir} (lock file ${file})`);
    try {
      const fd = fs.openSync(file, 'wx');
      fs.writeSync(fd, `${process.pid} ${startTimeOf(process.pid)}\n`);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      let released = false;
      return {
        file,
        release() {
          if (released) return;
          released = true;
          try {
            if (fs.readFileSync(file, 'utf8').trim().split(' ')[0] === String(process.pid)) fs.unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = NaN;
      let ownerStart = '';
      try {
        const [pidText, start] = fs.readFileSync(file, 'utf8').trim().split(' ');
        owner = parseInt(pidText ?? '', 10);
        ownerStart = start ?? '';
      } catch {
        continue;
      }
      if (owner === process.pid || !ownerAlive(owner, ownerStart)) {
        // Stale: the owner died without cleaning up. Remove and retry.
        try {
          fs.unlinkSync(file);
        } catch {
          /* raced with another starter; retry decides */
        }
        continue;
      }
      if (Date.now() < deadline) {
        // Synchronous on purpose: start-up has nothing else to do meanwhile.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
        continue;
      }
      throw new DataDirLockedError(
        `data dir ${dataDir} is in use by another emulator (pid ${owner}); stop it or choose another --data-dir (lock file ${file})`,
      );
    }
  }
}
