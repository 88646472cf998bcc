// Micro-benchmarks of the hand-written codecs that were swapped for
// well-kept libraries (issue 17): each swap is kept only if it is not slower.
// Run the same script on the commit before a swap and after it, alternating
// (the shared machine's speed drifts), and compare medians:
//   node --import tsx bench/swaps/run.ts [csv|proto ...] [--rounds N]
// Prints one JSON line per measurement (median ms of N rounds and MB/s or ops/s).
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] ?? 0) || 7;
const which = args.filter((a) => !a.startsWith('--') && !/^\d+$/.test(a));
const want = (name: string): boolean => which.length === 0 || which.includes(name);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function time(fn: () => unknown): Promise<number[]> {
  await fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

function report(name: string, ms: number[], extra: Record<string, number | string> = {}): void {
  console.log(JSON.stringify({ name, medianMs: Number(median(ms).toFixed(2)), minMs: Number(Math.min(...ms).toFixed(2)), ...extra }));
}

/** A CSV file of `n` rows: ints, quoted strings with delimiters and doubled quotes, floats, dates, empty and quoted-empty cells. */
function csvText(n: number): string {
  const lines = ['id,name,price,day,note,empty'];
  for (let i = 0; i < n; i++) {
    const name = i % 7 === 0 ? `"Smith, J${i}"` : `name${i}`;
    const note = i % 5 === 0 ? `"said ""hi"" ${i}"` : i % 11 === 0 ? '""' : `plain note ${i}`;
    lines.push(`${i},${name},${(i * 0.37).toFixed(2)},2024-0${(i % 9) + 1}-1${i % 10},${note},`);
  }
  return lines.join('\n') + '\n';
}

if (want('csv')) {
  const { csvRows } = await import('../../src/io/csv.js');
  const text = csvText(200_000);
  const data = Buffer.from(text);
  const files = [{ uri: 'bench.csv', data }];
  const schema = ['id:INTEGER', 'name:STRING', 'price:FLOAT', 'day:DATE', 'note:STRING', 'empty:STRING'].map((s) => ({ name: s.split(':')[0]!, type: s.split(':')[1]! }));
  const withSchema = await time(() => csvRows(files, { skipLeadingRows: 1 }, schema, false));
  report('csv.rows (schema)', withSchema, { MBps: Number((data.length / 1e6 / (median(withSchema) / 1000)).toFixed(1)), rows: 200_000 });
  const auto = await time(() => csvRows(files, {}, undefined, true));
  report('csv.rows (autodetect)', auto, { MBps: Number((data.length / 1e6 / (median(auto) / 1000)).toFixed(1)) });
  const check = csvRows(files, { skipLeadingRows: 1 }, schema, false);
  console.error(`csv check: ${check.rows.length} rows, row 0 ${JSON.stringify(check.rows[0])}, row 5 ${JSON.stringify(check.rows[5])}, row 11 ${JSON.stringify(check.rows[11])}`);
}

/**
 * Storage Write proto rows: the hand-written decoder (src/engine/storage-write/
 * proto-rows.ts) and a copy of it decoding with protobufjs
 * (bench/swaps/proto-rows-protobufjs.ts), alternated round by round in this
 * process over the same 100k serialized rows, their output checked equal.
 */
if (want('proto')) {
  const { default: protobuf } = await import('protobufjs');
  await import('protobufjs/ext/descriptor/index.js');
  const hand = await import('../../src/engine/storage-write/proto-rows.js');
  const lib = await import('./proto-rows-protobufjs.js');
  const { restFieldToColumn } = await import('../../src/types/schema.js');
  type Desc = import('../../src/engine/storage-write/proto-rows.js').MessageDescriptor;
  const f = (name: string, number: number, type: string, label = 'LABEL_OPTIONAL', typeName = ''): Desc['field'][number] => ({ name, number, label, type, typeName });
  // What a managed writer sends for a table (id INT64, name STRING, score FLOAT64, active BOOL, ts TIMESTAMP, tags ARRAY<STRING>, pt STRUCT<a INT64, b STRING>, amount NUMERIC).
  const desc: Desc = {
    name: 'Row',
    field: [
      f('id', 1, 'TYPE_INT64'), f('name', 2, 'TYPE_STRING'), f('score', 3, 'TYPE_DOUBLE'), f('active', 4, 'TYPE_BOOL'), f('ts', 5, 'TYPE_INT64'),
      f('tags', 6, 'TYPE_STRING', 'LABEL_REPEATED'), f('pt', 7, 'TYPE_MESSAGE', 'LABEL_OPTIONAL', '.Row.Pt'), f('amount', 8, 'TYPE_STRING'),
    ],
    nestedType: [{ name: 'Pt', field: [f('a', 1, 'TYPE_INT64'), f('b', 2, 'TYPE_STRING')], nestedType: [] }],
  };
  const columns = [
    { name: 'id', type: 'INTEGER' }, { name: 'name', type: 'STRING' }, { name: 'score', type: 'FLOAT' }, { name: 'active', type: 'BOOLEAN' }, { name: 'ts', type: 'TIMESTAMP' },
    { name: 'tags', type: 'STRING', mode: 'REPEATED' }, { name: 'pt', type: 'RECORD', fields: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING' }] }, { name: 'amount', type: 'NUMERIC' },
  ].map(restFieldToColumn);
  // Rows serialized by protobufjs from a Type of the same descriptor (the writer's side).
  const Row = (protobuf.Type as unknown as { fromDescriptor(d: object): import('protobufjs').Type }).fromDescriptor({
    name: 'Row',
    field: desc.field.map((x) => ({ name: x.name, number: x.number, label: x.label === 'LABEL_REPEATED' ? 3 : 1, type: { TYPE_INT64: 3, TYPE_STRING: 9, TYPE_DOUBLE: 1, TYPE_BOOL: 8, TYPE_MESSAGE: 11 }[x.type], ...(x.typeName ? { typeName: 'Pt' } : {}) })),
    nestedType: [{ name: 'Pt', field: [{ name: 'a', number: 1, label: 1, type: 3 }, { name: 'b', number: 2, label: 1, type: 9 }] }],
  });
  new protobuf.Root().add(Row);
  Row.resolveAll();
  const N = 100_000;
  const rows: Uint8Array[] = [];
  for (let i = 0; i < N; i++) {
    rows.push(Row.encode({
      id: i * 7919 + 2 ** 40, name: `name ${i}`, score: i * 0.25, active: i % 3 === 0, ts: 1_700_000_000_000_000 + i * 1_000_000,
      tags: i % 4 ? [`t${i % 10}`, 'x'] : [], pt: { a: i, b: `b${i}` }, amount: `${i}.${i % 100}`,
    }).finish());
  }
  const bytes = rows.reduce((n, r) => n + r.length, 0);
  const a = hand.decodeRows(rows, desc, columns);
  const b = lib.decodeRows(rows, desc, columns);
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`proto: outputs differ: ${JSON.stringify(a.rows[1])} vs ${JSON.stringify(b.rows[1])}`);
  console.error(`proto check: ${a.rows.length} rows equal, row 1 ${JSON.stringify(a.rows[1])}`);
  const names = ['hand', 'protobufjs + wire check', 'protobufjs alone'] as const;
  const t: Record<(typeof names)[number], number[]> = { hand: [], 'protobufjs + wire check': [], 'protobufjs alone': [] };
  for (let i = 0; i <= rounds; i++) {
    for (const name of names) {
      lib.setChecked(name === 'protobufjs + wire check');
      const fn = name === 'hand' ? hand.decodeRows : lib.decodeRows;
      const t0 = performance.now();
      fn(rows, desc, columns);
      if (i > 0) t[name].push(performance.now() - t0); // round 0 warms up
    }
  }
  for (const name of names) report(`proto.decodeRows (${name})`, t[name], { MBps: Number((bytes / 1e6 / (median(t[name]) / 1000)).toFixed(1)), rows: N });
}

if (!existsSync('package.json')) console.error('run from the project root');
