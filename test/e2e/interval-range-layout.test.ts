// INTERVAL and RANGE columns, held as month-day-nano parts and a struct of
// two fixed-width sides once read from their files, give back every value
// through every read path: query result pages, tabledata.list, comparisons,
// ORDER BY, GROUP BY, EXTRACT / JUSTIFY_INTERVAL, RANGE_START / RANGE_END /
// RANGE_CONTAINS / RANGE_OVERLAPS, and Storage Read Arrow sessions through
// the real client library; each query over the stored table equal to the
// same query over the literal values (which never touch storage), before and
// after a kill -9 of the engine, under a small --memory-limit. Extremes of
// each part, negative parts, unbounded sides and NULLs.
import * as grpc from '@grpc/grpc-js';
import { v1 } from '@google-cloud/bigquery-storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killEngine, queryRows, rest, startEmulator, tabledataRows, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';
import { rng } from '../helpers/random-values.js';

const N = 1500;
const P = 'irl';

const r = rng(1919);
const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)]!;
const pad = (x: number, n = 2): string => String(x).padStart(n, '0');

/** Canonical interval text 'Y-M D H:M:S[.F]' of parts (the form CAST parses and REST writes). */
function intervalText(months: number, days: number, micros: bigint): string {
  const am = Math.abs(months);
  const neg = micros < 0n;
  const u = neg ? -micros : micros;
  const f = u % 1_000_000n;
  return `${months < 0 ? '-' : ''}${Math.floor(am / 12)}-${am % 12} ${days} ${neg ? '-' : ''}${u / 3_600_000_000n}:${(u / 60_000_000n) % 60n}:${(u / 1_000_000n) % 60n}${f ? '.' + String(f).padStart(6, '0').replace(/0+$/, '') : ''}`;
}

function randomInterval(): string | null {
  if (r() < 0.12) return null;
  const part = (max: number): number => pick([0, max, -max, 1, -1, Math.floor((r() - 0.5) * 2 * max)]);
  const micros = pick([0n, 316224000000000000n, -316224000000000000n, 1n, -1n, 9007199254740993n, BigInt(Math.floor((r() - 0.5) * 2e15)), BigInt(Math.floor((r() - 0.5) * 2e9))]);
  return intervalText(part(120000), part(3660000), micros);
}

function date(): string {
  return pick(['0001-01-01', '9999-12-31', '1970-01-01', '1969-12-31', `${1900 + Math.floor(r() * 200)}-${pad(1 + Math.floor(r() * 12))}-${pad(1 + Math.floor(r() * 28))}`]);
}

function timestamp(): string {
  return pick(['0001-01-01 00:00:00', '9999-12-31 23:59:59.999999', '1970-01-01 00:00:00', `${1900 + Math.floor(r() * 200)}-${pad(1 + Math.floor(r() * 12))}-${pad(1 + Math.floor(r() * 28))} ${pad(Math.floor(r() * 24))}:${pad(Math.floor(r() * 60))}:${pad(Math.floor(r() * 60))}.${pad(Math.floor(r() * 1e6), 6)}`]);
}

/** A range's literal text with ordered bounds (start < end), either side possibly UNBOUNDED; or NULL. */
function randomRange(side: () => string): string | null {
  if (r() < 0.12) return null;
  let [a, b] = [side(), side()].sort();
  if (a === b) b = 'UNBOUNDED';
  return `[${r() < 0.2 ? 'UNBOUNDED' : a}, ${r() < 0.2 ? 'UNBOUNDED' : b})`;
}

const rows = Array.from({ length: N }, (_, id) => ({ id, i: randomInterval(), rd: randomRange(date), rts: randomRange(timestamp) }));

const lit = (v: string | null, t: string): string => (v === null ? `CAST(NULL AS ${t})` : `CAST('${v}' AS ${t})`);
const SOURCE = `UNNEST([${rows.map((x) => `STRUCT(${x.id} AS id, ${lit(x.i, 'INTERVAL')} AS i, ${lit(x.rd, 'RANGE<DATE>')} AS rd, ${lit(x.rts, 'RANGE<TIMESTAMP>')} AS rts)`).join(',\n')}])`;

/** Queries over a table `{T}`: each run on the stored table and on the literal rows. */
const QUERIES = [
  'SELECT id, i, rd, rts FROM {T} ORDER BY id',
  "SELECT id FROM {T} WHERE i > INTERVAL '0-1 2 3:4:5' YEAR TO SECOND ORDER BY id",
  "SELECT id FROM {T} WHERE i = INTERVAL 0 SECOND OR i <= INTERVAL '-100-0 0 0:0:0' YEAR TO SECOND ORDER BY id",
  'SELECT i, id FROM {T} ORDER BY i, id LIMIT 40',
  'SELECT i, id FROM {T} ORDER BY i DESC, id LIMIT 40',
  'SELECT i, COUNT(*) AS n FROM {T} GROUP BY i ORDER BY i LIMIT 60',
  'SELECT MOD(id, 7) AS k, MIN(i), MAX(i), COUNT(i) FROM {T} GROUP BY k ORDER BY k',
  'SELECT MIN(i), MAX(i) FROM {T}',
  'SELECT id, EXTRACT(MONTH FROM i), EXTRACT(DAY FROM i), EXTRACT(HOUR FROM i), EXTRACT(MICROSECOND FROM i), JUSTIFY_INTERVAL(i) FROM {T} WHERE ABS(EXTRACT(YEAR FROM i)) < 5000 AND ABS(EXTRACT(DAY FROM i)) < 1000000 AND ABS(EXTRACT(HOUR FROM i)) < 10000000 ORDER BY id',
  'SELECT id, RANGE_START(rd), RANGE_END(rd), RANGE_START(rts), RANGE_END(rts) FROM {T} ORDER BY id',
  "SELECT id, RANGE_CONTAINS(rd, DATE '2000-06-15'), RANGE_CONTAINS(rts, TIMESTAMP '1999-01-01 00:00:00'), RANGE_OVERLAPS(rd, RANGE<DATE> '[1990-01-01, 2010-01-01)'), RANGE_CONTAINS(rd, RANGE<DATE> '[1950-01-01, 1960-01-01)') FROM {T} ORDER BY id",
  "SELECT COUNTIF(RANGE_CONTAINS(rd, DATE '1980-02-29')), COUNTIF(RANGE_OVERLAPS(rts, RANGE<TIMESTAMP> '[2000-01-01 00:00:00, UNBOUNDED)')), COUNT(rd), COUNT(i), MIN(RANGE_START(rd)), MAX(RANGE_END(rts)) FROM {T}",
  'SELECT id, rd FROM {T} WHERE RANGE_START(rd) IS NULL OR RANGE_END(rts) IS NULL ORDER BY id',
];

describe('INTERVAL and RANGE columns held in the Arrow layout', () => {
  let emu: Emulator;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;
  const query = (sql: string): Promise<unknown[][]> => queryRows(emu, P, sql);
  let expected: unknown[][][] = [];

  /** Every row through a Storage Read Arrow session, from the buffers the client received: the interval's text, each range's days / micros per side (null: unbounded). */
  async function storageRead(): Promise<unknown[][]> {
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: P } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    const client = new v1.BigQueryReadClient(opts);
    const [session] = await client.createReadSession({ parent: `projects/${P}`, readSession: { table: `projects/${P}/datasets/ds/tables/t`, dataFormat: 'ARROW' }, maxStreamCount: 2 });
    const { RecordBatchReader, Table } = await import('apache-arrow');
    const schemaBytes = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
    const out: unknown[][] = [];
    for (const s of session.streams ?? []) {
      for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
        const t = new Table(RecordBatchReader.from(Buffer.concat([schemaBytes, Buffer.from(resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array)])).readAll());
        for (const batch of t.batches) {
          const id = batch.getChild('id')!.data[0]!;
          const iv = batch.getChild('i')!;
          const rd = batch.getChild('rd')!.data[0]!;
          const rts = batch.getChild('rts')!.data[0]!;
          const side = (d: (typeof rd.children)[number], i: number): string | null => (d.getValid(i) ? String((d.values as Int32Array | BigInt64Array)[d.offset + i]) : null);
          for (let i = 0; i < batch.numRows; i++) {
            out.push([
              String((id.values as BigInt64Array)[id.offset + i]),
              iv.get(i) as string | null,
              rd.getValid(i) ? side(rd.children[0]!, i) : 'NULL',
              rd.getValid(i) ? side(rd.children[1]!, i) : 'NULL',
              rts.getValid(i) ? side(rts.children[0]!, i) : 'NULL',
              rts.getValid(i) ? side(rts.children[1]!, i) : 'NULL',
            ]);
          }
        }
      }
    }
    await client.close();
    return out.sort((x, y) => Number(x[0]) - Number(y[0]));
  }

  /** What Storage Read must give: the literal rows' values in the Arrow forms, computed by a query that reads no stored column. */
  let expectedRead: unknown[][] = [];

  async function checkAll(): Promise<void> {
    for (let k = 0; k < QUERIES.length; k++) expect(await query(QUERIES[k]!.replace('{T}', 'ds.t')), QUERIES[k]).toEqual(expected[k]);
    const td = (await tabledataRows(emu, P, 'ds', 't')).sort((x, y) => Number(x[0]) - Number(y[0]));
    expect(td).toEqual(expected[0]);
    expect(await storageRead()).toEqual(expectedRead);
  }

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', P, '--memory-limit', '300MB'] });
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { projectId: P, datasetId: 'ds' } } })).status).toBe(200);
    const res = await rest(api('/queries'), { method: 'POST', json: { query: `CREATE TABLE ds.t AS SELECT * FROM ${SOURCE}`, useLegacySql: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The literal rows behind a view: queries over it never read a stored INTERVAL or RANGE column.
    const view = await rest(api('/queries'), { method: 'POST', json: { query: `CREATE VIEW ds.lit AS SELECT * FROM ${SOURCE}`, useLegacySql: false } });
    expect(view.status, JSON.stringify(view.body)).toBe(200);
    expected = [];
    for (const q of QUERIES) expected.push(await query(q.replace('{T}', 'ds.lit')));
    // The literal rows as the wire writes them: every interval's canonical text, every range's text.
    expect(expected[0]!.map((x) => x[1])).toEqual(rows.map((x) => x.i));
    expect(expected[0]!.filter((x) => x[2] !== null).length).toBe(rows.filter((x) => x.rd !== null).length);
    const sides = (c: string, f: string): string => `IF(${c} IS NULL, 'NULL', CAST(${f}(RANGE_START(${c})) AS STRING)), IF(${c} IS NULL, 'NULL', CAST(${f}(RANGE_END(${c})) AS STRING))`;
    expectedRead = await query(`SELECT CAST(id AS STRING), CAST(i AS STRING), ${sides('rd', 'UNIX_DATE')}, ${sides('rts', 'UNIX_MICROS')} FROM ds.lit ORDER BY id`);
  }, 300_000);
  afterAll(async () => {
    await emu?.stop();
  });

  it('reads back every value through queries, kernels, tabledata.list and Storage Read', async () => {
    await checkAll();
  }, 300_000);

  it('and again after a kill -9 of the engine (decoded cold from the files)', async () => {
    await killEngine(emu, P);
    await checkAll();
  }, 300_000);

});
