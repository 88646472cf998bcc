// APPENDS over a table's last commits (issue 16, gap 4): a table of `--gens`
// bulk INSERTs of `--rows` rows each (each its own fragment file), then
// `--count` timed calls of APPENDS from a start between the last `--last`
// commits and the ones before (COUNT and SUM of one column), and the same
// for CHANGES (enable_change_history). In-process (planner and storage, no
// gateway). Run it from two worktrees in turn (before and after) to compare.
//   node --import tsx bench/explore/appends-window.ts [--gens 20] [--rows 100000] [--last 2] [--count 10] [--label new]
// Measured when reads were cut to the rows events name (main at d69f553 vs changes2, defaults: 2M rows, a 200k-row
// window; 3 alternating pairs, 2 cores at load 22-32 from other work), ms per call, median (min) of 10:
// APPENDS 3653 (1365), 4980 (2796), 3626 (2373) -> 789 (455), 1290 (1038), 1273 (843);
// CHANGES 1716, 2703, 3648 -> 1479, 1341, 1222. Same results (200,000 rows, same sum) on both.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { Storage } from '../../src/storage/store.js';
import { run, type Harness } from '../../test/sql/harness.js';
import { getValue } from '../../src/types/vector.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const GENS = Number(arg('gens', '20'));
const ROWS = Number(arg('rows', '100000'));
const LAST = Number(arg('last', '2'));
const COUNT = Number(arg('count', '10'));
const LABEL = arg('label', 'run');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'appends-window-'));
const storage = await Storage.open(dir, { noLock: true });
const h: Harness = { storage, catalog: new EngineCatalog(storage), close: () => storage.close() };
const q = async (sql: string): Promise<unknown[][]> => {
  const r = await run(h, sql, { projectId: 'b', defaultDataset: { projectId: 'b', datasetId: 'd' } });
  return r.batches.flatMap((b) => Array.from({ length: b.length }, (_, i) => b.columns.map((v) => getValue(v, i))));
};
try {
  await q('CREATE SCHEMA d');
  await q("CREATE TABLE d.t (id INT64, k INT64, s STRING) OPTIONS (enable_change_history = TRUE)");
  let start = 0;
  for (let g = 0; g < GENS; g++) {
    if (g === GENS - LAST) {
      await new Promise((r) => setTimeout(r, 5));
      start = Date.now();
      await new Promise((r) => setTimeout(r, 5));
    }
    await q(`INSERT d.t SELECT id, MOD(id, 1000), CONCAT('s', CAST(id AS STRING)) FROM UNNEST(GENERATE_ARRAY(${g * ROWS + 1}, ${(g + 1) * ROWS})) AS id`);
  }
  const timed = async (sql: string): Promise<{ ms: number[]; result: unknown }> => {
    const ms: number[] = [];
    let result: unknown;
    for (let i = 0; i < COUNT; i++) {
      const t = performance.now();
      result = await q(sql);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    return { ms, result };
  };
  const appends = await timed(`SELECT COUNT(*), SUM(id) FROM APPENDS(TABLE d.t, TIMESTAMP_MILLIS(${start}))`);
  const changes = await timed(`SELECT COUNT(*), SUM(id) FROM CHANGES(TABLE d.t, TIMESTAMP_MILLIS(${start}), NULL)`);
  const median = (xs: number[]): string => xs[xs.length >> 1]!.toFixed(1);
  console.log(JSON.stringify({
    label: LABEL, gens: GENS, rows: ROWS, last: LAST, count: COUNT,
    appends_ms_median: median(appends.ms), appends_ms_min: appends.ms[0]!.toFixed(1), appends: String(appends.result),
    changes_ms_median: median(changes.ms), changes: String(changes.result),
    load: os.loadavg().map((x) => x.toFixed(1)).join(' '),
  }));
} finally {
  await h.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
