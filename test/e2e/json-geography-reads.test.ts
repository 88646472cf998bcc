// JSON and GEOGRAPHY columns read back from their files give every value
// through every read path: query results (jobs.query + getQueryResults
// pages), tabledata.list, the JSON path functions, subscripts and
// conversions, and Storage Read Arrow sessions through the real client
// library, before and after a kill -9 of the engine (the chunks decoded cold
// from the files). Each stored value is compared with the same value made
// from its source text in the query (PARSE_JSON / ST_GEOGFROMTEXT: parsed
// whole). The columns are held as their stored text; the values their batches
// are made as (parsed by batch where a kernel reads them) are kept beside the
// chunk from the first read (storage/column-chunk.ts TextValues): every check
// runs on fresh and on kept values.
import * as grpc from '@grpc/grpc-js';
import { v1 } from '@google-cloud/bigquery-storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killEngine, queryRows, rest, startEmulator, tabledataRows, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';
import { rng } from '../helpers/random-values.js';
import { parseJsonText } from '../../src/functions/json-core.js';
import { jsonNodeToText } from '../../src/types/json-values.js';

const N = 1500;
const P = 'jt';

const r = rng(1919);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const SCALARS = ['0', '-0', '7', '-12.5', '1e300', '12345678901234567890', '9007199254740993', '0.1', '"x"', '"a\\"b\\u00e9\\n"', '"é"', 'true', 'false', 'null', '1.0', '"12"'];
function doc(depth: number): string {
  const p = r();
  if (depth < 3 && p < 0.3) {
    const keys = ['a', 'b', 'n', 's', 'é', 'a b', '10', '9'];
    const n = Math.floor(r() * 5);
    return '{' + Array.from({ length: n }, () => `${JSON.stringify(pick(keys))}: ${doc(depth + 1)}`).join(', ') + '}';
  }
  if (depth < 3 && p < 0.45) return '[' + Array.from({ length: Math.floor(r() * 4) }, () => doc(depth + 1)).join(',') + ']';
  return pick(SCALARS);
}
const rows = Array.from({ length: N }, (_, k) => ({
  id: k,
  // Documents mostly of the common shape (a few fields), some of any shape, some NULL.
  s: k % 9 === 4 ? null : k % 3 === 0 ? doc(0) : `{"a": ${k % 50}, "s": "v${k % 7}", "n": {"x": ${k * 1.5}, "y": [${k}, "${k}"]}, "b": ${k % 2 === 0}, "a": 99}`,
  lng: k % 11 === 5 ? null : ((k * 7.31) % 360) - 180,
  lat: ((k * 3.17) % 180) - 90,
}));
// What the service prints for each JSON value: its canonical text (PARSE_JSON then serialized; the first of duplicate keys).
const canonical = rows.map((x) => (x.s === null ? null : jsonNodeToText(parseJsonText(x.s, 'round'))));

describe('JSON and GEOGRAPHY columns read back from their files', () => {
  let emu: Emulator;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;

  const query = (sql: string): Promise<unknown[][]> => queryRows(emu, P, sql);
  const tabledata = async (): Promise<unknown[][]> => (await tabledataRows(emu, P, 'ds', 'docs')).sort((x, y) => Number(x[0]) - Number(y[0]));

  /** Every row through a Storage Read Arrow session: the UTF-8 texts the client received. */
  async function storageRead(): Promise<[number, string | null, string | null][]> {
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: P } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    const client = new v1.BigQueryReadClient(opts);
    const [session] = await client.createReadSession({ parent: `projects/${P}`, readSession: { table: `projects/${P}/datasets/ds/tables/docs`, dataFormat: 'ARROW', readOptions: { selectedFields: ['id', 'j', 'g'] } }, maxStreamCount: 2 });
    const { RecordBatchReader, Table } = await import('apache-arrow');
    const schemaBytes = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
    const out: [number, string | null, string | null][] = [];
    for (const s of session.streams ?? []) {
      for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
        const t = new Table(RecordBatchReader.from(Buffer.concat([schemaBytes, Buffer.from(resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array)])).readAll());
        for (const row of t.toArray() as { id: bigint; j: string | null; g: string | null }[]) out.push([Number(row.id), row.j, row.g]);
      }
    }
    await client.close();
    return out.sort((x, y) => x[0] - y[0]);
  }

  async function checkAll(): Promise<void> {
    // The wire form of each value, by query and by tabledata.list: the stored column against the value made from its source in the query.
    const made = await query('SELECT id, j, g, ST_ASTEXT(ST_GEOGPOINT(lng, lat)) FROM ds.docs ORDER BY id');
    expect(made.length).toBe(N);
    expect(made.map((x) => x[1])).toEqual(canonical);
    expect(made.map((x) => x[2])).toEqual(made.map((x) => x[3]));
    expect((await tabledata()).map((x) => [x[0], x[4], x[5]])).toEqual(made.map((x) => [x[0], x[1], x[2]]));
    // Storage Read: the same texts, byte for byte.
    expect(await storageRead()).toEqual(made.map((x) => [Number(x[0]), x[1], x[2]]));

    // Path functions, subscripts and conversions over the stored values (scanned) and over the values parsed whole.
    const exprs = [
      "JSON_VALUE(#, '$.a')",
      "JSON_VALUE(#, '$.n.y[1]')",
      "JSON_EXTRACT_SCALAR(#, '$.s')",
      "TO_JSON_STRING(JSON_QUERY(#, '$.n'))",
      "TO_JSON_STRING(JSON_EXTRACT(#, '$.n.y'))",
      "TO_JSON_STRING(JSON_QUERY_ARRAY(#, '$.n.y'))",
      "JSON_VALUE_ARRAY(#, '$.n.y')",
      "TO_JSON_STRING(JSON_QUERY(#, 'lax $.a'))",
      'TO_JSON_STRING(#.n.y[0])',
      "TO_JSON_STRING(#['a b'])",
      "TO_JSON_STRING(#['10'])",
      'TO_JSON_STRING(#[1])',
      'SAFE.INT64(#.a)',
      'LAX_INT64(#.a)',
      'SAFE.FLOAT64(#.n.x)',
      'LAX_FLOAT64(#.n.x)',
      'SAFE.STRING(#.s)',
      'LAX_STRING(#.a)',
      'SAFE.BOOL(#.b)',
      'JSON_TYPE(#.a)',
      'JSON_TYPE(#)',
      'TO_JSON_STRING(JSON_KEYS(#))',
    ];
    const cols = (x: string): string => exprs.map((e) => e.replaceAll('#', x)).join(', ');
    const parsed = await query(`SELECT id, ${cols('pj')} FROM (SELECT id, PARSE_JSON(s, wide_number_mode => 'round') AS pj FROM ds.docs) ORDER BY id`);
    // Twice: the values made from the texts (and kept), then the values kept parsed.
    for (let run = 0; run < 2; run++) {
      const stored = await query(`SELECT id, ${cols('j')} FROM ds.docs ORDER BY id`);
      for (let k = 0; k < exprs.length; k++) expect(stored.map((x) => x[k + 1]), `${exprs[k]} (run ${run})`).toEqual(parsed.map((x) => x[k + 1]));
    }
    // Aggregates and a filter on a field.
    const agg = "SELECT SUM(SAFE_CAST(JSON_VALUE(#, '$.a') AS INT64)), COUNT(JSON_VALUE(#, '$.s')), COUNTIF(JSON_VALUE(#, '$.s') = 'v3') FROM ds.docs WHERE SAFE.INT64(#.a) < 30";
    expect(await query(agg.replaceAll('#', 'j'))).toEqual(await query(agg.replaceAll('#', 'PARSE_JSON(s, wide_number_mode => "round")')));
    // Geography functions over the stored text, and over the same text read in the query (a stored point is its WKT's).
    const geo = 'SELECT id, ST_X(#), ST_Y(#), ST_DISTANCE(#, ST_GEOGPOINT(0, 0)), ST_ASGEOJSON(#) FROM ds.docs ORDER BY id';
    const geoMade = await query(geo.replaceAll('#', 'ST_GEOGFROMTEXT(ST_ASTEXT(ST_GEOGPOINT(lng, lat)))'));
    for (let run = 0; run < 2; run++) expect(await query(geo.replaceAll('#', 'g'))).toEqual(geoMade);
    // The writers again, now over the values kept parsed: the same texts.
    expect((await query('SELECT id, j, g FROM ds.docs ORDER BY id')).map((x) => [x[1], x[2]])).toEqual(made.map((x) => [x[1], x[2]]));
    expect(await storageRead()).toEqual(made.map((x) => [Number(x[0]), x[1], x[2]]));
  }

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', P] });
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { projectId: P, datasetId: 'ds' } } })).status).toBe(200);
    const str = (v: string | null): string => (v === null ? 'CAST(NULL AS STRING)' : JSON.stringify(v));
    const num = (v: number | null): string => (v === null ? 'CAST(NULL AS FLOAT64)' : String(v));
    const structs = rows.map((x) => `STRUCT(${x.id} AS id, ${str(x.s)} AS s, ${num(x.lng)} AS lng, ${num(x.lat)} AS lat)`);
    const res = await rest(api('/queries'), {
      method: 'POST',
      json: { query: `CREATE TABLE ds.docs AS SELECT id, s, lng, lat, PARSE_JSON(s, wide_number_mode => 'round') AS j, ST_GEOGPOINT(lng, lat) AS g FROM UNNEST([${structs.join(',\n')}])`, useLegacySql: false },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await emu?.stop();
  });

  it('reads back every value through queries, JSON functions, tabledata.list and Storage Read', async () => {
    await checkAll();
  }, 180_000);

  it('and again after a kill -9 of the engine (decoded cold from the files)', async () => {
    await killEngine(emu, P);
    await checkAll();
  }, 180_000);
});
