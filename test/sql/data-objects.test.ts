// EXPORT DATA / LOAD DATA against object stores: gs:// through a stand-in for
// the object-store emulator's JSON API (STORAGE_EMULATOR_HOST) and s3://
// through a path-style stand-in (S3_ENDPOINT), both served in this process.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

let h: Harness;
let server: http.Server;
let n = 0;
/** bucket/object -> bytes, shared by both stand-ins. */
const objects = new Map<string, Buffer>();
const saved = { gcs: process.env['STORAGE_EMULATOR_HOST'], s3: process.env['S3_ENDPOINT'] };

function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
  const u = new URL(req.url ?? '/', 'http://x');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && (m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(u.pathname))) {
      objects.set(`${decodeURIComponent(m[1]!)}/${u.searchParams.get('name')}`, Buffer.concat(chunks));
      res.end('{}');
    } else if (req.method === 'GET' && (m = /^\/storage\/v1\/b\/([^/]+)\/o$/.exec(u.pathname))) {
      const bucket = decodeURIComponent(m[1]!);
      const prefix = u.searchParams.get('prefix') ?? '';
      const items = [...objects.keys()].filter((k) => k.startsWith(`${bucket}/${prefix}`)).map((k) => ({ name: k.slice(bucket.length + 1) }));
      res.end(JSON.stringify({ items }));
    } else if (req.method === 'GET' && (m = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(u.pathname))) {
      const data = objects.get(`${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`);
      res.statusCode = data ? 200 : 404;
      res.end(data ?? '');
    } else if ((m = /^\/s3\/(.+)$/.exec(u.pathname))) {
      if (req.method === 'PUT') {
        objects.set(m[1]!, Buffer.concat(chunks));
        res.end();
      } else {
        const data = objects.get(m[1]!);
        res.statusCode = data ? 200 : 404;
        res.end(data ?? '');
      }
    } else {
      res.statusCode = 400;
      res.end();
    }
  });
}

beforeAll(async () => {
  h = await openHarness();
  server = http.createServer(serve);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  process.env['STORAGE_EMULATOR_HOST'] = `127.0.0.1:${port}`;
  process.env['S3_ENDPOINT'] = `http://127.0.0.1:${port}/s3`;
});
afterAll(async () => {
  for (const [k, v] of [['STORAGE_EMULATOR_HOST', saved.gcs], ['S3_ENDPOINT', saved.s3]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await new Promise((r) => server?.close(r));
  await h?.close();
});

async function sql(text: string): Promise<unknown[]> {
  const projectId = `pobj${++n}`;
  await setupDataset(h, projectId, 'ds');
  return rowsOf(await run(h, text, { projectId, defaultDataset: { projectId, datasetId: 'ds' } }));
}

async function sqlError(text: string): Promise<string> {
  try {
    await sql(text);
  } catch (e) {
    return errorMessage(e);
  }
  throw new Error('expected an error');
}

describe('EXPORT DATA / LOAD DATA over object stores', () => {
  it('gs://: the wildcard becomes the shard number and LOAD DATA reads it back through the wildcard', async () => {
    const rows = await sql(`EXPORT DATA OPTIONS (uri = 'gs://bkt/out/part_*.csv', format = 'CSV', header = true) AS SELECT 1 AS id, 'x' AS s UNION ALL SELECT 2, 'y';
      LOAD DATA INTO t FROM FILES (format = 'CSV', uris = ['gs://bkt/out/part_*.csv'], skip_leading_rows = 1);
      SELECT id, s FROM t ORDER BY id`);
    expect(objects.get('bkt/out/part_000000000000.csv')?.toString()).toBe('id,s\n1,x\n2,y\n');
    expect(rows).toEqual([['1', 'x'], ['2', 'y']]);
  });

  it('gs://: a non-empty destination needs overwrite', async () => {
    await sql(`EXPORT DATA OPTIONS (uri = 'gs://bkt/busy/f_*.json', format = 'JSON') AS SELECT 1 AS a`);
    expect(await sqlError(`EXPORT DATA OPTIONS (uri = 'gs://bkt/busy/f_*.json', format = 'JSON') AS SELECT 2 AS a`)).toContain('is not empty');
    await sql(`EXPORT DATA OPTIONS (uri = 'gs://bkt/busy/f_*.json', format = 'JSON', overwrite = true) AS SELECT 2 AS a`);
    expect(objects.get('bkt/busy/f_000000000000.json')?.toString()).toBe('{"a":"2"}\n');
  });

  it('gs://: a missing object is notFound', async () => {
    expect(await sqlError(`LOAD DATA INTO t (x INT64) FROM FILES (format = 'CSV', uris = ['gs://bkt/none.csv'])`)).toBe('Not found: URI gs://bkt/none.csv');
    expect(await sqlError(`LOAD DATA INTO t (x INT64) FROM FILES (format = 'CSV', uris = ['gs://bkt/nothing_*.csv'])`)).toBe('Not found: URI gs://bkt/nothing_*.csv');
  });

  it('s3://: export and load through S3_ENDPOINT', async () => {
    const rows = await sql(`EXPORT DATA OPTIONS (uri = 's3://b3/x_*.avro', format = 'AVRO') AS SELECT 5 AS v, 'q' AS w;
      LOAD DATA INTO a FROM FILES (format = 'AVRO', uris = ['s3://b3/x_000000000000.avro']);
      SELECT v, w FROM a`);
    expect(rows).toEqual([['5', 'q']]);
  });

  it('gs:// without an object-store emulator says which variable to set', async () => {
    const host = process.env['STORAGE_EMULATOR_HOST'];
    delete process.env['STORAGE_EMULATOR_HOST'];
    try {
      expect(await sqlError(`LOAD DATA INTO t (x INT64) FROM FILES (format = 'CSV', uris = ['gs://bkt/a.csv'])`)).toContain('set STORAGE_EMULATOR_HOST');
    } finally {
      process.env['STORAGE_EMULATOR_HOST'] = host;
    }
  });
});
