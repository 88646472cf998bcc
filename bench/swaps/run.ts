// Micro-benchmarks of the hand-written codecs that were swapped for
// well-kept libraries (issue 17): each swap is kept only if it is not slower.
// Run the same script on the commit before a swap and after it, alternating
// (the shared machine's speed drifts), and compare medians:
//   node --import tsx bench/swaps/run.ts [csv|avro|proto|lock ...] [--rounds N]
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

if (!existsSync('package.json')) console.error('run from the project root');
