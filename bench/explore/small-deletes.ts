// Many small row-level changes on one table (issue 19): a table of N rows
// made by CTAS, then `--count` one-row DELETEs over REST (jobs.query, as a
// client sends them), each on a row no earlier one touched. Prints the
// statements' p50 per hundred and the table's sidecar size as it goes (a
// fold rewrites the sidecar whole; with WAREHOUSE_COMPACT_IDLE_MS small, a
// fold follows nearly every statement, as for a client that pauses between
// them), then after a last fold and after a restart.
//   npm run build && node --import tsx bench/explore/small-deletes.ts [--rows 1000000] [--count 1000] [--port 9430]
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/api/index.js';
import { summarize } from '../lib/stats.js';
import { queryDone } from '../lib/rest-client.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const ROWS = arg('rows', 1_000_000);
const COUNT = arg('count', 1000);
const PORT = arg('port', 9430);
const P = 'dels';

const query = (emu: RunningEmulator, sql: string): Promise<void> => queryDone(emu.url, P, sql);

/** The table's sidecar and deletion vector files: bytes of the sidecar, count and bytes of the .del files. */
function onDisk(dataDir: string): { sidecarBytes: number; delFiles: number; delBytes: number } {
  const d = join(dataDir, P, 'd');
  let sidecarBytes = 0, delFiles = 0, delBytes = 0;
  for (const f of readdirSync(d)) {
    if (f.endsWith('.meta.json')) sidecarBytes = Math.max(sidecarBytes, statSync(join(d, f)).size);
    if (f.endsWith('.del')) {
      delFiles++;
      delBytes += statSync(join(d, f)).size;
    }
  }
  return { sidecarBytes, delFiles, delBytes };
}

const start = (dataDir: string): Promise<RunningEmulator> => startEmulator({ dataDir, projectId: P, httpPort: PORT, grpcPort: PORT + 1 });
const dataDir = mkdtempSync(join(tmpdir(), 'wh-small-dels-'));
let emu = await start(dataDir);
try {
  await query(emu, 'CREATE SCHEMA d');
  const groups = Math.ceil(ROWS / 1000);
  await query(emu, `CREATE TABLE d.t AS SELECT a * 1000 + b AS id, MOD(a * 1000 + b, 1000) AS k, (a * 1000 + b) * 0.5 AS v
    FROM UNNEST(GENERATE_ARRAY(0, ${groups - 1})) AS a, UNNEST(GENERATE_ARRAY(0, 999)) AS b`);
  const times: number[] = [];
  for (let i = 1; i <= COUNT; i++) {
    const id = (i * 7919) % ROWS;
    const t0 = performance.now();
    await query(emu, `DELETE FROM d.t WHERE id = ${id}`);
    times.push(performance.now() - t0);
    if (i % Math.max(1, Math.floor(COUNT / 10)) === 0) {
      const s = summarize(times.slice(-100)).p50;
      console.log(`after ${i}: p50 of the last 100 ${s.toFixed(1)} ms, ${JSON.stringify(onDisk(dataDir))}`);
    }
  }
  // The last fold (idle) has written the sidecar with every deletion.
  await new Promise((r) => setTimeout(r, 4000));
  console.log(`folded: ${JSON.stringify(onDisk(dataDir))}`);
  await emu.stop();
  const t0 = performance.now();
  emu = await start(dataDir);
  await query(emu, 'SELECT COUNT(*) FROM d.t');
  console.log(`restart + first count ${(performance.now() - t0).toFixed(0)} ms`);
  const all = summarize(times);
  console.log(`${COUNT} one-row DELETEs on ${ROWS} rows: p50 ${all.p50.toFixed(1)} ms, first 100 ${summarize(times.slice(0, 100)).p50.toFixed(1)} ms, last 100 ${summarize(times.slice(-100)).p50.toFixed(1)} ms; load ${loadavg()[0]!.toFixed(2)}`);
} finally {
  await emu.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
