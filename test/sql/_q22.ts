import { openHarness, run, setupDataset, errorMessage, rowsOf } from './harness.js';
const h = await openHarness();
await setupDataset(h, 'p1', 'ds');
for (const sql of process.argv.slice(2)) {
  try { const r = await run(h, sql, { projectId: 'p1', defaultDataset: { projectId: 'p1', datasetId: 'ds' } }); console.log(JSON.stringify(rowsOf(r))); }
  catch (e) { console.log('ERR', errorMessage(e)); }
}
await h.close();
