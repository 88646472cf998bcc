// insertAll rows naming a field the schema lacks, through the real Node client
// and REST: the service rejects such a row (reason invalid, `no such field`)
// unless ignoreUnknownValues is set; with skipInvalidRows the other rows go in.
import { Readable } from 'node:stream';
import { BigQuery, type Table } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

type PartialFailure = { name: string; errors: { row: unknown; errors: { reason: string; message: string }[] }[] };

describe('insertAll with unknown fields', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let table: Table;
  const count = async (): Promise<number> => (await bq.query('SELECT COUNT(*) AS n FROM iu.t'))[0][0].n as number;

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'iu-p'] });
    bq = new BigQuery({ projectId: 'iu-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    const [ds] = await bq.createDataset('iu');
    [table] = await ds.createTable('t', {
      schema: [
        { name: 'id', type: 'INTEGER' },
        { name: 'rec', type: 'RECORD', fields: [{ name: 'a', type: 'STRING' }] },
        { name: 'recs', type: 'RECORD', mode: 'REPEATED', fields: [{ name: 'b', type: 'INTEGER' }] },
      ],
    });
  });
  afterAll(async () => emu?.stop());

  it('a row with an unknown top-level or nested field is rejected and the request stopped', async () => {
    const err = (await table.insert([{ id: 1 }, { wrong_name: 'foo', id: 2 }, { id: 3, rec: { a: 'x', zz: 1 } }, { id: 4, recs: [{ b: 1 }, { c: 2 }] }]).catch((e: unknown) => e)) as PartialFailure;
    expect(err.name).toBe('PartialFailureError');
    // The client keeps each error's reason and message; the other rows are reported as stopped.
    const byRow = (e: { row: unknown }) => JSON.stringify(e.row);
    expect(err.errors.sort((a, b) => byRow(a).localeCompare(byRow(b))).map((e) => e.errors[0])).toEqual([
      { reason: 'stopped', message: '' },
      { reason: 'invalid', message: 'no such field: rec.zz.' },
      { reason: 'invalid', message: 'no such field: recs.c.' },
      { reason: 'invalid', message: 'no such field: wrong_name.' },
    ]);
    expect(await count()).toBe(0);
    // The raw answer names the field in `location`.
    const r = await rest(`${emu.url}/bigquery/v2/projects/iu-p/datasets/iu/tables/t/insertAll`, {
      method: 'POST',
      json: { rows: [{ json: { id: 1 } }, { json: { ID: 2, extra: true } }] },
    });
    expect(r.body.insertErrors).toHaveLength(2);
    expect(r.body).toEqual({
      kind: 'bigquery#tableDataInsertAllResponse',
      insertErrors: expect.arrayContaining([
        { index: 0, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] },
        { index: 1, errors: [{ reason: 'invalid', location: 'extra', debugInfo: '', message: 'no such field: extra.' }] },
      ]),
    });
  });

  it('skipInvalidRows stores the other rows; ignoreUnknownValues drops the unknown fields', async () => {
    const err = (await table.insert([{ id: 1 }, { id: 2, nope: 1 }], { skipInvalidRows: true }).catch((e: unknown) => e)) as PartialFailure;
    expect(err.errors.map((e) => e.errors[0]!.message)).toEqual(['no such field: nope.']);
    expect(await count()).toBe(1);
    await table.insert([{ id: 3, nope: 1, rec: { a: 'y', zz: 2 } }], { ignoreUnknownValues: true });
    expect((await bq.query('SELECT id, rec.a FROM iu.t ORDER BY id'))[0]).toEqual([{ id: 1, a: null }, { id: 3, a: 'y' }]);
  });

  it('an insert stream reports the rejected row as a PartialFailureError', async () => {
    const stream = new Readable({ objectMode: true, read() {} });
    stream.push({ wrong_name: 'foo', id: 1 });
    const err = await new Promise<Error>((resolve) => stream.pipe(table.createInsertStream({ batchOptions: { maxMilliseconds: 10, maxBytes: 9_000_000, maxRows: 500 } })).on('error', resolve));
    expect(err.name).toBe('PartialFailureError');
  });
});
