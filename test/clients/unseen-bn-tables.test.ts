// Set bn (helper sql74, 2026-12-01): what the client libraries' own system
// tests (nodejs-bigquery system-test/ and samples/test/, the Go client's
// integration_test.go) found, written again as our own cases through the real
// Node client. Pages: managing-table-schemas.md (new columns and nested fields
// are always added at the end of the table or field; a new order of existing
// columns has no effect), reference/rest/v2/tables.md (Table.requirePartitionFilter
// and its deprecated twin TimePartitioning.requirePartitionFilter).
// Classes: tables.update/patch schema order; the two requirePartitionFilter
// fields set one table setting and show the same value; a job's echoed struct
// parameter leaves out its NULL members (the Go client reads them back absent).
// Runs (libraries unchanged, from a scratch checkout, auth stubbed):
//   nodejs-bigquery system-test/bigquery.ts 84/110 pass, timestamp_output_format 16/16; every failure is
//     publicdata/bigquery-public-data (24), model extract (BigQuery ML), or the library's 60 s
//     create-then-insert wait against the harness timeout: no emulator gap.
//   samples/test 25/53 + tables (Data Catalog stubbed) 31/50: failures are public data, public GCS
//     buckets, OAuth, Data Catalog, regional endpoints.
//   nodejs-bigquery-storage system-test 32/38 (+1 pending): Storage Write error scenarios and CDC (left to
//     the Storage Write owner).
//   Go integration_test.go (Debian's 2020 client) 30/42 before, 35/42 after (TableMetadata,
//     TableUpdate, QueryParameters, OtherParam fixed here; ExtractExternal needs a bucket named after
//     the project).
import { BigQuery, type Dataset } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

type Field = { name: string; type: string; mode?: string; fields?: Field[] };
const names = (fs: Field[]): unknown[] => fs.map((f) => (f.fields ? [f.name, names(f.fields)] : f.name));

describe('tables through the Node client (set bn)', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let ds: Dataset;

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'bn-p'] });
    bq = new BigQuery({ projectId: 'bn-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    [ds] = await bq.createDataset('bn');
  }, 120_000);
  afterAll(async () => emu?.stop());

  it('a column added in the middle of the schema appears at the end; its rows read NULL', async () => {
    const base: Field[] = [
      { name: 'id', type: 'INTEGER' },
      { name: 'tags', type: 'STRING', mode: 'REPEATED' },
      { name: 'rec', type: 'RECORD', fields: [{ name: 'a', type: 'BOOLEAN' }] },
    ];
    const [t] = await ds.createTable('mid', { schema: { fields: base } });
    await t.insert([{ id: 7, tags: ['x'], rec: { a: true } }]);
    const added = { name: 'note', type: 'STRING' };
    const [md] = await t.setMetadata({ schema: { fields: [base[0], added, base[1], base[2]] } });
    expect(names(md.schema.fields)).toEqual(['id', 'tags', ['rec', ['a']], 'note']);
    const [got] = await t.getMetadata();
    expect(names(got.schema.fields)).toEqual(['id', 'tags', ['rec', ['a']], 'note']);
    const [rows] = await bq.query('SELECT * FROM bn.mid');
    expect(rows).toEqual([{ id: 7, tags: ['x'], rec: { a: true }, note: null }]);
  });

  it('a nested field added first in its record goes to the end of the record; reordering alone changes nothing', async () => {
    const base: Field[] = [
      { name: 'k', type: 'STRING' },
      { name: 'r', type: 'RECORD', fields: [{ name: 'p', type: 'INTEGER' }, { name: 'q', type: 'STRING' }] },
    ];
    const [t] = await ds.createTable('nest', { schema: { fields: base } });
    const reversed = [{ ...base[1], fields: [{ name: 'z', type: 'DATE' }, ...[...base[1].fields!].reverse()] }, base[0]];
    const [md] = await t.setMetadata({ schema: { fields: reversed } });
    expect(names(md.schema.fields)).toEqual(['k', ['r', ['p', 'q', 'z']]]);
    const [again] = await t.setMetadata({ schema: { fields: [...md.schema.fields].reverse() } });
    expect(names(again.schema.fields)).toEqual(['k', ['r', ['p', 'q', 'z']]]);
    await bq.query("INSERT INTO bn.nest (k, r) VALUES ('a', STRUCT(1, 'b', DATE '2026-01-02'))");
    const [rows] = await bq.query('SELECT k, r.p, r.q, r.z FROM bn.nest');
    expect(rows).toEqual([{ k: 'a', p: 1, q: 'b', z: bq.date('2026-01-02') }]);
  });

  it('a relaxed column keeps its place among the others when the new schema lists it last', async () => {
    const [t] = await ds.createTable('relax', {
      schema: { fields: [{ name: 'a', type: 'INTEGER', mode: 'REQUIRED' }, { name: 'b', type: 'STRING' }] },
    });
    const [md] = await t.setMetadata({ schema: { fields: [{ name: 'b', type: 'STRING' }, { name: 'a', type: 'INTEGER', mode: 'NULLABLE' }] } });
    expect(md.schema.fields).toEqual([{ name: 'a', type: 'INTEGER', mode: 'NULLABLE' }, { name: 'b', type: 'STRING' }]);
  });

  it('timePartitioning.requirePartitionFilter sets the table setting: queries need a partition filter', async () => {
    const [t] = await ds.createTable('tpreq', {
      schema: { fields: [{ name: 'd', type: 'DATE' }, { name: 'v', type: 'INTEGER' }] },
      timePartitioning: { type: 'DAY', field: 'd', requirePartitionFilter: true },
    });
    const [md] = await t.getMetadata();
    expect(md.requirePartitionFilter).toBe(true);
    expect(md.timePartitioning).toEqual({ type: 'DAY', field: 'd', requirePartitionFilter: true });
    await expect(bq.query('SELECT v FROM bn.tpreq')).rejects.toThrow(/without a filter over column\(s\) 'd'/);
    const [rows] = await bq.query("SELECT v FROM bn.tpreq WHERE d = '2026-01-01'");
    expect(rows).toEqual([]);
  });

  it('the table-level requirePartitionFilter shows in timePartitioning after a patch, both ways', async () => {
    const [t] = await ds.createTable('tblreq', {
      schema: { fields: [{ name: 'd', type: 'DATE' }] },
      timePartitioning: { type: 'DAY', field: 'd' },
    });
    const [on] = await t.setMetadata({ requirePartitionFilter: true });
    expect([on.requirePartitionFilter, on.timePartitioning.requirePartitionFilter]).toEqual([true, true]);
    await expect(bq.query('SELECT d FROM bn.tblreq')).rejects.toThrow(/partition elimination/);
    const [off] = await t.setMetadata({ requirePartitionFilter: false });
    expect([off.requirePartitionFilter, off.timePartitioning.requirePartitionFilter]).toEqual([false, false]);
    const [rows] = await bq.query('SELECT d FROM bn.tblreq');
    expect(rows).toEqual([]);
    // A patch of timePartitioning alone keeps the table's setting in the twin.
    const [later] = await t.setMetadata({ timePartitioning: { type: 'DAY', field: 'd', expirationMs: '86400000' } });
    expect(later.timePartitioning).toEqual({ type: 'DAY', field: 'd', expirationMs: '86400000', requirePartitionFilter: false });
  });

  it("a job's configuration shows a struct parameter without its NULL members, at any depth", async () => {
    const strT = { type: 'STRING' };
    const subT = { type: 'STRUCT', structTypes: [{ name: 'd', type: strT }] };
    const parameterType = {
      type: 'STRUCT',
      structTypes: [
        { name: 'a', type: { type: 'INT64' } },
        { name: 'b', type: subT },
        { name: 'arr', type: { type: 'ARRAY', arrayType: strT } },
        { name: 'c', type: { type: 'STRUCT', structTypes: [{ name: 'e', type: subT }, { name: 'f', type: strT }] } },
        { name: 'g', type: strT },
      ],
    };
    const parameterValue = { structValues: { a: { value: '0' }, b: {}, arr: { arrayValues: [] }, c: { structValues: { e: {}, f: { value: 'x' } } }, g: { value: '' } } };
    const [job] = await bq.createJob({
      configuration: { query: { query: 'SELECT ? AS s', useLegacySql: false, parameterMode: 'POSITIONAL', queryParameters: [{ parameterType, parameterValue }] } },
    });
    const [rows] = await job.getQueryResults();
    expect(rows).toEqual([{ s: { a: 0, b: null, arr: [], c: { e: null, f: 'x' }, g: '' } }]);
    const [md] = await job.getMetadata();
    const [param] = md.configuration.query.queryParameters;
    expect(param.parameterType).toEqual(parameterType);
    expect(param.parameterValue).toEqual({ structValues: { a: { value: '0' }, c: { structValues: { f: { value: 'x' } } }, g: { value: '' } } });
  });

  // The Go client's integration test SimpleRowResults/ctas_ddl reads a CTAS job's rows through its destination table
  // (found by sql74's run, set bn; written after the fix). Job.md names destinationTable for anonymous results only;
  // the service's CTAS jobs show the created table there too.
  it("a CREATE TABLE AS SELECT job's configuration names the created table as its destination; other DDL none", async () => {
    const [job] = await bq.createQueryJob({ query: 'CREATE TABLE bn.made AS SELECT 17 AS foo' });
    await job.getQueryResults();
    const [md] = await job.getMetadata();
    expect(md.configuration.query.destinationTable).toEqual({ projectId: 'bn-p', datasetId: 'bn', tableId: 'made' });
    const [ddl] = await bq.createQueryJob({ query: 'CREATE TABLE bn.plain (x INT64)' });
    await ddl.getQueryResults();
    expect((await ddl.getMetadata())[0].configuration.query.destinationTable).toBeUndefined();
  });

  it('a table without time partitioning keeps requirePartitionFilter at the table level only', async () => {
    const [t] = await ds.createTable('rngreq', {
      schema: { fields: [{ name: 'n', type: 'INTEGER' }] },
      rangePartitioning: { field: 'n', range: { start: '0', end: '100', interval: '10' } },
      requirePartitionFilter: true,
    });
    const [md] = await t.getMetadata();
    expect(md.requirePartitionFilter).toBe(true);
    expect(md.timePartitioning).toBeUndefined();
    await expect(bq.query('SELECT n FROM bn.rngreq')).rejects.toThrow(/without a filter over column\(s\) 'n'/);
  });
});
