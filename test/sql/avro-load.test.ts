// Avro files written by another writer (avsc here, as any Avro producer would):
// LOAD DATA maps maps, enums, fixed, nullable unions, nested and repeated
// records and logical types the way the real service does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnToRestField } from '../../src/types/schema.js';
import { errorMessage, openHarness, rowsOf, run, schemaText, setupDataset, type Harness } from './harness.js';

let h: Harness;
let dir: string;
let n = 0;
beforeAll(async () => {
  h = await openHarness();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'avro-load-'));
});
afterAll(async () => {
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function writeAvro(name: string, schema: object, records: object[]): Promise<string> {
  const file = path.join(dir, name);
  // The schema object (not a Type) so the header keeps logicalType attributes verbatim.
  const enc = avro.createFileEncoder(file, schema as avro.Schema);
  const done = new Promise((r) => enc.on('finish', r));
  for (const r of records) enc.write(r);
  enc.end();
  await done;
  await new Promise((r) => setTimeout(r, 50)); // the file stream flushes after the encoder finishes
  return file;
}

/** Loads `file` into a new table; returns the table's schema (with modes) and the rows of `select`. */
async function load(file: string, logical: boolean, select = 'SELECT * FROM t', columns?: string[]): Promise<{ schema: string; rows: unknown[] }> {
  const projectId = `pav${++n}`;
  await setupDataset(h, projectId, 'ds');
  const opts = { projectId, defaultDataset: { projectId, datasetId: 'ds' } };
  await run(h, `LOAD DATA INTO t FROM FILES (format = 'AVRO', uris = ['file://${file}'], enable_logical_types = ${logical})`, opts);
  const info = h.catalog.getTable({ projectId, datasetId: 'ds', tableId: 't' })!;
  const fields = info.columns.filter((c) => !columns || columns.includes(c.name)).map((c) => columnToRestField(c.name, c.type, c.required));
  return { schema: schemaText(fields), rows: rowsOf(await run(h, select, opts)) };
}

const decimal = (text: string): Buffer => {
  // Unscaled value, two's complement big-endian, 5 bytes (fixed size).
  const b = Buffer.alloc(5);
  let v = BigInt(text);
  if (v < 0n) v += 1n << 40n;
  for (let i = 4; i >= 0; i--) {
    b[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return b;
};

const schema = {
  type: 'record',
  name: 'Row',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'label', type: ['null', 'string'] },
    { name: 'color', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'] } },
    { name: 'tag', type: { type: 'fixed', name: 'Tag', size: 2 } },
    { name: 'attrs', type: { type: 'map', values: 'long' } },
    { name: 'points', type: { type: 'array', items: { type: 'record', name: 'Point', fields: [{ name: 'x', type: 'double' }, { name: 'y', type: 'double' }] } } },
    { name: 'price', type: { type: 'fixed', name: 'Price', size: 5, logicalType: 'decimal', precision: 10, scale: 2 } },
    { name: 'seen', type: ['null', { type: 'long', logicalType: 'local-timestamp-micros' }] },
    { name: 'clock', type: { type: 'int', logicalType: 'time-millis' } },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
  ],
};
const record = {
  id: 7,
  label: null,
  color: 'GREEN',
  tag: Buffer.from([1, 2]),
  attrs: { a: 1 },
  points: [{ x: 1.5, y: -2 }],
  price: decimal('-12345'),
  seen: 1704067200000001,
  clock: 3723004,
  day: 19724,
};

describe('LOAD DATA format AVRO', () => {
  it('maps the Avro type system with logical types on', async () => {
    const file = await writeAvro('all.avro', schema, [record]);
    const got = await load(file, true);
    // Top-level modes follow the Avro schema (non-union fields are REQUIRED); the
    // engine's STRUCT type keeps no per-field mode, so sub-fields read back NULLABLE.
    expect(got.schema).toBe(
      'id INTEGER REQUIRED, label STRING, color STRING REQUIRED, tag BYTES REQUIRED, attrs RECORD(key STRING, value INTEGER) REPEATED, ' +
        'points RECORD(x FLOAT, y FLOAT) REPEATED, price NUMERIC REQUIRED, seen DATETIME, clock TIME REQUIRED, day DATE REQUIRED',
    );
    expect(got.rows).toEqual([['7', null, 'GREEN', 'AQI=', [['a', '1']], [['1.5', '-2.0']], '-123.45', '2024-01-01T00:00:00.000001', '01:02:03.004000', '2024-01-02']]);
  });

  it('keeps the raw INTEGER of logical types when they are off, but decimal stays NUMERIC', async () => {
    const file = await writeAvro('raw.avro', schema, [record]);
    const got = await load(file, false, 'SELECT price, seen, clock, day FROM t', ['price', 'seen', 'clock', 'day']);
    expect(got.schema).toBe('price NUMERIC REQUIRED, seen INTEGER, clock INTEGER REQUIRED, day INTEGER REQUIRED');
    expect(got.rows).toEqual([['-123.45', '1704067200000001', '3723004', '19724']]);
  });

  it('a union of two non-null types is refused', async () => {
    const file = await writeAvro('union.avro', { type: 'record', name: 'U', fields: [{ name: 'v', type: ['null', 'string', 'long'] }] }, [{ v: 'a' }]);
    let message = '';
    try {
      await load(file, true);
    } catch (e) {
      message = errorMessage(e);
    }
    expect(message).toContain('unsupported Avro union for field v');
  });

  it('a file that is not Avro is an error naming it', async () => {
    const file = path.join(dir, 'bad.avro');
    fs.writeFileSync(file, 'not avro at all');
    let message = '';
    try {
      await load(file, true);
    } catch (e) {
      message = errorMessage(e);
    }
    expect(message).toContain(`not a readable Avro file`);
    expect(message).toContain(file);
  });
});
