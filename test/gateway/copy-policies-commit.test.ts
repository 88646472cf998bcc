// A copy job's destination takes the sources' row access policies (using-row-level-security-with-features.md, Copy
// jobs) in the commit of the copied rows: readers running during copies never see the new rows under the
// destination's old policies (which would hide them all here). Partition-decorated copies (gateway/jobs/partition-copy.ts:
// a DML script whose COMMIT commits the policies with the rows, QueryRequest.copy_policies) the same way.
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
  const copy = async (source: string, destination: string, writeDisposition: string): Promise<any> => {
    const table = (t: string) => ({ projectId: 'cpc', datasetId: 'd', tableId: t });
    const r = await rest(url('/jobs'), { method: 'POST', json: { configuration: { copy: { sourceTable: table(source), destinationTable: table(destination), writeDisposition } } } });
    expect(r.body.status, JSON.stringify(r.body)).toEqual({ state: 'DONE' });
    return r.body;
  };

  /** Copies `rounds` times (each after `reset`) while readers count the destination's visible rows; returns the counts seen. */
  async function countsDuringCopies(rounds: number, reset: string, source: string, destination: string, write: string, read = 'SELECT COUNT(*) FROM d.dst'): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    for (let i = 0; i < rounds; i++) {
      await query(reset);
      let done = false;
      const reader = async (): Promise<void> => {
        do {
          const r = await query(read);
          const n = String(r.rows[0].f[0].v);
          seen.set(n, (seen.get(n) ?? 0) + 1);
        } while (!done);
      };
      const readers = [reader(), reader(), reader()];
      await copy(source, destination, write);
      done = true;
      await Promise.all(readers);
      // And once after the copy: what every reader sees from now on.
      await reader();
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

  // dbt's copy_partitions, bq cp 'src$20240102' 'pdst$20240102': the partition's rows and the policies in one commit.
  // The destination's own policy shows only its own rows (ids from 1000), the copied TRUE policy every row: a read
  // sees 50 (before: the old rows under the old policy) or 100 (after: the old partition's rows gone, the copied
  // ones and the other partition's under TRUE), never 25 (the new rows under the old policy, or the old partition
  // deleted under it) nor 75 / 125 (half a commit).
  it('a partition-decorated WRITE_TRUNCATE copy: the partition and the policies change in one commit', async () => {
    await query(`CREATE OR REPLACE TABLE d.psrc PARTITION BY day AS SELECT x AS id, DATE '2024-01-02' AS day FROM UNNEST(GENERATE_ARRAY(1, 50)) AS x;
      CREATE ROW ACCESS POLICY all_rows ON d.psrc GRANT TO ('allUsers') FILTER USING (TRUE);`);
    const reset = `CREATE OR REPLACE TABLE d.pdst PARTITION BY day AS
        SELECT x AS id, IF(x < 1025, DATE '2024-01-01', DATE '2024-01-02') AS day FROM UNNEST(GENERATE_ARRAY(1000, 1049)) AS x
        UNION ALL SELECT x, DATE '2024-01-01' FROM UNNEST(GENERATE_ARRAY(1, 25)) AS x;
      CREATE ROW ACCESS POLICY old_rows ON d.pdst GRANT TO ('allUsers') FILTER USING (id >= 1000);`;
    const seen = await countsDuringCopies(20, reset, 'psrc$20240102', 'pdst$20240102', 'WRITE_TRUNCATE', 'SELECT COUNT(*) FROM d.pdst');
    expect([...seen.keys()].sort(), JSON.stringify([...seen])).toEqual(['100', '50'].filter((n) => seen.has(n)));
    expect(seen.get('100') ?? 0, JSON.stringify([...seen])).toBeGreaterThan(0);
    const after = await rest(url('/datasets/d/tables/pdst/rowAccessPolicies'));
    expect(after.body.rowAccessPolicies.map((p: any) => p.rowAccessPolicyReference.policyId)).toEqual(['all_rows']);
    // copiedRows is the partition's rows copied, read from the script's @@row_count.
    const job = await copy('psrc$20240102', 'pdst$20240102', 'WRITE_TRUNCATE');
    expect(job.statistics.copy.copiedRows).toBe('50');
  });

  it('a partition-decorated WRITE_APPEND copy: the rows and the appended policies in one commit', async () => {
    // The source's policy shows rows with id < 1000 only: under it alone (before) the copied rows are hidden, the
    // destination's old policy shows its own; after the copy both policies apply (OR), every row visible.
    await query(`CREATE OR REPLACE TABLE d.psrc2 PARTITION BY day AS SELECT x AS id, DATE '2024-01-02' AS day FROM UNNEST(GENERATE_ARRAY(1, 30)) AS x;
      CREATE ROW ACCESS POLICY all_rows ON d.psrc2 GRANT TO ('allUsers') FILTER USING (TRUE);`);
    const reset = `CREATE OR REPLACE TABLE d.pdst PARTITION BY day AS
        SELECT x AS id, DATE '2024-01-02' AS day FROM UNNEST(GENERATE_ARRAY(1000, 1019)) AS x
        UNION ALL SELECT x, DATE '2024-01-01' FROM UNNEST(GENERATE_ARRAY(1, 10)) AS x;
      CREATE ROW ACCESS POLICY old_rows ON d.pdst GRANT TO ('allUsers') FILTER USING (id >= 1000);`;
    // Before: 20 (own rows under old_rows); after: 60 (20 + 10 + 30 under all_rows OR old_rows); 40 or 30 would be half.
    const seen = await countsDuringCopies(20, reset, 'psrc2$20240102', 'pdst$20240102', 'WRITE_APPEND', 'SELECT COUNT(*) FROM d.pdst');
    expect([...seen.keys()].every((n) => n === '20' || n === '60'), JSON.stringify([...seen])).toBe(true);
    expect(seen.get('60') ?? 0, JSON.stringify([...seen])).toBeGreaterThan(0);
    const after = await rest(url('/datasets/d/tables/pdst/rowAccessPolicies'));
    expect(after.body.rowAccessPolicies.map((p: any) => p.rowAccessPolicyReference.policyId).sort()).toEqual(['all_rows', 'old_rows']);
  });
});
