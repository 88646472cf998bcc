// Small durable-file helpers. Every metadata write is temp + fsync + rename +
// fsync(dir), so a crash leaves either the old or the new file, never a torn one.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

let tmpCounter = 0;
function tmpName(file: string): string {
  return `${file}.${process.pid}.${++tmpCounter}.tmp`;
}

export async function fsyncDir(dir: string): Promise<void> {
  const h = await fsp.open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

export function fsyncDirSync(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export async function atomicWrite(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = tmpName(file);
  const h = await fsp.open(tmp, 'w');
  try {
    await h.writeFile(data);
    await h.sync();
  } finally {
    await h.close();
  }
  await fsp.rename(tmp, file);
  await fsyncDir(path.dirname(file));
}

export function atomicWriteSync(file: string, data: string | Uint8Array): void {
  const tmp = tmpName(file);
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDirSync(path.dirname(file));
}

export async function ensureDir(dir: string): Promise<void> {
  await fsp.mkdir(dir, { recursive: true });
}

export function existsSync(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Renames with a durable parent on both sides (moves between directories). */
export async function durableRename(from: string, to: string): Promise<void> {
  await fsp.mkdir(path.dirname(to), { recursive: true });
  await fsp.rename(from, to);
  await fsyncDir(path.dirname(to));
  if (path.dirname(from) !== path.dirname(to)) await fsyncDir(path.dirname(from));
}
