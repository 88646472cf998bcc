// InsertRows / ListRows: conversions, insertErrors, encoding of every type, paging.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startInProcess, type InProcessEngine } from './helpers.js';

/** Copies the data dir (minus the lock) while the engine runs: a crash image with WALs unfolded. */
async function reopenWithoutFlush(dir: string): Promise<InProcessEngine> {
  const copy = fs.mkdtempSync(dir + '-copy');
  fs.cpSync(dir, copy, { recursive: true, filter: (src) => path.basename(src) !== 'catalog.lock' });
  await eng.close();
  const files = fs.readdirSync(path.join(copy, 'p', 'd'));
  expect(files.some((f) => f.endsWith('.wal') && fs.statSync(path.join(copy, 'p', 'd', f)).size > 0)).toBe(true);
  return startInProcess(copy);
}

let eng: InProcessEngine;
const T = { projectId: 'p', datasetId: 'd', tableId: 'all' };

const fields = [
  { name: 'i', type: 'INT64' },
  { name: 'f', type: 'FLOAT64' },
  { name: 'n', type: 'NUMERIC' },
  { name: 'bn', type: 'BIGNUMERIC' },
  { name: 'b', type: 'BOOL' },
  { name: 's', type: 'STRING' },
  { name: 'y', type: 'BYTES' },
  { name: 'd', type: 'DATE' },
  { name: 't', type: 'TIME' },
  { name: 'dt', type: 'DATETIME' },
  { name: 'ts', type: 'TIMESTAMP' },
  { name: 'iv', type: 'INTERVAL' },
  { name: 'j', type: 'JSON' },
  { name: 'g', type: 'GEOGRAPHY' },
  { name: 'r', type: 'RANGE', rangeElementType: { type: 'DATE' } },
  { name: 'st', type: 'RECORD', fields: [{ name: 'a', type: 'INTEGER' }, { name: 'arr', type: 'STRING', mode: 'REPEATED' }] },
  { name: 'rep', type: 'INTEGER', mode: 'REPEATED' },
];

beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
  await eng.client.call('InsertTable', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ tableReference: { tableId: 'all' }, schema: { fields } }) });
  await eng.client.call('InsertTable', {
    projectId: 'p',
    datasetId: 'd',
    resourceJson: JSON.stringify({ tableReference: { tableId: 'req' }, schema: { fields: [{ name: 'a', type: 'STRING', mode: 'REQUIRED' }, { name: 'n', type: 'INT64' }] } }),
  });
});
afterAll(async () => {
  await eng.close();
});

const insert = (tableId: string, rows: unknown[], extra: Record<string, unknown> = {}) =>
  eng.client.call<{ insertErrorsJson: string }>('InsertRows', { table: { ...T, tableId }, rowsJson: JSON.stringify(rows), ...extra });
const list = (tableId: string, extra: Record<string, unknown> = {}) =>
  eng.client.call<{ rowsJson: string; totalRows: number; nextIndex: number; schemaJson: string; etag: string }>('ListRows', {
    table: { ...T, tableId },
    maxResults: 100,
    ...extra,
  });

describe('every type round-trips through insertAll and tabledata.list', () => {
  const full = {
    i: '-9223372036854775808',
    f: 1.5,
    n: '12345678901234567890123456789.123456789',
    bn: '-0.00000000000000000000000000000000000001',
    b: true,
    s: 'héllo "q"',
    y: 'AAEC/w==',
    d: '2024-02-29',
    t: '23:59:59.123456',
    dt: '2024-01-01 12:00:00.5',
    ts: '2024-01-01T00:00:00.123456Z',
    iv: '1-2 3 4:5:6.789',
    j: { a: [1, 'x', null], b: { c: true } },
    g: 'POINT(1 2)',
    r: '[2024-01-01, UNBOUNDED)',
    st: { a: 7, arr: ['x', 'y'] },
    rep: [1, '2', 3],
  };
  it('stores and encodes (neutral family)', async () => {
    const r = await insert('all', [{ insertId: 'a', json: full }, { json: { f: 'NaN' } }, { json: { f: '-Infinity', ts: 1704067200, st: null, rep: null } }]);
    expect(r.insertErrorsJson).toBe('');
    const l = await list('all');
    expect(l.totalRows).toBe(3);
    const rows = JSON.parse(l.rowsJson) as { f: { v: unknown }[] }[];
    expect(rows[0]!.f.map((c) => c.v)).toEqual([
      '-9223372036854775808',
      1.5,
      '12345678901234567890123456789.123456789',
      '-0.00000000000000000000000000000000000001',
      true,
      'héllo "q"',
      'AAEC/w==',
      '2024-02-29',
      '23:59:59.123456',
      '2024-01-01T12:00:00.500000',
      '2024-01-01T00:00:00.123456Z',
      '1-2 3 4:5:6.789',
      '{"a":[1,"x",null],"b":{"c":true}}',
      'POINT(1 2)',
      '[2024-01-01, UNBOUNDED)',
      { f: [{ v: '7' }, { v: [{ v: 'x' }, { v: 'y' }] }] },
      [{ v: '1' }, { v: '2' }, { v: '3' }],
    ]);
    // NULLs: scalar null, REPEATED null/missing -> [].
    expect(rows[1]!.f[1]!.v).toBe('NaN');
    expect(rows[1]!.f[0]!.v).toBeNull();
    expect(rows[1]!.f[16]!.v).toEqual([]);
    expect(rows[2]!.f[1]!.v).toBe('-Infinity');
    expect(rows[2]!.f[10]!.v).toBe('2024-01-01T00:00:00Z');
    expect(rows[2]!.f[15]!.v).toBeNull();
    expect(rows[2]!.f[16]!.v).toEqual([]);
  });

  it('timestamp formats and string scalars (real family)', async () => {
    const micros = JSON.parse((await list('all', { timestampFormat: 'TIMESTAMP_INT64_MICROS' })).rowsJson);
    expect(micros[0].f[10].v).toBe('1704067200123456');
    expect(micros[2].f[10].v).toBe('1704067200000000');
    const fl = JSON.parse((await list('all', { timestampFormat: 'TIMESTAMP_FLOAT_SECONDS', stringScalars: true })).rowsJson);
    expect(fl[0].f[10].v).toBe('1.704067200123456E9');
    expect(fl[2].f[10].v).toBe('1.7040672E9');
    expect(fl[0].f[1].v).toBe('1.5');
    expect(fl[0].f[4].v).toBe('true');
  });

  it('insertId de-duplicates', async () => {
    await insert('all', [{ insertId: 'a', json: { i: 99 } }]);
    expect((await list('all')).totalRows).toBe(3);
  });

  it('paging, selected fields, zero maxResults', async () => {
    const p = await list('all', { startIndex: 1, maxResults: 1, selectedFields: 'f,st.a' });
    expect(JSON.parse(p.rowsJson)).toEqual([{ f: [{ v: 'NaN' }, { v: null }] }]);
    expect(p.nextIndex).toBe(2);
    expect(JSON.parse(p.schemaJson).fields.map((f: { name: string }) => f.name)).toEqual(['f', 'st']);
    const z = await list('all', { maxResults: 0 });
    expect(z.rowsJson).toBe('[]');
    expect(z.totalRows).toBe(3);
    expect(z.nextIndex).toBe(-1);
    expect(z.etag).not.toBe('');
    const end = await list('all', { startIndex: 2, maxResults: 5 });
    expect(end.nextIndex).toBe(-1);
  });
  it('replays raw-row WAL records identically after a restart', async () => {
    const before = await list('all', { timestampFormat: 'TIMESTAMP_INT64_MICROS' });
    const dir = eng.dataDir;
    // Close without folding the WAL into parquet, as a crash would leave it.
    eng = await reopenWithoutFlush(dir);
    const after = await list('all', { timestampFormat: 'TIMESTAMP_INT64_MICROS' });
    expect(after.rowsJson).toBe(before.rowsJson);
  });

});

describe('insertErrors', () => {
  it('rejects the whole request without skipInvalidRows; others are stopped', async () => {
    const r = await insert('req', [{ json: { a: 'ok' } }, { json: { a: 'x', n: 'abc' } }, { json: { n: 1 } }]);
    expect(JSON.parse(r.insertErrorsJson)).toEqual([
      { index: 1, errors: [{ reason: 'invalid', location: 'n', debugInfo: '', message: 'Cannot convert value to integer (bad value): abc' }] },
      { index: 2, errors: [{ reason: 'invalid', location: 'a', debugInfo: '', message: 'Missing required field: a.' }] },
      { index: 0, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] },
    ]);
    expect((await list('req')).totalRows).toBe(0);
  });

  it('skipInvalidRows stores the valid rows; unknown keys are dropped with ignoreUnknownValues, else rejected', async () => {
    const strict = await insert('req', [{ json: { a: 'ok', zzz: 1 } }], { skipInvalidRows: true });
    expect(JSON.parse(strict.insertErrorsJson)).toEqual([{ index: 0, errors: [{ reason: 'invalid', location: 'zzz', debugInfo: '', message: 'no such field: zzz.' }] }]);
    const r = await insert('req', [{ json: { a: 'ok', zzz: 1 } }, { json: { a: 'x', n: 'abc' } }], { skipInvalidRows: true, ignoreUnknownValues: true });
    expect(JSON.parse(r.insertErrorsJson).map((e: { index: number }) => e.index)).toEqual([1]);
    const l = await list('req');
    expect(JSON.parse(l.rowsJson)).toEqual([{ f: [{ v: 'ok' }, { v: null }] }]);
  });

  it('bad values of each type are reported', async () => {
    const bad = [{ i: 1.5 }, { f: 'x' }, { n: '1e40' }, { b: 'maybe' }, { y: '!!' }, { d: '2024-02-30' }, { t: '25:00' }, { ts: 'yesterday' }, { j: '{bad' }, { rep: 5 }, { st: 3 }, { i: [1] }];
    const r = await insert('all', bad.map((json) => ({ json })), { skipInvalidRows: true });
    const errs = JSON.parse(r.insertErrorsJson) as { index: number; errors: { location: string }[] }[];
    expect(errs.map((e) => e.index)).toEqual(bad.map((_, i) => i));
    expect(errs.map((e) => e.errors[0]!.location)).toEqual(bad.map((b) => Object.keys(b)[0]));
    const nested = await insert('all', [{ json: { st: { a: 'x' } } }], { skipInvalidRows: true });
    expect(JSON.parse(nested.insertErrorsJson)[0].errors[0].location).toBe('st.a');
  });

  it('404 for a missing table, 400 for listing a view', async () => {
    expect((await eng.client.error('InsertRows', { table: { ...T, tableId: 'nope' }, rowsJson: '[]' })).message).toBe('Not found: Table p:d.nope');
    await eng.client.call('InsertTable', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ tableReference: { tableId: 'v' }, view: { query: 'SELECT 1' } }) });
    expect((await eng.client.error('ListRows', { table: { ...T, tableId: 'v' }, maxResults: 1 })).code).toBe(400);
  });
});
