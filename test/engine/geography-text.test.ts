// GEOGRAPHY columns hold the service's canonical WKT whatever text was
// written (WKT with trailing zeros or extra spaces, GeoJSON, hex WKB): read
// back by tabledata.list, SELECT and after an engine restart (WAL replay),
// for insertAll, LOAD DATA and query parameters. Invalid text is a row error.
// Over HTTP against the real engine.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { canonicalGeographyText } from '../../src/engine/geography-text.js';
import { ValueConversionError } from '../../src/types/json-values.js';

describe('canonicalGeographyText', () => {
  it('prints the canonical WKT of WKT, GeoJSON and hex WKB texts', () => {
    const cases: [string, string][] = [
      ['POINT(1.0 2.0)', 'POINT(1 2)'],
      ['  point ( -122.350 +47.620 ) ', 'POINT(-122.35 47.62)'],
      ['POINT(1e1 .5)', 'POINT(10 0.5)'],
      ['POINT(190 0)', 'POINT(-170 0)'],
      ['{"type": "Point", "coordinates": [1.5, 2.0]}', 'POINT(1.5 2)'],
      ['0101000000000000000000f03f0000000000000040', 'POINT(1 2)'],
      ['MULTIPOINT(1 1, 2 2, 4 4, 5 2)', 'MULTIPOINT(1 1, 2 2, 5 2, 4 4)'],
      ['LINESTRING (0 0, 1.50 1)', 'LINESTRING(0 0, 1.5 1)'],
      ['POINT EMPTY', 'GEOMETRYCOLLECTION EMPTY'],
      // Loaded and streamed WKT/WKB rings keep their orientation, interior on the left (geospatial-data.md, Polygon
      // orientation): a clockwise square is the rest of the Earth, not flipped to the square.
      ['POLYGON((0 0, 0 4, 4 4, 4 0, 0 0))', 'POLYGON((0 0, 0 4, 4 4, 4 0, 0 0))'],
      ['POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))', 'POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))'],
      // The same clockwise ring as hex WKB.
      [
        '010300000001000000050000000000000000000000000000000000000000000000000000000000000000001040000000000000104000000000000010400000000000001040000000000000000000000000000000000000000000000000',
        'POLYGON((0 0, 0 4, 4 4, 4 0, 0 0))',
      ],
    ];
    for (const [text, want] of cases) expect(canonicalGeographyText(text), text).toBe(want);
    for (const bad of ['POINT(1 2', 'POINT(1 95)', 'hello', '{"type": "Point"}']) {
      expect(() => canonicalGeographyText(bad), bad).toThrow(ValueConversionError);
    }
  });
});

describe.skipIf(!hasRealEngine())('GEOGRAPHY text is stored canonical', () => {
  let emu: Emulator;
  const dir = mkdtempSync(join(tmpdir(), 'wh-geo-'));
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/gt${p}`;
  const query = (sql: string, extra: Record<string, unknown> = {}) => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, ...extra } });
  const cells = (rows: { f: { v: unknown }[] }[] | undefined): unknown[][] => (rows ?? []).map((r) => r.f.map((c) => c.v));

  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
    const t = await rest(url('/datasets/d/tables'), {
      method: 'POST',
      json: {
        tableReference: { tableId: 'geo' },
        schema: {
          fields: [
            { name: 'id', type: 'INTEGER' },
            { name: 'g', type: 'GEOGRAPHY' },
            { name: 'gs', type: 'GEOGRAPHY', mode: 'REPEATED' },
            { name: 'rec', type: 'RECORD', fields: [{ name: 'h', type: 'GEOGRAPHY' }] },
          ],
        },
      },
    });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
  });
  afterAll(async () => {
    await emu?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const expected = [
    ['1', 'POINT(1 2)', [{ v: 'POINT(3 4)' }], { f: [{ v: 'POINT(5 6)' }] }],
    ['2', 'MULTIPOINT(1 1, 2 2, 5 2, 4 4)', [], { f: [{ v: 'LINESTRING(0 0, 1.5 1)' }] }],
    ['3', 'POINT(-122.35 47.62)', [], null],
  ];

  it('insertAll: tabledata.list and SELECT show canonical WKT; invalid text is a row error', async () => {
    const ins = await rest(url('/datasets/d/tables/geo/insertAll'), {
      method: 'POST',
      json: {
        rows: [
          { json: { id: 1, g: 'POINT(1.0 2.0)', gs: ['POINT(3.0 4.00)'], rec: { h: '{"type":"Point","coordinates":[5.0,6]}' } } },
          { json: { id: 2, g: 'MULTIPOINT(1 1, 2 2, 4 4, 5 2)', rec: { h: ' LINESTRING (0 0, 1.50 1) ' } } },
          { json: { id: 3, g: '{"type": "Point", "coordinates": [-122.350, 47.620]}' } },
        ],
      },
    });
    expect(ins.status).toBe(200);
    expect(ins.body.insertErrors).toBeUndefined();
    const listed = await rest(url('/datasets/d/tables/geo/data'));
    expect(cells(listed.body.rows)).toEqual(expected);
    const sel = await query('SELECT id, g, gs, rec FROM d.geo ORDER BY id');
    expect(cells(sel.body.rows)).toEqual(expected);

    const bad = await rest(url('/datasets/d/tables/geo/insertAll'), { method: 'POST', json: { rows: [{ json: { id: 4, g: 'POINT(1 2' } }, { json: { id: 5, g: 'POINT(0 0)' } }] } });
    expect(bad.body.insertErrors).toEqual([
      { index: 0, errors: [{ reason: 'invalid', location: 'g', debugInfo: '', message: expect.stringMatching(/^Invalid geography value: Invalid WKT/) }] },
      { index: 1, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] },
    ]);
  });

  it('the stored text survives an engine restart (WAL replay converts the request rows again)', async () => {
    const pid = Number(execFileSync('pgrep', ['-P', String(emu.proc.pid)]).toString().trim().split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    for (let t0 = Date.now(); ; ) {
      const r = await rest(url('/datasets/d/tables/geo/data'));
      if (r.status === 200) {
        expect(cells(r.body.rows)).toEqual(expected);
        break;
      }
      if (Date.now() - t0 > 30_000) throw new Error('engine did not come back');
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  it('LOAD DATA and query parameters store canonical WKT too', async () => {
    writeFileSync(join(dir, 'geo.json'), '{"id": 10, "g": "POINT(7.50 8.0)"}\n{"id": 11, "g": "{\\"type\\": \\"Point\\", \\"coordinates\\": [9, 10.0]}"}\n');
    const load = await query(`LOAD DATA INTO d.loaded (id INT64, g GEOGRAPHY) FROM FILES (format = 'JSON', uris = ['file://${dir}/geo.json'])`);
    expect(load.status, JSON.stringify(load.body)).toBe(200);
    expect(cells((await rest(url('/datasets/d/tables/loaded/data'))).body.rows)).toEqual([['10', 'POINT(7.5 8)'], ['11', 'POINT(9 10)']]);
    const p = await query('SELECT @g AS g', { parameterMode: 'NAMED', queryParameters: [{ name: 'g', parameterType: { type: 'GEOGRAPHY' }, parameterValue: { value: 'POINT(1.10 2.0)' } }] });
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect(cells(p.body.rows)).toEqual([['POINT(1.1 2)']]);
  });
});
