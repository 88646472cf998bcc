// Catalog cost at scale (issue 15): 100 datasets x 100 tables made through
// tables.insert, one after another, on a fresh emulator; the p50 latency of
// the first 100 creates against the last 100 (a DDL must cost what it
// changes, not what the catalog holds); then the emulator is restarted on the
// data dir and the time to healthy and to the first tables.list is taken.
//   npm run build && node --import tsx bench/catalog-scale.ts [--datasets 100] [--tables 100]
// Prints one JSON line and writes bench/results/catalog-scale.json.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../src/api/index.js';
import { summarize } from './lib/stats.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const DATASETS = arg('datasets', 100);
const TABLES = arg('tables', 100);
const SAMPLE = 100;

async function post(url: string, body: unknown): Promise<void> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  await r.arrayBuffer();
}

const dataDir = mkdtempSync(join(tmpdir(), 'wh-catalog-scale-'));
try {
  let emu = await startEmulator({ dataDir, projectId: 'scale' });
  const base = `${emu.url}/bigquery/v2/projects/scale`;
  const ms: number[] = [];
  const t0 = performance.now();
  for (let d = 0; d < DATASETS; d++) {
    await post(`${base}/datasets`, { datasetReference: { datasetId: `ds${d}` }, description: `dataset ${d}` });
    for (let t = 0; t < TABLES; t++) {
      const body = {
        tableReference: { tableId: `t${t}` },
        description: `table ${t} of dataset ${d}`,
        schema: { fields: [{ name: 'id', type: 'INT64', mode: 'REQUIRED' }, { name: 'name', type: 'STRING' }, { name: 'amount', type: 'NUMERIC' }, { name: 'at', type: 'TIMESTAMP' }] },
      };
      const s = performance.now();
      await post(`${base}/datasets/ds${d}/tables`, body);
      ms.push(performance.now() - s);
    }
  }
  const totalS = (performance.now() - t0) / 1000;
  await emu.stop();
  const r0 = performance.now();
  emu = await startEmulator({ dataDir, projectId: 'scale' });
  const healthyMs = performance.now() - r0;
  const l0 = performance.now();
  const list = (await (await fetch(`${emu.url}/bigquery/v2/projects/scale/datasets/ds${DATASETS - 1}/tables?maxResults=1000`)).json()) as { tables?: unknown[] };
  const listMs = performance.now() - l0;
  await emu.stop();
  if ((list.tables?.length ?? 0) !== TABLES) throw new Error(`restart lists ${list.tables?.length} tables of ds${DATASETS - 1}`);
  // The same start on an empty data dir, right after: what the catalog adds to it.
  const e0 = performance.now();
  const empty = await startEmulator({ projectId: 'scale' });
  const emptyHealthyMs = performance.now() - e0;
  await empty.stop();
  const result = {
    tables: ms.length,
    totalSeconds: Number(totalS.toFixed(1)),
    firstP50Ms: Number(summarize(ms.slice(0, SAMPLE)).p50.toFixed(2)),
    lastP50Ms: Number(summarize(ms.slice(-SAMPLE)).p50.toFixed(2)),
    restartToHealthyMs: Math.round(healthyMs),
    emptyStartToHealthyMs: Math.round(emptyHealthyMs),
    firstListMs: Math.round(listMs),
    measuredAt: new Date().toISOString(),
  };
  console.log(JSON.stringify(result));
  writeFileSync(new URL('./results/catalog-scale.json', import.meta.url), JSON.stringify(result, null, 2) + '\n');
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
