// Local load files read by the engine straight into columns (src/io/load-files.ts,
// csv-bytes.ts) against the reference path they replace: the file parsed into
// insertAll rows (csvRows / jsonRows / parquetRows, the gateway's readers)
// and those rows converted as insertAll converts them (convertRows). Every
// kept value, every rejected row's index and error, for files of many shapes
// (quotes, escapes, line ends, blank lines, a BOM, unicode, gzip, NULL
// markers, bad values), whatever the buffer boundaries.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { CsvParser, csvRows, type CsvCell } from '../../src/io/csv.js';
import { CsvCells, C_NULL, scanCsv } from '../../src/io/csv-bytes.js';
import { jsonRows } from '../../src/io/json.js';
import { loadFileChunks, loadSchema, type LoadFile } from '../../src/io/load-files.js';
import { parquetRows, writeParquet } from '../../src/io/parquet.js';
import type { ReadOptions, RestField } from '../../src/io/schema.js';
import { scanNdjson } from '../../src/storage/insert-scan.js';
import { convertRows, keptBatch, type InsertError } from '../../src/storage/json-rows.js';
import { restFieldToColumn, type Column } from '../../src/types/schema.js';
import { getValue, type Batch } from '../../src/types/vector.js';

const dir = mkdtempSync(path.join(tmpdir(), 'load-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
function file(data: string | Buffer, name = `f${seq++}`): LoadFile {
  const p = path.join(dir, name);
  writeFileSync(p, data);
  return { path: p, uri: `file://${p}` };
}

/** A deterministic pseudo-random generator. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Every row of batches as values (NULLs as null). */
function values(batches: readonly Batch[]): unknown[][] {
  const out: unknown[][] = [];
  for (const b of batches) for (let r = 0; r < b.length; r++) out.push(b.columns.map((v) => getValue(v, r)));
  return out;
}

/** The engine path: every chunk's kept rows and its errors with absolute indexes. */
async function engineRead(f: LoadFile, format: string, opts: ReadOptions, fields: RestField[] | undefined, columns: Column[]): Promise<{ rows: unknown[][]; errors: InsertError[] }> {
  const batches: Batch[] = [];
  const errors: InsertError[] = [];
  let at = 0;
  for await (const ch of loadFileChunks(f, format, opts, fields, columns)) {
    batches.push(ch.batch);
    for (const e of ch.errors) errors.push({ ...e, index: e.index + at });
    at += ch.records;
  }
  return { rows: values(batches), errors };
}

/** The reference: insertAll-shaped rows converted by convertRows. */
function reference(rows: readonly Record<string, unknown>[], columns: Column[]): { rows: unknown[][]; errors: InsertError[] } {
  const conv = convertRows(rows.map((json) => ({ json })), columns, { has: () => false });
  return { rows: values([keptBatch(conv)]), errors: conv.errors };
}

const CELLS = ['', '""', 'plain', '"quoted"', '"with ""escaped"" quotes"', '"comma, inside"', '"line\nbreak"', '"cr\r\nlf"', '"after"quote', 'mid"quote', 'é ü 日本', '"🎉"', ' spaced ', '12', '-7', '1.5', '1e3', 'true', 'FALSE', '2024-02-29', '2024-02-29 12:34:56.123456', '2024-02-30', 'NaN', 'x'];

describe('CSV bytes scanner', () => {
  it('finds the records CsvParser finds, cell for cell, whatever the buffer boundaries', () => {
    const r = rng(7);
    for (let trial = 0; trial < 300; trial++) {
      const lines: string[] = [];
      const nLines = 1 + Math.floor(r() * 12);
      for (let l = 0; l < nLines; l++) {
        const n = Math.floor(r() * 5);
        lines.push(Array.from({ length: n }, () => CELLS[Math.floor(r() * CELLS.length)]!).join(','));
      }
      const ends = ['\n', '\r\n', '\r'];
      let text = lines.map((l) => l + ends[Math.floor(r() * 3)]).join('');
      if (r() < 0.3) text = text.replace(/[\r\n]+$/, '');
      if (r() < 0.1) text += '"unclosed, "" quote';
      const expected: CsvCell[][] = [];
      const p = new CsvParser(',', '"', (rec) => expected.push(rec));
      p.push(text, true);
      const bytes = Buffer.from(text);
      // Scanned in pieces: what a piece leaves incomplete starts the next one.
      const got: CsvCell[][] = [];
      const cells = new CsvCells();
      let carry = Buffer.alloc(0);
      for (let at = 0; at <= bytes.length; ) {
        const step = 1 + Math.floor(r() * 9);
        const last = at + step >= bytes.length;
        const b = Buffer.concat([carry, bytes.subarray(at, at + step)]);
        const end = scanCsv(b as Parameters<typeof scanCsv>[0], 0, last, 0x2c, 0x22, cells);
        for (let rec = 0; rec < cells.records; rec++) {
          const row: CsvCell[] = [];
          for (let i = cells.first[rec]!; i < cells.first[rec + 1]!; i++) row.push(cells.kind[i] === C_NULL ? null : cells.text(i)!);
          got.push(row);
        }
        carry = b.subarray(end);
        at += step;
        if (last) break;
      }
      expect(got, JSON.stringify(text)).toEqual(expected);
    }
  });
});

const CSV_FIELDS: RestField[] = [
  { name: 'id', type: 'INTEGER' },
  { name: 'name', type: 'STRING' },
  { name: 'score', type: 'FLOAT' },
  { name: 'ok', type: 'BOOLEAN' },
  { name: 'day', type: 'DATE' },
  { name: 'at', type: 'TIMESTAMP' },
  { name: 'amount', type: 'NUMERIC' },
  { name: 'req', type: 'STRING', mode: 'REQUIRED' },
];

function csvText(n: number, seed: number): string {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const lines = ['id,name,score,ok,day,at,amount,req'];
  for (let i = 0; i < n; i++) {
    lines.push([
      pick([String(i), String(-i), '', ' 5', '+3', '99999999999999999', 'abc', '1.0']),
      pick(['', '""', `name ${i}`, `"quoted, ${i}"`, '"esc ""q"""', 'ü日本', 'NULL']),
      pick([String(i / 7), '1.5', '-0', '1e300', '.5', '5.', 'NaN', ' 2.5', 'x', '0.1234567890123456789']),
      pick(['true', 'false', 'TRUE', '1', '0', 'yes', '']),
      pick(['2024-02-29', '2023-02-29', '0001-01-01', '9999-12-31', '2024-1-5', '']),
      pick(['2024-02-29 12:34:56', '2024-02-29T12:34:56.123456Z', '2024-02-29 12:34:56 UTC', '1700-01-01 00:00:00', 'bad', '']),
      pick(['1.5', '-12345678901234567890123456789.123456789', '1e2', '0.0000000001', '', 'x']),
      pick(['r', '', '""', 'NULL']),
    ].join(','));
  }
  return lines.join(pick(['\n', '\r\n'])) + '\n';
}

describe('CSV load files', () => {
  const columns = CSV_FIELDS.map(restFieldToColumn);
  for (const [label, opts] of [
    ['plain', { skipLeadingRows: 1 }],
    ['NULL markers', { skipLeadingRows: 1, nullMarkers: ['NULL', ''] }],
    ['a two-character delimiter (the string parser)', { skipLeadingRows: 1, fieldDelimiter: '||' }],
  ] as const) {
    it(`converts as csvRows + insertAll would: ${label}`, async () => {
      let text = csvText(3000, label.length);
      if (opts.fieldDelimiter) text = text.replaceAll(',', '||');
      const f = file(text);
      const want = reference(csvRows([{ uri: f.uri, data: Buffer.from(text) }], opts, CSV_FIELDS, false).rows, columns);
      const got = await engineRead(f, 'CSV', opts, CSV_FIELDS, columns);
      expect(got.errors.length).toBeGreaterThan(0);
      expect(got.errors).toEqual(want.errors);
      expect(got.rows).toEqual(want.rows);
    });
  }

  it('reads gzip, a BOM, and fields matched to the table by name, case-insensitively', async () => {
    const text = '\ufeffID,Name\n1,a\n2,"b"\n';
    const f = file(gzipSync(Buffer.from(text)));
    const table = [{ name: 'name', type: 'STRING' }, { name: 'extra', type: 'STRING' }, { name: 'id', type: 'INTEGER' }].map(restFieldToColumn);
    const fields: RestField[] = [{ name: 'ID', type: 'INTEGER' }, { name: 'Name', type: 'STRING' }];
    const got = await engineRead(f, 'CSV', { skipLeadingRows: 1 }, fields, table);
    expect(got).toEqual({ rows: [['a', null, 1n], ['b', null, 2n]], errors: [] });
  });

  it('autodetects the header and types from the first records', async () => {
    const f = file('a,b,c\n1,x,2024-01-01\n2,y,2024-01-02\n');
    expect(await loadSchema([f], 'CSV', {}, undefined, true)).toEqual({
      fields: [{ name: 'a', type: 'INTEGER', mode: 'NULLABLE' }, { name: 'b', type: 'STRING', mode: 'NULLABLE' }, { name: 'c', type: 'DATE', mode: 'NULLABLE' }],
      skipLeadingRows: 1,
    });
  });
});

describe('newline-delimited JSON load files', () => {
  const fields: RestField[] = [
    { name: 'id', type: 'INTEGER' },
    { name: 'name', type: 'STRING' },
    { name: 'tags', type: 'STRING', mode: 'REPEATED' },
    { name: 'rec', type: 'RECORD', fields: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'TIMESTAMP' }] },
    { name: 'at', type: 'TIMESTAMP' },
    { name: 'f', type: 'FLOAT' },
  ];
  const columns = fields.map(restFieldToColumn);

  it('converts as jsonRows + insertAll would, blank lines and CRLF included', async () => {
    const r = rng(3);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const o: Record<string, unknown> = {};
      if (r() < 0.9) o[pick(['id', 'ID', 'Id'])] = pick([i, String(i), 'x', 1.5, null, 9007199254740993]);
      if (r() < 0.9) o['name'] = pick(['n', 'ü "q" \\ 日本', 5, true, null]);
      if (r() < 0.5) o['tags'] = pick([['a', 'b'], [], null, 'x', [null]]);
      if (r() < 0.5) o['rec'] = pick([{ a: 1, b: '2024-01-01 00:00:00' }, { A: '2' }, 'x', null]);
      if (r() < 0.5) o['at'] = pick(['2024-02-29T12:34:56Z', 1700000000, 'bad', '2024-02-29 12:34:56.123456']);
      if (r() < 0.5) o['f'] = pick([1.5, '2.5', 'NaN', 'Infinity', 'x']);
      if (r() < 0.1) o['unknown'] = 1;
      lines.push(JSON.stringify(o));
      if (r() < 0.05) lines.push('');
    }
    const text = lines.join(pick(['\n', '\r\n']));
    const f = file(text);
    const want = reference(jsonRows([{ uri: f.uri, data: Buffer.from(text) }], fields, false).rows, columns);
    const got = await engineRead(f, 'NEWLINE_DELIMITED_JSON', {}, undefined, columns);
    expect(got.errors.length).toBeGreaterThan(0);
    expect(got.errors).toEqual(want.errors);
    expect(got.rows).toEqual(want.rows);
  });

  it('lines with the schema\'s own keys are scanned as bytes (scanNdjson), with the values and errors of the reference', async () => {
    const r = rng(5);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const o: Record<string, unknown> = {};
      if (r() < 0.9) o['id'] = pick([i, -i, String(i), 1.5, null, 9007199254740993, 'x', 1e21]);
      if (r() < 0.9) o['name'] = pick([`n${i}`, 'ü "q" \\ 日本', 'a long enough plain string', 5, true, null]);
      if (r() < 0.5) o['tags'] = pick([['a', 'b'], [], null, 'x']);
      if (r() < 0.5) o['rec'] = pick([{ a: 1, b: '2024-01-01 00:00:00' }, { a: 'x' }, null]);
      if (r() < 0.8) o['at'] = pick(['2024-02-29T12:34:56Z', '2024-02-29 12:34:56.123456', 1700000000, 'bad']);
      if (r() < 0.8) o['f'] = pick([1.5, i / 7, 1e300, -0.25, '2.5', 'NaN', 'x']);
      if (r() < 0.05) o['unknown'] = { deep: [1, 2] };
      lines.push((r() < 0.1 ? ' ' : '') + JSON.stringify(o) + (r() < 0.1 ? ' \t' : ''));
      if (r() < 0.05) lines.push(pick(['', ' ', '\r']));
    }
    const text = lines.join(pick(['\n', '\r\n'])) + '\n';
    expect(scanNdjson(Buffer.from(text), columns)).not.toBeNull();
    const f = file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]));
    const want = reference(jsonRows([{ uri: f.uri, data: Buffer.from(text) }], fields, false).rows, columns);
    const got = await engineRead(f, 'NEWLINE_DELIMITED_JSON', {}, undefined, columns);
    expect(got.errors.length).toBeGreaterThan(0);
    expect(got.errors).toEqual(want.errors);
    expect(got.rows).toEqual(want.rows);
    // A line holding two objects, or an object over two lines, is left to the line parser (which fails the load).
    for (const bad of ['{"id":1} {"id":2}\n', '{"id":\n1}\n']) expect(scanNdjson(Buffer.from(bad), columns)).toBeNull();
  });

  it('a line that is not JSON stops the load with its position and file', async () => {
    const f = file('{"id":1}\n\n{"id":\n');
    await expect(engineRead(f, 'NEWLINE_DELIMITED_JSON', {}, undefined, columns)).rejects.toThrow(/JSON parsing error in row starting at position 2: .* File: file:/);
  });
});

describe('Parquet load files', () => {
  const fields: RestField[] = [
    { name: 'id', type: 'INTEGER' },
    { name: 'name', type: 'STRING' },
    { name: 'f', type: 'FLOAT' },
    { name: 'ok', type: 'BOOLEAN' },
    { name: 'day', type: 'DATE' },
    { name: 'at', type: 'TIMESTAMP' },
    { name: 'dt', type: 'DATETIME' },
    { name: 't', type: 'TIME' },
    { name: 'n', type: 'NUMERIC' },
    { name: 'by', type: 'BYTES' },
    { name: 'tags', type: 'STRING', mode: 'REPEATED' },
    { name: 'rec', type: 'RECORD', fields: [{ name: 'a', type: 'INTEGER' }, { name: 'when', type: 'TIMESTAMP' }] },
  ];
  const rows = Array.from({ length: 2500 }, (_, i) => ({
    id: i % 11 === 0 ? null : String(i * (i % 2 ? 1 : -1) * 1_000_003),
    name: i % 7 === 0 ? null : `name ${i} ü`,
    f: i % 5 === 0 ? null : i / 7,
    ok: i % 3 === 0 ? null : i % 2 === 0,
    day: i % 13 === 0 ? null : `2024-${String((i % 12) + 1).padStart(2, '0')}-15`,
    at: i % 9 === 0 ? null : `2024-02-29T12:34:56.${String(i).padStart(6, '0')}Z`,
    dt: `2024-02-29T01:02:03.${String(i).padStart(6, '0')}`,
    t: `12:34:${String(i % 60).padStart(2, '0')}.5`,
    n: i % 4 === 0 ? null : `${i}.125`,
    by: Buffer.from([i & 255, 1]).toString('base64'),
    tags: i % 6 === 0 ? [] : ['a', `t${i}`],
    rec: i % 8 === 0 ? null : { a: String(i), when: '2024-01-01T00:00:00Z' },
  }));

  it('converts as parquetRows + insertAll would, into a table of the same and of other types', async () => {
    const data = await writeParquet(fields, rows);
    const f = file(data);
    // The same types, and a table whose columns take other types (the insertAll conversions decide).
    const other = fields.map((fd) => (fd.name === 'id' ? { ...fd, type: 'STRING' } : fd.name === 'day' ? { ...fd, type: 'STRING' } : fd.name === 'f' ? { ...fd, type: 'NUMERIC' } : fd));
    for (const table of [fields, [...other].reverse(), [{ name: 'ID', type: 'INTEGER', mode: 'REQUIRED' }, { name: 'missing', type: 'STRING' }]]) {
      const columns = table.map(restFieldToColumn);
      const want = reference((await parquetRows([{ uri: f.uri, data }], undefined)).rows, columns);
      const got = await engineRead(f, 'PARQUET', {}, undefined, columns);
      expect(got.errors).toEqual(want.errors);
      expect(got.rows).toEqual(want.rows);
    }
  });

  it('columns of many pages, with and without NULLs, dictionary-encoded or not, over several row groups', async () => {
    const { parquetWriteBuffer } = await import('hyparquet-writer');
    const n = 5000;
    // NULLs only in some pages of `maybe`; `word` repeats (dictionary pages); `x` has none.
    const columnData = [
      { name: 'x', type: 'INT64' as const, data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 3_000_000_007n) },
      { name: 'maybe', type: 'DOUBLE' as const, nullable: true, data: Array.from({ length: n }, (_, i) => (i % 1000 < 300 && i % 7 === 0 ? null : i / 4)) },
      { name: 'word', type: 'STRING' as const, nullable: true, data: Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : `w${i % 13}`)) },
      { name: 'flag', type: 'BOOLEAN' as const, data: Array.from({ length: n }, (_, i) => i % 3 === 0) },
    ];
    const data = Buffer.from(parquetWriteBuffer({ columnData, pageSize: 2048, rowGroupSize: 1800 }));
    const f = file(data);
    const columns = [{ name: 'x', type: 'INTEGER' }, { name: 'maybe', type: 'FLOAT' }, { name: 'word', type: 'STRING' }, { name: 'flag', type: 'BOOLEAN' }].map(restFieldToColumn);
    const want = reference((await parquetRows([{ uri: f.uri, data }], undefined)).rows, columns);
    const got = await engineRead(f, 'PARQUET', {}, undefined, columns);
    expect(got.rows).toHaveLength(n);
    expect(got).toEqual(want);
  });

  it('an upload byte range and the schema from the footer; a file that is not Parquet is an error', async () => {
    const data = await writeParquet(fields.slice(0, 2), rows.slice(0, 10));
    const spooled = file(Buffer.concat([Buffer.from('--boundary\r\n\r\n'), data, Buffer.from('\r\n--boundary--')]));
    const range: LoadFile = { ...spooled, start: 14, end: 14 + data.length };
    expect((await loadSchema([range], 'PARQUET', {}, undefined, false)).fields.map((f) => [f.name, f.type])).toEqual([['id', 'INTEGER'], ['name', 'STRING']]);
    const got = await engineRead(range, 'PARQUET', {}, undefined, fields.slice(0, 2).map(restFieldToColumn));
    expect(got.rows).toHaveLength(10);
    await expect(engineRead(file('not parquet at all'), 'PARQUET', {}, undefined, [])).rejects.toThrow(/not a readable Parquet file/);
  });
});
