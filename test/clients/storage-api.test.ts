// The Storage Read/Write APIs as the real @google-cloud/bigquery-storage
// client sees them: selected_fields return only those columns and a name the
// table lacks fails with the service's text; a row restriction takes a
// GoogleSQL double-quoted string; CreateWriteStream answers with the table's
// schema for every stream type (the client's descriptor adapter needs it).
import * as grpc from '@grpc/grpc-js';
import { BigQuery } from '@google-cloud/bigquery';
import { adapt, v1 } from '@google-cloud/bigquery-storage';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

describe('Storage APIs through the real client', () => {
  let emu: Emulator;
  let read: v1.BigQueryReadClient;
  let write: v1.BigQueryWriteClient;
  const table = 'projects/sa/datasets/ds/tables/names';
  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'sa'] });
    const bq = new BigQuery({ projectId: 'sa', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('ds');
    await bq.query("CREATE TABLE ds.names AS SELECT * FROM UNNEST([STRUCT('WA' AS state, 'Ann' AS name, 3 AS number), ('TX', 'Bob', 4), ('WA', 'Cy\"d', 5)])");
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'sa' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    read = new v1.BigQueryReadClient(opts);
    write = new v1.BigQueryWriteClient(opts);
  }, 120_000);
  afterAll(async () => {
    await read?.close();
    await write?.close();
    await emu?.stop();
  });

  async function avroRows(readOptions: { selectedFields?: string[]; rowRestriction?: string }): Promise<{ fields: string[]; rows: Record<string, unknown>[] }> {
    const [session] = await read.createReadSession({ parent: 'projects/sa', readSession: { table, dataFormat: 'AVRO', readOptions } });
    const type = avro.Type.forSchema(JSON.parse(session.avroSchema!.schema!));
    const rows: Record<string, unknown>[] = [];
    for (const s of session.streams ?? []) {
      for await (const r of read.readRows({ readStream: s.name! })) {
        let buf = Buffer.from(r.avroRows!.serializedBinaryRows as Uint8Array);
        while (buf.length) {
          const { value, offset } = type.decode(buf, 0);
          rows.push({ ...(value as Record<string, unknown>) });
          buf = buf.subarray(offset);
        }
      }
    }
    return { fields: (JSON.parse(session.avroSchema!.schema!) as { fields: { name: string }[] }).fields.map((f) => f.name), rows };
  }

  it('selected fields: only those columns, in the table\'s order; an unknown one is INVALID_ARGUMENT with the service\'s text', async () => {
    const { fields, rows } = await avroRows({ selectedFields: ['number', 'state'], rowRestriction: 'state = "WA"' });
    expect(fields).toEqual(['state', 'number']);
    expect(rows.map((r) => Number(r['number'])).sort()).toEqual([3, 5]);
    const err = await read.createReadSession({ parent: 'projects/sa', readSession: { table, dataFormat: 'AVRO', readOptions: { selectedFields: ['state', 'wrong_field'] } } }).catch((e: { code: number; message: string }) => e);
    expect(err).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect((err as { message: string }).message).toContain('request failed: The following selected fields do not exist in the table schema: wrong_field');
  });

  it('a row restriction takes double-quoted strings with backslash escapes, as GoogleSQL', async () => {
    expect((await avroRows({ rowRestriction: 'name = "Cy\\"d"' })).rows.map((r) => r['number'])).toEqual([5]);
    expect((await avroRows({ rowRestriction: "name = 'Ann'" })).rows.map((r) => r['number'])).toEqual([3]);
  });

  it('CreateWriteStream answers with the table schema for PENDING, BUFFERED and COMMITTED streams', async () => {
    for (const type of ['PENDING', 'BUFFERED', 'COMMITTED'] as const) {
      const [ws] = await write.createWriteStream({ parent: table, writeStream: { type } });
      expect(ws.tableSchema?.fields?.map((f) => f.name)).toEqual(['state', 'name', 'number']);
      // What the samples do with it: the client's adapter makes the row descriptor.
      expect(adapt.convertStorageSchemaToProto2Descriptor(ws.tableSchema!, 'root').field?.map((f) => f.name)).toEqual(['state', 'name', 'number']);
    }
  });
});
