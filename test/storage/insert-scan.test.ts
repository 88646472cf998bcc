// The insert scanner (insert-scan.ts) must give exactly what the generic path
// gives (JSON.parse of the whole text, then convertRows): the same column
// vectors, insertErrors, kept rows and insertIds, for every body it accepts;
// for anything else it must give up (null) so the generic path answers.
import { describe, expect, it } from 'vitest';
import { convertRows, decimalAt, keptBatch, plainNumericAt, type RowsConversion } from '../../src/storage/json-rows.js';
import { scannable, scanRows } from '../../src/storage/insert-scan.js';
import { columnsOf } from '../../src/storage/resources.js';
import type { RestField } from '../../src/types/schema.js';
import { Decimal } from '../../src/types/values.js';
import type { Vector } from '../../src/types/vector.js';
import { seededRandom } from '../../src/executor/operators/sample.js';

const FIELDS: RestField[] = [
  { name: 'i', type: 'INTEGER' },
  { name: 'f', type: 'FLOAT' },
  { name: 'n', type: 'NUMERIC' },
  { name: 'b', type: 'BOOLEAN' },
  { name: 's', type: 'STRING' },
  { name: 'ts', type: 'TIMESTAMP' },
  { name: 'd', type: 'DATE' },
  { name: 'y', type: 'BYTES' },
  { name: 'j', type: 'JSON' },
  { name: 'st', type: 'RECORD', fields: [{ name: 'a', type: 'INTEGER' }, { name: 'arr', type: 'STRING', mode: 'REPEATED' }] },
  { name: 'rep', type: 'INTEGER', mode: 'REPEATED' },
  { name: 'req', type: 'STRING', mode: 'REQUIRED' },
  { name: 'Mixed', type: 'STRING' },
  { name: 'naïve', type: 'INTEGER' },
] as RestField[];
const COLUMNS = columnsOf(FIELDS);

// Cell texts per column, as they appear in a body (JSON source text).
const CELLS: Record<string, string[]> = {
  i: ['1', '-0', '0', '123456789012345', '1234567890123456', '9007199254740993', '-9223372036854775808', '9223372036854775808', '1.0', '1.5', '1e3', '-1E+2', '"42"', '"-0"', '"007"', '"+5"', '"12a"', '" 5"', '"9223372036854775807"', '"123456789012345"', '"1234567890123456"', 'true', 'null', '"\\u0034\\u0032"', '[1]', '{"a":1}', '""'],
  f: ['0', '-0', '-0.0', '1.5', '142.71428571428572', '0.1', '1e-7', '1E400', '-1e-400', '123456789012345.6', '12345678901234.5', '0.000001', '5e-324', '"NaN"', '"Infinity"', '"-inf"', '"1.5"', 'true', 'null', '"abc"', '12345678901234567890', '-999999999999999', '0.30000000000000004'],
  n: ['"1234.56"', '"-0.00"', '"0"', '"000123.4500"', '"-12345678901234567890123456789.123456789"', '"0.000000001"', '"0.0000000001"', '"1e3"', '"99999999999999999999999999999.999999999"', '"100000000000000000000000000000"', '12.5', '1e2', 'null', '"abc"', '"1."', '".5"', '"-"', '"1234567"', '"12345678"', '"0.1234567"', '"-9.87654321"', '"7000000"', '"+1"', '"0.5\\u0030"'],
  b: ['true', 'false', '"true"', '"false"', '"1"', '0', '1', 'null', '"yes"'],
  s: ['"plain"', '""', '"café"', '"\\u00e9"', '"a\\"b"', '"tab\\tx"', '"😀 ok"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\/"', '123', '-0', '1e2', '0.1', 'true', 'null', '{"x":1}', '[1,2]', '"日本語"', '"\\\\"', '"x\\u0000y"'],
  ts: ['"2024-01-01T00:16:40.000Z"', '"2024-01-01 00:16:40"', '"2024-02-29T23:59:59.999999Z"', '"2023-02-29T00:00:00Z"', '"1699-12-31T23:59:59Z"', '"2024-01-01T00:00:00+01:00"', '1700000000', '1700000000.5', '"1700000000"', '"garbage"', 'null', '"2024-01-01T00:00:00.1234567Z"', '"2024-01-01T00:00:00\\u005a"', '"2024-01-01t00:00:00z"', '"2201-01-01T00:00:00Z"'],
  d: ['"2024-01-01"', '"2024-02-30"', '"0999-01-01"', '"2024-1-1"', '20240101', 'null', '"2024-01-01 "', '"2024-02-29"'],
  y: ['"aGVsbG8="', '"not base64!"', 'null', '""'],
  j: ['{"a":[1,2,{"b":null}]}', '"text"', '1', 'null', '[1,"x"]', '{"__proto__":1}', '"{\\"a\\":1}"', '{ "k" : "\\u00e9" }'],
  st: ['{"a":1,"arr":["x","y"]}', '{"A":"2"}', '{"arr":null}', '{}', 'null', '[1]', '{"a":"x"}', '{"arr":[null]}', '"str"', '{"a":9007199254740993}', '{ "arr" : [ "\\u00e9" , "😀" ] }'],
  rep: ['[1,2,3]', '[]', 'null', '["1","x"]', '[null]', '5', '[1.5]', '[ 9223372036854775807 ]'],
  req: ['"r"', 'null', '""', '5'],
  Mixed: ['"m"', 'null'],
  'naïve': ['1', '"2"', 'null'],
};


class BodyGen {
  private readonly r: () => number;
  private idSeq = 0;
  constructor(seed: number, readonly unusual: number) {
    this.r = seededRandom(seed);
  }
  pick<T>(a: readonly T[]): T {
    return a[Math.floor(this.r() * a.length)]!;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  ws(): string {
    return this.chance(0.7) ? '' : this.pick([' ', '\n', '\t', '\r\n', '  ']);
  }
  key(name: string): string {
    return `${this.ws()}"${name}"${this.ws()}:${this.ws()}`;
  }

  json(): string {
    const entries: string[] = [];
    for (const c of COLUMNS) {
      if (this.chance(0.15)) continue; // missing: NULL, or a missing REQUIRED field
      // Mostly canonical columns so that many rows are valid.
      const pool = CELLS[c.name]!;
      const v = this.chance(0.6) ? pool[0]! : this.pick(pool);
      entries.push(this.key(c.name) + v + this.ws());
    }
    if (this.chance(0.2)) entries.push(this.key(this.pick(['extra', 'zz', 'Ω', 'x y'])) + this.pick(['1', '"u"', '{"deep":[1,{"x":"\\""}]}', '[]', 'null', '"\\u00e9"']));
    if (this.chance(this.unusual)) {
      // Lookups the scanner leaves to the generic path (some of them).
      const k = this.pick(['I', 'MIXED', 'mixed', 'i', 'NAÏVE', '\\u0069', 'S', 'req', '__proto__', 'constructor']);
      entries.push(this.key(k) + this.pick(['7', '"k"', 'null']));
    }
    if (this.chance(0.3)) entries.sort(() => this.r() - 0.5);
    return `{${this.ws()}${entries.join(',')}${this.ws()}}`;
  }

  item(ids: string[]): string {
    if (this.chance(this.unusual / 4)) return this.pick(['1', 'null', '[]', '"x"', '{}', '{"insertId":"q"}', '{"json":"x"}', '{"json":null}', '{"json":[1]}', '{"json":{},"json":{"i":1}}', '{"JSON":{}}']);
    const parts: string[] = [`${this.key('json')}${this.json()}`];
    const idKind = this.r();
    let id: string | undefined;
    if (idKind < 0.5) id = `"id${this.idSeq++}"`;
    else if (idKind < 0.6 && ids.length > 0) id = `"${this.pick(ids)}"`; // a duplicate within the request
    else if (idKind < 0.7) id = `"${this.pick(RECENT)}"`; // stored by an earlier request
    else if (idKind < 0.75) id = this.pick(['""', '5', 'null', '"\\u0041b"', '"é1"', '"id\\"q"']);
    if (id !== undefined) {
      if (id.startsWith('"id') && !id.includes('\\')) ids.push(id.slice(1, -1));
      parts.push(`${this.key('insertId')}${id}`);
    }
    if (this.chance(0.1)) parts.push(`${this.key('other')}${this.pick(['1', '{"json":1}', '"x"'])}`);
    if (this.chance(0.5)) parts.reverse();
    return `{${parts.join(',')}${this.ws()}}`;
  }

  body(): string {
    const n = 1 + Math.floor(this.r() * 8);
    const ids: string[] = [];
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push(this.ws() + this.item(ids) + this.ws());
    let text = `${this.ws()}[${items.join(',')}]${this.ws()}`;
    if (this.chance(this.unusual / 3)) {
      // Invalid JSON, or not a list.
      const cut = Math.floor(this.r() * text.length);
      text = this.pick([
        text.slice(0, cut),
        text.replace(']', ',]'),
        text.replace(':', ''),
        text.replace('"json"', "'json'"),
        text.replace('[', '[01,'),
        text.replace('[', '[NaN,'),
        text + 'x',
        '{"rows":1}',
        '[]',
        ' [ ] ',
        text.replace(/"plain"/, '"pl\u0001ain"'),
        text.replace(/"plain"/, '"pl\\xin"'),
      ]);
    }
    return text;
  }
}

const RECENT = ['old1', 'old2', 'r\u00e9'];
const recentIds = new Set(RECENT);

/**
 * What the insert path answers and stores: insertErrors, insertIds, and the
 * batch of kept rows in comparable form (typed arrays as plain arrays, whose
 * -0 and NaN compare with Object.is).
 */
function finished(c: RowsConversion): unknown {
  const batch = keptBatch(c);
  return {
    n: c.n,
    m: c.m,
    errors: c.errors,
    keep: c.keep,
    newIds: c.newIds,
    length: batch.length,
    columns: batch.columns.map((v: Vector) => ({
      kind: v.data.constructor.name,
      length: v.length,
      data: Array.from(v.data as ArrayLike<unknown>),
      nulls: v.nulls ? Array.from(v.nulls) : null,
    })),
  };
}

function generic(text: string): unknown {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return 'invalid JSON';
  }
  if (!Array.isArray(rows)) return 'not a list';
  return finished(convertRows(rows, COLUMNS, recentIds));
}

/** What the insert path decides from a conversion (everything but the values). */
function decisions(c: RowsConversion | null): unknown {
  return c === null ? null : { n: c.n, m: c.m, errors: c.errors, keep: c.keep, newIds: c.newIds };
}

function scanned(text: string | Buffer): unknown {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const c = scanRows(bytes, COLUMNS, recentIds);
  // Only checking the rows decides exactly the same, and says it built nothing.
  const checked = scanRows(bytes, COLUMNS, recentIds, { build: false });
  expect(decisions(checked)).toEqual(decisions(c));
  if (checked) {
    expect(checked.built).toBe(false);
    expect(() => keptBatch(checked)).toThrow(/only checked/);
  }
  return c === null ? null : finished(c);
}

describe('insert scanner', () => {
  it('matches the generic path on generated bodies, or leaves them to it', () => {
    let handled = 0;
    let total = 0;
    for (const [seed, unusual] of [[1, 0], [2, 0.1], [3, 0.3], [4, 0.6]] as const) {
      const g = new BodyGen(seed, unusual);
      for (let i = 0; i < 600; i++) {
        const text = g.body();
        const fast = scanned(text);
        const ref = generic(text);
        total++;
        if (fast === null) {
          // Bodies without an unusual feature never need the generic path.
          expect(unusual, text).toBeGreaterThan(0);
          continue;
        }
        handled++;
        expect(typeof ref, text).toBe('object'); // never accepts invalid JSON
        expect(fast, text).toEqual(ref);
      }
    }
    // The other seeds mix in unusual features: many bodies still take the fast path.
    expect(handled).toBeGreaterThan(total * 0.4);
  });

  it('handles escapes, unicode, nested records, repeated fields, unknown keys and errors itself', () => {
    const bodies = [
      '[{"json":{"s":"a\\"b\\u00e9\\ud83d\\ude00","req":"x"}}]',
      '[{"json":{"s":"café 日本語 😀","req":"x","naïve":3}}]',
      '[{"json":{"st":{"a":"7","arr":["x","\\u00e9"]},"rep":[1,"2"],"req":"x"}}]',
      '[{"json":{"zz":{"deep":[1,{"x":"]"}]},"req":"x","j":{"a":[1,{"b":null}]}}}]',
      '[ {"insertId":"a","json":{"i":"abc","req":null}} , {"json":{"req":"y"},"insertId":"a"} ]',
      '[{"json":{"i":9223372036854775807,"f":1e400,"n":"-0.000","req":"x"}},{"json":{"rep":[null],"req":"x"}}]',
      '[{"insertId":"old1","json":{"i":"9223372036854775807","req":"x"}},{"json":{"i":1,"req":"x"}}]',
      '[{"json":{"i":9007199254740993,"req":"x"},"insertId":"old2"},{"json":{"i":"bad","req":"x"}},{"json":{"i":2,"req":"x"}}]',
    ];
    for (const text of bodies) {
      const fast = scanned(text);
      expect(fast, text).not.toBeNull();
      expect(fast, text).toEqual(generic(text));
    }
  });

  it('reads invalid UTF-8 as the generic path decodes it (U+FFFD)', () => {
    const parts = (...xs: (string | number[])[]) => Buffer.concat(xs.map((x) => (typeof x === 'string' ? Buffer.from(x) : Buffer.from(x))));
    const bodies = [
      parts('[{"json":{"s":"a', [0xff], 'b","req":"x"}}]'),
      parts('[{"json":{"s":"', [0xe2, 0x82], '","req":"x"}}]'), // a truncated sequence before the quote
      parts('[{"insertId":"', [0xc3], '","json":{"req":"x"}},{"insertId":"', [0xc4], '","json":{"req":"y"}}]'), // both ids decode to U+FFFD
      parts('[{"json":{"', [0xfe], 'k":1,"req":"x"}}]'), // an unknown key
      parts('[{"json":{"s":"', [0xed, 0xa0, 0x80], '","req":"x"}}]'), // an encoded surrogate
    ];
    for (const body of bodies) {
      const fast = scanned(body);
      expect(fast, body.toString('hex')).not.toBeNull();
      expect(fast, body.toString('hex')).toEqual(generic(body.toString('utf8')));
    }
    // Outside strings, a byte that is not JSON is invalid either way.
    const bad = parts('[{"json":{"req":"x"}}', [0xff], ']');
    expect(scanned(bad)).toBeNull();
    expect(generic(bad.toString('utf8'))).toBe('invalid JSON');
  });

  it('gives up on what only the generic path decides', () => {
    for (const text of [
      '[{"json":{"I":1,"req":"x"}}]', // case-insensitive match
      '[{"json":{"i":1,"i":2,"req":"x"}}]', // duplicate key
      '[{"json":{"\\u0069":1,"req":"x"}}]', // escaped key
      '[1]',
      '[{"json":[]}]',
      '[{"json":{}},]',
      '[{"json":{"i":01}}]',
      '{"json":{}}',
      '',
    ]) {
      expect(scanned(text), text).toBeNull();
    }
    // Columns named like an inherited member are looked up by the generic path.
    expect(scannable(columnsOf([{ name: 'constructor', type: 'STRING' } as RestField]))).toBe(false);
    expect(scannable(COLUMNS)).toBe(true);
  });

  it('reads TIMESTAMP, DATE, INT64 and NUMERIC texts from bytes as the generic path reads them', () => {
    const r = seededRandom(11);
    const pad = (x: number, n: number) => String(x).padStart(n, '0');
    const texts: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const y = 1690 + Math.floor(r() * 530);
      const mo = Math.floor(r() * 14);
      const d = Math.floor(r() * 33);
      const date = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}`;
      const time = `${pad(Math.floor(r() * 25), 2)}:${pad(Math.floor(r() * 61), 2)}:${pad(Math.floor(r() * 61), 2)}`;
      const frac = r() < 0.5 ? '' : '.' + String(Math.floor(r() * 1e8)).slice(0, Math.floor(r() * 9));
      let t = date + ['T', ' ', 't', '_'][Math.floor(r() * 4)] + time + frac + ['Z', 'z', '', '+00:00'][Math.floor(r() * 4)];
      if (r() < 0.1) {
        // A stray character somewhere.
        const k = Math.floor(r() * t.length);
        t = t.slice(0, k) + ['x', '-', ':', '9', '.'][Math.floor(r() * 5)] + t.slice(k + 1);
      }
      texts.push(t, date);
    }
    const ints = ['0', '-0', '7', '-', '', '123456789012345', '-123456789012345', '1234567890123456', '12a', '1-2'];
    for (let i = 0; i < 500; i++) ints.push((r() < 0.3 ? '-' : '') + String(Math.floor(r() * 10 ** Math.floor(r() * 17))));
    const numerics = ints.map((n, j) => n + ['', '.5', '.000123', '.1234567891'][j % 4]);
    // One column per body, so that a row rejected for one value hides no other.
    let stored = 0;
    for (const [col, values] of [['ts', texts], ['d', texts], ['i', ints], ['n', numerics]] as const) {
      for (let i = 0; i < values.length; i += 50) {
        const text = `[${values
          .slice(i, i + 50)
          .map((v) => `{"json":{"${col}":${JSON.stringify(v)},"req":"x"}}`)
          .join(',')}]`;
        const fast = scanned(text) as { length: number } | null;
        expect(fast).not.toBeNull();
        expect(fast, text).toEqual(generic(text));
        stored += fast!.length;
      }
    }
    // Most values are valid (and stored, so compared).
    expect(stored).toBeGreaterThan(texts.length);
  });

  it('builds NUMERIC values exactly as decimal.js parses them', () => {
    const r = seededRandom(7);
    const digits = (n: number) => Array.from({ length: n }, () => String(Math.floor(r() * 10))).join('');
    const texts = ['0', '-0', '0.000', '-0.00', '7000000', '1234567', '12345678', '0.1234567', '0.000000001', '100', '-5.5'];
    for (let i = 0; i < 5000; i++) {
      const zeros = '0'.repeat(Math.floor(r() * 4));
      const int = zeros + digits(1 + Math.floor(r() * 26));
      const frac = r() < 0.3 ? '' : '.' + digits(1 + Math.floor(r() * 8)) + (r() < 0.3 ? '0' : '');
      texts.push((r() < 0.3 ? '-' : '') + int + frac);
    }
    for (const t of texts) {
      const b = Buffer.from(t);
      if (!plainNumericAt(b, 0, b.length)) continue;
      const ref = new Decimal(t);
      const want = ref.isZero() ? new Decimal(0) : ref;
      const got = decimalAt(b, 0, b.length);
      expect(got).toBeInstanceOf(Decimal);
      expect({ s: got.s, e: got.e, d: got.d, own: Object.keys(got) }, t).toEqual({ s: want.s, e: want.e, d: want.d, own: Object.keys(want) });
      expect(got.toString(), t).toBe(want.toString());
      // An instance like any other: same prototype and constructor, same arithmetic.
      expect(Object.getPrototypeOf(got)).toBe(Object.getPrototypeOf(want));
      expect(got.constructor).toBe(want.constructor);
      expect(got.times(want).plus(1).toFixed(), t).toBe(want.times(got).plus(1).toFixed());
      expect(got.cmp(want)).toBe(0);
    }
  });
});
