// NUMERIC and BIGNUMERIC columns, held as Arrow decimal words once read from
// their files, give back every value exactly through every read path: query
// results (jobs.query + getQueryResults pages), tabledata.list, aggregates
// (SUM, MIN, MAX, COUNT, ORDER BY ... LIMIT, comparisons) and Storage Read
// Arrow sessions through the real client library (the words it receives are
// the values' two's complement), before and after a kill -9 of the engine
// (the chunks decoded cold from the files). Random values of every length,
// both types' extremes and NULLs.
import * as grpc from '@grpc/grpc-js';
import { v1 } from '@google-cloud/bigquery-storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killEngine, queryRows, rest, startEmulator, tabledataRows, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';
import { randomDecimalText, rng } from '../helpers/random-values.js';

const N = 2000;
const P = 'nl';

/** The unscaled integer of a decimal text. */
function scaled(text: string, scale: number): bigint {
  const neg = text.startsWith('-');
  const [i, f = ''] = (neg ? text.slice(1) : text).split('.');
  const x = BigInt(i! + f.padEnd(scale, '0'));
  return neg ? -x : x;
}

/** The text of an unscaled integer, as the service writes NUMERIC and BIGNUMERIC (no trailing zeros, no point for integers). */
function textOf(x: bigint, scale: number): string {
  const neg = x < 0n;
  const digits = (neg ? -x : x).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? '.' + frac : ''}`;
}

const r = rng(1906);
const rows: { id: number; n: string | null; b: string | null }[] = Array.from({ length: N }, (_, k) => ({
  id: k,
  n: k % 5 === 1 ? null : randomDecimalText(r, 4),
  b: k % 7 === 2 ? null : randomDecimalText(r, 8),
}));
// Signs chosen (largest magnitude first, each against the running total) so that SUM stays within range: |total| <= the largest value.
for (const c of ['n', 'b'] as const) {
  const scale = c === 'n' ? 9 : 38;
  const abs = (t: string): bigint => (t.startsWith('-') ? scaled(t.slice(1), scale) : scaled(t, scale));
  const order = rows.filter((x) => x[c] !== null).sort((x, y) => (abs(y[c]!) > abs(x[c]!) ? 1 : abs(y[c]!) < abs(x[c]!) ? -1 : 0));
  let total = 0n;
  for (const x of order) {
    const v = total > 0n ? -abs(x[c]!) : abs(x[c]!);
    x[c] = textOf(v, scale);
    total += v;
  }
}

describe('NUMERIC and BIGNUMERIC columns held as decimal words', () => {
  let emu: Emulator;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;

  const query = (sql: string): Promise<unknown[][]> => queryRows(emu, P, sql);
  const tabledata = (): Promise<unknown[][]> => tabledataRows(emu, P, 'ds', 'money');

  /** Every row through a Storage Read Arrow session: the decimal words the client received, as unscaled integers. */
  async function storageRead(): Promise<{ id: number; n: bigint | null; b: bigint | null }[]> {
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: P } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    const client = new v1.BigQueryReadClient(opts);
    const [session] = await client.createReadSession({ parent: `projects/${P}`, readSession: { table: `projects/${P}/datasets/ds/tables/money`, dataFormat: 'ARROW' }, maxStreamCount: 2 });
    const { RecordBatchReader, Table } = await import('apache-arrow');
    const schemaBytes = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
    const out: { id: number; n: bigint | null; b: bigint | null }[] = [];
    const unscaled = (words: Uint32Array, at: number, width: number): bigint => {
      let x = 0n;
      for (let w = width - 1; w >= 0; w--) x = (x << 32n) | BigInt(words[at * width + w]!);
      return BigInt.asIntN(32 * width, x);
    };
    for (const s of session.streams ?? []) {
      for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
        const t = new Table(RecordBatchReader.from(Buffer.concat([schemaBytes, Buffer.from(resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array)])).readAll());
        for (const batch of t.batches) {
          const [id, n, b] = ['id', 'n', 'b'].map((c) => batch.getChild(c)!.data[0]!);
          for (let i = 0; i < batch.numRows; i++) {
            out.push({
              id: Number((id.values as BigInt64Array)[id.offset + i]),
              n: n.getValid(i) ? unscaled(n.values as Uint32Array, n.offset + i, 4) : null,
              b: b.getValid(i) ? unscaled(b.values as Uint32Array, b.offset + i, 8) : null,
            });
          }
        }
      }
    }
    await client.close();
    return out.sort((x, y) => x.id - y.id);
  }

  async function checkAll(): Promise<void> {
    const want = rows.map((x) => [String(x.id), x.n, x.b]);
    expect(await query('SELECT id, n, b FROM ds.money ORDER BY id')).toEqual(want);
    expect((await tabledata()).sort((x, y) => Number(x[0]) - Number(y[0]))).toEqual(want);
    const read = await storageRead();
    expect(read).toEqual(rows.map((x) => ({ id: x.id, n: x.n === null ? null : scaled(x.n, 9), b: x.b === null ? null : scaled(x.b, 38) })));

    for (const [c, scale] of [
      ['n', 9],
      ['b', 38],
    ] as const) {
      const vals = rows.map((x) => x[c]).filter((x): x is string => x !== null);
      const xs = vals.map((v) => scaled(v, scale)).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      const sum = xs.reduce((s, x) => s + x, 0n);
      const [agg] = await query(`SELECT SUM(${c}), MIN(${c}), MAX(${c}), COUNT(${c}), COUNT(*) FROM ds.money`);
      expect(agg, c).toEqual([textOf(sum, scale), textOf(xs[0]!, scale), textOf(xs[xs.length - 1]!, scale), String(xs.length), String(N)]);
      // Per group, of the values below a bound (so that no group's sum leaves the range).
      const bound = 10n ** 20n;
      const small = (x: string | null): boolean => x !== null && scaled(x, scale) < bound * 10n ** BigInt(scale) && scaled(x, scale) > -bound * 10n ** BigInt(scale);
      const groups = [0, 1, 2].map((k) => rows.filter((x) => x.id % 3 === k && small(x[c])).reduce((s, x) => s + scaled(x[c]!, scale), 0n));
      const lit = `${c === 'n' ? 'NUMERIC' : 'BIGNUMERIC'} '${bound}'`;
      expect(await query(`SELECT MOD(id, 3) AS k, SUM(${c}) FROM ds.money WHERE ABS(${c}) < ${lit} GROUP BY k ORDER BY k`), c).toEqual(groups.map((x, k) => [String(k), textOf(x, scale)]));
      const nulls = N - xs.length;
      const asc = [...new Array<string | null>(nulls).fill(null), ...xs.map((x) => textOf(x, scale))];
      expect((await query(`SELECT ${c} FROM ds.money ORDER BY ${c} LIMIT 10`)).map((x) => x[0]), c).toEqual(asc.slice(0, 10));
      expect((await query(`SELECT ${c} FROM ds.money ORDER BY ${c} DESC LIMIT 10`)).map((x) => x[0]), c).toEqual(asc.slice(-10).reverse());
      // A comparison against the median: the rows above it.
      const mid = xs[xs.length >> 1]!;
      const above = rows.filter((x) => x[c] !== null && scaled(x[c]!, scale) > mid).map((x) => String(x.id));
      expect((await query(`SELECT id FROM ds.money WHERE ${c} > ${c === 'n' ? 'NUMERIC' : 'BIGNUMERIC'} '${textOf(mid, scale)}' ORDER BY id`)).map((x) => x[0]), c).toEqual(above);
    }
  }

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', P] });
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { projectId: P, datasetId: 'ds' } } })).status).toBe(200);
    const lit = (v: string | null, t: string): string => (v === null ? `CAST(NULL AS ${t})` : `${t} '${v}'`);
    const structs = rows.map((x) => `STRUCT(${x.id} AS id, ${lit(x.n, 'NUMERIC')} AS n, ${lit(x.b, 'BIGNUMERIC')} AS b)`);
    const res = await rest(api('/queries'), { method: 'POST', json: { query: `CREATE TABLE ds.money AS SELECT * FROM UNNEST([${structs.join(',\n')}])`, useLegacySql: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await emu?.stop();
  });

  it('reads back every value through queries, aggregates, tabledata.list and Storage Read', async () => {
    await checkAll();
  }, 120_000);

  it('and again after a kill -9 of the engine (decoded cold from the files)', async () => {
    await killEngine(emu, P);
    await checkAll();
  }, 120_000);
});
