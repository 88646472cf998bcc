// Measures the engine alone: start-to-serving, idle RSS, InsertRows rows/s for
// 500-row batches of 8 columns (sequential and 4 concurrent callers), ListRows.
// Run: npm run build && node --import tsx test/engine/measure.ts
import * as fs from 'node:fs';
import { spawnEngine, tempDir } from './helpers.js';

process.env.ENGINE_FROM_DIST = '1';

/** User+system CPU seconds of a process (load-independent cost measure). */
function cpuSec(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function rss(pid: number): number {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(s)![1]) / 1024;
}

const dir = tempDir('wh-measure-');
const starts: number[] = [];
for (let i = 0; i < 3; i++) {
  const e = await spawnEngine(tempDir('wh-start-'));
  starts.push(e.startMs);
  e.proc.kill('SIGKILL');
  e.client.close();
}
const eng = await spawnEngine(dir);
await new Promise((r) => setTimeout(r, 500));
const idle = rss(eng.proc.pid!);
const T = { projectId: 'p', datasetId: 'd', tableId: 't' };
await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
await eng.client.call('InsertTable', {
  projectId: 'p',
  datasetId: 'd',
  resourceJson: JSON.stringify({
    tableReference: { tableId: 't' },
    schema: {
      fields: [
        { name: 'id', type: 'INT64' },
        { name: 'name', type: 'STRING' },
        { name: 'score', type: 'FLOAT64' },
        { name: 'ok', type: 'BOOL' },
        { name: 'ts', type: 'TIMESTAMP' },
        { name: 'day', type: 'DATE' },
        { name: 'amount', type: 'NUMERIC' },
        { name: 'note', type: 'STRING' },
      ],
    },
  }),
});
let id = 0;
function batchJson(): string {
  const rows = [];
  for (let i = 0; i < 500; i++, id++) {
    rows.push({ insertId: `i${id}`, json: { id, name: `name-${id}`, score: id * 1.5, ok: id % 2 === 0, ts: '2024-01-01T00:00:00.123456Z', day: '2024-01-01', amount: '12.50', note: 'some text here' } });
  }
  return JSON.stringify(rows);
}
const N = 200;
const payloads = Array.from({ length: N }, batchJson);
const cpu0 = cpuSec(eng.proc.pid!);
let t0 = performance.now();
for (const p of payloads) await eng.client.call('InsertRows', { table: T, rowsJson: p });
const seq = (N * 500) / ((performance.now() - t0) / 1000);
const engineCpuUsPerRow = ((cpuSec(eng.proc.pid!) - cpu0) * 1e6) / (N * 500);
const payloads2 = Array.from({ length: N }, batchJson);
t0 = performance.now();
let k = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (k < payloads2.length) await eng.client.call('InsertRows', { table: T, rowsJson: payloads2[k++]! });
  }),
);
const conc = (N * 500) / ((performance.now() - t0) / 1000);
t0 = performance.now();
const r = await eng.client.call<{ rowsJson: string; totalRows: number }>('ListRows', { table: T, startIndex: 0, maxResults: 100000 });
const listMs = performance.now() - t0;
const loaded = rss(eng.proc.pid!);
console.log(
  JSON.stringify(
    {
      startToServingMs: starts.map((s) => Math.round(s)),
      idleRssMB: Math.round(idle),
      loadAverage: fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
      insertRowsPerSecSequential500: Math.round(seq),
      engineCpuMicrosPerInsertedRow: Number(engineCpuUsPerRow.toFixed(2)),
      insertRowsPerSec4Concurrent500: Math.round(conc),
      listRows100kMs: Math.round(listMs),
      totalRows: r.totalRows,
      rssAfter200kRowsMB: Math.round(loaded),
    },
    null,
    1,
  ),
);
eng.proc.kill('SIGTERM');
eng.client.close();

// The same workload through the whole REST path (gateway + engine).
const { startEmulator } = await import('../helpers/emulator.js');
const emu = await startEmulator();
const api = `${emu.url}/bigquery/v2/projects/p`;
const postJson = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
await postJson(`${api}/datasets`, { datasetReference: { datasetId: 'd' } });
await postJson(`${api}/datasets/d/tables`, {
  tableReference: { tableId: 't' },
  schema: {
    fields: [
      { name: 'id', type: 'INTEGER' }, { name: 'name', type: 'STRING' }, { name: 'score', type: 'FLOAT' }, { name: 'ok', type: 'BOOLEAN' },
      { name: 'ts', type: 'TIMESTAMP' }, { name: 'day', type: 'DATE' }, { name: 'amount', type: 'NUMERIC' }, { name: 'note', type: 'STRING' },
    ],
  },
});
const bodies = Array.from({ length: 200 }, () => `{"rows":${batchJson()}}`);
t0 = performance.now();
for (const b of bodies) await fetch(`${api}/datasets/d/tables/t/insertAll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: b });
const restSeq = (200 * 500) / ((performance.now() - t0) / 1000);
const bodies2 = Array.from({ length: 200 }, () => `{"rows":${batchJson()}}`);
k = 0;
t0 = performance.now();
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (k < bodies2.length) await fetch(`${api}/datasets/d/tables/t/insertAll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies2[k++]! });
  }),
);
const restConc = (200 * 500) / ((performance.now() - t0) / 1000);
console.log(JSON.stringify({ restInsertAllRowsPerSecSequential500: Math.round(restSeq), restInsertAllRowsPerSec4Concurrent500: Math.round(restConc) }));
await emu.stop();
