// The local file access policy's decisions (io/local-access.ts) and the
// engine's own check of a load file it is told to read (its gRPC port may be
// reachable without the gateway). Through HTTP: test/gateway/local-files.test.ts.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkLocalPath, isLoopback, policyFor, setLocalFilesPolicy } from '../../src/io/local-access.js';
import { loadFileChunks } from '../../src/io/load-files.js';
import { IoError } from '../../src/io/errors.js';
import { restFieldToColumn } from '../../src/types/schema.js';

const work = mkdtempSync(join(tmpdir(), 'local-access-'));
const dir = join(work, 'in');
const spool = join(work, 'data', '.uploads');
mkdirSync(dir);
mkdirSync(spool, { recursive: true });
writeFileSync(join(dir, 'a.csv'), 'id\n1\n');
writeFileSync(join(work, 'out.csv'), 'id\n2\n');
writeFileSync(join(spool, 'x.upload'), 'id\n3\n');
symlinkSync(join(work, 'out.csv'), join(dir, 'link.csv'));

afterEach(() => setLocalFilesPolicy({ mode: 'any' }));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function denied(f: () => unknown): IoError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(IoError);
    expect((e as IoError).code).toBe(403);
    expect((e as IoError).reason).toBe('accessDenied');
    return e as IoError;
  }
  throw new Error('not refused');
}

describe('policyFor', () => {
  it('without directories: any path on loopback, none beyond it', () => {
    for (const h of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]']) expect([h, isLoopback(h)]).toEqual([h, true]);
    for (const h of ['0.0.0.0', '::', '192.168.1.5', 'example.test']) expect([h, isLoopback(h)]).toEqual([h, false]);
    expect(policyFor(undefined, '127.0.0.1')).toEqual({ mode: 'any' });
    expect(policyFor([], '0.0.0.0')).toEqual({ mode: 'none' });
    expect(policyFor([`${dir}/../in`, dir], '0.0.0.0')).toEqual({ mode: 'dirs', dirs: [dir] });
  });
});

describe('checkLocalPath', () => {
  it('confines to the directories after realpath; the upload spool stays readable', () => {
    setLocalFilesPolicy(policyFor([dir], 'localhost'), [spool]);
    expect(checkLocalPath(join(dir, 'a.csv'), 'u')).toBe(join(dir, 'a.csv'));
    expect(checkLocalPath(join(dir, 'sub', 'new.csv'), 'u')).toBe(join(dir, 'sub', 'new.csv'));
    expect(checkLocalPath(join(spool, 'x.upload'), 'upload')).toBe(join(spool, 'x.upload'));
    expect(denied(() => checkLocalPath(join(dir, 'link.csv'), 'file:///l')).message).toBe(`Access Denied: file:///l: local file access is limited to ${dir} (--local-files)`);
    denied(() => checkLocalPath(join(dir, '..', 'out.csv'), 'u'));
    denied(() => checkLocalPath(join(dir, 'new', '..', '..', 'x.csv'), 'u'));
    denied(() => checkLocalPath(`${dir}x/a.csv`, 'u'));
  });

  it('refuses everything but the spool with mode none', () => {
    setLocalFilesPolicy({ mode: 'none' }, [spool]);
    expect(denied(() => checkLocalPath(join(dir, 'a.csv'), 'u')).message).toContain('--local-files=<dir>');
    expect(checkLocalPath(join(spool, 'x.upload'), 'upload')).toBe(join(spool, 'x.upload'));
  });

  it('the engine refuses a load file outside the directories on the first read', async () => {
    setLocalFilesPolicy(policyFor([dir], 'localhost'), [spool]);
    const fields = [{ name: 'id', type: 'INTEGER' }];
    const columns = fields.map(restFieldToColumn);
    const read = async (path: string): Promise<number> => {
      let n = 0;
      for await (const ch of loadFileChunks({ path, uri: `file://${path}` }, 'CSV', { skipLeadingRows: 1 }, fields, columns)) n += ch.records;
      return n;
    };
    expect(await read(join(dir, 'a.csv'))).toBe(1);
    await expect(read(join(dir, 'link.csv'))).rejects.toMatchObject({ code: 403, reason: 'accessDenied' });
    await expect(read('/etc/passwd')).rejects.toMatchObject({ code: 403, reason: 'accessDenied' });
  });
});
