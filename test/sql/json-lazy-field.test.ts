// PARSE_JSON(s).f reads the text lazily (functions/json-core.ts JsonText: the
// text checked whole, only the field's value made). Every value and error
// must be those of the general path: PARSE_JSON made whole, then the field
// taken from the parsed value (a field of a column is never rewritten).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, run, wireRows, type Harness } from './harness.js';

const P = 'jl';
let h: Harness;
const q = async (sql: string): Promise<unknown[]> => wireRows(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } }));
const outcome = async (sql: string): Promise<unknown> => {
  try {
    return await q(sql);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
};

const docs = [
  '{"a":{"b":1,"c":"x"},"d":[1,2]}',
  ' { "a" : { "b" : -0 , "c" : "y\\"z" } } ',
  '{"a":{"b":12345678901234567890,"c":null}}',
  '{"a":{"b":1.5e300,"c":[{"a":1}]},"a":{"b":2}}', // duplicate key: the first
  '{"a":null}',
  '{"a":[{"b":3}]}',
  '[{"a":{"b":4}}]',
  '"a"',
  'null',
  '{"a":{"b":"\\u00e9\\n","toString":5,"constructor":{"x":1}}}',
  '{"x":1,"a":{"c":2,"b":0.30000000000000004}}',
  '{"a":{"b":{"a":{"b":7}}}}',
  '{"a":{}}',
  '{}',
  '{"a":{"b":123456789012345678901}}',
  '{"é":{"b":8},"a":{"b":true}}',
];

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  const rows = docs.map((d, i) => `STRUCT(${i} AS id, ${JSON.stringify(d).replace(/\\"/g, '\\"')} AS js)`);
  await q(`CREATE TABLE d.t AS SELECT * FROM UNNEST([${rows.join(', ')}])`);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('a field of PARSE_JSON', () => {
  it('gives every row the value the general path gives (nested fields, missing, duplicates, arrays, wide numbers, Object.prototype names)', async () => {
    const n = (await q('SELECT COUNT(*) FROM d.t')) as unknown[];
    expect(n).toEqual([{ f: [{ v: String(docs.length) }] }]);
    for (const mode of ["'round'", "'exact'"]) {
      for (const path of ['a', 'a.b', 'a.c', 'a.b.a.b', 'x', 'a.toString', 'a.constructor', 'a.constructor.x', '`é`.b']) {
        const lazy = await outcome(`SELECT id, TO_JSON_STRING(PARSE_JSON(js, wide_number_mode => ${mode}).${path}) AS v FROM d.t WHERE id NOT IN (2, 14) ORDER BY id`);
        const general = await outcome(`SELECT id, TO_JSON_STRING(j.${path}) AS v FROM (SELECT id, PARSE_JSON(js, wide_number_mode => ${mode}) AS j FROM d.t WHERE id NOT IN (2, 14)) ORDER BY id`);
        expect(lazy, `${mode} ${path}`).toEqual(general);
      }
    }
    // Typed reads of a field, and the default mode.
    for (const sql of ['SELECT id, INT64(PARSE_JSON(js).a.b) FROM d.t WHERE id IN (0, 1, 5, 12) ORDER BY id', 'SELECT id, LAX_STRING(PARSE_JSON(js).a.c) FROM d.t ORDER BY id']) {
      const general = sql.replace(/PARSE_JSON\(js\)(\.[a-z.]+)/, 'j$1').replace('FROM d.t', 'FROM (SELECT id, PARSE_JSON(js) AS j, js FROM d.t)');
      expect(await outcome(sql), sql).toEqual(await outcome(general));
    }
  });

  it('raises the general path\'s errors: invalid text anywhere, wide numbers in exact mode, NULL mode', async () => {
    for (const [text, mode] of [
      ['{"a":{"b":1},"z":[1,}', "'round'"],
      ['{"a":{"b":1},"z":"\u0001"}', "'round'"],
      ['{"a":{"b":1},"z":1e400}', "'round'"],
      ['{"a":{"b":1}} x', "'round'"],
      ['{"a":{"b":1},"z":123456789012345678901}', "'exact'"],
      ['{"a":{"b":1},"z":0.1000000000000000055511151231257827}', "'exact'"],
      ['{"a":{"b":1}}', "'fast'"],
      ['{"a":{"b":1}}', 'NULL'],
    ]) {
      const lit = JSON.stringify(text);
      const lazy = await outcome(`SELECT TO_JSON_STRING(PARSE_JSON(${lit}, wide_number_mode => ${mode}).a.b) FROM d.t WHERE id = 0`);
      const general = await outcome(`SELECT TO_JSON_STRING(j.a.b) FROM (SELECT PARSE_JSON(${lit}, wide_number_mode => ${mode}) AS j FROM d.t WHERE id = 0)`);
      expect(lazy, text).toEqual(general);
      if (mode !== 'NULL') expect(String(lazy), text).toMatch(/^error: /);
    }
    // SAFE. keeps its NULL for invalid input.
    expect(await outcome(`SELECT SAFE.PARSE_JSON('{"a":').a IS NULL FROM d.t WHERE id = 0`)).toEqual([{ f: [{ v: 'true' }] }]);
    expect(await outcome(`SELECT TO_JSON_STRING(SAFE.PARSE_JSON('{"a":{"b":2}}').a) FROM d.t WHERE id = 0`)).toEqual([{ f: [{ v: '{"b":2}' }] }]);
  });
});
