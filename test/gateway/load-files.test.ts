// Load jobs from local files, which the engine reads itself (io/load-files.ts)
// a share of records per call, through REST: every file of a wildcard, a bad
// record found past the first call leaving a WRITE_TRUNCATE table (and its
// directory) as it was, maxBadRecords skipping and counting bad records.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';

let emu: Emulator;
const dataDir = mkdtempSync(join(tmpdir(), 'load-files-'));
const srcDir = mkdtempSync(join(tmpdir(), 'load-src-'));
const base = (): string => `${emu.url}/bigquery/v2/projects/test`;

beforeAll(async () => {
  emu = await startEmulator({ dataDir, args: ['--project-id', 'test'] });
  await rest(`${base()}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'lf' } } });
}, 120_000);
afterAll(async () => {
  await emu?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(srcDir, { recursive: true, force: true });
});

/** A CSV with a header of ids from..to-1; the ids in `bad` are written as `x`. */
function csvFile(name: string, from: number, to: number, bad: readonly number[] = []): string {
  const lines = ['id,name'];
  for (let i = from; i < to; i++) lines.push(`${bad.includes(i) ? 'x' : i},name ${i}`);
  const p = join(srcDir, name);
  writeFileSync(p, lines.join('\n') + '\n');
  return p;
}

async function load(table: string, uri: string, extra: Record<string, unknown> = {}): Promise<{ status?: { errorResult?: { reason: string; location?: string; message: string }; errors?: { location: string }[] }; statistics?: { load?: Record<string, string> } }> {
  const r = await rest(`${base()}/jobs`, {
    method: 'POST',
    json: { configuration: { load: { destinationTable: { datasetId: 'lf', tableId: table }, sourceUris: [uri], sourceFormat: 'CSV', skipLeadingRows: 1, schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'name', type: 'STRING' }] }, ...extra } } },
  });
  expect(r.status).toBe(200);
  expect(r.body.status.state).toBe('DONE');
  return r.body;
}

async function sums(table: string): Promise<unknown[]> {
  const r = await rest(`${base()}/queries`, { method: 'POST', json: { query: `SELECT COUNT(*), SUM(id) FROM lf.${table}`, useLegacySql: false } });
  return r.body.rows[0].f.map((c: { v: unknown }) => c.v);
}

const parquetFiles = (): string[] => readdirSync(join(dataDir, 'test', 'lf')).filter((f) => f.endsWith('.parquet')).sort();

it('loads every file of a wildcard; a bad record past the first share leaves a WRITE_TRUNCATE table and its files as they were', async () => {
  csvFile('part-1.csv', 0, 40_000);
  csvFile('part-2.csv', 40_000, 70_000);
  const ok = await load('t', `file://${srcDir}/part-*.csv`);
  expect(ok.status?.errorResult).toBeUndefined();
  expect(ok.statistics?.load?.outputRows).toBe('70000');
  expect(ok.statistics?.load?.inputFiles).toBe('2');
  expect(await sums('t')).toEqual(['70000', String((70_000 * 69_999) / 2)]);

  const before = parquetFiles();
  const bad = await load('t', `file://${csvFile('bad.csv', 0, 60_000, [55_000])}`, { writeDisposition: 'WRITE_TRUNCATE' });
  expect(bad.status?.errorResult?.reason).toBe('invalid');
  expect(bad.status?.errors?.[0]?.location).toBe('row 55000');
  expect(await sums('t')).toEqual(['70000', String((70_000 * 69_999) / 2)]);
  // Nothing the failed job staged is left.
  expect(parquetFiles()).toEqual(before);
});

it('maxBadRecords skips bad records and counts them; past it the job fails', async () => {
  const file = `file://${csvFile('some-bad.csv', 0, 50_000, [10, 45_000])}`;
  const skipped = await load('m', file, { maxBadRecords: 2 });
  expect(skipped.status?.errorResult).toBeUndefined();
  expect(skipped.statistics?.load).toMatchObject({ outputRows: '49998', badRecords: '2' });
  expect(await sums('m')).toEqual(['49998', String((50_000 * 49_999) / 2 - 10 - 45_000)]);
  const failed = await load('m2', file, { maxBadRecords: 1 });
  expect(failed.status?.errorResult?.reason).toBe('invalid');
  const missing = await rest(`${base()}/datasets/lf/tables/m2`);
  expect(missing.status).toBe(404);
});

it('a load naming an external-table-only format (Sheets, Bigtable, Iceberg, Delta Lake) fails as an invalid format, not as a 501', async () => {
  const csv = csvFile('fmt.csv', 0, 2);
  for (const sourceFormat of ['GOOGLE_SHEETS', 'BIGTABLE', 'ICEBERG', 'DELTA_LAKE']) {
    const job = await load('fmt', `file://${csv}`, { sourceFormat });
    expect(job.status?.errorResult?.reason).toBe('invalid');
    expect(job.status?.errorResult?.message).toContain(`Invalid source format ${sourceFormat}`);
  }
});
