// Which local paths a client may name (issue 15): load jobs, LOAD DATA,
// external tables, extract jobs, EXPORT DATA and JavaScript UDF libraries
// read or write `file://` and absolute paths on the emulator's host. The
// operator confines them with --local-files=<dir>[,<dir>...] (env
// WAREHOUSE_EMULATOR_LOCAL_FILES / BIGQUERY_EMULATOR_LOCAL_FILES). Without
// it, an emulator listening on loopback only reads and writes anywhere (a
// laptop's own user), one listening on another address refuses every local
// path: anyone who reaches the port would otherwise read the host's files.
// Paths are compared after realpath, so symlinks and `..` cannot leave the
// directories. Each process (gateway, engine) holds its own policy; the
// gateway hands its decision to the engine it spawns.
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { IoError } from './errors.js';

export type LocalFilesPolicy =
  /** Any path (the default on loopback). */
  | { readonly mode: 'any' }
  /** Only paths under these directories (real paths). */
  | { readonly mode: 'dirs'; readonly dirs: readonly string[] }
  /** No path: listening beyond loopback without --local-files. */
  | { readonly mode: 'none' };

/** Environment variables read when no flag names the directories. */
export const LOCAL_FILES_ENV = ['WAREHOUSE_EMULATOR_LOCAL_FILES', 'BIGQUERY_EMULATOR_LOCAL_FILES'] as const;

/** The directories of a --local-files value (comma-separated; repeated flags concatenated). */
export function splitDirs(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(',')).map((d) => d.trim()).filter(Boolean);
}

/** The directories of the environment fallback, or undefined when it is unset. */
export function envDirs(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  for (const n of LOCAL_FILES_ENV) if (env[n]) return splitDirs([env[n]!]);
  return undefined;
}

/** Whether a listen address is loopback only (localhost, 127.0.0.0/8, ::1). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The policy for directories given (flag or environment; undefined: none
 * given) on a listen address. A directory that does not exist yet counts by
 * its absolute path (what an extract creates there is inside it).
 */
export function policyFor(dirs: readonly string[] | undefined, listenHost: string): LocalFilesPolicy {
  if (dirs === undefined || dirs.length === 0) return isLoopback(listenHost) ? { mode: 'any' } : { mode: 'none' };
  return { mode: 'dirs', dirs: [...new Set(dirs.map(realOrAbsolute))] };
}

function realOrAbsolute(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

let policy: LocalFilesPolicy | undefined;
/** Directories of the emulator's own that are always readable (the gateway's upload spool). */
let internal: readonly string[] = [];

/** Sets this process's policy (gateway and engine start-up); `own` lists the emulator's own readable directories. */
export function setLocalFilesPolicy(p: LocalFilesPolicy, own: readonly string[] = []): void {
  policy = p;
  internal = own.map(realOrAbsolute);
}

/** This process's policy; before any set (in-process use, tests) the environment, else any path. */
export function localFilesPolicy(): LocalFilesPolicy {
  if (policy) return policy;
  const dirs = envDirs();
  return dirs?.length ? policyFor(dirs, 'localhost') : { mode: 'any' };
}

/** One line for the start-up log. */
export function describePolicy(p: LocalFilesPolicy): string {
  if (p.mode === 'any') return 'local files: any path (listening on loopback only; --local-files=<dir> confines them)';
  if (p.mode === 'none') return 'local files: refused (listening beyond loopback; --local-files=<dir> allows a directory)';
  return `local files: under ${p.dirs.join(', ')}`;
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * The real path of a path that may not exist yet: the longest existing
 * prefix through realpath, then the rest as written, or undefined when the
 * rest holds `.` or `..` (it would be resolved against directories that do
 * not exist yet, beyond this check) or the first missing name is a dangling
 * symlink.
 */
function realPathOf(path: string): string | undefined {
  const abs = isAbsolute(path) ? path : resolve(path);
  const rest: string[] = [];
  for (let p = abs; ; p = dirname(p)) {
    try {
      const real = realpathSync(p);
      if (rest.some((s) => s === '.' || s === '..')) return undefined;
      return rest.length ? join(real, ...rest.reverse()) : real;
    } catch {
      // There but not resolvable: a dangling symlink (writing through it would create its target) or a loop.
      if (dirname(p) === p || lstatOk(p)) return undefined;
      rest.push(basename(p));
    }
  }
}

function lstatOk(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function denied(uri: string, why: string): IoError {
  return new IoError(403, 'accessDenied', `Access Denied: ${uri}: ${why}`);
}

/**
 * The real path of a local path a client named, checked against the policy;
 * throws a 403 accessDenied IoError naming the flag when the policy refuses it.
 * Callers read and write the returned path, not the one named, so a symlink
 * checked here is the one followed.
 */
export function checkLocalPath(path: string, uri: string): string {
  const p = localFilesPolicy();
  if (p.mode === 'any') return path;
  const real = realPathOf(path);
  if (real !== undefined && internal.some((d) => inside(real, d))) return real;
  if (p.mode === 'none') {
    throw denied(uri, 'local file access is off because the emulator listens beyond loopback; start it with --local-files=<dir>[,<dir>...] to allow reading and writing files under those directories');
  }
  if (real === undefined || !p.dirs.some((d) => inside(real, d))) {
    throw denied(uri, `local file access is limited to ${p.dirs.join(', ')} (--local-files)`);
  }
  return real;
}
