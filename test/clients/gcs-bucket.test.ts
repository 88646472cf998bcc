// Loads and extracts through a bucket with both real clients: @google-cloud/storage
// writes and reads the objects, @google-cloud/bigquery runs the jobs, as the
// samples do (table.load(bucket.file(...)), table.extract(bucket.file(...))).
// No Cloud Storage runs here: the bucket is the test-only GCS stand-in
// (test/helpers/gcs-stand-in.mjs), which speaks the JSON API's object calls.
import { BigQuery, type Dataset } from '@google-cloud/bigquery';
import { Storage, type Bucket } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';
import { startGcsStandIn, type ObjectStore } from '../helpers/object-store.js';

describe('loads and extracts through a bucket with the real Storage and BigQuery clients', () => {
  let gcs: ObjectStore;
  let emu: Emulator;
  let bq: BigQuery;
  let ds: Dataset;
  let bucket: Bucket;

  beforeAll(async () => {
    gcs = await startGcsStandIn([]);
    emu = await startEmulator({ args: ['--project-id', 'gcs-p'], env: { STORAGE_EMULATOR_HOST: gcs.endpoint } });
    bq = new BigQuery({ projectId: 'gcs-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    const storage = new Storage({ projectId: 'gcs-p', apiEndpoint: `http://${gcs.endpoint}`, authClient: fakeAuth() as never, useAuthWithCustomEndpoint: false });
    [bucket] = await storage.createBucket('samples-bkt');
    [ds] = await bq.createDataset('gcs');
  });
  afterAll(async () => {
    await emu?.stop();
    await gcs?.close();
  });

  it('a CSV object written with the Storage client loads through table.load(file), schema autodetected', async () => {
    await bucket.file('states/us-states.csv').save('name,post_abbr\nAlabama,AL\nAlaska,AK\nArizona,AZ\n');
    const [job] = await ds.table('states').load(bucket.file('states/us-states.csv'), { sourceFormat: 'CSV', skipLeadingRows: 1, autodetect: true });
    expect(job.status?.state).toBe('DONE');
    expect(job.statistics?.load?.outputRows).toBe('3');
    const [rows] = await bq.query('SELECT name, post_abbr FROM gcs.states ORDER BY name');
    expect(rows).toEqual([{ name: 'Alabama', post_abbr: 'AL' }, { name: 'Alaska', post_abbr: 'AK' }, { name: 'Arizona', post_abbr: 'AZ' }]);
  });

  it('a resumable upload of a larger NDJSON object loads too', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ id: i, name: `n${i}` })).join('\n') + '\n';
    await bucket.file('big/rows.json').save(lines, { resumable: true, chunkSize: 256 * 1024 });
    const [files] = await bucket.getFiles({ prefix: 'big/' });
    expect(files.map((f) => f.name)).toEqual(['big/rows.json']);
    await ds.table('big').load(bucket.file('big/rows.json'), { sourceFormat: 'NEWLINE_DELIMITED_JSON', schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'name', type: 'STRING' }] } });
    const [[agg]] = await bq.query('SELECT COUNT(*) AS n, SUM(id) AS s FROM gcs.big');
    expect(agg).toEqual({ n: 20_000, s: (19_999 * 20_000) / 2 });
  });

  it('table.extract writes CSV and gzipped NDJSON objects the Storage client reads back; wildcards shard', async () => {
    await ds.table('states').extract(bucket.file('out/states.csv'));
    const [csv] = await bucket.file('out/states.csv').download();
    expect(csv.toString()).toBe('name,post_abbr\nAlabama,AL\nAlaska,AK\nArizona,AZ\n');
    await ds.table('states').extract(bucket.file('out/states.json.gz'), { format: 'JSON', gzip: true });
    const [gz] = await bucket.file('out/states.json.gz').download({ decompress: false });
    const { gunzipSync } = await import('node:zlib');
    expect(gunzipSync(gz).toString().trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { name: 'Alabama', post_abbr: 'AL' }, { name: 'Alaska', post_abbr: 'AK' }, { name: 'Arizona', post_abbr: 'AZ' },
    ]);
    await ds.table('big').extract(bucket.file('shards/part-*.csv'));
    const [shards] = await bucket.getFiles({ prefix: 'shards/' });
    expect(shards.length).toBeGreaterThan(0);
    const text = (await Promise.all(shards.map((f) => f.download().then(([b]) => b.toString())))).join('');
    expect(text.split('\n').filter((l) => /^\d+,/.test(l))).toHaveLength(20_000);
    // Deleting through the Storage client leaves nothing for a later load to find.
    await bucket.file('states/us-states.csv').delete();
    await expect(ds.table('states2').load(bucket.file('states/us-states.csv'), { sourceFormat: 'CSV', autodetect: true })).rejects.toThrow(/Not found: URI gs:\/\/samples-bkt\/states\/us-states.csv/);
  });
});
