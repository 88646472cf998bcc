// The client set-ups the README shows, exactly as written there, against an
// emulator from the programmatic start: the Node client without credentials
// (apiEndpoint + PassThroughClient, and BIGQUERY_EMULATOR_HOST), including
// table.load of a local file (a multipart upload, which crashes the client
// without an auth client) and createQueryStream; load and extract with
// file:// and absolute-path URIs; the bq CLI loading a local file.
// Python's and Java's clients cannot be installed here (neither PyPI nor
// Maven Central is reachable), so their README settings are not run.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery } from '@google-cloud/bigquery';
import { PassThroughClient } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/api/index.js';
import { ensureBuilt } from '../helpers/emulator.js';
import { hasBq } from '../gateway/bq-cli-setup.js';

const dir = mkdtempSync(join(tmpdir(), 'client-setup-'));
let emu: RunningEmulator;
let bigquery: BigQuery;

beforeAll(async () => {
  await ensureBuilt();
  emu = await startEmulator({ projectId: 'my-project' });
  // README: "Node client".
  bigquery = new BigQuery({ projectId: 'my-project', apiEndpoint: emu.url, authClient: new PassThroughClient() });
  await bigquery.createDataset('shop');
  writeFileSync(join(dir, 'fruit.csv'), 'name,price\napple,1.25\npear,0.8\nfig,2.5\n');
}, 180_000);
afterAll(async () => {
  await emu?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const SCHEMA = { fields: [{ name: 'name', type: 'STRING' }, { name: 'price', type: 'FLOAT' }] };

describe('Node client without credentials', () => {
  it('table.load uploads a local file', async () => {
    const [job] = await bigquery.dataset('shop').table('fruit').load(join(dir, 'fruit.csv'), { sourceFormat: 'CSV', skipLeadingRows: 1, schema: SCHEMA });
    expect(job.status?.state).toBe('DONE');
    expect(job.status?.errorResult).toBeUndefined();
    expect(job.statistics?.load?.outputRows).toBe('3');
  });

  it('createQueryStream streams the rows', async () => {
    const rows: { name: string; price: number }[] = [];
    await new Promise<void>((res, rej) => {
      bigquery
        .createQueryStream({ query: 'SELECT name, price FROM shop.fruit ORDER BY price DESC' })
        .on('data', (r: { name: string; price: number }) => rows.push(r))
        .on('error', rej)
        .on('end', () => res());
    });
    expect(rows).toEqual([
      { name: 'fig', price: 2.5 },
      { name: 'apple', price: 1.25 },
      { name: 'pear', price: 0.8 },
    ]);
  });

  it('BIGQUERY_EMULATOR_HOST instead of apiEndpoint', async () => {
    const saved = process.env['BIGQUERY_EMULATOR_HOST'];
    process.env['BIGQUERY_EMULATOR_HOST'] = emu.env['BIGQUERY_EMULATOR_HOST'];
    try {
      const viaEnv = new BigQuery({ projectId: 'my-project', authClient: new PassThroughClient() });
      const [rows] = await viaEnv.query('SELECT COUNT(*) AS n FROM shop.fruit');
      expect(rows).toEqual([{ n: 3 }]);
      const [job] = await viaEnv.dataset('shop').table('fruit_env').load(join(dir, 'fruit.csv'), { sourceFormat: 'CSV', skipLeadingRows: 1, schema: SCHEMA });
      expect(job.statistics?.load?.outputRows).toBe('3');
    } finally {
      if (saved === undefined) delete process.env['BIGQUERY_EMULATOR_HOST'];
      else process.env['BIGQUERY_EMULATOR_HOST'] = saved;
    }
  });

  it('load and extract jobs read and write file:// and absolute-path URIs', async () => {
    const [load] = await bigquery.createJob({
      configuration: {
        load: {
          sourceUris: [`file://${join(dir, 'fruit.csv')}`, join(dir, 'fruit.csv')],
          destinationTable: { projectId: 'my-project', datasetId: 'shop', tableId: 'fruit_uris' },
          sourceFormat: 'CSV',
          skipLeadingRows: 1,
          schema: SCHEMA,
        },
      },
    });
    await load.promise();
    const [rows] = await bigquery.query('SELECT COUNT(*) AS n FROM shop.fruit_uris');
    expect(rows).toEqual([{ n: 6 }]);
    for (const uri of [`file://${join(dir, 'out.ndjson')}`, join(dir, 'out2.ndjson')]) {
      const [extract] = await bigquery.createJob({
        configuration: {
          extract: { sourceTable: { projectId: 'my-project', datasetId: 'shop', tableId: 'fruit' }, destinationUris: [uri], destinationFormat: 'NEWLINE_DELIMITED_JSON' },
        },
      });
      await extract.promise();
    }
    const lines = readFileSync(join(dir, 'out2.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { name: string });
    expect(lines.map((l) => l.name).sort()).toEqual(['apple', 'fig', 'pear']);
    expect(readFileSync(join(dir, 'out.ndjson'), 'utf8')).toBe(readFileSync(join(dir, 'out2.ndjson'), 'utf8'));
  });
});

describe.skipIf(!hasBq())('bq CLI as the README shows it', () => {
  const bq = (...args: string[]): Promise<string> =>
    new Promise((res, rej) =>
      execFile('bq', [`--api=${emu.url}`, '--project_id=my-project', '--oauth_access_token=fake', ...args], { cwd: dir, timeout: 90_000, env: { ...process.env, CLOUDSDK_CONFIG: dir } }, (err, stdout, stderr) =>
        err ? rej(new Error(`${err.message}\n${stdout}\n${stderr}`)) : res(stdout),
      ),
    );

  it('loads a local file and queries it', async () => {
    await bq('load', '--source_format=CSV', '--skip_leading_rows=1', 'shop.fruit_bq', join(dir, 'fruit.csv'), 'name:STRING,price:FLOAT');
    const out = await bq('query', '--nouse_legacy_sql', '--format=json', 'SELECT name FROM shop.fruit_bq ORDER BY name');
    expect(JSON.parse(out.slice(out.indexOf('[')))).toEqual([{ name: 'apple' }, { name: 'fig' }, { name: 'pear' }]);
  }, 120_000);
});
