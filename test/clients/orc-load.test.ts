// ORC loads end to end, from files Apache ORC's own writers produced
// (test/fixtures/orc): the Node client uploading a local file
// (table.load(path)), a load job naming a file:// URI, LOAD DATA in SQL, an
// external table, and
// the bq CLI's `bq load --source_format=ORC`. The schema comes from the file;
// the rows answer queries; a damaged file fails the job and leaves the
// destination as it was.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery, type Dataset } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bqFor, hasBq } from '../gateway/bq-cli-setup.js';
import { fakeAuth } from '../helpers/auth.js';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { readOrc } from '../../src/io/orc.js';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'orc');

describe('ORC loads through the real clients', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let ds: Dataset;
  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'test'] });
    bq = new BigQuery({ projectId: 'test', apiEndpoint: emu.url, authClient: fakeAuth() });
    [ds] = await bq.createDataset('orc');
  });
  afterAll(async () => emu?.stop());

  it('table.load of a local ORC file (upload): the schema from the file, nested and repeated fields queryable', async () => {
    const [job] = await ds.table('t1').load(join(FIX, 'TestOrcFile.test1.orc'), { sourceFormat: 'ORC' });
    expect(job.status?.errorResult).toBeUndefined();
    expect(job.statistics?.load?.outputRows).toBe('2');
    const [meta] = await ds.table('t1').getMetadata();
    expect(meta.schema.fields.map((f: { name: string; type: string; mode?: string }) => [f.name, f.type, f.mode ?? 'NULLABLE'])).toEqual([
      ['boolean1', 'BOOLEAN', 'NULLABLE'], ['byte1', 'INTEGER', 'NULLABLE'], ['short1', 'INTEGER', 'NULLABLE'], ['int1', 'INTEGER', 'NULLABLE'],
      ['long1', 'INTEGER', 'NULLABLE'], ['float1', 'FLOAT', 'NULLABLE'], ['double1', 'FLOAT', 'NULLABLE'], ['bytes1', 'BYTES', 'NULLABLE'],
      ['string1', 'STRING', 'NULLABLE'], ['middle', 'RECORD', 'NULLABLE'], ['list', 'RECORD', 'REPEATED'], ['map', 'RECORD', 'REPEATED'],
    ]);
    const [rows] = await bq.query({
      query: `SELECT string1, CAST(long1 AS STRING) AS long1, (SELECT STRING_AGG(l.string1, ',') FROM UNNEST(list) AS l) AS words,
                (SELECT STRING_AGG(CONCAT(m.key, '=', CAST(m.value.int1 AS STRING)), ',') FROM UNNEST(map) AS m) AS pairs,
                ARRAY_LENGTH(middle.list) AS mids, TO_HEX(bytes1) AS hex
              FROM orc.t1 ORDER BY string1`,
    });
    expect(rows).toEqual([
      { string1: 'bye', long1: '9223372036854775807', words: 'cat,in,hat', pairs: 'chani=5,mauddib=1', mids: 2, hex: '' },
      { string1: 'hi', long1: '9223372036854775807', words: 'good,bad', pairs: null, mids: 2, hex: '0001020304' },
    ]);
  });

  it('load jobs from file:// URIs with every codec, LOAD DATA, timestamps, unions and decimals', async () => {
    const [lz4] = await ds.table('lz4').load(join(FIX, 'TestVectorOrcFile.testLz4.orc'), { sourceFormat: 'ORC' });
    expect(lz4.status?.errorResult).toBeUndefined();
    // The same rows through a file:// URI load job (ZSTD) and LOAD DATA (SNAPPY).
    const [zstd] = await bq.createJob({ configuration: { load: { sourceUris: [`file://${join(FIX, 'TestVectorOrcFile.testZstd.0.12.orc')}`], sourceFormat: 'ORC', destinationTable: { projectId: 'test', datasetId: 'orc', tableId: 'zstd' } } } });
    await zstd.promise();
    await bq.query(`LOAD DATA INTO orc.snappy FROM FILES (format = 'ORC', uris = ['file://${join(FIX, 'TestOrcFile.testSnappy.orc')}'])`);
    const [[agg]] = await bq.query({
      query: `SELECT (SELECT COUNT(*) FROM orc.lz4) AS n, (SELECT SUM(y) FROM orc.lz4) AS sy,
                (SELECT COUNT(*) FROM orc.lz4 a JOIN orc.zstd b USING (x, y, z)) AS same,
                (SELECT COUNT(*) FROM orc.snappy) AS sn, (SELECT string1 FROM orc.snappy WHERE int1 = -1160101563) AS s0`,
    });
    expect(agg).toEqual({ n: 10000, sy: (9999 * 10000) / 2, same: 10000, sn: 10000, s0: 'f50dcb8' });

    await bq.query(`LOAD DATA INTO orc.u FROM FILES (format = 'ORC', uris = ['file://${join(FIX, 'TestOrcFile.testUnionAndTimestamp.orc')}'])`);
    // The loaded table holds what the reader reads (the reader's values are checked against Apache ORC's in test/io/orc.test.ts).
    const src = readOrc(readFileSync(join(FIX, 'TestOrcFile.testUnionAndTimestamp.orc'))).rows;
    const count = (f: (r: Record<string, unknown>) => boolean): number => src.filter(f).length;
    const union = (r: Record<string, unknown>): Record<string, unknown> | null => r['union'] as Record<string, unknown> | null;
    const [[u]] = await bq.query(`SELECT COUNT(*) AS n, COUNTIF(time IS NULL) AS nt, COUNTIF(\`union\`.field_1 IS NOT NULL) AS strs, COUNTIF(\`union\` IS NULL) AS nu FROM orc.u`);
    expect(u).toEqual({ n: src.length, nt: count((r) => r['time'] === null), strs: count((r) => union(r)?.['field_1'] != null), nu: count((r) => union(r) === null) });
    expect(u.strs).toBeGreaterThan(0);
    const [[first]] = await bq.query(`SELECT CAST(decimal AS STRING) AS d, \`union\`.field_0 AS i FROM orc.u WHERE time = TIMESTAMP '2000-03-12 15:00:00'`);
    expect(first).toEqual({ d: '12345678.6547456', i: 42 });
    // An external table over an ORC file reads the same way.
    await ds.createTable('ext', { externalDataConfiguration: { sourceFormat: 'ORC', sourceUris: [`file://${join(FIX, 'decimal64_v2.orc')}`] } });
    const [ext] = await bq.query('SELECT CAST(c AS STRING) AS c FROM orc.ext WHERE b = 24');
    expect(ext).toEqual([{ c: '36164.16' }]);
    const [[old]] = await bq.query(`LOAD DATA INTO orc.d1900 FROM FILES (format = 'ORC', uris = ['file://${join(FIX, 'TestOrcFile.testDate1900.orc')}']);
      SELECT COUNT(*) AS n, CAST(MIN(time) AS STRING) AS lo, CAST(MAX(date) AS STRING) AS hi FROM orc.d1900`);
    expect(old).toEqual({ n: 70000, lo: '1900-05-05 12:34:56.100+00', hi: '1969-12-25' });
  });

  it('a damaged ORC file fails the load job with invalid and leaves the table as it was', async () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'orc-bad-')), 'bad.orc');
    writeFileSync(bad, `ORC${'x'.repeat(40)}`);
    const err = await ds.table('t1').load(bad, { sourceFormat: 'ORC', writeDisposition: 'WRITE_TRUNCATE' }).then(() => undefined, (e: unknown) => e as { errors?: { reason: string; message: string }[] });
    expect(err?.errors?.[0]?.reason).toBe('invalid');
    expect(err?.errors?.[0]?.message).toMatch(/not a readable ORC file/);
    const [[n]] = await bq.query('SELECT COUNT(*) AS n FROM orc.t1');
    expect(n).toEqual({ n: 2 });
  });

  it.skipIf(!hasBq())('bq load --source_format=ORC of a local file', async () => {
    const cli = bqFor(emu.url, { direct: true });
    await cli('load', '--source_format=ORC', 'orc.bqv11', join(FIX, 'TestOrcFile.testMemoryManagementV11.orc'));
    const out = await cli('--format=json', 'query', '--nouse_legacy_sql', 'SELECT COUNT(*) AS n, MAX(int1) AS m FROM orc.bqv11');
    expect(JSON.parse(out)).toEqual([{ n: '2500', m: '749700' }]);
  });
});
