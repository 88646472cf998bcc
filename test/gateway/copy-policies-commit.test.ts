// A copy job's destination takes the sources' row access policies (using-row-level-security-with-features.md, Copy
// jobs) in the commit of the copied rows: readers running during copies never see the new rows under the
// destination's old policies (which would hide them all here). Partition-decorated copies run as DML in the gateway
// (gateway/jobs/partition-copy.ts), their policies set by a second call: not covered here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('copy jobs commit rows and row access policies together', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/cpc${p}`;
  const query = async (sql: string): Promise<any> => {
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const copy = async (source: string, destination: string, writeDisposition: string): Promise<void> => {
    const table = (t: string) => ({ projectId: 'cpc', datasetId: 'd', tableId: t });
    const r = await rest(url('/jobs'), { method: 'POST', json: { configuration: { copy: { sourceTable: table(source), destinationTable: table(destination), writeDisposition } } } });
    expect(r.body.status, JSON.stringify(r.body)).toEqual({ state: 'DONE' });
  };

  /** Copies `rounds` times (each after `reset`) while readers count the destination's visible rows; returns the counts seen. */
  async function countsDuringCopies(rounds: number, reset: string, source: string, destination: string, write: string): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    for (let i = 0; i < rounds; i++) {
      await query(reset);
      let done = false;
      const reader = async (): Promise<void> => {
        while (!done) {
          const r = await query('SELECT COUNT(*) FROM d.dst');
          const n = String(r.rows[0].f[0].v);
          seen.set(n, (seen.get(n) ?? 0) + 1);
        }
      };
      const readers = [reader(), reader(), reader()];
      await copy(source, destination, write);
      done = true;
      await Promise.all(readers);
    }
    return seen;
  }

  it('a whole-table WRITE_TRUNCATE copy: the new rows appear with the TRUE filter they came with', async () => {
    await query(`CREATE TABLE d.src AS SELECT x AS id FROM UNNEST(GENERATE_ARRAY(1, 50)) AS x;
      CREATE ROW ACCESS POLICY all_rows ON d.src GRANT TO ('allUsers') FILTER USING (TRUE);`);
    // The destination's own policy shows only its own rows (ids from 1000): the copied ones only under the source's.
    const reset = `CREATE OR REPLACE TABLE d.dst AS SELECT x AS id FROM UNNEST(GENERATE_ARRAY(1000, 1049)) AS x;
      CREATE ROW ACCESS POLICY old_rows ON d.dst GRANT TO ('allUsers') FILTER USING (id >= 1000);`;
    const seen = await countsDuringCopies(25, reset, 'src', 'dst', 'WRITE_TRUNCATE');
    expect([...seen.keys()], JSON.stringify([...seen])).toEqual(['50']);
    const after = await rest(url('/datasets/d/tables/dst/rowAccessPolicies'));
    expect(after.body.rowAccessPolicies.map((p: any) => p.rowAccessPolicyReference.policyId)).toEqual(['all_rows']);
  });
});
