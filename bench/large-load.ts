// Memory and progress of a large load through the upload API (issue 17):
// streams a generated CSV of --mb megabytes (default 1024) as a multipart
// upload to a fresh emulator, samples the gateway's and the engine's RSS
// from /proc every 250 ms, and polls jobs.get meanwhile to see the job's
// statistics grow while it is RUNNING.
//   npm run build && node --import tsx bench/large-load.ts [--mb 1024]
// Prints one JSON line: bytes, seconds, MB/s, rows, max RSS of each process,
// and the RUNNING samples seen (outputRows, completionRatio).
import { readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { startEmulator } from '../src/api/index.js';

const mbArg = process.argv.indexOf('--mb');
const totalBytes = Math.round((mbArg > 0 ? Number(process.argv[mbArg + 1]) : 1024) * 1024 * 1024);

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function childOf(pid: number): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) return Number(d);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** CSV rows of ~100 bytes, generated in 1 MB pieces up to `bytes`. */
async function* csvBody(bytes: number): AsyncGenerator<Uint8Array> {
  let sent = 0;
  let i = 0;
  while (sent < bytes) {
    const lines: string[] = [];
    let size = 0;
    while (size < 1 << 20 && sent + size < bytes) {
      const line = `${i},customer-${i % 9973},"note, with comma ${i}",${(i % 100000) / 100},2024-0${(i % 9) + 1}-1${i % 10},${i % 3 === 0 ? 'true' : 'false'}\n`;
      lines.push(line);
      size += line.length;
      i++;
    }
    const chunk = Buffer.from(lines.join(''));
    sent += chunk.length;
    yield chunk;
  }
}

const emu = await startEmulator({ log: (l) => (/upload|error/.test(l) ? console.error(l) : undefined) });
const engine = childOf(emu.pid);
const rss = { gateway: 0, engine: 0, gatewayIdle: rssMb(emu.pid), engineIdle: engine ? rssMb(engine) : 0 };
const sampler = setInterval(() => {
  rss.gateway = Math.max(rss.gateway, rssMb(emu.pid));
  if (engine) rss.engine = Math.max(rss.engine, rssMb(engine));
}, 250);

await fetch(`${emu.url}/bigquery/v2/projects/test/datasets`, { method: 'POST', body: JSON.stringify({ datasetReference: { datasetId: 'big' } }) });
const jobId = `large_load_${Date.now()}`;
const boundary = 'bench-boundary-7f3a';
const metadata = {
  jobReference: { projectId: 'test', jobId },
  configuration: {
    load: {
      destinationTable: { projectId: 'test', datasetId: 'big', tableId: 'rows' },
      sourceFormat: 'CSV',
      schema: { fields: ['id:INTEGER', 'customer:STRING', 'note:STRING', 'amount:FLOAT', 'day:DATE', 'flag:BOOLEAN'].map((s) => ({ name: s.split(':')[0], type: s.split(':')[1] })) },
    },
  },
};
async function* body(): AsyncGenerator<Uint8Array> {
  yield Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(metadata)}\r\n--${boundary}\r\nContent-Type: text/csv\r\n\r\n`);
  yield* csvBody(totalBytes);
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

const running: { outputRows: number; completionRatio: number }[] = [];
let done = false;
const poll = (async () => {
  while (!done) {
    const r = await fetch(`${emu.url}/bigquery/v2/projects/test/jobs/${jobId}`).catch(() => undefined);
    if (r?.ok) {
      const j = (await r.json()) as { status: { state: string }; statistics?: { completionRatio?: number; load?: { outputRows?: string } } };
      if (j.status.state === 'RUNNING' && j.statistics?.load) running.push({ outputRows: Number(j.statistics.load.outputRows), completionRatio: j.statistics.completionRatio ?? 0 });
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
})();

const t0 = performance.now();
// node:http, not fetch: fetch gives up on a response that takes more than 5 minutes (loads are synchronous).
const job = await new Promise<{ status?: { state: string; errorResult?: unknown }; statistics?: { load?: { outputRows?: string } } }>((resolve, reject) => {
  const req = request(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, { method: 'POST', headers: { 'content-type': `multipart/related; boundary=${boundary}` } }, (res) => {
    let text = '';
    res.setEncoding('utf8').on('data', (s: string) => (text += s)).on('end', () => resolve(JSON.parse(text)));
  });
  req.on('error', reject);
  Readable.from(body()).pipe(req);
});
const seconds = (performance.now() - t0) / 1000;
done = true;
await poll;
clearInterval(sampler);
await emu.stop();
console.log(
  JSON.stringify({
    bytes: totalBytes,
    seconds: Number(seconds.toFixed(1)),
    MBps: Number((totalBytes / 1e6 / seconds).toFixed(1)),
    state: job.status?.state,
    error: job.status?.errorResult,
    rows: Number(job.statistics?.load?.outputRows ?? 0),
    gatewayMaxRssMb: Math.round(rss.gateway),
    engineMaxRssMb: Math.round(rss.engine),
    gatewayIdleRssMb: Math.round(rss.gatewayIdle),
    runningSamples: running.length,
    firstRunning: running[0],
    lastRunning: running.at(-1),
  }),
);
