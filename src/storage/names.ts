// Resource ids that reach the file system. The gateway validates ids too; this
// is the defence in depth that keeps every path inside the data dir.
import { createHash } from 'node:crypto';

export class InvalidNameError extends Error {}

function rejectEscapes(kind: string, id: string): void {
  if (id === '' || id === '.' || id === '..' || id.includes('/') || id.includes('\\') || id.includes('\0') || id.includes('..')) {
    throw new InvalidNameError(`Invalid ${kind} ID "${id}".`);
  }
}

/** Project ids: letters, digits, dashes; domain-scoped forms add dots and one colon. */
export function checkProjectId(id: string): void {
  rejectEscapes('project', id);
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(id)) throw new InvalidNameError(`Invalid project ID "${id}".`);
}

export function checkDatasetId(id: string): void {
  if (!/^[A-Za-z0-9_]{1,1024}$/.test(id)) {
    throw new InvalidNameError(
      `Invalid dataset ID "${id}". Dataset IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long.`,
    );
  }
}

/** Table ids: Unicode letters, marks, numbers, connectors, dashes and spaces; at most 1024 characters. */
export function checkTableId(id: string): void {
  rejectEscapes('table', id);
  if (id.length > 1024 || !/^[\p{L}\p{M}\p{N}\p{Pc}\p{Pd}\p{Zs}$]+$/u.test(id)) {
    throw new InvalidNameError(
      `Invalid table ID "${id}". Table IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long. Also, Table decorators cannot be used.`,
    );
  }
}

export function checkChildId(kind: string, id: string): void {
  rejectEscapes(kind, id);
}

/**
 * File-system stem of an id: safe ids verbatim (the layout the spec names),
 * anything else percent-encoded, long ones shortened with a hash so the file
 * name stays under the 255-byte limit.
 */
export function fileStem(id: string): string {
  let s = /^[A-Za-z0-9_-]+$/.test(id) ? id : encodeURIComponent(id).replace(/\./g, '%2E').replace(/\*/g, '%2A');
  if (Buffer.byteLength(s) > 150) s = s.slice(0, 100) + '~' + createHash('sha1').update(id).digest('hex');
  return s;
}
