// Load and extract jobs over HTTP through the gateway process against object stores:
// s3:// through s3rver (a real S3 emulator, S3_ENDPOINT) and gs:// through the
// object-store stand-in (STORAGE_EMULATOR_HOST; see test/helpers/object-store.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { startGcsStandIn, startS3, type ObjectStore } from '../helpers/object-store.js';

describe.skipIf(!hasRealEngine())('load / extract jobs over object stores', () => {
  let emu: Emulator;
  let gcs: ObjectStore;
  let s3: ObjectStore;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;
  const job = async (configuration: object): Promise<{ status: { state: string; errorResult?: { reason: string; message: string } } }> =>
    (await rest(api('/jobs'), { method: 'POST', json: { configuration } })).body;
  const rows = async (table: string): Promise<unknown[][]> =>
    (((await rest(api(`/datasets/os/tables/${table}/data`))).body.rows ?? []) as { f: { v: unknown }[] }[]).map((r) => r.f.map((c) => c.v));
  const schema = { fields: [{ name: 'n', type: 'INTEGER' }, { name: 's', type: 'STRING' }] };

  beforeAll(async () => {
    gcs = await startGcsStandIn(['bkt']);
    s3 = await startS3(['b3']);
    emu = await startEmulator({ env: { STORAGE_EMULATOR_HOST: gcs.endpoint, S3_ENDPOINT: s3.endpoint } });
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'os' } } })).status).toBe(200);
    const q = await rest(api('/queries'), { method: 'POST', json: { query: "CREATE TABLE os.t AS SELECT 1 AS n, 'a' AS s UNION ALL SELECT 2, 'b'", useLegacySql: false } });
    expect(q.status).toBe(200);
  });
  afterAll(async () => {
    await emu?.stop();
    await gcs?.close();
    await s3?.close();
  });

  it('s3://: extract shards through the wildcard, load reads them back through it', async () => {
    const ex = await job({ extract: { sourceTable: { projectId: 'test', datasetId: 'os', tableId: 't' }, destinationUris: ['s3://b3/out/t-*.csv'] } });
    expect(ex.status).toEqual({ state: 'DONE' });
    expect((await s3.get('b3', 'out/t-000000000000.csv'))?.toString().split('\n').sort()).toEqual(['', '1,a', '2,b', 'n,s']);
    const ld = await job({ load: { destinationTable: { projectId: 'test', datasetId: 'os', tableId: 'from_s3' }, sourceUris: ['s3://b3/out/t-*.csv'], skipLeadingRows: 1, schema } });
    expect(ld.status).toEqual({ state: 'DONE' });
    expect((await rows('from_s3')).sort()).toEqual([['1', 'a'], ['2', 'b']]);
    const missing = await job({ load: { destinationTable: { projectId: 'test', datasetId: 'os', tableId: 'none' }, sourceUris: ['s3://b3/missing.csv'], schema } });
    expect(missing.status.errorResult).toMatchObject({ reason: 'notFound', message: 'Not found: URI s3://b3/missing.csv' });
  });

  it('gs://: extract NEWLINE_DELIMITED_JSON, load it back through a wildcard', async () => {
    const ex = await job({ extract: { sourceTable: { projectId: 'test', datasetId: 'os', tableId: 't' }, destinationUris: ['gs://bkt/x/t.json'], destinationFormat: 'NEWLINE_DELIMITED_JSON' } });
    expect(ex.status).toEqual({ state: 'DONE' });
    const lines = (await gcs.get('bkt', 'x/t.json'))!.toString().trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual(expect.arrayContaining([{ n: '1', s: 'a' }, { n: '2', s: 'b' }]));
    const ld = await job({ load: { destinationTable: { projectId: 'test', datasetId: 'os', tableId: 'from_gs' }, sourceUris: ['gs://bkt/x/*.json'], sourceFormat: 'NEWLINE_DELIMITED_JSON', schema } });
    expect(ld.status).toEqual({ state: 'DONE' });
    expect((await rows('from_gs')).sort()).toEqual([['1', 'a'], ['2', 'b']]);
  });
});
