// EXPORT DATA / LOAD DATA against object stores: gs:// through the stand-in for the
// object-store emulator (STORAGE_EMULATOR_HOST; no GCS emulator installs here, see
// test/helpers/object-store.ts) and s3:// through s3rver, a real S3 emulator (S3_ENDPOINT).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGcsStandIn, startS3, type ObjectStore } from '../helpers/object-store.js';
import { errorMessage, openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

let h: Harness;
let gcs: ObjectStore;
let s3: ObjectStore;
let n = 0;
const saved = { gcs: process.env['STORAGE_EMULATOR_HOST'], s3: process.env['S3_ENDPOINT'] };

beforeAll(async () => {
  h = await openHarness();
  gcs = await startGcsStandIn(['bkt']);
  s3 = await startS3(['b3']);
  process.env['STORAGE_EMULATOR_HOST'] = gcs.endpoint;
  process.env['S3_ENDPOINT'] = s3.endpoint;
});
afterAll(async () => {
  for (const [k, v] of [['STORAGE_EMULATOR_HOST', saved.gcs], ['S3_ENDPOINT', saved.s3]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await gcs?.close();
  await s3?.close();
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
    expect((await gcs.get('bkt', 'out/part_000000000000.csv'))?.toString()).toBe('id,s\n1,x\n2,y\n');
    expect(rows).toEqual([['1', 'x'], ['2', 'y']]);
  });

  it('gs://: a non-empty destination needs overwrite', async () => {
    await sql(`EXPORT DATA OPTIONS (uri = 'gs://bkt/busy/f_*.json', format = 'JSON') AS SELECT 1 AS a`);
    expect(await sqlError(`EXPORT DATA OPTIONS (uri = 'gs://bkt/busy/f_*.json', format = 'JSON') AS SELECT 2 AS a`)).toContain('is not empty');
    await sql(`EXPORT DATA OPTIONS (uri = 'gs://bkt/busy/f_*.json', format = 'JSON', overwrite = true) AS SELECT 2 AS a`);
    expect((await gcs.get('bkt', 'busy/f_000000000000.json'))?.toString()).toBe('{"a":"2"}\n');
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
    expect((await s3.get('b3', 'x_000000000000.avro'))?.subarray(0, 4).toString()).toBe('Obj\x01');
  });

  it('s3://: LOAD DATA expands a wildcard through the bucket listing; a non-empty destination needs overwrite', async () => {
    await s3.put('b3', 'in/p1.csv', 'k\n1\n');
    await s3.put('b3', 'in/p2.csv', 'k\n2\n');
    await s3.put('b3', 'in/q & r.csv', 'k\n3\n');
    await s3.put('b3', 'other.csv', 'k\n4\n');
    expect(await sql(`LOAD DATA INTO t FROM FILES (format = 'CSV', uris = ['s3://b3/in/*.csv'], skip_leading_rows = 1); SELECT k FROM t ORDER BY k`)).toEqual([['1'], ['2'], ['3']]);
    expect(await sqlError(`LOAD DATA INTO t (k INT64) FROM FILES (format = 'CSV', uris = ['s3://b3/in/none_*.csv'])`)).toBe('Not found: URI s3://b3/in/none_*.csv');
    expect(await sqlError(`EXPORT DATA OPTIONS (uri = 's3://b3/in/p*.csv', format = 'CSV') AS SELECT 9 AS k`)).toContain('is not empty');
    await sql(`EXPORT DATA OPTIONS (uri = 's3://b3/in/p*.csv', format = 'CSV', overwrite = true) AS SELECT 9 AS k`);
    expect((await s3.get('b3', 'in/p000000000000.csv'))?.toString()).toBe('9\n');
  });

  it('s3://: a missing object or bucket is notFound', async () => {
    expect(await sqlError(`LOAD DATA INTO t (x INT64) FROM FILES (format = 'CSV', uris = ['s3://b3/none.csv'])`)).toBe('Not found: URI s3://b3/none.csv');
    expect(await sqlError(`LOAD DATA INTO t (x INT64) FROM FILES (format = 'CSV', uris = ['s3://nobucket/a.csv'])`)).toBe('Not found: URI s3://nobucket/a.csv');
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
