// TIMESTAMP output formats and precision through the real Node client (8.3,
// which asks tabledata.list for ISO8601_STRING and, with
// BIGQUERY_PICOSECOND_SUPPORT, jobs.query too): every combination of
// formatOptions.timestampOutputFormat and useInt64Timestamp reads the same
// instant, the two combinations the service refuses are refused with its
// message, and int64 members of a field schema echo as strings. The
// picosecond TIMESTAMP (timestampPrecision 12) has its own file,
// timestamp-picos.test.ts.
import { BigQuery, type Dataset, type Table } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const INSTANT = '2023-01-01T12:00:00.123456Z';
const AS_CLIENT_READS = '2023-01-01T12:00:00.123456000Z';
const BOTH = 'Cannot specify both use_int64_timestamp and timestamp_output_format.';

describe('TIMESTAMP formats and precision through the Node client', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let ds: Dataset;
  let table: Table;

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'ts-p'] });
    bq = new BigQuery({ projectId: 'ts-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    [ds] = await bq.createDataset('ts');
    [table] = await ds.createTable('t', { schema: [{ name: 'ts', type: 'TIMESTAMP' }] });
    await table.insert([{ ts: INSTANT }]);
  });
  afterAll(async () => emu?.stop());

  const cases: [string | undefined, boolean | undefined][] = [
    [undefined, undefined], [undefined, true], [undefined, false],
    ['TIMESTAMP_OUTPUT_FORMAT_UNSPECIFIED', true], ['TIMESTAMP_OUTPUT_FORMAT_UNSPECIFIED', false], ['TIMESTAMP_OUTPUT_FORMAT_UNSPECIFIED', undefined],
    ['FLOAT64', false], ['FLOAT64', undefined], ['INT64', true], ['INT64', false], ['INT64', undefined],
    ['ISO8601_STRING', false], ['ISO8601_STRING', undefined],
  ];
  it.each(cases)('tabledata.list with timestampOutputFormat %s and useInt64Timestamp %s reads the instant', async (format, int64) => {
    const options: Record<string, unknown> = {};
    if (format !== undefined) options['formatOptions.timestampOutputFormat'] = format;
    if (int64 !== undefined) options['formatOptions.useInt64Timestamp'] = int64;
    const [rows] = await table.getRows(options);
    expect(rows[0].ts.value).toBe(AS_CLIENT_READS);
  });

  it('FLOAT64 or ISO8601_STRING together with useInt64Timestamp=true is refused with the service message', async () => {
    for (const format of ['FLOAT64', 'ISO8601_STRING']) {
      const options: Record<string, unknown> = { 'formatOptions.timestampOutputFormat': format, 'formatOptions.useInt64Timestamp': true };
      await expect(table.getRows(options)).rejects.toThrow(BOTH);
      const r = await rest(`${emu.url}/bigquery/v2/projects/ts-p/queries`, { method: 'POST', json: { query: 'SELECT 1', formatOptions: { useInt64Timestamp: true, timestampOutputFormat: format } } });
      expect(r.status).toBe(400);
      expect(r.body.error.errors[0].reason).toBe('invalid');
    }
  });

  it('ISO8601_STRING cells are RFC 3339 text; jobs.query honours the format (BIGQUERY_PICOSECOND_SUPPORT)', async () => {
    const r = await rest(`${emu.url}/bigquery/v2/projects/ts-p/datasets/ts/tables/t/data?formatOptions.timestampOutputFormat=ISO8601_STRING`);
    expect(r.body.rows[0].f[0].v).toBe(INSTANT);
    const q = await rest(`${emu.url}/bigquery/v2/projects/ts-p/queries`, { method: 'POST', json: { query: 'SELECT ts FROM ts.t', useLegacySql: false, formatOptions: { timestampOutputFormat: 'ISO8601_STRING' } } });
    expect(q.body.rows[0].f[0].v).toBe(INSTANT);
    process.env.BIGQUERY_PICOSECOND_SUPPORT = 'true';
    try {
      const [rows] = await bq.query('SELECT ts FROM ts.t');
      expect(rows[0].ts.value).toBe(AS_CLIENT_READS);
    } finally {
      delete process.env.BIGQUERY_PICOSECOND_SUPPORT;
    }
  });

  it('int64 members of field schemas echo as strings; timestampPrecision 6 is the microsecond TIMESTAMP', async () => {
    const [t] = await ds.createTable('lengths', {
      schema: { fields: [{ name: 's', type: 'STRING', maxLength: 10 as unknown as string }, { name: 'n', type: 'NUMERIC', precision: 10 as unknown as string, scale: 2 as unknown as string }, { name: 'ts', type: 'TIMESTAMP', timestampPrecision: 6 as unknown as string }] },
    });
    const [meta] = await t.getMetadata();
    expect(meta.schema.fields).toEqual([
      { name: 's', type: 'STRING', maxLength: '10' },
      { name: 'n', type: 'NUMERIC', precision: '10', scale: '2' },
      { name: 'ts', type: 'TIMESTAMP', timestampPrecision: '6' },
    ]);
    await t.insert([{ ts: INSTANT }]);
    expect((await bq.query('SELECT ts FROM ts.lengths'))[0][0].ts.value).toBe(AS_CLIENT_READS);
  });
});
