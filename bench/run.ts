// `npm run bench` entry point. See bench/README.md for what is measured.
//   --quick            CI smoke: ≤ 2,000 rows per case, 1 warmup + 2 iterations,
//                      tiny extra metrics, writes bench/results/tmp/
//   --case <a,b>       only cases whose name contains one of the substrings
//                      (writes results/tmp/, as every partial run does)
//   --url <url>        use a running emulator instead of starting one
//   --no-duckdb        skip the DuckDB reference side
//   --no-emulator      DuckDB side only (checks the translation; writes tmp/)
//   --no-extra         skip the extra process metrics
//   --metric <a,b>     only the extra metrics whose key contains a substring
//                      (select1, concurrentSmall, drift, insertAll, rssAfterLoad,
//                      healthzUnderLoad, resultPaging, loadJobs; startup and idle
//                      RSS always); no cases
//                      unless --case is given; writes results/tmp/
//   --project <id>     project id (default bench-project)
//   --gateway <path>   gateway entry to start instead of dist/gateway.js
//                      (a .ts path runs under tsx, e.g. bench/testing/fake-gateway.ts)
//   --scale[=<rows>]   the scale set instead (bench/scale/, not run in CI): an
//                      8-column table of <rows> rows (default 10m; 100m, 500k, ...)
//                      in the emulator and in DuckDB, writes results/scale-<rows>.*;
//                      with --case, --url, --no-duckdb, --no-emulator, --gateway,
//                      --iterations <n>, --warmup <n>, --duckdb-threads <n> (default 2)
import { parseArgs } from 'node:util';
import path from 'node:path';
import { runBench, defaultOutDir } from './lib/runner.js';
import { renderTable } from './lib/report.js';
import { repoRoot } from './lib/cases.js';
import { runScale, scaleOutputName } from './scale/runner.js';
import { renderScaleTable } from './scale/report.js';
import { parseRows } from './scale/dataset.js';

// `--scale=100m` and a bare `--scale` both mean the scale set: split the size off.
const argv = process.argv.slice(2).flatMap((a) => {
  const m = /^--scale=(.+)$/.exec(a);
  return m ? ['--scale', '--rows', m[1]!] : [a];
});

const { values } = parseArgs({
  args: argv,
  options: {
    scale: { type: 'boolean', default: false },
    rows: { type: 'string' },
    iterations: { type: 'string' },
    warmup: { type: 'string' },
    'duckdb-threads': { type: 'string' },
    quick: { type: 'boolean', default: false },
    case: { type: 'string' },
    url: { type: 'string' },
    'no-duckdb': { type: 'boolean', default: false },
    'no-emulator': { type: 'boolean', default: false },
    'no-extra': { type: 'boolean', default: false },
    metric: { type: 'string' },
    project: { type: 'string', default: 'bench-project' },
    gateway: { type: 'string' },
    'memory-limit': { type: 'string' },
    'no-restart': { type: 'boolean', default: false },
  },
  strict: true,
});

if (values.scale) await scaleMain();
else await benchMain();

async function scaleMain(): Promise<void> {
  try {
    const rows = parseRows(values.rows ?? '10m');
    const partial = values.case !== undefined || values['no-duckdb'] === true || values['no-emulator'] === true || values.gateway !== undefined;
    const outDir = defaultOutDir(partial);
    const int = (v: string | undefined, d: number): number => (v === undefined ? d : Math.max(0, Number.parseInt(v, 10)));
    const result = await runScale({
      rows,
      // Larger tables: fewer timed runs (a slow case can take a minute a run). Below that, the
      // workers' JIT compiles through the first two or three queries of a shape (README).
      warmup: int(values.warmup, 3),
      iterations: int(values.iterations, rows >= 50_000_000 ? 3 : 5),
      caseFilter: values.case ?? null,
      url: values.url ?? null,
      emulator: !values['no-emulator'],
      duckdb: !values['no-duckdb'],
      duckdbThreads: int(values['duckdb-threads'], 2),
      outDir,
      projectId: values.project ?? 'bench-project',
      timeoutMs: 1_800_000,
      gateway: values.gateway
        ? { script: path.resolve(values.gateway), nodeArgs: values.gateway.endsWith('.ts') ? ['--import', 'tsx'] : [] }
        : undefined,
      memoryLimit: values['memory-limit'] ?? null,
      restart: !values['no-restart'],
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stdout.write(`\n${renderScaleTable(result)}\n`);
    const name = scaleOutputName(rows);
    process.stdout.write(`\nwrote ${path.relative(repoRoot, path.join(outDir, name))}.json and .svg\n`);
  } catch (e) {
    process.stderr.write(`scale bench failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}

async function benchMain(): Promise<void> {
  const quick = values.quick ?? false;
  // latest.* always means a full run of the real emulator at full size; anything
  // else (a subset of cases or metrics included) goes to tmp/.
  const partial = values.case !== undefined || values.metric !== undefined || values['no-extra'] === true || values['no-duckdb'] === true;
  const outDir = defaultOutDir(quick || partial || values.gateway !== undefined || values['no-emulator'] === true);
  try {
    const result = await runBench({
      quick,
      caseFilter: values.case ?? null,
      url: values.url ?? null,
      emulator: !values['no-emulator'],
      duckdb: !values['no-duckdb'],
      extra: !values['no-extra'],
      metricFilter: values.metric !== undefined ? values.metric.split(',').filter(Boolean) : null,
      outDir,
      // Quick is a CI smoke: bounded even if the emulator hangs.
      requestTimeoutMs: quick ? 5_000 : undefined,
      budgetMs: quick ? 45_000 : undefined,
      projectId: values.project ?? 'bench-project',
      gateway: values.gateway
        ? { script: path.resolve(values.gateway), nodeArgs: values.gateway.endsWith('.ts') ? ['--import', 'tsx'] : [] }
        : undefined,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stdout.write(`\n${renderTable(result)}\n`);
    process.stdout.write(`\nwrote ${path.relative(repoRoot, path.join(outDir, 'latest.json'))} and latest.svg\n`);
    // Exit 0 even when cases error: the report is the product; CI reads the JSON.
  } catch (e) {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
