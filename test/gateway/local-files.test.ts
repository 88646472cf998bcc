// The local file access policy (issue 15; io/local-access.ts) through HTTP:
// with --local-files=<dir>, load and extract jobs, LOAD DATA, EXPORT DATA,
// external tables and JavaScript UDF libraries read and write under <dir>
// only (symlinks and `..` resolved first); listening beyond loopback without
// the flag, every local path is refused. Refusals are the 403 accessDenied
// envelope naming the flag.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const work = mkdtempSync(join(tmpdir(), 'local-files-'));
const allowed = join(work, 'allowed');
const outside = join(work, 'outside');
const secret = join(outside, 'secret.csv');

interface Envelope {
  error: { code: number; status: string; message: string; errors: { reason: string; message: string }[] };
}

function expectDenied(r: { status: number; body: Envelope }, flag = '--local-files'): void {
  expect(r.status).toBe(403);
  expect(r.body.error.code).toBe(403);
  expect(r.body.error.errors[0]!.reason).toBe('accessDenied');
  expect(r.body.error.message).toMatch(/^Access Denied: /);
  expect(r.body.error.message).toContain(flag);
}

beforeAll(() => {
  mkdirSync(allowed);
  mkdirSync(outside);
  writeFileSync(join(allowed, 'in.csv'), 'id\n1\n2\n');
  writeFileSync(secret, 'id\n42\n');
  writeFileSync(join(outside, 'lib.js'), 'function secretLib() { return 7; }\n');
  symlinkSync(secret, join(allowed, 'link.csv'));
  symlinkSync(outside, join(allowed, 'out-dir'));
  symlinkSync(join(outside, 'created.csv'), join(allowed, 'dangling.csv'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('--local-files=<dir>', () => {
  let emu: Emulator;
  const base = (): string => `${emu.url}/bigquery/v2/projects/test`;
  const load = (uri: string, table = 't'): Promise<{ status: number; body: any }> =>
    rest(`${base()}/jobs`, {
      method: 'POST',
      json: { configuration: { load: { destinationTable: { datasetId: 'd', tableId: table }, sourceUris: [uri], sourceFormat: 'CSV', skipLeadingRows: 1, schema: { fields: [{ name: 'id', type: 'INTEGER' }] } } } },
    });
  const extract = (uri: string): Promise<{ status: number; body: any }> =>
    rest(`${base()}/jobs`, {
      method: 'POST',
      json: { configuration: { extract: { sourceTable: { datasetId: 'd', tableId: 't' }, destinationUris: [uri], destinationFormat: 'CSV' } } },
    });
  const query = (sql: string): Promise<{ status: number; body: any }> =>
    rest(`${base()}/queries`, { method: 'POST', json: { query: sql, useLegacySql: false } });

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'test', `--local-files=${allowed}`] });
    expect((await rest(`${base()}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  }, 120_000);
  afterAll(() => emu?.stop());

  it('logs the policy at start-up', () => {
    expect(emu.output()).toContain(`local files: under ${allowed}`);
  });

  it('loads a file inside the directory, by file:// URI and by absolute path', async () => {
    for (const uri of [`file://${allowed}/in.csv`, `${allowed}/in.csv`]) {
      const r = await load(uri);
      expect(r.status).toBe(200);
      expect(r.body.status.errorResult).toBeUndefined();
    }
    const q = await query('SELECT COUNT(*) FROM d.t');
    expect(q.body.rows[0].f[0].v).toBe('4');
  });

  it('uploads still load: the engine reads the gateway spool, the emulator\'s own directory (the container runs with --local-files=/data)', async () => {
    const boundary = 'b0undary';
    const meta = { configuration: { load: { destinationTable: { datasetId: 'd', tableId: 'up' }, sourceFormat: 'CSV', skipLeadingRows: 1, schema: { fields: [{ name: 'id', type: 'INTEGER' }] } } } };
    const body = `--${boundary}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\n\r\nid\n5\n6\n\r\n--${boundary}--\r\n`;
    const r = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, { method: 'POST', body, headers: { 'content-type': `multipart/related; boundary=${boundary}` } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status.errorResult).toBeUndefined();
    expect((await query('SELECT SUM(id) FROM d.up')).body.rows[0].f[0].v).toBe('11');
  });

  it('refuses a load outside it, through a symlink, a symlinked directory or ..', async () => {
    for (const uri of ['/etc/passwd', `file://${secret}`, `file://${allowed}/link.csv`, `${allowed}/out-dir/secret.csv`, `file://${allowed}/../outside/secret.csv`, `file://${allowed}/out-dir/*.csv`]) {
      expectDenied(await load(uri, 'never'));
    }
    const t = await rest(`${base()}/datasets/d/tables/never`);
    expect(t.status).toBe(404);
  });

  it('a wildcard inside the directory that matches a symlink out of it fails the job, reading nothing', async () => {
    const r = await load(`file://${allowed}/*.csv`, 'wild');
    expect(r.status).toBe(200);
    expect(r.body.status.errorResult.reason).toBe('accessDenied');
    expect(r.body.status.errorResult.message).toContain('--local-files');
    const t = await rest(`${base()}/datasets/d/tables/wild`);
    expect([t.status, t.body.numRows ?? t.body.error?.errors?.[0]?.reason]).toEqual([404, 'notFound']);
  });

  it('extracts inside the directory; refuses outside, through a dangling symlink and through ..', async () => {
    const r = await extract(`file://${allowed}/export/t.csv`);
    expect(r.status).toBe(200);
    expect(r.body.status.errorResult).toBeUndefined();
    expect(readFileSync(join(allowed, 'export', 't.csv'), 'utf8').split('\n')[0]).toBe('id');
    for (const uri of [`file://${outside}/t.csv`, `file://${allowed}/dangling.csv`, `file://${allowed}/new/../../outside/t.csv`]) {
      expectDenied(await extract(uri));
    }
    // The singular destinationUri too.
    expectDenied(
      await rest(`${base()}/jobs`, { method: 'POST', json: { configuration: { extract: { sourceTable: { datasetId: 'd', tableId: 't' }, destinationUri: `file://${outside}/t.csv` } } } }),
    );
    expect(existsSync(join(outside, 't.csv'))).toBe(false);
    expect(existsSync(join(outside, 'created.csv'))).toBe(false);
  });

  it('LOAD DATA and EXPORT DATA follow the same policy', async () => {
    const inside = await query(`LOAD DATA INTO d.ld (id INT64) FROM FILES (format = 'CSV', skip_leading_rows = 1, uris = ['file://${allowed}/in.csv'])`);
    expect(inside.status).toBe(200);
    expectDenied(await query(`LOAD DATA INTO d.ld2 (id INT64) FROM FILES (format = 'CSV', skip_leading_rows = 1, uris = ['file://${allowed}/link.csv'])`));
    const out = await query(`EXPORT DATA OPTIONS (uri = 'file://${allowed}/exp/*.csv', format = 'CSV') AS SELECT 1 AS x`);
    expect(out.status).toBe(200);
    expectDenied(await query(`EXPORT DATA OPTIONS (uri = 'file://${outside}/exp/*.csv', format = 'CSV') AS SELECT 1 AS x`));
    expect(existsSync(join(outside, 'exp'))).toBe(false);
  });

  it('external tables and JavaScript UDF libraries follow the same policy', async () => {
    const ext = (uri: string, id: string): Promise<{ status: number; body: any }> =>
      rest(`${base()}/datasets/d/tables`, {
        method: 'POST',
        json: { tableReference: { datasetId: 'd', tableId: id }, externalDataConfiguration: { sourceUris: [uri], sourceFormat: 'CSV', csvOptions: { skipLeadingRows: 1 }, schema: { fields: [{ name: 'id', type: 'INTEGER' }] } } },
      });
    expect((await ext(`file://${allowed}/in.csv`, 'ext_in')).status).toBe(200);
    expectDenied(await ext(`file://${secret}`, 'ext_out'));
    expectDenied(await query(`CREATE TEMP FUNCTION f() RETURNS INT64 LANGUAGE js OPTIONS (library = ['file://${outside}/lib.js']) AS 'return secretLib();'; SELECT f()`));
  });
});

describe('listening beyond loopback without --local-files', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'test', '--listen-host', '0.0.0.0'] });
  }, 120_000);
  afterAll(() => emu?.stop());

  it('refuses every local path, saying which flag allows a directory', async () => {
    expect(emu.output()).toContain('local files: refused');
    const base = `${emu.url}/bigquery/v2/projects/test`;
    expect((await rest(`${base}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
    const r = await rest(`${base}/jobs`, {
      method: 'POST',
      json: { configuration: { load: { destinationTable: { datasetId: 'd', tableId: 't' }, sourceUris: [`file://${allowed}/in.csv`], sourceFormat: 'CSV', autodetect: true } } },
    });
    expectDenied(r, '--local-files=<dir>');
    // The engine got the same decision: LOAD DATA runs there.
    expectDenied(
      await rest(`${base}/queries`, { method: 'POST', json: { query: `LOAD DATA INTO d.t (id INT64) FROM FILES (format = 'CSV', uris = ['/etc/passwd'])`, useLegacySql: false } }),
      '--local-files=<dir>',
    );
  });
});
