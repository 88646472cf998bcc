// A/B of the healthzUnderLoad metric's probe loop (bench/metrics/memory-load.ts):
// on the client's own thread, where the client parses the GROUP BY's ~6 MB
// answer (as before), against on a worker thread (the metric now). Same
// emulator, same table, alternating runs.
//   npm run build && node --import tsx bench/explore/healthz-metric-ab.ts [--runs 3] [--port 9434]
import { loadavg } from 'node:os';
import { startEmulator } from '../../src/api/index.js';
import { RestClient } from '../lib/rest-client.js';
import { summarize } from '../lib/stats.js';
import { FULL_SIZES, type MetricContext } from '../metrics/context.js';
import { BIG_TABLE, measureHealthzUnderLoad, measureRssAfterLoad } from '../metrics/memory-load.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const RUNS = arg('runs', 3);
const PORT = arg('port', 9434);
const P = 'hzab';
const emu = await startEmulator({ projectId: P, httpPort: PORT, grpcPort: PORT + 1 });
const client = new RestClient(emu.url, P, 600_000);
try {
  await client.createDataset('d');
  const ctx = { client, dataset: 'd', sizes: FULL_SIZES, heavyTimeoutMs: 600_000, gatewayPid: null } as unknown as MetricContext;
  await measureRssAfterLoad(ctx);
  /** The probe loop as it was: on this thread, beside the query's answer's JSON.parse. */
  const sameThread = async (): Promise<number[]> => {
    let done = false;
    const query = client.query(`SELECT k, COUNT(*) AS c, SUM(v) AS s FROM d.${BIG_TABLE} GROUP BY k`, 600_000).finally(() => {
      done = true;
    });
    const samples: number[] = [];
    while (!done) {
      const s = performance.now();
      await client.healthz(600_000);
      samples.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 5));
    }
    await query;
    return samples;
  };
  for (let i = 0; i < RUNS; i++) {
    const a = summarize(await sameThread());
    const b = await measureHealthzUnderLoad(ctx);
    if (b.status !== 'ok') throw new Error(JSON.stringify(b));
    console.log(`same thread: ${a.n} probes p50 ${a.p50} max ${a.max} ms | worker: ${b.probes} probes p50 ${b.latency.p50} max ${b.latency.max} ms (query ${b.queryMs} ms); load ${loadavg()[0]!.toFixed(2)}`);
  }
} finally {
  await emu.stop();
}
