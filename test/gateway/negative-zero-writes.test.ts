// data-types.md, Floating point semantics: a table can't store a negative zero. -0.0 nested in an ARRAY or a STRUCT
// is stored as 0 like a top-level FLOAT64 column's, by tabledata.insertAll and load jobs as by DML
// (test/sql/negative-zero-nested.sqltest); the Storage Write API's commits take the same rule (engine/rows.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('nested negative zeros through insertAll and load jobs', () => {
  let emu: Emulator;
  let dir: string;
  const fields = [
    { name: 'k', type: 'INT64' },
    { name: 'f', type: 'FLOAT64' },
    { name: 'a', type: 'FLOAT64', mode: 'REPEATED' },
    { name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'FLOAT64' }, { name: 'y', type: 'FLOAT64', mode: 'REPEATED' }] },
  ];
  beforeAll(async () => {
    emu = await startEmulator();
    dir = mkdtempSync(join(tmpdir(), 'nz-'));
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => {
    await emu?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/nz${p}`;
  /** Whether each stored zero is +0, per row: IEEE_DIVIDE(1, +0) is +inf. */
  const positive = async (t: string): Promise<unknown[]> => {
    const sql = `SELECT k, IEEE_DIVIDE(1, f) > 0, IEEE_DIVIDE(1, a[OFFSET(0)]) > 0, IEEE_DIVIDE(1, s.x) > 0, IEEE_DIVIDE(1, s.y[OFFSET(0)]) > 0 FROM d.${t} ORDER BY k`;
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.rows.map((x: any) => x.f.map((c: any) => c.v));
  };

  it('tabledata.insertAll', async () => {
    expect((await rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId: 'ins' }, schema: { fields } } })).status).toBe(200);
    // Written by hand: JSON.stringify spells -0 as 0; JSON.parse reads -0.0 as -0, which the rows carry to the engine.
    const body = '{"rows":[{"json":{"k":1,"f":-0.0,"a":[-0.0,2.5],"s":{"x":-0.0,"y":[-0.0]}}}]}';
    const r = await fetch(url('/datasets/d/tables/ins/insertAll'), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { insertErrors?: unknown }).insertErrors).toBeUndefined();
    expect(await positive('ins')).toEqual([['1', 'true', 'true', 'true', 'true']]);
  });

  it('a load job of newline-delimited JSON', async () => {
    const src = join(dir, 'rows.json');
    writeFileSync(src, '{"k":2,"f":-0.0,"a":[-0.0,2.5],"s":{"x":-0.0,"y":[-0.0]}}\n');
    const ins = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { load: { destinationTable: { datasetId: 'd', tableId: 'ld' }, sourceUris: [`file://${src}`], sourceFormat: 'NEWLINE_DELIMITED_JSON', schema: { fields } } } },
    });
    expect(ins.status).toBe(200);
    let job: any;
    for (let i = 0; i < 400; i++) {
      job = (await rest(url(`/jobs/${ins.body.jobReference.jobId}`))).body;
      if (job.status?.state === 'DONE') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job.status.errorResult).toBeUndefined();
    expect(await positive('ld')).toEqual([['2', 'true', 'true', 'true', 'true']]);
  });
});
