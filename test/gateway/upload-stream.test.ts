// Uploads are spooled to disk and loaded as a stream (plugins/uploads.ts,
// io/stream.ts): the job shows RUNNING with growing statistics while it
// loads, resumable chunks and gzipped data work, and no spool file is left.
// Extract jobs show RUNNING with a growing completion ratio too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';

let emu: Emulator;
const dataDir = mkdtempSync(join(tmpdir(), 'upload-stream-'));
// A spool file of a gateway that no longer runs: the next start removes it.
const deadPid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
const stale = join(dataDir, '.uploads', `${deadPid}-0123456789abcdef.upload`);

beforeAll(async () => {
  mkdirSync(join(dataDir, '.uploads'), { recursive: true });
  writeFileSync(stale, 'left over');
  emu = await startEmulator({ dataDir, args: ['--project-id', 'test'] });
  await rest(`${emu.url}/bigquery/v2/projects/test/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'up' } } });
}, 120_000);
afterAll(async () => {
  await emu?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const SCHEMA = { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'name', type: 'STRING' }, { name: 'note', type: 'STRING' }] };
const load = (table: string, jobId: string, extra: Record<string, unknown> = {}) => ({
  jobReference: { projectId: 'test', jobId },
  configuration: { load: { destinationTable: { projectId: 'test', datasetId: 'up', tableId: table }, schema: SCHEMA, ...extra } },
});

function csv(rows: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) lines.push(`${i},name-${i},"a note, with a comma, row ${i}"`);
  return Buffer.from(lines.join('\n') + '\n');
}

function multipart(metadata: unknown, data: Buffer, boundary = 'xyz-boundary'): { body: Buffer; type: string } {
  return {
    type: `multipart/related; boundary=${boundary}`,
    body: Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\n\r\n`),
      data,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
  };
}

const count = async (table: string): Promise<string> =>
  (await rest(`${emu.url}/bigquery/v2/projects/test/queries`, { method: 'POST', json: { query: `SELECT COUNT(*) FROM up.${table}`, useLegacySql: false } })).body.rows[0].f[0].v;

it('removed the spool file a dead gateway left', () => {
  expect(existsSync(stale)).toBe(false);
});

it('a multipart load is spooled, shows RUNNING with growing statistics, and ends DONE with every row', async () => {
  const rows = 60_000;
  const { body, type } = multipart(load('big', 'job_stream_1'), csv(rows));
  const samples: { rows: number; ratio: number }[] = [];
  let spooled = false;
  let finished = false;
  const poll = (async () => {
    while (!finished) {
      if (readdirSync(join(dataDir, '.uploads')).length) spooled = true;
      const j = await rest(`${emu.url}/bigquery/v2/projects/test/jobs/job_stream_1`);
      if (j.status === 200 && j.body.status.state === 'RUNNING' && j.body.statistics.load) {
        samples.push({ rows: Number(j.body.statistics.load.outputRows), ratio: j.body.statistics.completionRatio });
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const r = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, { method: 'POST', body, headers: { 'content-type': type } });
  finished = true;
  await poll;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.status.state).toBe('DONE');
  expect(r.body.statistics.load.outputRows).toBe(String(rows));
  expect(r.body.statistics.load.inputFileBytes).toBe(String(csv(rows).length));
  expect(spooled).toBe(true);
  expect(samples.length).toBeGreaterThan(0);
  for (const s of samples) {
    expect(s.rows).toBeGreaterThan(0);
    expect(s.ratio).toBeGreaterThan(0);
    expect(s.ratio).toBeLessThanOrEqual(1);
  }
  for (let i = 1; i < samples.length; i++) expect(samples[i]!.rows).toBeGreaterThanOrEqual(samples[i - 1]!.rows);
  expect(await count('big')).toBe(String(rows));
  expect(readdirSync(join(dataDir, '.uploads'))).toEqual([]);
}, 120_000);

it('an extract job shows RUNNING with its completion ratio growing as pages are read, and ends DONE', async () => {
  // 150,000 rows: three pages of data-jobs.ts's reads, so ratios below 1 last two pages.
  const made = await rest(`${emu.url}/bigquery/v2/projects/test/queries`, {
    method: 'POST',
    json: { query: 'CREATE TABLE up.many AS SELECT x, CONCAT("row ", CAST(x AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, 150000)) AS x', useLegacySql: false },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const samples: number[] = [];
  let finished = false;
  const poll = (async () => {
    while (!finished) {
      const j = await rest(`${emu.url}/bigquery/v2/projects/test/jobs/job_extract_1`);
      if (j.status === 200 && j.body.status.state === 'RUNNING' && j.body.statistics.extract) samples.push(j.body.statistics.completionRatio);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const r = await rest(`${emu.url}/bigquery/v2/projects/test/jobs`, {
    method: 'POST',
    json: { jobReference: { projectId: 'test', jobId: 'job_extract_1' }, configuration: { extract: { sourceTable: { projectId: 'test', datasetId: 'up', tableId: 'many' }, destinationUris: [`file://${dataDir}/out/many.csv`] } } },
  });
  finished = true;
  await poll;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.status.state).toBe('DONE');
  expect(r.body.status.errorResult).toBeUndefined();
  expect(samples.length).toBeGreaterThan(0);
  for (const s of samples) expect(s).toBeGreaterThan(0);
  for (let i = 1; i < samples.length; i++) expect(samples[i]!).toBeGreaterThanOrEqual(samples[i - 1]!);
  expect(samples[0]!).toBeLessThan(1);
}, 120_000);

it('a resumable upload in Content-Range chunks, with gzipped newline-delimited JSON', async () => {
  const lines = Array.from({ length: 3000 }, (_v, i) => JSON.stringify({ id: i, name: `n${i}`, note: i % 2 ? null : 'even' })).join('\n');
  const data = gzipSync(Buffer.from(lines));
  const init = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=resumable`, {
    method: 'POST',
    json: load('resumed', 'job_resumable_1', { sourceFormat: 'NEWLINE_DELIMITED_JSON' }),
  });
  expect(init.status).toBe(200);
  const location = init.headers.get('location')!;
  const cut = [0, Math.floor(data.length / 3), Math.floor((2 * data.length) / 3), data.length];
  let last: Awaited<ReturnType<typeof rest>> | undefined;
  for (let k = 0; k < 3; k++) {
    last = await rest(location, { method: 'PUT', body: data.subarray(cut[k], cut[k + 1]), headers: { 'content-range': `bytes ${cut[k]}-${cut[k + 1]! - 1}/${data.length}` } });
    if (k < 2) {
      expect(last.status).toBe(308);
      expect(last.headers.get('range')).toBe(`bytes=0-${cut[k + 1]! - 1}`);
    }
  }
  expect(last!.status).toBe(200);
  expect(last!.body.status.state).toBe('DONE');
  expect(last!.body.statistics.load.outputRows).toBe('3000');
  expect(await count('resumed')).toBe('3000');
  expect(readdirSync(join(dataDir, '.uploads'))).toEqual([]);
});

it('resumable chunks of an unknown total (bytes a-b/*) answer 308 until the chunk that names the total', async () => {
  const data = Buffer.from('1,a,x\n2,b,y\n3,c,z\n');
  const init = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=resumable`, { method: 'POST', json: load('streamed', 'job_resumable_star') });
  const location = init.headers.get('location')!;
  const first = await rest(location, { method: 'PUT', body: data.subarray(0, 6), headers: { 'content-range': 'bytes 0-5/*' } });
  expect(first.status).toBe(308);
  expect(first.headers.get('range')).toBe('bytes=0-5');
  const second = await rest(location, { method: 'PUT', body: data.subarray(6, 12), headers: { 'content-range': 'bytes 6-11/*' } });
  expect(second.status).toBe(308);
  expect(second.headers.get('range')).toBe('bytes=0-11');
  const last = await rest(location, { method: 'PUT', body: data.subarray(12), headers: { 'content-range': `bytes 12-${data.length - 1}/${data.length}` } });
  expect(last.status).toBe(200);
  expect(last.body.status).toEqual({ state: 'DONE' });
  expect(await count('streamed')).toBe('3');
});

it('a gzip Content-Encoding request body and a bad row fail the job with the row named', async () => {
  const { body, type } = multipart(load('bad', 'job_bad_1'), Buffer.from('1,a,x\nnot-a-number,b,y\n'));
  const r = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, {
    method: 'POST',
    body: gzipSync(body),
    headers: { 'content-type': type, 'content-encoding': 'gzip' },
  });
  expect(r.status).toBe(200);
  expect(r.body.status.errorResult.reason).toBe('invalid');
  expect(r.body.status.errors[0].location).toBe('row 1');
  expect(readdirSync(join(dataDir, '.uploads'))).toEqual([]);
});

it('an empty or boundary-less multipart body is a 400 envelope, not a crash', async () => {
  const empty = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, { method: 'POST', headers: { 'content-type': 'multipart/related; boundary=b' } });
  expect(empty.status).toBe(400);
  expect(empty.body.error.message).toMatch(/without parts/);
  const noBoundary = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, { method: 'POST', body: 'x', headers: { 'content-type': 'multipart/related' } });
  expect(noBoundary.status).toBe(400);
  expect(readdirSync(join(dataDir, '.uploads'))).toEqual([]);
});
