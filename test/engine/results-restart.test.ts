// Anonymous query results survive a kill -9 of the engine (the gateway
// respawns it and keeps its job registry): jobs.getQueryResults and
// tabledata.list on the anonymous table read the same rows as before.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

let emu: Emulator;
const url = (p: string): string => `${emu.url}/bigquery/v2/projects/p${p}`;

function enginePid(): number | undefined {
  try {
    return Number(execFileSync('pgrep', ['-P', String(emu.proc.pid)]).toString().trim().split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/** SIGKILL the engine, then wait until the respawned one answers. */
async function killEngine(): Promise<void> {
  const first = enginePid();
  expect(first).toBeGreaterThan(0);
  process.kill(first!, 'SIGKILL');
  const t0 = Date.now();
  for (;;) {
    const pid = enginePid();
    if (pid && pid !== first && (await rest(url('/datasets'))).status === 200) return;
    if (Date.now() - t0 > 30_000) throw new Error('engine did not come back');
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Row = { f: { v: unknown }[] };

/** Every row of a result through getQueryResults pages of `size`. */
async function allResults(jobId: string, size: number): Promise<{ rows: Row[]; totalRows: string }> {
  const rows: Row[] = [];
  let token = '';
  let totalRows = '';
  for (;;) {
    const r = await rest(url(`/queries/${jobId}?maxResults=${size}${token ? `&pageToken=${token}` : ''}`));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    rows.push(...((r.body.rows ?? []) as Row[]));
    totalRows = r.body.totalRows as string;
    if (!r.body.pageToken) return { rows, totalRows };
    token = r.body.pageToken as string;
  }
}

beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(async () => {
  await emu?.stop();
});

describe.skipIf(!hasRealEngine())('anonymous result tables across an engine restart', () => {
  it('getQueryResults and tabledata.list read small and large results after kill -9 of the engine', async () => {
    const small = await rest(url('/queries'), {
      method: 'POST',
      json: { query: "SELECT x, CONCAT('v', CAST(x AS STRING)) AS s, NUMERIC '1.5' * x AS n, [x, x + 1] AS a FROM UNNEST(GENERATE_ARRAY(1, 25)) AS x ORDER BY x", useLegacySql: false },
    });
    expect(small.status, JSON.stringify(small.body)).toBe(200);
    const big = await rest(url('/queries'), {
      method: 'POST',
      json: { query: 'SELECT x, MOD(x, 97) AS m, x * 0.5 AS h FROM UNNEST(GENERATE_ARRAY(1, 150000)) AS x ORDER BY x', useLegacySql: false, maxResults: 10 },
    });
    expect(big.status, JSON.stringify(big.body)).toBe(200);
    const smallJob = small.body.jobReference.jobId as string;
    const bigJob = big.body.jobReference.jobId as string;
    const before = await allResults(smallJob, 10);
    expect(before.rows).toHaveLength(25);
    const bigPageBefore = await rest(url(`/queries/${bigJob}?startIndex=140000&maxResults=3`));
    expect(bigPageBefore.body.rows).toEqual([
      { f: [{ v: '140001' }, { v: String(140001 % 97) }, { v: '70000.5' }] },
      { f: [{ v: '140002' }, { v: String(140002 % 97) }, { v: '70001.0' }] },
      { f: [{ v: '140003' }, { v: String(140003 % 97) }, { v: '70001.5' }] },
    ]);
    const job = await rest(url(`/jobs/${bigJob}`));
    const dest = job.body.configuration.query.destinationTable as { datasetId: string; tableId: string };
    expect(dest.datasetId).toMatch(/^_/);

    await killEngine();

    const after = await allResults(smallJob, 10);
    expect(after).toEqual(before);
    expect(after.rows[24]).toEqual({ f: [{ v: '25' }, { v: 'v25' }, { v: '37.5' }, { v: [{ v: '25' }, { v: '26' }] }] });
    expect((await rest(url(`/queries/${bigJob}?startIndex=140000&maxResults=3`))).body.rows).toEqual(bigPageBefore.body.rows);
    const listed = await rest(url(`/datasets/${dest.datasetId}/tables/${dest.tableId}/data?startIndex=149998&maxResults=5`));
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.totalRows).toBe('150000');
    expect(listed.body.rows).toEqual([
      { f: [{ v: '149999' }, { v: String(149999 % 97) }, { v: '74999.5' }] },
      { f: [{ v: '150000' }, { v: String(150000 % 97) }, { v: '75000.0' }] },
    ]);
    const all = await allResults(bigJob, 50_000);
    expect(all.totalRows).toBe('150000');
    expect(all.rows.map((r) => Number(r.f[0]!.v))).toEqual(Array.from({ length: 150_000 }, (_, i) => i + 1));
  }, 120_000);
});
