// Damaged data files through the one reader load jobs (gateway) and LOAD DATA
// (engine) share, and through the engine's readers of load jobs' local files
// (io/load-files.ts): valid CSV, JSON lines, Avro and Parquet files written by
// the emulator's own encoder, and ORC files Apache ORC wrote, then cut,
// flipped, grown or given absurd lengths.
// Every one must parse or be refused with the codecs' error (the service's
// 400), never another exception (a 500) and never a long stall.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IoError } from '../../src/io/errors.js';
import { encodeExport, parseSources } from '../../src/io/formats.js';
import { loadFileChunks } from '../../src/io/load-files.js';
import { PARQUET_DEADLINE } from '../../src/io/parquet.js';
import type { RestField } from '../../src/io/schema.js';
import { restFieldToColumn } from '../../src/types/schema.js';
import { Rng } from './gen.js';

const SEED = Number(process.env.FUZZ_SEED ?? 15);
/** Files per format (Parquet fewer: each decode starts a worker thread, ~40 ms). */
const PER_FORMAT = Number(process.env.FUZZ_FILES ?? 300);
// A Parquet file that makes the decoder loop is ended at its deadline: a short one here.
PARQUET_DEADLINE.baseMs = 1500;

const FIELDS: RestField[] = [
  { name: 'a', type: 'INTEGER', mode: 'NULLABLE' },
  { name: 'b', type: 'STRING', mode: 'NULLABLE' },
  { name: 'c', type: 'FLOAT', mode: 'REPEATED' },
  { name: 'd', type: 'RECORD', mode: 'NULLABLE', fields: [{ name: 'e', type: 'BOOLEAN', mode: 'NULLABLE' }, { name: 'f', type: 'TIMESTAMP', mode: 'NULLABLE' }] },
  { name: 'g', type: 'NUMERIC', mode: 'NULLABLE' },
];
const ROWS = Array.from({ length: 20 }, (_, i) => ({ a: String(i), b: i % 3 ? `s${i} "q", é` : null, c: [i / 2, -i], d: { e: i % 2 === 0, f: '2020-01-01T00:00:00Z' }, g: `${i}.5` }));

/** A damaged copy of `file`. */
function damage(r: Rng, file: Buffer): Buffer {
  const b = Buffer.from(file);
  switch (r.int(6)) {
    case 0:
      return b.subarray(0, r.int(b.length));
    case 1: {
      for (let k = 0; k < 1 + r.int(8); k++) b[r.int(b.length)] = r.int(256);
      return b;
    }
    case 2: {
      // An absurd 32-bit length or count somewhere (Parquet's footer length sits 8 bytes from the end).
      const at = r.chance(0.5) ? Math.max(0, b.length - 8) : r.int(Math.max(1, b.length - 4));
      b.writeUInt32LE(r.pick([0, 1, 0x7fffffff, 0xffffffff, b.length * 2]), Math.min(at, b.length - 4));
      return b;
    }
    case 3: {
      // A varint of the largest values where Avro keeps counts and lengths.
      const at = r.int(b.length - 5);
      Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f]).copy(b, at);
      return b;
    }
    case 4: {
      const at = r.int(b.length);
      return Buffer.concat([b.subarray(0, at), Buffer.from(Array.from({ length: 1 + r.int(64) }, () => r.int(256))), b.subarray(at)]);
    }
    default:
      return Buffer.concat([b, b.subarray(0, r.int(b.length))]);
  }
}

describe('damaged data files', () => {
  for (const format of ['CSV', 'NEWLINE_DELIMITED_JSON', 'AVRO', 'PARQUET'] as const) {
    it(`${format}: every damaged file parses or is refused with the service's error`, async () => {
      const csvFields = FIELDS.filter((f) => f.mode !== 'REPEATED' && f.type !== 'RECORD');
      const fields = format === 'CSV' ? csvFields : FIELDS;
      const rows = format === 'CSV' ? ROWS.map(({ a, b, g }) => ({ a, b, g })) : ROWS;
      const valid = await encodeExport(fields, rows, { format, fieldDelimiter: ',', header: true, compression: 'NONE', useAvroLogicalTypes: false });
      expect((await parseSources([{ uri: 'file:///ok', data: valid }], format, { skipLeadingRows: format === 'CSV' ? 1 : 0 } as never, fields, false)).rows).toHaveLength(20);
      const r = new Rng(SEED + format.length);
      const failures: string[] = [];
      let slowest = 0;
      for (let i = 0; i < (format === 'PARQUET' ? PER_FORMAT / 3 : PER_FORMAT); i++) {
        const data = damage(r, valid);
        const t0 = performance.now();
        try {
          await parseSources([{ uri: `file:///f${i}`, data }], format, {} as never, r.chance(0.5) ? fields : undefined, r.chance(0.3));
        } catch (e) {
          if (!(e instanceof IoError)) failures.push(`#${i}: ${(e as Error)?.constructor?.name}: ${(e as Error)?.message} (${data.subarray(0, 40).toString('hex')}...)`);
        }
        slowest = Math.max(slowest, performance.now() - t0);
      }
      expect(failures.slice(0, 10)).toEqual([]);
      // No file this small may keep a reader busy: Avro and Parquet once stalled for minutes.
      expect(slowest).toBeLessThan(5000);
    }, 120_000);
  }
});

describe('damaged ORC files', () => {
  // The emulator writes no ORC: the valid files are ones Apache ORC wrote (test/fixtures/orc).
  for (const name of ['TestOrcFile.test1.orc', 'TestOrcFile.testUnionAndTimestamp.orc', 'TestVectorOrcFile.testLz4.orc']) {
    it(`${name}: every damaged copy parses or is refused with the service's error`, async () => {
      const valid = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'orc', name));
      const r = new Rng(SEED + name.length);
      const failures: string[] = [];
      let slowest = 0;
      for (let i = 0; i < PER_FORMAT / 3; i++) {
        const data = damage(r, valid);
        const t0 = performance.now();
        try {
          await parseSources([{ uri: `file:///f${i}`, data }], 'ORC', {} as never, undefined, false);
        } catch (e) {
          if (!(e instanceof IoError)) failures.push(`#${i}: ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
        }
        slowest = Math.max(slowest, performance.now() - t0);
      }
      expect(failures.slice(0, 10)).toEqual([]);
      expect(slowest).toBeLessThan(5000);
    }, 120_000);
  }
});

describe('damaged load files read by the engine (io/load-files.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fuzz-load-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const format of ['CSV', 'NEWLINE_DELIMITED_JSON', 'PARQUET'] as const) {
    it(`${format}: every damaged file is read or refused with the service's error`, async () => {
      const csvFields = FIELDS.filter((f) => f.mode !== 'REPEATED' && f.type !== 'RECORD');
      const fields = format === 'CSV' ? csvFields : FIELDS;
      const rows = format === 'CSV' ? ROWS.map(({ a, b, g }) => ({ a, b, g })) : ROWS;
      const columns = fields.map(restFieldToColumn);
      const valid = await encodeExport(fields, rows, { format, fieldDelimiter: ',', header: true, compression: 'NONE', useAvroLogicalTypes: false });
      const r = new Rng(SEED * 7 + format.length);
      const failures: string[] = [];
      let slowest = 0;
      // Parquet fewer: each file starts a decoder worker.
      for (let i = 0; i < (format === 'PARQUET' ? PER_FORMAT / 6 : PER_FORMAT); i++) {
        const data = i === 0 ? valid : damage(r, valid);
        const path = join(dir, `f${i}`);
        writeFileSync(path, data);
        const t0 = performance.now();
        let read = 0;
        try {
          for await (const ch of loadFileChunks({ path, uri: `file://${path}` }, format, { skipLeadingRows: 1 }, format === 'CSV' ? csvFields : undefined, columns)) read += ch.records;
          if (i === 0) expect(read).toBe(20);
        } catch (e) {
          if (!(e instanceof IoError)) failures.push(`#${i}: ${(e as Error)?.constructor?.name}: ${(e as Error)?.message} (${data.subarray(0, 40).toString('hex')}...)`);
        }
        slowest = Math.max(slowest, performance.now() - t0);
      }
      expect(failures.slice(0, 10)).toEqual([]);
      expect(slowest).toBeLessThan(5000);
    }, 120_000);
  }
});
