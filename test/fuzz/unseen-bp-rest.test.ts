// Set bp (helper sql76, 2026-12-01): hostile REST input found by hand, one class per case, through the real gateway
// and engine. Pages (docs/docs.cloud.google.com/bigquery/docs/...): reference/rest/v2/datasets.md
// (defaultTableExpirationMs "The minimum lifetime value is 3600000 milliseconds (one hour). To clear an existing
// default expiration with a PATCH request, set to 0"; maxTimeTravelHours "from 48 to 168 hours"), time-travel.md
// (whole days), reference/rest/v2/rowAccessPolicies.md (filterPredicate "Required. A SQL boolean expression";
// grantees[] "user:", "serviceAccount:", "group:", "domain:", "allAuthenticatedUsers"), reference/rest/v2/tables.md
// and jobs.md (int64 fields are "string (int64 format)": a value past INT64 is no int64), api-uploads.md
// (a multipart upload's second part is the data).
// Classes found (first run, against main 356a110): every one answered 200 and stored or loaded what it was sent.
//   int64 body fields past INT64 ("9223372036854775808", "99999999999999999999999") kept verbatim (body-schema);
//   dataset ranges refused by the DDL options taken through REST (-1, 10 hours);
//   rowAccessPolicies.insert storing a non-BOOL or unresolvable filterPredicate, a grantee of no principal type, and a
//   predicate that closes its parenthesis and goes on; a multipart upload without a data part loading the request's
//   own bytes (the metadata part and boundaries) as rows. All fixed in the gateway: 4 classes, 4 cases (written after the hand attack,
// so not blind), 0 of 4 pass on main, 4 of 4 after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, jobDone, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const P = 'bp';

describe.skipIf(!hasRealEngine())('hostile REST input (set bp)', () => {
  let emu: Emulator;
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;
  const query = (q: string) => rest(url('/queries'), { method: 'POST', json: { query: q, useLegacySql: false } });
  const refused = (r: { status: number; body: any }, message: RegExp): void => {
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalid');
    expect(r.body.error.message).toMatch(message);
  };

  beforeAll(async () => {
    emu = await startEmulator();
    expect((await query("CREATE SCHEMA d; CREATE TABLE d.t (x INT64, s STRING); INSERT d.t VALUES (1, 'a'), (2, 'b')")).status).toBe(200);
  }, 60_000);
  afterAll(async () => emu?.stop());

  it('an int64 field past INT64 is refused as the service refuses it, the top itself taken', async () => {
    refused(await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'i1' }, defaultTableExpirationMs: '9223372036854775808' } }),
      /^Invalid value at 'dataset\.default_table_expiration_ms\.value' \(TYPE_INT64\), "9223372036854775808"$/);
    refused(await rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId: 'r1' }, schema: { fields: [{ name: 'x', type: 'INT64' }] }, rangePartitioning: { field: 'x', range: { start: '-9223372036854775809', end: '10', interval: '1' } } } }),
      /range_partitioning\.range\.start' \(TYPE_INT64\)/);
    refused(await rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId: 'r2' }, expirationTime: '99999999999999999999999' } }), /expiration_time.*TYPE_INT64/);
    expect((await rest(url('/datasets/d/tables/r1'))).status).toBe(404);
    const top = await rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId: 'r3' }, schema: { fields: [{ name: 'x', type: 'INT64' }] }, rangePartitioning: { field: 'x', range: { start: '-9223372036854775808', end: '9223372036854775807', interval: '1000000000000000000' } } } });
    expect(top.status).toBe(200);
  });

  it('dataset lifetimes outside the documented ranges are refused on insert and patch; the dataset keeps its values', async () => {
    refused(await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'e1' }, maxTimeTravelHours: '10' } }), /maxTimeTravelHours/);
    refused(await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'e2' }, maxTimeTravelHours: '100' } }), /multiple of 24/);
    refused(await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'e3' }, defaultTableExpirationMs: '-1' } }), /defaultTableExpirationMs/);
    expect((await rest(url('/datasets/e1'))).status).toBe(404);
    const made = await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'e4' }, maxTimeTravelHours: '72', defaultTableExpirationMs: '3600000' } });
    expect(made.status).toBe(200);
    refused(await rest(url('/datasets/e4'), { method: 'PATCH', json: { defaultTableExpirationMs: '59999' } }), /minimum lifetime/);
    refused(await rest(url('/datasets/e4'), { method: 'PUT', json: { defaultPartitionExpirationMs: '-5' } }), /defaultPartitionExpirationMs/);
    const kept = (await rest(url('/datasets/e4'))).body;
    expect([kept.maxTimeTravelHours, kept.defaultTableExpirationMs, kept.defaultPartitionExpirationMs]).toEqual(['72', '3600000', undefined]);
    // 0 clears the default expiration (the page's own words).
    const cleared = await rest(url('/datasets/e4'), { method: 'PATCH', json: { defaultTableExpirationMs: '0', maxTimeTravelHours: '168' } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.maxTimeTravelHours).toBe('168');
  });

  it('rowAccessPolicies.insert and update check the predicate and grantees as CREATE ROW ACCESS POLICY does', async () => {
    const policy = (policyId: string, filterPredicate: unknown, grantees: unknown = ['user:a@example.com']) =>
      rest(url('/datasets/d/tables/t/rowAccessPolicies'), { method: 'POST', json: { rowAccessPolicyReference: { policyId }, filterPredicate, grantees } });
    refused(await policy('p1', 'x'), /^Invalid filterPredicate: WHERE clause should return type BOOL, but returns INT64$/);
    refused(await policy('p2', 'nope = 1'), /^Invalid filterPredicate: Unrecognized name: nope$/);
    refused(await policy('p3', 'TRUE); DROP TABLE d.t; SELECT (1'), /^Invalid filterPredicate/);
    refused(await policy('p4', 'x > 1', ['nobody']), /^Invalid grantee "nobody"/);
    refused(await policy('p5', '', ['allUsers']), /filterPredicate/);
    refused(await policy('p6', 5), /filterPredicate/);
    expect((await policy('ok', "s = 'a' AND x IN (SELECT 1)", ['allAuthenticatedUsers', 'group:g@example.com'])).status).toBe(200);
    refused(await rest(url('/datasets/d/tables/t/rowAccessPolicies/ok'), { method: 'PUT', json: { filterPredicate: "s = 'a' + 1", grantees: ['allUsers'] } }), /^Invalid filterPredicate/);
    const listed = (await rest(url('/datasets/d/tables/t/rowAccessPolicies'))).body.rowAccessPolicies.map((p: any) => [p.rowAccessPolicyReference.policyId, p.filterPredicate]);
    expect(listed).toEqual([['ok', "s = 'a' AND x IN (SELECT 1)"]]);
    // The refused predicate ran nothing: the table and its rows are there.
    expect((await rest(url('/datasets/d/tables/t'))).body.numRows).toBe('2');
    // A table that requires a partition filter takes a predicate without one (the rule is the predicate's type).
    expect((await query('CREATE TABLE d.pt (day DATE, x INT64) PARTITION BY day OPTIONS (require_partition_filter = TRUE)')).status).toBe(200);
    const onPartitioned = (filterPredicate: string) =>
      rest(url('/datasets/d/tables/pt/rowAccessPolicies'), { method: 'POST', json: { rowAccessPolicyReference: { policyId: `pt${filterPredicate.length}` }, filterPredicate, grantees: ['allUsers'] } });
    expect((await onPartitioned('x > 1')).status).toBe(200);
    refused(await onPartitioned('x + 1'), /^Invalid filterPredicate: WHERE clause should return type BOOL, but returns INT64$/);
  });

  it('a multipart upload without a data part loads no rows (never the request bytes themselves)', async () => {
    const meta = { configuration: { load: { destinationTable: { projectId: P, datasetId: 'd', tableId: 'up' }, sourceFormat: 'CSV', schema: { fields: [{ name: 'x', type: 'STRING' }] } } } };
    for (const body of [`--b\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n--b--`, `--b\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}`]) {
      const r = await fetch(`${emu.url}/upload/bigquery/v2/projects/${P}/jobs?uploadType=multipart`, { method: 'POST', headers: { 'content-type': 'multipart/related; boundary=b' }, body });
      expect(r.status).toBe(200);
      const job = await jobDone(emu, P, ((await r.json()) as any).jobReference.jobId);
      expect(job.status.errorResult).toBeUndefined();
      expect(job.statistics.load.outputRows).toBe('0');
    }
    const rows = await query('SELECT COUNT(*) AS n FROM d.up');
    expect(rows.body.rows).toEqual([{ f: [{ v: '0' }] }]);
  });
});
