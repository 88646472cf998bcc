// Request validation through Fastify JSON schemas (issue 17 trial): two
// gateways of the same build, one validating dataset bodies with ajv
// (body-schema.ts bodyJsonSchema, the trial) and one with the hand-written
// checker (WAREHOUSE_TRIAL_SCHEMA=0), started alternately and then asked
// in lockstep (one request to A, the same to B, ...) so that the shared
// machine's drift hits both alike. Reports start time to /healthz, the
// gateway's idle RSS, and p50/p90 of POST datasets, PATCH dataset and
// SELECT 1.
// The trial is not in the source (not kept, bench/swaps/README.md): apply it first,
//   git apply bench/swaps/fastify-schema-trial.patch && npm run build
//   node --import tsx bench/swaps/request-schema.ts [--requests N]
//   git apply -R bench/swaps/fastify-schema-trial.patch
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startEmulator, type Emulator } from '../../test/helpers/emulator.js';

const args = process.argv.slice(2);
const N = Number(args[args.indexOf('--requests') + 1] ?? 0) || 400;
const STARTS = 5;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor(s.length * p))]!.toFixed(3));
}

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const variants = { schema: {}, hand: { WAREHOUSE_TRIAL_SCHEMA: '0' } } as const;
type Variant = keyof typeof variants;

async function started(v: Variant): Promise<{ emu: Emulator; ms: number }> {
  const t = performance.now();
  const emu = await startEmulator({ env: variants[v], args: ['--project-id', 'bench'] });
  return { emu, ms: performance.now() - t };
}

// Start time: alternate the variants, STARTS times each.
const startMs: Record<Variant, number[]> = { schema: [], hand: [] };
for (let i = 0; i < STARTS; i++) {
  for (const v of ['schema', 'hand'] as const) {
    const { emu, ms } = await started(v);
    startMs[v].push(ms);
    await emu.stop();
  }
}

const emus = { schema: (await started('schema')).emu, hand: (await started('hand')).emu };
const post = async (url: string, method: string, body: unknown): Promise<number> => {
  const t = performance.now();
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${method} ${url}: ${r.status}`);
  return performance.now() - t;
};
const base = (v: Variant): string => `${emus[v].url}/bigquery/v2/projects/bench`;
const kinds = {
  'POST datasets': (v: Variant, i: number) =>
    post(`${base(v)}/datasets`, 'POST', { datasetReference: { datasetId: `d${i}` }, description: 'bench', labels: { team: 'x', env: 'ci' }, defaultTableExpirationMs: '3600000', location: 'US' }),
  'PATCH dataset': (v: Variant, i: number) => post(`${base(v)}/datasets/d${i}`, 'PATCH', { description: `patched ${i}`, labels: { n: String(i) } }),
  'SELECT 1': (v: Variant) => post(`${base(v)}/queries`, 'POST', { query: 'SELECT 1', useLegacySql: false }),
};
const idle = { schema: rssMb(emus.schema.proc.pid!), hand: rssMb(emus.hand.proc.pid!) };
const times: Record<string, Record<Variant, number[]>> = {};
for (const [name, fn] of Object.entries(kinds)) {
  times[name] = { schema: [], hand: [] };
  for (let i = -20; i < N; i++) {
    // 20 warm-up rounds; the order inside a round alternates
    const order: Variant[] = i % 2 ? ['schema', 'hand'] : ['hand', 'schema'];
    for (const v of order) {
      const ms = await fn(v, i + 20);
      if (i >= 0) times[name]![v].push(ms);
    }
  }
}
for (const v of ['schema', 'hand'] as const) {
  console.log(JSON.stringify({ variant: v, startMsMedian: pct(startMs[v], 0.5), idleRssMb: Number(idle[v].toFixed(1)), afterRssMb: Number(rssMb(emus[v].proc.pid!).toFixed(1)) }));
  for (const name of Object.keys(kinds)) console.log(JSON.stringify({ variant: v, request: name, p50: pct(times[name]![v], 0.5), p90: pct(times[name]![v], 0.9), n: N }));
}
await emus.schema.stop();
await emus.hand.stop();
