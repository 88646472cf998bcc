// Human-readable summary for stdout: one line per case, then errors, then the
// extra metrics.
import type { BenchResult, MachineInfo, MetricResult } from './types.js';

const fmt = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined || Number.isNaN(v) ? '-' : v >= 1000 ? v.toFixed(0) : v.toFixed(digits);

function pad(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
}

function metricLine<T>(label: string, m: MetricResult<T>, ok: (v: T) => string): string {
  if (m.status === 'ok') return `${label}: ${ok(m as T)}`;
  if (m.status === 'error') return `${label}: ERROR ${m.error.split('\n')[0]}`;
  return `${label}: skipped (${m.reason})`;
}

const mb = (v: number | null): string => (v === null ? '-' : `${v.toFixed(0)} MB`);

export function renderTable(r: BenchResult): string {
  const lines: string[] = [];
  const m = r.machine;
  lines.push(`bench ${r.options.quick ? '(quick) ' : ''}${m.date}  node ${m.node}  ${m.cpus}x ${m.cpuModel}  DuckDB ${m.duckdb ?? '-'}  load ${m.loadAvg1m}  speed probe ${probeText(m.speedProbeMs)}`);
  if (r.emulator.command && r.emulator.command !== 'dist/gateway.js') lines.push(`emulator command: ${r.emulator.command} (not the real gateway)`);
  if (r.options.url) lines.push(`emulator: attached to ${r.options.url}`);
  if (r.emulator.status === 'skipped') lines.push('emulator: not run (--no-emulator)');
  if (r.emulator.status === 'error') lines.push(`emulator: ERROR ${r.emulator.error?.split('\n')[0] ?? ''}`);
  for (const note of r.emulator.restarts) lines.push(`emulator restarted: ${note}`);
  lines.push('');
  const head = ['case', 'emu p50', 'emu p95', 'emu max', 'duck p50', 'emu/duck', 'peer p50', 'result'];
  const widths = [Math.max(4, ...r.cases.map((c) => c.name.length)), 9, 9, 9, 9, 9, 9, 10];
  lines.push(pad(head, widths));
  lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  const errors: string[] = [];
  for (const c of r.cases) {
    const e = c.emulator;
    const d = c.duckdb;
    const side = (s: typeof e, v: number | undefined): string => (s.status === 'ok' ? fmt(v) : s.status === 'error' ? 'ERR' : '-');
    lines.push(pad([
      c.name,
      side(e, e.latency?.p50), side(e, e.latency?.p95), side(e, e.latency?.max),
      side(d, d.latency?.p50),
      c.ratio === null ? '-' : `${fmt(c.ratio, 2)}x`,
      fmt(c.peer?.peer),
      c.match.status,
    ], widths));
    if (e.status === 'error') errors.push(`${c.name} [emulator]: ${e.error?.split('\n')[0] ?? ''}`);
    if (d.status === 'error') errors.push(`${c.name} [duckdb]: ${d.error?.split('\n')[0] ?? ''}`);
    if (c.match.status === 'different') errors.push(`${c.name} [result]: ${c.match.detail}`);
  }
  lines.push('(ms; emu = HTTP round trip incl. all pages; duck = in-process DuckDB incl. reading rows; peer = published p50)');
  const s = r.summary;
  lines.push(`emulator ok ${s.emulatorOk}/${s.cases}, DuckDB ok ${s.duckdbOk}/${s.cases}, same rows ${s.equal}, different ${s.different}, ` +
    `geometric mean emu/duck ${s.geomeanRatio === null ? '-' : `${s.geomeanRatio}x`}`);
  if (errors.length) {
    lines.push('', 'problems:');
    // Identical emulator errors (e.g. "not running") are listed once.
    const seen = new Set<string>();
    for (const e of errors) {
      const key = e.replace(/^[^\[]*/, '');
      if (seen.has(key) && key.includes('[emulator]: emulator not running')) continue;
      seen.add(key);
      lines.push(`  ${e}`);
    }
  }
  const x = r.extra;
  if (x) {
    lines.push('', 'extra metrics:');
    lines.push('  ' + metricLine('start → healthy', x.startupMs, (v) => `${fmt(v.ms)} ms (first SELECT 1 answered at ${v.firstQueryMs === null ? 'never' : `${fmt(v.firstQueryMs)} ms`})`));
    lines.push('  ' + metricLine('idle RSS', x.idleRss, (v) => `gateway ${mb(v.gatewayMB)}, engine ${mb(v.engineMB)}`));
    lines.push('  ' + metricLine('RSS after load', x.rssAfterLoad, (v) =>
      `${v.rows} rows in ${v.loadMs} ms: gateway ${mb(v.gatewayMB)}, engine ${mb(v.engineMB)} (before: ${mb(v.before.gatewayMB)}, ${mb(v.before.engineMB)})`));
    lines.push('  ' + metricLine('insertAll', x.insertAll, (v) =>
      `${v.rows} rows × ${v.columns} cols in ${v.batchRows}-row batches: ${v.sequentialRowsPerSec} rows/s sequential` +
      (v.sequentialRuns && v.sequentialRuns.length > 1 ? ` (median of ${v.sequentialRuns.join(', ')})` : '') +
      `, ${v.concurrentRowsPerSec} rows/s with ${v.concurrentStreams} streams` +
      (v.warmupBatches ? ` (after ${v.warmupBatches} untimed batches, ${v.warmupRowsPerSec} rows/s)` : '')));
    lines.push('  ' + metricLine('DDL drift', x.ddlDrift, (v) =>
      `CREATE OR REPLACE TABLE ... AS SELECT × ${v.statements}: p50 ${fmt(v.firstP50, 2)} ms (first ${v.sample}) → ${fmt(v.lastP50, 2)} ms (last ${v.sample})`));
    if (x.resultPaging) {
      lines.push('  ' + metricLine('result paging', x.resultPaging, (v) =>
        `${v.rows} rows × ${v.columns} cols: getQueryResults ${v.getQueryResults.rowsPerSec} rows/s (${v.getQueryResults.pages} pages, ${v.getQueryResults.mb} MB, server CPU ${v.getQueryResults.serverCpuMs ?? '-'} ms; median of ${v.getQueryResultsRuns.join(', ')}; client parse ${v.getQueryResults.parseMs} ms apart), ` +
        `maxResults=100000 ${v.largePages.rowsPerSec} rows/s, tabledata.list ${v.tabledata.rowsPerSec} rows/s; DuckDB reads them at ${v.duckdbRowsPerSec ?? '-'} rows/s`));
    }
    if (x.loadJobs) {
      lines.push('  ' + metricLine('load jobs', x.loadJobs, (v) =>
        `${v.rows} rows × ${v.columns} cols: ` + Object.entries(v.formats).map(([f, l]) => `${f} ${l.rowsPerSec} rows/s (${l.mb} MB, server CPU ${l.serverCpuMs ?? '-'} ms; DuckDB ${v.duckdbRowsPerSec[f] ?? '-'})`).join(', ') +
        `, CSV upload ${v.upload.rowsPerSec} rows/s`));
    }
    lines.push('  ' + metricLine('SELECT 1', x.select1, (v) => `p50 ${fmt(v.latency.p50, 2)} ms, p95 ${fmt(v.latency.p95, 2)} ms (${v.runs} runs)`));
    lines.push('  ' + metricLine('small query, concurrent', x.concurrentSmall, (v) =>
      `${v.clients} clients: p50 ${fmt(v.latency.p50)} ms, p95 ${fmt(v.latency.p95)} ms, ${v.qps} q/s`));
    lines.push('  ' + metricLine('/healthz during GROUP BY', x.healthzUnderLoad, (v) =>
      `p50 ${fmt(v.latency.p50, 2)} ms, max ${fmt(v.latency.max)} ms over ${v.probes} probes (${v.groupByRows}-row GROUP BY took ${v.queryMs} ms)`));
    lines.push('  ' + metricLine('drift', x.drift, (v) => v.points
      .map((p) => `${p.queries}: ${fmt(p.select1P50, 2)} ms ${mb(p.gatewayMB)}/${mb(p.engineMB)}`).join('; ') +
      (v.afterIdle ? `; after ${v.afterIdle.idleMs / 1000} s idle: ${mb(v.afterIdle.gatewayMB)}/${mb(v.afterIdle.engineMB)}` : '')));
  }
  lines.push('', `total ${(r.totalMs / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

/** The speed probe at start → end; older results have none. */
export function probeText(p: MachineInfo['speedProbeMs'] | undefined): string {
  return p ? `${p.start} → ${p.end ?? '-'} ms` : '-';
}
