// An unseen set (set bj, helper sql70, 2026-11-30): copy jobs' rules that the project's tests did not exercise,
// through HTTP (jobs.insert with a `copy` configuration), expected answers from the pages before running anything.
// Pages: managing-tables.md (Copy a table: Limitations on copying tables; Copy tables across regions, Limitations),
// managing-partitioned-tables.md (Copy a partitioned table), reference/rest/v2/Job.md (JobConfigurationTableCopy,
// OperationType), tables.md (Table naming). Sets ba (unseen-ba-*) covered snapshot and clone DDL, snapshots into
// another region, labels; multi-source copies, the partitioning and clustering rules of copies, the append rule of
// defaulted columns, cross-region copies and the operation types were not covered.
//
// Rules (page: rule -> case):
//  1 managing-tables Limitations: several sources into one destination (API) need identical schemas -> multi-source.
//  2 managing-tables Limitations: append to a destination with more columns than the source whose extra columns have
//    default values is refused -> defaults.
//  3 managing-tables Limitations: the destination's name follows table naming -> bad name.
//  4 managing-partitioned-tables: partitioned -> new table: same partitioning; clustered -> new table: same clustering.
//  5 non-partitioned -> existing partitioned: only ingestion-time partitioning (rows in today's partition); refused
//    for column and integer-range partitioning.
//  6 partitioned -> partitioned: the specifications must match.
//  7 partitioned -> non-partitioned: the destination stays unpartitioned.
//  8 several sources into a partitioned table: no mixture of partitioned and non-partitioned sources.
//  9 clustered -> existing table: the clustering specifications must match.
// 10 managing-tables Copy tables across regions: allowed for one table (WRITE_EMPTY into a new one, WRITE_TRUNCATE);
//    refused with several sources, in append mode, and WRITE_EMPTY when the destination exists.
// 11 Job.md OperationType: SNAPSHOT makes a SNAPSHOT of a TABLE (destinationExpirationTime its expiration), RESTORE a
//    TABLE of a SNAPSHOT, CLONE a TABLE of a TABLE (cloneDefinition); COPY keeps the type.
//
// First run (raw, before any fix): 10 cases, 1 passed (the bad name). Corrected: none (every failure was the
// emulator's). Fixed by class, 9 -> all pass:
//  - copy rules checked before anything is written (gateway/jobs/copy-rules.ts): several sources need one schema and
//    one partitioning and clustering (rules 1, 8); an existing destination needs the source's partitioning and
//    clustering, but for a partitioned source into a non-partitioned table and a non-partitioned one into an
//    ingestion-time partitioned table (rules 5, 6, 9); an append leaving out defaulted columns is refused (rule 2);
//  - a new destination takes the source's partitioning and clustering (rule 4);
//  - COPY of a snapshot makes a snapshot (rule 11);
//  - cross-region copies (gateway/jobs/location.ts crossRegionCopy) taken under the page's limitations (rule 10).
// Left: none in this file. Ambiguity: the cross-region copy is a Pre-GA feature on its page; the wording of the
// refusals is not documented (the cases check only that the copy fails and writes nothing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const P = 'pbj';

describe.skipIf(!hasRealEngine())('set bj: copy job rules', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    for (const [id, location] of [['c', 'US'], ['eu', 'EU']] as const) {
      const r = await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: id }, location } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
  });
  afterAll(async () => emu?.stop());
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;
  const sql = async (query: string): Promise<any> => {
    const r = await rest(api('/queries'), { method: 'POST', json: { query, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, `${query}: ${JSON.stringify(r.body)}`).toBe(200);
    return r.body;
  };
  const ref = (t: string) => {
    const [datasetId, tableId] = t.split('.');
    return { projectId: P, datasetId, tableId };
  };
  /** Runs a copy job; ok: DONE without errorResult. */
  const copy = async (sources: string | string[], dest: string, extra: Record<string, unknown> = {}): Promise<{ ok: boolean; body: any }> => {
    const src = Array.isArray(sources) ? { sourceTables: sources.map(ref) } : { sourceTable: ref(sources) };
    let r = await rest(api('/jobs'), { method: 'POST', json: { configuration: { copy: { ...src, destinationTable: ref(dest), ...extra } } } });
    if (r.status >= 400) return { ok: false, body: r.body };
    for (let i = 0; i < 200 && r.body.status?.state !== 'DONE'; i++) {
      await new Promise((res) => setTimeout(res, 50));
      r = await rest(api(`/jobs/${r.body.jobReference.jobId}?location=${r.body.jobReference.location ?? ''}`));
    }
    return { ok: r.body.status?.state === 'DONE' && r.body.status.errorResult === undefined, body: r.body };
  };
  const table = async (t: string): Promise<any> => {
    const [d, id] = t.split('.');
    return (await rest(api(`/datasets/${d}/tables/${id}`))).body;
  };
  const exists = async (t: string): Promise<boolean> => {
    const [d, id] = t.split('.');
    return (await rest(api(`/datasets/${d}/tables/${id}`))).status === 200;
  };
  const count = async (t: string): Promise<string> => (await sql(`SELECT COUNT(*) FROM ${t}`)).rows[0].f[0].v;

  it('several sources of one schema copy into one table; sources of different schemas are refused', async () => {
    await sql(`CREATE TABLE c.m1 AS SELECT 1 AS id, 'a' AS s UNION ALL SELECT 2, 'b';
      CREATE TABLE c.m2 AS SELECT 3 AS id, 'c' AS s;
      CREATE TABLE c.m3 AS SELECT 4 AS id, 5 AS n;`);
    const ok = await copy(['c.m1', 'c.m2'], 'c.mall');
    expect(ok.ok, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.statistics?.copy?.copiedRows).toBe('3');
    expect((await sql('SELECT STRING_AGG(s ORDER BY id) FROM c.mall')).rows[0].f[0].v).toBe('a,b,c');
    const bad = await copy(['c.m1', 'c.m3'], 'c.mbad');
    expect(bad.ok, JSON.stringify(bad.body)).toBe(false);
    expect(await exists('c.mbad')).toBe(false);
  });

  it('an append into a table whose extra columns have defaults is refused; the rows stay as they were', async () => {
    await sql(`CREATE TABLE c.dsrc AS SELECT 1 AS id;
      CREATE TABLE c.ddst (id INT64, tag STRING DEFAULT 'x'); INSERT c.ddst (id) VALUES (9);`);
    const r = await copy('c.dsrc', 'c.ddst', { writeDisposition: 'WRITE_APPEND' });
    expect(r.ok, JSON.stringify(r.body)).toBe(false);
    expect(await count('c.ddst')).toBe('1');
  });

  it('a destination name outside table naming is refused', async () => {
    await sql('CREATE TABLE c.nsrc AS SELECT 1 AS id');
    const r = await copy('c.nsrc', 'c.bad name!');
    expect(r.ok).toBe(false);
  });

  it('a partitioned and clustered table copied to a new table keeps its partitioning and clustering', async () => {
    await sql(`CREATE TABLE c.psrc (d DATE, k STRING, v INT64) PARTITION BY d CLUSTER BY k;
      INSERT c.psrc VALUES (DATE '2024-03-01', 'a', 1), (DATE '2024-03-02', 'b', 2);`);
    const r = await copy('c.psrc', 'c.pnew');
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const t = await table('c.pnew');
    expect(t.timePartitioning).toMatchObject({ type: 'DAY', field: 'd' });
    expect(t.clustering).toEqual({ fields: ['k'] });
    expect(t.numRows).toBe('2');
  });

  it('a non-partitioned table copies into an ingestion-time partitioned one (today), not a column or range partitioned one', async () => {
    await sql(`CREATE TABLE c.flat AS SELECT DATE '2024-03-05' AS d, 7 AS v;
      CREATE TABLE c.ingest (d DATE, v INT64) PARTITION BY _PARTITIONDATE;
      CREATE TABLE c.bycol (d DATE, v INT64) PARTITION BY d;
      CREATE TABLE c.byrange (d DATE, v INT64) PARTITION BY RANGE_BUCKET(v, GENERATE_ARRAY(0, 100, 10));`);
    const ok = await copy('c.flat', 'c.ingest', { writeDisposition: 'WRITE_APPEND' });
    expect(ok.ok, JSON.stringify(ok.body)).toBe(true);
    expect((await sql('SELECT COUNTIF(_PARTITIONDATE = CURRENT_DATE()), COUNT(*) FROM c.ingest')).rows[0].f.map((f: any) => f.v)).toEqual(['1', '1']);
    for (const dest of ['c.bycol', 'c.byrange']) {
      const r = await copy('c.flat', dest, { writeDisposition: 'WRITE_APPEND' });
      expect(r.ok, `${dest}: ${JSON.stringify(r.body)}`).toBe(false);
      expect(await count(dest)).toBe('0');
    }
  });

  it('partitioned into partitioned needs matching specifications; into a non-partitioned table it stays unpartitioned', async () => {
    await sql(`CREATE TABLE c.day1 (d DATE, v INT64) PARTITION BY d; INSERT c.day1 VALUES (DATE '2024-04-01', 1);
      CREATE TABLE c.day2 (d DATE, v INT64) PARTITION BY d;
      CREATE TABLE c.month1 (d DATE, v INT64) PARTITION BY DATE_TRUNC(d, MONTH);
      CREATE TABLE c.plain (d DATE, v INT64);`);
    const same = await copy('c.day1', 'c.day2', { writeDisposition: 'WRITE_APPEND' });
    expect(same.ok, JSON.stringify(same.body)).toBe(true);
    expect(await count('c.day2')).toBe('1');
    const other = await copy('c.day1', 'c.month1', { writeDisposition: 'WRITE_APPEND' });
    expect(other.ok, JSON.stringify(other.body)).toBe(false);
    expect(await count('c.month1')).toBe('0');
    const flat = await copy('c.day1', 'c.plain', { writeDisposition: 'WRITE_TRUNCATE' });
    expect(flat.ok, JSON.stringify(flat.body)).toBe(true);
    expect((await table('c.plain')).timePartitioning).toBeUndefined();
    expect(await count('c.plain')).toBe('1');
  });

  it('several sources into a partitioned table cannot mix partitioned and non-partitioned ones', async () => {
    await sql(`CREATE TABLE c.mixp (d DATE, v INT64) PARTITION BY d; INSERT c.mixp VALUES (DATE '2024-05-01', 1);
      CREATE TABLE c.mixf (d DATE, v INT64); INSERT c.mixf VALUES (DATE '2024-05-02', 2);
      CREATE TABLE c.mixdst (d DATE, v INT64) PARTITION BY d;`);
    const r = await copy(['c.mixp', 'c.mixf'], 'c.mixdst', { writeDisposition: 'WRITE_APPEND' });
    expect(r.ok, JSON.stringify(r.body)).toBe(false);
    expect(await count('c.mixdst')).toBe('0');
  });

  it('a clustered table copied into an existing table needs the same clustering', async () => {
    await sql(`CREATE TABLE c.cl1 (k STRING, j STRING) CLUSTER BY k; INSERT c.cl1 VALUES ('a', 'b');
      CREATE TABLE c.cl2 (k STRING, j STRING) CLUSTER BY j;
      CREATE TABLE c.cl3 (k STRING, j STRING) CLUSTER BY k;`);
    const bad = await copy('c.cl1', 'c.cl2', { writeDisposition: 'WRITE_APPEND' });
    expect(bad.ok, JSON.stringify(bad.body)).toBe(false);
    expect(await count('c.cl2')).toBe('0');
    const ok = await copy('c.cl1', 'c.cl3', { writeDisposition: 'WRITE_APPEND' });
    expect(ok.ok, JSON.stringify(ok.body)).toBe(true);
    expect(await count('c.cl3')).toBe('1');
  });

  it('a copy across regions: one table into a new one is taken; several sources, appends and WRITE_EMPTY onto a table are refused', async () => {
    await sql(`CREATE TABLE c.xr AS SELECT 1 AS id UNION ALL SELECT 2; CREATE TABLE c.xr2 AS SELECT 3 AS id;`);
    await sql('CREATE TABLE eu.have (id INT64)');
    const ok = await copy('c.xr', 'eu.xr');
    expect(ok.ok, JSON.stringify(ok.body)).toBe(true);
    expect(await count('eu.xr')).toBe('2');
    const many = await copy(['c.xr', 'c.xr2'], 'eu.many');
    expect(many.ok, JSON.stringify(many.body)).toBe(false);
    expect(await exists('eu.many')).toBe(false);
    const append = await copy('c.xr', 'eu.have', { writeDisposition: 'WRITE_APPEND' });
    expect(append.ok, JSON.stringify(append.body)).toBe(false);
    const empty = await copy('c.xr', 'eu.have', { writeDisposition: 'WRITE_EMPTY' });
    expect(empty.ok, JSON.stringify(empty.body)).toBe(false);
    expect(await count('eu.have')).toBe('0');
  });

  it('operationType SNAPSHOT, RESTORE and CLONE make the table types Job.md names', async () => {
    await sql('CREATE TABLE c.base AS SELECT 1 AS id UNION ALL SELECT 2');
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const snap = await copy('c.base', 'c.snap', { operationType: 'SNAPSHOT', destinationExpirationTime: until });
    expect(snap.ok, JSON.stringify(snap.body)).toBe(true);
    const s = await table('c.snap');
    expect(s.type).toBe('SNAPSHOT');
    expect(s.snapshotDefinition?.baseTableReference).toEqual(ref('c.base'));
    expect(Number(s.expirationTime)).toBe(Date.parse(until));
    const restored = await copy('c.snap', 'c.restored', { operationType: 'RESTORE' });
    expect(restored.ok, JSON.stringify(restored.body)).toBe(true);
    expect((await table('c.restored')).type).toBe('TABLE');
    expect(await count('c.restored')).toBe('2');
    const clone = await copy('c.base', 'c.twin', { operationType: 'CLONE' });
    expect(clone.ok, JSON.stringify(clone.body)).toBe(true);
    const tw = await table('c.twin');
    expect(tw.type).toBe('TABLE');
    expect(tw.cloneDefinition?.baseTableReference).toEqual(ref('c.base'));
    expect(await count('c.twin')).toBe('2');
    // A plain COPY of a snapshot keeps its type (the source and destination have the same type).
    const same = await copy('c.snap', 'c.snap2', { operationType: 'COPY' });
    expect(same.ok, JSON.stringify(same.body)).toBe(true);
    expect((await table('c.snap2')).type).toBe('SNAPSHOT');
  });

  // More cases of the fixed classes (written after the fixes, not counted in the raw figure).
  it('more of the fixed classes: clustering among sources, extra columns without defaults, cross-region WRITE_TRUNCATE', async () => {
    await sql(`CREATE TABLE c.k1 (k STRING, j STRING) CLUSTER BY k; INSERT c.k1 VALUES ('a', 'b');
      CREATE TABLE c.k2 (k STRING, j STRING) CLUSTER BY j; INSERT c.k2 VALUES ('c', 'd');
      CREATE TABLE c.nsrc2 AS SELECT 1 AS id;
      CREATE TABLE c.wide (id INT64, note STRING); INSERT c.wide VALUES (9, 'x');
      CREATE TABLE c.xt AS SELECT 5 AS id;`);
    await sql('CREATE TABLE eu.xt (id INT64); INSERT eu.xt VALUES (1), (2);');
    // Sources of one schema but another clustering.
    const mixed = await copy(['c.k1', 'c.k2'], 'c.kall');
    expect(mixed.ok, JSON.stringify(mixed.body)).toBe(false);
    expect(await exists('c.kall')).toBe(false);
    // Extra destination columns without defaults: the append is taken, the column NULL for the copied rows.
    const wide = await copy('c.nsrc2', 'c.wide', { writeDisposition: 'WRITE_APPEND' });
    expect(wide.ok, JSON.stringify(wide.body)).toBe(true);
    expect((await sql('SELECT STRING_AGG(FORMAT("%d:%T", id, note) ORDER BY id) FROM c.wide')).rows[0].f[0].v).toBe('1:NULL,9:"x"');
    // Across regions WRITE_TRUNCATE replaces an existing table.
    const trunc = await copy('c.xt', 'eu.xt', { writeDisposition: 'WRITE_TRUNCATE' });
    expect(trunc.ok, JSON.stringify(trunc.body)).toBe(true);
    expect((await sql('SELECT STRING_AGG(CAST(id AS STRING)) FROM eu.xt')).rows[0].f[0].v).toBe('5');
  });

  // Written after the first run (not counted in the raw figure): managing-tables.md Limitations lets an append reach a
  // destination with more columns (NULL, or refused when defaulted); a source column the destination lacks would be
  // data the copy drops, which no page allows: refused, nothing appended.
  it('an append from a source with a column the destination lacks is refused', async () => {
    await sql(`CREATE TABLE c.more AS SELECT 1 AS id, 'x' AS extra;
      CREATE TABLE c.fewer (id INT64); INSERT c.fewer VALUES (7);`);
    const r = await copy('c.more', 'c.fewer', { writeDisposition: 'WRITE_APPEND' });
    expect(r.ok, JSON.stringify(r.body)).toBe(false);
    expect(await count('c.fewer')).toBe('1');
  });
});
