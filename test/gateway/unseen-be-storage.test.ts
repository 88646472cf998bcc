// A blind set (issue 16, set be, helper sql65, 2026-12-01): the Storage Write and Read APIs through the real client
// (@google-cloud/bigquery-storage), what SQL sees after checked by queries.
// Pages (docs/docs.cloud.google.com/bigquery/docs/...): write-api-grpc.md (Use DML with recently streamed data,
// Limitations), data-manipulation-language.md (Limitations), write-api-rest.md (Time-unit column partitioning),
// write-api-streaming.md, write-api-batch.md, reference/storage/rpc/google.cloud.bigquery.storage.v1.md
// (TableReadOptions.selected_fields; AppendRowsResponse.row_errors; RowError.RowErrorCode FIELDS_ERROR).
// Rules (section: paraphrase):
//   write-api-grpc.md, Use DML with recently streamed data: UPDATE, DELETE and MERGE may change rows the Storage
//     Write API (gRPC) wrote in the last 30 minutes, whatever the stream type (committed PENDING streams included);
//     Limitations: not inside a multi-statement transaction. Rows of the same table written otherwise stay
//     changeable inside one.
//   rpc reference, selected_fields: a nested field by its fully-qualified name returns its record with only the
//     selected children; a STRUCT named whole returns all its children; the order is the table schema's, not the
//     list's; both read formats (Arrow, Avro). A name the table lacks fails the session.
//   write-api-rest.md, Time-unit column partitioning ("You can stream data ... between 10 years in the past and 1
//     year in the future. Data outside this range is rejected."), applied to the gRPC API too: an append with such a
//     row fails with row_errors (FIELDS_ERROR) and writes nothing of its request.
//   change-data-capture.md: on the default stream, a table with a primary key takes rows with the pseudocolumn
//     _CHANGE_TYPE (UPSERT: the key's row replaced or added; DELETE: removed); _CHANGE_SEQUENCE_NUMBER (hex sections
//     split by '/', compared as unsigned numbers section by section) orders two changes of one key. Not covered before.
// The project's own tables and values; answers from the pages.
// First run (sql65 session): 2 of 7 raw against the main branch this set started from (73ab7fe; run with this set's
// engine changes stashed), no test-data mistakes (corrected: 0). Engine failures, by class: a transaction's DML over
// rows the Storage Write API wrote run (1; recent writes now tracked, streaming-buffer.ts writeApiRecent), nested
// selected_fields returning the whole record and not checking nested names (3; storage-read/selected-fields.ts),
// the streaming bound unchecked on appends (1; stream-bounds.ts via RowService.checkStreamRows): fixed. After the
// fixes: 7 of 7. Two CDC cases written after (change-data-capture.md) fail: CDC ingestion is not implemented (a
// writer schema with _CHANGE_TYPE is refused as an extra field); left it.fails (2), a feature rather than a rule.
// Both pass since set bm (sql73) implemented CDC ingestion (storage-write/cdc.ts, cdc-apply.ts): now it (2).
import * as grpc from '@grpc/grpc-js';
import { BigQuery } from '@google-cloud/bigquery';
import { adapt, managedwriter, v1 } from '@google-cloud/bigquery-storage';
import { tableFromIPC } from 'apache-arrow';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';
import { storageClients, type StorageClients } from '../helpers/storage-clients.js';

const P = 'bes';

describe.skipIf(!hasRealEngine())('Storage API streaming rules through the real client (set be)', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let writer: managedwriter.WriterClient;
  let gapic: v1.BigQueryWriteClient;
  let read: v1.BigQueryReadClient;
  let clients: StorageClients | undefined;
  let n = 0;
  const path = (t: string) => `projects/${P}/datasets/ds/tables/${t}`;
  const rows = async (sql: string): Promise<unknown[]> => (await bq.query({ query: sql }))[0].map((x: Record<string, unknown>) => JSON.parse(JSON.stringify(x)));
  const table = async (ddl = '(id INT64, name STRING)'): Promise<string> => {
    const t = `t${++n}`;
    await bq.query({ query: `CREATE TABLE ds.${t} ${ddl}` });
    return t;
  };
  /** A JSON writer of the table's schema, plus `extra` STRING fields (CDC's pseudocolumns). */
  const jsonWriter = async (streamId: string, extra: string[] = []): Promise<managedwriter.JSONWriter> => {
    const ws = await writer.getWriteStream({ streamId, view: 'FULL' as never });
    const schema = { ...ws.tableSchema!, fields: [...ws.tableSchema!.fields!, ...extra.map((name) => ({ name, type: 'STRING', mode: 'NULLABLE' }))] };
    const connection = await writer.createStreamConnection({ streamId });
    return new managedwriter.JSONWriter({ connection, protoDescriptor: adapt.convertStorageSchemaToProto2Descriptor(schema as never, 'root') });
  };
  /** Rows through the _default stream; the append's result. */
  const viaDefault = async (t: string, data: Record<string, unknown>[]) => {
    const w = await jsonWriter(`${path(t)}/streams/_default`);
    const r = await w.appendRows(data as never).getResult();
    w.close();
    return r;
  };
  /** Rows through a PENDING stream, finalized and committed. */
  const viaPending = async (t: string, data: Record<string, unknown>[]): Promise<void> => {
    const [ws] = await gapic.createWriteStream({ parent: path(t), writeStream: { type: 'PENDING' } });
    const w = await jsonWriter(ws.name!);
    expect((await w.appendRows(data as never, 0).getResult()).error ?? null).toBeNull();
    w.close();
    await gapic.finalizeWriteStream({ name: ws.name! });
    const [c] = await gapic.batchCommitWriteStreams({ parent: path(t), writeStreams: [ws.name!] });
    expect(c.streamErrors ?? []).toEqual([]);
  };
  /** A read session's rows, decoded (Arrow or Avro), and its schema's field names at the top level and under `rec`. */
  const readAll = async (t: string, format: 'ARROW' | 'AVRO', selectedFields: string[]): Promise<{ rows: unknown[]; names: string[] }> => {
    const [s] = await read.createReadSession({ parent: `projects/${P}`, readSession: { table: path(t), dataFormat: format, readOptions: { selectedFields } } });
    const out: unknown[] = [];
    const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)));
    if (format === 'AVRO') {
      const schema = JSON.parse(s.avroSchema!.schema!) as { fields: { name: string }[] };
      const type = avro.Type.forSchema(schema as never);
      for (const st of s.streams ?? []) {
        for await (const r of read.readRows({ readStream: st.name! })) {
          let buf = Buffer.from(r.avroRows!.serializedBinaryRows as Uint8Array);
          while (buf.length) {
            const { value, offset } = type.decode(buf, 0);
            out.push(plain(value));
            buf = buf.subarray(offset);
          }
        }
      }
      return { rows: out, names: schema.fields.map((f) => f.name) };
    }
    const schemaBytes = Buffer.from(s.arrowSchema!.serializedSchema as Uint8Array);
    let names: string[] = tableFromIPC(schemaBytes).schema.fields.map((f) => f.name);
    for (const st of s.streams ?? []) {
      for await (const r of read.readRows({ readStream: st.name! })) {
        const tbl = tableFromIPC([schemaBytes, Buffer.from(r.arrowRecordBatch!.serializedRecordBatch as Uint8Array)]);
        names = tbl.schema.fields.map((f) => f.name);
        for (const row of tbl.toArray()) out.push(plain(row.toJSON()));
      }
    }
    return { rows: out, names };
  };

  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ args: ['--project-id', P] });
    bq = new BigQuery({ projectId: P, apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('ds');
    clients = storageClients(emu, P);
    ({ writer, write: gapic, read } = clients);
    await bq.query({ query: "CREATE TABLE ds.nest AS SELECT 1 AS id, STRUCT('p' AS a, 2 AS b, STRUCT(true AS x, 'q' AS y) AS c) AS rec, [STRUCT(5 AS u, 'v' AS w), STRUCT(6, 'z')] AS arr" });
  }, 120_000);
  afterAll(async () => {
    await clients?.close();
    await emu?.stop();
  });

  it('rows of a committed PENDING stream may be changed by DELETE and MERGE outside a transaction', async () => {
    // write-api-grpc.md, Use data manipulation language (DML) with recently streamed data
    const t = await table();
    await viaPending(t, [{ id: 1, name: 'a' }, { id: 2, name: 'b' }]);
    await bq.query({ query: `DELETE ds.${t} WHERE id = 1` });
    await bq.query({ query: `MERGE ds.${t} T USING (SELECT 2 AS id) S ON T.id = S.id WHEN MATCHED THEN UPDATE SET name = 'merged'` });
    expect(await rows(`SELECT id, name FROM ds.${t}`)).toEqual([{ id: 2, name: 'merged' }]);
  });

  it('a transaction\'s DELETE of rows a committed PENDING stream wrote is refused and nothing of it is kept', async () => {
    // write-api-grpc.md, Use DML with recently streamed data, Limitations
    const t = await table();
    await viaPending(t, [{ id: 1, name: 'a' }]);
    await expect(bq.query({ query: `BEGIN TRANSACTION; INSERT ds.${t} VALUES (7, 'dml'); DELETE ds.${t} WHERE id = 1; COMMIT TRANSACTION;` })).rejects.toThrow();
    expect(await rows(`SELECT id, name FROM ds.${t}`)).toEqual([{ id: 1, name: 'a' }]);
  });

  it('a transaction may change rows of the table that the Storage Write API did not write', async () => {
    // write-api-grpc.md, Limitations (only recently streamed data is out of a transaction's reach)
    const t = await table();
    await bq.query({ query: `INSERT ds.${t} VALUES (1, 'dml')` });
    expect((await viaDefault(t, [{ id: 2, name: 'streamed' }])).error ?? null).toBeNull();
    await bq.query({ query: `BEGIN TRANSACTION; UPDATE ds.${t} SET name = 'txn' WHERE id = 1; COMMIT TRANSACTION;` });
    expect(await rows(`SELECT id, name FROM ds.${t} ORDER BY id`)).toEqual([{ id: 1, name: 'txn' }, { id: 2, name: 'streamed' }]);
  });

  it('Arrow: nested fields selected out of order come back in the table\'s order, holding only those children', async () => {
    // rpc reference, TableReadOptions.selected_fields
    const got = await readAll('nest', 'ARROW', ['rec.c.y', 'rec.a']);
    expect(got.names).toEqual(['rec']);
    expect(got.rows).toEqual([{ rec: { a: 'p', c: { y: 'q' } } }]);
  });

  it('Avro: a repeated record\'s child and a whole STRUCT with one of its own children named too', async () => {
    // rpc reference, TableReadOptions.selected_fields ("If a STRUCT field is specified ..., all of the child elements")
    const got = await readAll('nest', 'AVRO', ['arr.w', 'rec', 'rec.b', 'id']);
    expect(got.names).toEqual(['id', 'rec', 'arr']);
    expect(got.rows).toEqual([{ id: 1, rec: { a: 'p', b: 2, c: { x: true, y: 'q' } }, arr: [{ w: 'v' }, { w: 'z' }] }]);
  });

  it('a selected nested field the table lacks fails the session', async () => {
    // rpc reference, TableReadOptions.selected_fields (names of the fields in the table)
    await expect(read.createReadSession({ parent: `projects/${P}`, readSession: { table: path('nest'), dataFormat: 'ARROW', readOptions: { selectedFields: ['rec.zz'] } } }))
      .rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(read.createReadSession({ parent: `projects/${P}`, readSession: { table: path('nest'), dataFormat: 'AVRO', readOptions: { selectedFields: ['id.x'] } } }))
      .rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  it('an append with a partitioning date 11 years back fails with a FIELDS_ERROR row error and writes nothing', async () => {
    // write-api-rest.md, Time-unit column partitioning; rpc reference, AppendRowsResponse.row_errors
    const t = await table('(id INT64, d DATE) PARTITION BY d');
    const old = new Date(Date.now() - 365 * 11 * 86_400_000).toISOString().slice(0, 10);
    const recent = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
    const days = (s: string): number => Math.round(Date.parse(`${s}T00:00:00Z`) / 86_400_000);
    const r = await viaDefault(t, [{ id: 1, d: days(recent) }, { id: 2, d: days(old) }]);
    expect(r.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((r.rowErrors ?? []).map((e) => [Number(e.index), String(e.code)])).toEqual([[1, 'FIELDS_ERROR']]);
    expect(await rows(`SELECT COUNT(*) AS n FROM ds.${t}`)).toEqual([{ n: 0 }]);
    expect((await viaDefault(t, [{ id: 3, d: days(recent) }])).error ?? null).toBeNull();
    expect(await rows(`SELECT id FROM ds.${t}`)).toEqual([{ id: 3 }]);
  });

  it('CDC: _CHANGE_TYPE UPSERT replaces the row of its primary key or adds one, DELETE removes it', async () => {
    // change-data-capture.md, Specify changes to existing records (Example with UPSERT and DELETE values)
    const t = await table('(k INT64 PRIMARY KEY NOT ENFORCED, v STRING, n INT64)');
    await bq.query({ query: `INSERT ds.${t} VALUES (1, 'one', 10), (2, 'two', 20), (3, 'three', 30)` });
    const w = await jsonWriter(`${path(t)}/streams/_default`, ['_CHANGE_TYPE']);
    const r = await w.appendRows([{ k: 1, _CHANGE_TYPE: 'DELETE' }, { k: 2, v: 'two', n: 99, _CHANGE_TYPE: 'UPSERT' }, { k: 7, v: 'seven', n: 70, _CHANGE_TYPE: 'UPSERT' }] as never).getResult();
    w.close();
    expect(r.error ?? null).toBeNull();
    expect(await rows(`SELECT k, v, n FROM ds.${t} ORDER BY k`)).toEqual([{ k: 2, v: 'two', n: 99 }, { k: 3, v: 'three', n: 30 }, { k: 7, v: 'seven', n: 70 }]);
  });

  it('CDC: of two changes to one key the larger _CHANGE_SEQUENCE_NUMBER wins, compared section by section as hex', async () => {
    // change-data-capture.md, Manage custom ordering (_CHANGE_SEQUENCE_NUMBER format: 'FFF/ABC' over 'FFF/B', '7B' over '77')
    const t = await table('(k INT64 PRIMARY KEY NOT ENFORCED, v STRING)');
    const w = await jsonWriter(`${path(t)}/streams/_default`, ['_CHANGE_TYPE', '_CHANGE_SEQUENCE_NUMBER']);
    const r = await w.appendRows([
      { k: 1, v: 'newer', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: 'FFF/ABC' },
      { k: 1, v: 'older', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: 'FFF/B' },
      { k: 2, v: 'kept', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: '7B' },
      { k: 2, _CHANGE_TYPE: 'DELETE', _CHANGE_SEQUENCE_NUMBER: '77' },
    ] as never).getResult();
    w.close();
    expect(r.error ?? null).toBeNull();
    expect(await rows(`SELECT k, v FROM ds.${t} ORDER BY k`)).toEqual([{ k: 1, v: 'newer' }, { k: 2, v: 'kept' }]);
  });
});
