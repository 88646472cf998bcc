import { openHarness, run, rowsOf, setupDataset } from './harness.js';
const h = await openHarness();
const o = { projectId: 'p', defaultDataset: { projectId: 'p', datasetId: 'd' } };
await setupDataset(h, 'p', 'd');
for (const sql of process.argv.slice(2)) {
  try {
    const r = await run(h, sql, o);
    console.log(r.statementType, JSON.stringify(r.columns?.map((c) => c.name)), JSON.stringify(rowsOf(r)));
  } catch (e) {
    console.log('ERR', (e as Error).message);
  }
}
await h.close();
