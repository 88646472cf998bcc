// Storage round-trips: every type through WAL replay and through parquet
// fragments; torn WAL tails; crash windows of compaction; the data-dir lock.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stateBatches } from '../../src/storage/table-state.js';
import { describe, expect, it } from 'vitest';
import { parquetMetadata } from 'hyparquet';
import { encodeFragment, PAGE_CODEC, readFragment } from '../../src/storage/parquet.js';
import { TableData } from '../../src/storage/table-data.js';
import { acquireDirLock, DataDirLockedError } from '../../src/storage/lock.js';
import { encodeRecord, readWalSync } from '../../src/storage/wal.js';
import { restFieldToColumn, type Column } from '../../src/types/schema.js';
import { Decimal, Geography, Interval, JsonValue, RangeValue, type Value } from '../../src/types/values.js';
import { getValue, vectorFromValues, type Batch } from '../../src/types/vector.js';
import { tempDir } from '../engine/helpers.js';

const columns: Column[] = [
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
  { name: 'r', type: 'RANGE', rangeElementType: { type: 'TIMESTAMP' } },
  { name: 'st', type: 'RECORD', fields: [{ name: 'a', type: 'INTEGER' }, { name: 'z', type: 'BYTES', mode: 'REPEATED' }] },
  { name: 'rep', type: 'NUMERIC', mode: 'REPEATED' },
].map((f) => restFieldToColumn(f));

const rowA: Value[] = [
  -9223372036854775808n,
  -0.1,
  new Decimal('-99999999999999999999999999999.999999999'),
  new Decimal('578960446186580977117854925043439539266.34992332820282019728792003956564819967'),
  false,
  'ünïcode \u0000 "x"',
  new Uint8Array([0, 255, 7]),
  -719162,
  86399999999,
  253402300799999999n,
  -62135596800000000n,
  new Interval(-14, 3, -3723000001n),
  new JsonValue({ a: [1, 2.5, 12345678901234567890n, null], 'k"': { t: true } }),
  new Geography(null, 'LINESTRING(0 0, 1 1)'),
  new RangeValue(1704067200000000n, null),
  [5n, [new Uint8Array([1]), new Uint8Array([])]],
  [new Decimal('1.5'), new Decimal('-0.000000001')],
];
const rowB: Value[] = [1n, NaN, null, null, true, '', new Uint8Array(), 0, 0, 0n, 0n, null, new JsonValue('str'), null, new RangeValue(null, 5n), null, []];
const rowC: Value[] = [null, Infinity, null, null, null, null, null, null, null, null, null, null, null, null, null, [null, []], []];

function batchOf(rows: Value[][]): Batch {
  return { length: rows.length, columns: columns.map((c, i) => vectorFromValues(c.type, rows.map((r) => r[i]!))) };
}

function rowsOf(batches: readonly Batch[]): Value[][] {
  const out: Value[][] = [];
  for (const b of batches) for (let r = 0; r < b.length; r++) out.push(b.columns.map((v) => getValue(v, r)));
  return out;
}

/** Comparable form: decimals as strings, bytes as arrays. */
function norm(v: Value): unknown {
  if (v instanceof Decimal) return `dec:${v.toFixed()}`;
  if (v instanceof Uint8Array) return `bytes:${Array.from(v).join(',')}`;
  if (Array.isArray(v)) return v.map(norm);
  if (v instanceof RangeValue) return { range: [norm(v.start), norm(v.end)] };
  // A JSON value read back is its stored text read lazily (JsonText): compared by the value it parses to.
  if (v instanceof JsonValue) return { json: v.node };
  if (typeof v === 'number' && Number.isNaN(v)) return 'NaN';
  return v;
}

describe('TableData', () => {
  it('keeps a writer\'s marks with their rows: through WAL replay, a fold and a truncation', async () => {
    const dir = tempDir();
    const cols: Column[] = [restFieldToColumn({ name: 'i', type: 'INT64' })];
    const rows = (...v: number[]): Batch => ({ length: v.length, columns: [vectorFromValues(cols[0]!.type, v.map(BigInt))] });
    const td = new TableData(dir, 't', cols);
    await td.load();
    await td.append(rows(1, 2), undefined, ['s1', 2]);
    await td.append(rows(3), undefined, ['s1', 3]);
    await td.append(rows(4), undefined, ['s2', 1]);
    expect([td.markOf('s1'), td.markOf('s2'), td.markOf('s3')]).toEqual([3, 1, undefined]);
    await td.close();
    const td2 = new TableData(dir, 't', cols);
    await td2.load();
    expect([td2.markOf('s1'), td2.markOf('s2')]).toEqual([3, 1]);
    await td2.compact();
    await td2.append(rows(5), undefined, ['s2', 2]);
    await td2.close();
    const td3 = new TableData(dir, 't', cols);
    await td3.load();
    expect([td3.markOf('s1'), td3.markOf('s2')]).toEqual([3, 2]);
    // A truncation removes rows, not what a stream has written: its offsets stay taken.
    await td3.replace([]);
    await td3.close();
    const td4 = new TableData(dir, 't', cols);
    await td4.load();
    expect([td4.markOf('s1'), td4.markOf('s2'), td4.rowCountSync()]).toEqual([3, 2, 0]);
    await td4.close();
  });

  it('round-trips every type through the WAL and through parquet', async () => {
    const dir = tempDir();
    const td = new TableData(dir, 't', columns);
    await td.load();
    await td.append(batchOf([rowA, rowB]));
    await td.append(batchOf([rowC]));
    const expected = [rowA, rowB, rowC].map((r) => r.map(norm));
    expect(rowsOf(await stateBatches(td.state())).map((r) => r.map(norm))).toEqual(expected);
    await td.close();

    // Replay from the WAL only.
    const td2 = new TableData(dir, 't', columns);
    expect(td2.rowCountSync()).toBe(3);
    await td2.load();
    expect(rowsOf(await stateBatches(td2.state())).map((r) => r.map(norm))).toEqual(expected);
    await td2.compact();
    expect(fs.statSync(path.join(dir, 't.wal')).size).toBe(0);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.parquet'))).toHaveLength(1);
    await td2.close();

    // From the parquet fragment.
    const td3 = new TableData(dir, 't', columns);
    await td3.load();
    expect(rowsOf(await stateBatches(td3.state())).map((r) => r.map(norm))).toEqual(expected);
    await td3.close();

    // Pages are written uncompressed; a fragment an earlier version wrote with
    // SNAPPY pages (same rows and metadata) still reads back the same.
    const file = path.join(dir, fs.readdirSync(dir).find((n) => n.endsWith('.parquet'))!);
    const written = await readFragment(file, columns);
    const codecs = (img: Uint8Array) => parquetMetadata(img.buffer.slice(img.byteOffset, img.byteOffset + img.byteLength) as ArrayBuffer).row_groups.flatMap((g) => g.columns.map((c) => c.meta_data?.codec));
    expect(new Set(codecs(fs.readFileSync(file)))).toEqual(new Set([PAGE_CODEC]));
    const snappy = await encodeFragment(columns, [written.batch], written.meta, 'SNAPPY');
    expect(new Set(codecs(snappy))).toEqual(new Set(['SNAPPY']));
    fs.writeFileSync(file, snappy);
    const td4 = new TableData(dir, 't', columns);
    await td4.load();
    expect(rowsOf(await stateBatches(td4.state())).map((r) => r.map(norm))).toEqual(expected);
    await td4.close();
  });

  it('discards a torn WAL tail and keeps appending after it', async () => {
    const dir = tempDir();
    const cols = [restFieldToColumn({ name: 'x', type: 'INT64' })];
    const td = new TableData(dir, 't', cols);
    await td.load();
    for (let i = 0; i < 3; i++) await td.append({ length: 1, columns: [vectorFromValues(cols[0]!.type, [BigInt(i)])] });
    await td.close();
    const wal = path.join(dir, 't.wal');
    const full = fs.readFileSync(wal);
    // Torn tail: half of a fourth record, then a corrupted copy of a record.
    const rec = encodeRecord(4, 1, JSON.stringify({ n: ['x'], c: [[42]] }));
    fs.appendFileSync(wal, rec.subarray(0, rec.length - 3));
    expect(readWalSync(wal).records).toHaveLength(3);
    const td2 = new TableData(dir, 't', cols);
    await td2.load();
    expect(td2.rowCount).toBe(3);
    await td2.append({ length: 1, columns: [vectorFromValues(cols[0]!.type, [7n])] });
    await td2.close();
    expect(fs.statSync(wal).size).toBeGreaterThan(full.length);
    const td3 = new TableData(dir, 't', cols);
    await td3.load();
    expect(rowsOf(await stateBatches(td3.state())).map((r) => r[0])).toEqual([0n, 1n, 2n, 7n]);
    // A flipped byte inside the last record is a checksum failure: cut there.
    await td3.close();
    const buf = fs.readFileSync(wal);
    buf[buf.length - 2] ^= 0xff;
    fs.writeFileSync(wal, buf);
    const td4 = new TableData(dir, 't', cols);
    await td4.load();
    expect(td4.rowCount).toBe(3);
    await td4.close();
  });

  it('survives the compaction crash windows (orphan fragment, stale WAL)', async () => {
    const dir = tempDir();
    const cols = [restFieldToColumn({ name: 'x', type: 'INT64' })];
    const td = new TableData(dir, 't', cols);
    await td.load();
    for (let i = 0; i < 5; i++) await td.append({ length: 1, columns: [vectorFromValues(cols[0]!.type, [BigInt(i)])] });
    const walBefore = fs.readFileSync(path.join(dir, 't.wal'));
    await td.compact();
    await td.close();
    // Crash after the sidecar commit but before the WAL truncation: records are already in the fragment.
    fs.writeFileSync(path.join(dir, 't.wal'), walBefore);
    // And an orphan fragment + temp file from an interrupted later compaction.
    fs.writeFileSync(path.join(dir, 't@999999999999-zz.parquet'), 'garbage');
    fs.writeFileSync(path.join(dir, 't.123.frag.tmp'), 'garbage');
    fs.writeFileSync(path.join(dir, 't@999999999999-zz.parquet.123.1.tmp'), 'garbage');
    const td2 = new TableData(dir, 't', cols);
    await td2.load();
    expect(rowsOf(await stateBatches(td2.state())).map((r) => r[0])).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(fs.readdirSync(dir).filter((n) => n.includes('999999999999') || n.endsWith('.tmp'))).toEqual([]);
    // New appends continue after the highest LSN, never colliding with folded ones.
    await td2.append({ length: 1, columns: [vectorFromValues(cols[0]!.type, [5n])] });
    await td2.close();
    const td3 = new TableData(dir, 't', cols);
    await td3.load();
    expect(rowsOf(await stateBatches(td3.state())).map((r) => r[0])).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
    await td3.close();
  });

  it('keeps taking appends while a fold encodes; those stay in the log, and a crash at any point loses none', async () => {
    const dir = tempDir();
    const cols = [restFieldToColumn({ name: 'x', type: 'INT64' })];
    const walFile = path.join(dir, 't.wal');
    // Rows kept as request bytes (read back from the log), as insertAll stores them.
    const make = (bytes: Buffer) => ({ length: 1, columns: [vectorFromValues(cols[0]!.type, [BigInt(JSON.parse(bytes.toString('utf8'))[0].json.x)])] });
    const append = (x: number) => td.appendRequestRows(Buffer.from(`[{"json":{"x":${x}}}]`), 1, make);
    const td = new TableData(dir, 't', cols);
    await td.load();
    for (let x = 0; x < 2000; x++) await append(x);
    let done = false;
    const folding = td.compact().then(() => {
      done = true;
    });
    // Appends go on while the fold encodes (outside the gate); a copy of the
    // log as it was is what a crash before the fold's end would leave.
    let next = 2000;
    let walBefore = fs.readFileSync(walFile);
    while (!done) {
      await append(next++);
      if (!done) walBefore = fs.readFileSync(walFile);
      // Appends come from sockets: the event loop turns between them (and the encoder's answer arrives).
      await new Promise((r) => setImmediate(r));
    }
    await folding;
    const tail = readWalSync(walFile).records;
    expect(tail.length).toBeGreaterThan(0);
    expect(tail.length).toBeLessThan(next - 2000 + 1);
    const all = Array.from({ length: next }, (_, i) => BigInt(i));
    expect(rowsOf(await stateBatches(td.state())).map((r) => r[0])).toEqual(all);
    await append(next);
    await td.close();
    const td2 = new TableData(dir, 't', cols);
    await td2.load();
    expect(rowsOf(await stateBatches(td2.state())).map((r) => r[0])).toEqual([...all, BigInt(next)]);
    await td2.close();
    // A crash after the fragment and sidecar were written but before the log
    // was cut: the old log's folded records are skipped, the rest replayed.
    fs.writeFileSync(walFile, walBefore);
    const td3 = new TableData(dir, 't', cols);
    await td3.load();
    const xs = rowsOf(await stateBatches(td3.state())).map((r) => Number(r[0]));
    expect(xs).toEqual(Array.from({ length: xs.length }, (_, i) => i));
    expect(xs.length).toBeGreaterThanOrEqual(next - 1);
    await td3.close();
  });

  it('merges fragments size-tiered and replaces rows atomically', async () => {
    const dir = tempDir();
    const cols = [restFieldToColumn({ name: 'x', type: 'INT64' })];
    const td = new TableData(dir, 't', cols);
    await td.load();
    for (let i = 0; i < 30; i++) {
      await td.append({ length: 2, columns: [vectorFromValues(cols[0]!.type, [BigInt(2 * i), BigInt(2 * i + 1)])] });
      await td.compact();
    }
    const frags = fs.readdirSync(dir).filter((n) => n.endsWith('.parquet'));
    expect(frags.length).toBeLessThanOrEqual(12);
    expect(rowsOf(await stateBatches(td.state())).map((r) => Number(r[0]))).toEqual(Array.from({ length: 60 }, (_, i) => i));
    await td.replace([{ length: 1, columns: [vectorFromValues(cols[0]!.type, [42n])] }]);
    await td.close();
    const td2 = new TableData(dir, 't', cols);
    await td2.load();
    expect(rowsOf(await stateBatches(td2.state())).map((r) => r[0])).toEqual([42n]);
    // The replaced rows' fragments stay for time travel until they leave the window.
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.parquet')).length).toBeGreaterThan(1);
    await td2.close();
    const saved = TableData.retentionMs;
    TableData.retentionMs = 1;
    try {
      await new Promise((r) => setTimeout(r, 5));
      const td3 = new TableData(dir, 't', cols);
      await td3.load();
      expect(rowsOf(await stateBatches(td3.state())).map((r) => r[0])).toEqual([42n]);
      expect(fs.readdirSync(dir).filter((n) => n.endsWith('.parquet'))).toHaveLength(1);
      await td3.close();
    } finally {
      TableData.retentionMs = saved;
    }
  });
});

describe('bulk appends', () => {
  it('go straight to a fragment after the pending WAL rows, in order', async () => {
    const dir = tempDir();
    const cols = [restFieldToColumn({ name: 'x', type: 'INT64' })];
    const td = new TableData(dir, 't', cols);
    await td.load();
    await td.append({ length: 1, columns: [vectorFromValues(cols[0]!.type, [-1n])] });
    const n = 25_000;
    await td.append({ length: n, columns: [vectorFromValues(cols[0]!.type, Array.from({ length: n }, (_, i) => BigInt(i)))] });
    expect(fs.statSync(path.join(dir, 't.wal')).size).toBe(0);
    await td.append({ length: 1, columns: [vectorFromValues(cols[0]!.type, [99999n])] });
    await td.close();
    const td2 = new TableData(dir, 't', cols);
    await td2.load();
    const xs = rowsOf(await stateBatches(td2.state())).map((r) => Number(r[0]));
    expect(xs.length).toBe(n + 2);
    expect(xs[0]).toBe(-1);
    expect(xs[1]).toBe(0);
    expect(xs[n]).toBe(n - 1);
    expect(xs[n + 1]).toBe(99999);
    await td2.close();
  });
});

describe('data dir lock', () => {
  it('refuses a live owner and takes over a stale one', () => {
    const dir = tempDir();
    const l = acquireDirLock(dir);
    // A lock file naming a live foreign pid (our parent) blocks.
    fs.writeFileSync(l.file, `${process.ppid}\n`);
    expect(() => acquireDirLock(dir, 0)).toThrow(DataDirLockedError);
    // A dead pid is stale.
    fs.writeFileSync(l.file, '999999999\n');
    const l2 = acquireDirLock(dir);
    expect(fs.readFileSync(l2.file, 'utf8').trim().split(' ')[0]).toBe(String(process.pid));
    // A live pid whose start time differs is a reused pid (a lock copied with the dir): stale too.
    fs.writeFileSync(l2.file, `${process.ppid} 1\n`);
    const l3 = acquireDirLock(dir);
    l3.release();
    expect(fs.existsSync(l3.file)).toBe(false);
  });
});
