// Hand-written SVG of a bench result (no chart dependency): per case, three
// horizontal bars on one log-scale axis (emulator, DuckDB, peer's published
// p50), the emulator/DuckDB ratio and result check on the right, and a panel
// of the extra metrics below with a small drift plot.
import type { BenchResult, MetricResult } from './types.js';
import { probeText } from './report.js';

const COLORS = { emulator: '#2563eb', duckdb: '#f59e0b', peer: '#9ca3af', error: '#dc2626', grid: '#e5e7eb', text: '#111827', muted: '#6b7280' };

const esc = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

function text(x: number, y: number, s: string, attrs = ''): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${esc(s)}</text>`;
}

const fmtMs = (v: number): string => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

function metricText<T>(m: MetricResult<T>, ok: (v: T) => string): string {
  if (m.status === 'ok') return ok(m as T);
  if (m.status === 'error') return `error: ${m.error.split('\n')[0]!.slice(0, 70)}`;
  return `skipped (${m.reason})`;
}

export function renderSvg(r: BenchResult): string {
  const W = 1100;
  const nameW = 190;
  const barX0 = nameW + 10;
  const barX1 = 800;
  const top = 108;
  const bar = 7;
  const group = 3 * bar + 2 * 1 + 10;
  const values = r.cases.flatMap((c) => [c.emulator.latency?.p50, c.duckdb.latency?.p50, c.peer?.peer ?? undefined])
    .filter((v): v is number => v !== undefined && v > 0);
  const lo = 0.1;
  const hi = Math.max(1000, 10 ** Math.ceil(Math.log10(Math.max(...values, 1))));
  const xOf = (v: number): number =>
    barX0 + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (barX1 - barX0);
  const chartBottom = top + r.cases.length * group;
  const panelTop = chartBottom + 60;
  const H = panelTop + 274;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12" fill="${COLORS.text}">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  const m = r.machine;
  out.push(text(16, 26, `Query p50 per case: emulator vs DuckDB vs peer's published p50`, 'font-size="16" font-weight="600"'));
  // Warnings that make the numbers incomparable, right of the title.
  const cmd = r.emulator.command;
  const flags = [
    r.options.quick ? 'QUICK: tiny sizes' : '',
    cmd && cmd !== 'dist/gateway.js' ? `STAND-IN gateway ${cmd.split(' ').pop() ?? ''}` : '',
  ].filter(Boolean).join(' · ');
  if (flags) out.push(text(W - 16, 26, flags, `text-anchor="end" font-size="12" fill="${COLORS.error}"`));
  out.push(text(16, 46, `${m.date.slice(0, 16).replace('T', ' ')} UTC · ${m.cpus}× ${m.cpuModel} · load ${m.loadAvg1m} · speed probe ${probeText(m.speedProbeMs)} · node ${m.node} · DuckDB ${m.duckdb ?? '-'} · commit ${m.gitCommit ?? '-'}`, `fill="${COLORS.muted}"`));
  out.push(text(16, 62, 'p50 in ms, log scale, shorter is faster · emulator = HTTP round trip incl. all pages · DuckDB = same case in-process · peer = published, other machine', `fill="${COLORS.muted}"`));
  // Legend.
  const legend: [string, string][] = [['emulator', COLORS.emulator], ['DuckDB', COLORS.duckdb], ['peer (published, other machine)', COLORS.peer]];
  let lx = 16;
  for (const [label, color] of legend) {
    out.push(`<rect x="${lx}" y="74" width="12" height="12" fill="${color}"/>`);
    out.push(text(lx + 16, 84, label));
    lx += 30 + label.length * 6.5;
  }
  out.push(text(barX1 + 20, 84, 'emu/duck', `fill="${COLORS.muted}"`));
  out.push(text(barX1 + 100, 84, 'same rows?', `fill="${COLORS.muted}"`));
  // Grid: one line per power of ten.
  for (let e = Math.log10(lo); e <= Math.log10(hi) + 1e-9; e++) {
    const v = 10 ** e;
    const x = xOf(v);
    out.push(`<line x1="${x.toFixed(1)}" y1="${top - 6}" x2="${x.toFixed(1)}" y2="${chartBottom}" stroke="${COLORS.grid}"/>`);
    out.push(text(x, chartBottom + 14, v >= 1000 ? `${v / 1000}s` : `${v}ms`, `text-anchor="middle" fill="${COLORS.muted}" font-size="10"`));
  }
  r.cases.forEach((c, i) => {
    const y = top + i * group;
    if (i % 2 === 1) out.push(`<rect x="8" y="${y - 4}" width="${W - 16}" height="${group}" fill="#f9fafb"/>`);
    out.push(text(nameW, y + group / 2 - 2, c.name, 'text-anchor="end"'));
    const bars: [string, typeof c.emulator | null, number | null, string][] = [
      ['emulator', c.emulator, c.emulator.latency?.p50 ?? null, COLORS.emulator],
      ['duckdb', c.duckdb, c.duckdb.latency?.p50 ?? null, COLORS.duckdb],
      ['peer', null, c.peer?.peer ?? null, COLORS.peer],
    ];
    bars.forEach(([, side, v, color], j) => {
      const by = y + j * (bar + 1);
      if (side && side.status === 'error') {
        out.push(text(barX0 + 4, by + bar, `error: ${(side.error ?? '').split('\n')[0]!.slice(0, 80)}`, `fill="${COLORS.error}" font-size="9"`));
      } else if (v !== null) {
        const w = Math.max(1, xOf(v) - barX0);
        out.push(`<rect x="${barX0}" y="${by}" width="${w.toFixed(1)}" height="${bar}" fill="${color}"><title>${esc(`${c.name} ${bars[j]![0]} p50 ${v} ms`)}</title></rect>`);
        out.push(text(barX0 + w + 3, by + bar - 0.5, fmtMs(v), `font-size="9" fill="${COLORS.muted}"`));
      }
    });
    const ratio = c.ratio === null ? '–' : `${c.ratio >= 10 ? c.ratio.toFixed(0) : c.ratio.toFixed(2)}×`;
    out.push(text(barX1 + 20, y + group / 2 - 2, ratio, c.ratio !== null && c.ratio > 10 ? `fill="${COLORS.error}"` : ''));
    const mark = c.match.status === 'equal' ? ['✓ same', '#059669'] : c.match.status === 'different' ? ['✗ differs', COLORS.error] : ['–', COLORS.muted];
    out.push(`<text x="${barX1 + 100}" y="${y + group / 2 - 2}" fill="${mark[1]}">${esc(mark[0]!)}<title>${esc(c.match.detail)}</title></text>`);
  });

  const sm = r.summary;
  out.push(text(barX1 + 20, chartBottom + 16, `geometric mean ${sm.geomeanRatio === null ? '–' : `${sm.geomeanRatio}×`}`, 'font-weight="600"'));
  out.push(text(barX1 + 20, chartBottom + 34, `${sm.equal} same rows, ${sm.different} differ`, 'font-weight="600"'));
  // Extra metrics panel.
  out.push(`<line x1="16" y1="${panelTop - 16}" x2="${W - 16}" y2="${panelTop - 16}" stroke="${COLORS.grid}"/>`);
  out.push(text(16, panelTop + 4, 'Emulator process metrics', 'font-size="14" font-weight="600"'));
  const x = r.extra;
  const mb = (v: number | null): string => (v === null ? '-' : `${v.toFixed(0)} MB`);
  const rows: [string, string][] = x
    ? [
        ['start → healthy / first query', metricText(x.startupMs, (v) => `${v.ms.toFixed(0)} ms / ${v.firstQueryMs === null ? 'never' : `${v.firstQueryMs.toFixed(0)} ms`}`)],
        ['idle RSS (gateway / engine)', metricText(x.idleRss, (v) => `${mb(v.gatewayMB)} / ${mb(v.engineMB)}`)],
        ['RSS after load (gateway / engine)', metricText(x.rssAfterLoad, (v) => `${mb(v.gatewayMB)} / ${mb(v.engineMB)} after ${v.rows.toLocaleString('en-US')} rows (${v.loadMs} ms)`)],
        ['insertAll rows/s (seq / 4 streams)', metricText(x.insertAll, (v) => `${v.sequentialRowsPerSec.toLocaleString('en-US')}${v.sequentialRuns && v.sequentialRuns.length > 1 ? ` (median of ${v.sequentialRuns.length})` : ''} / ${v.concurrentRowsPerSec.toLocaleString('en-US')}  (${v.rows.toLocaleString('en-US')} rows, ${v.batchRows}/batch, ${v.columns} cols${v.warmupBatches ? `, after ${v.warmupBatches} warm-up batches at ${(v.warmupRowsPerSec ?? 0).toLocaleString('en-US')}` : ''})`)],
        ['CREATE OR REPLACE p50, first → last', metricText(x.ddlDrift, (v) => `${fmtMs(v.firstP50)} → ${fmtMs(v.lastP50)} ms (${v.sample} of ${v.statements.toLocaleString('en-US')} statements each)`)],
        ['SELECT 1 p50 / p95', metricText(x.select1, (v) => `${fmtMs(v.latency.p50)} / ${fmtMs(v.latency.p95)} ms (${v.runs} runs)`)],
        ['small query, 16 clients p50 / p95', metricText(x.concurrentSmall, (v) => `${fmtMs(v.latency.p50)} / ${fmtMs(v.latency.p95)} ms, ${v.qps} q/s`)],
        ['result paging rows/s (DuckDB)', metricText(x.resultPaging ?? { status: 'skipped', reason: 'not run' }, (v) => `getQueryResults ${v.getQueryResults.rowsPerSec.toLocaleString('en-US')}, 100k-row pages ${v.largePages.rowsPerSec.toLocaleString('en-US')}, tabledata.list ${v.tabledata.rowsPerSec.toLocaleString('en-US')} (DuckDB ${v.duckdbRowsPerSec?.toLocaleString('en-US') ?? '-'}; ${v.rows.toLocaleString('en-US')} rows)`)],
        ['load job rows/s (DuckDB)', metricText(x.loadJobs ?? { status: 'skipped', reason: 'not run' }, (v) => `${Object.entries(v.formats).map(([f, l]) => `${f === 'NEWLINE_DELIMITED_JSON' ? 'NDJSON' : f} ${l.rowsPerSec.toLocaleString('en-US')} (${v.duckdbRowsPerSec[f]?.toLocaleString('en-US') ?? '-'})`).join(', ')}, upload ${v.upload.rowsPerSec.toLocaleString('en-US')}`)],
        ['/healthz during GROUP BY p50 / max', metricText(x.healthzUnderLoad, (v) => `${fmtMs(v.latency.p50)} / ${fmtMs(v.latency.max)} ms (${v.probes} probes, query ${v.queryMs} ms)`)],
      ]
    : [['extra metrics', 'not run (--no-extra)']];
  rows.forEach(([k, v], i) => {
    const y = panelTop + 28 + i * 22;
    out.push(text(16, y, k, `fill="${COLORS.muted}"`));
    out.push(text(270, y, v, v.startsWith('error') ? `fill="${COLORS.error}"` : ''));
  });
  // Drift: SELECT 1 p50 (line) and engine+gateway RSS (dashed) against queries run.
  const px0 = 780;
  const px1 = W - 30;
  const py0 = panelTop + 30;
  const py1 = panelTop + 170;
  out.push(text(px0, panelTop + 4, 'Drift over a session of SELECT 1', 'font-size="12" font-weight="600"'));
  out.push(text(px0, panelTop + 20, 'solid: SELECT 1 p50 · dashed: gateway+engine RSS', `font-size="10" fill="${COLORS.muted}"`));
  out.push(`<rect x="${px0}" y="${py0}" width="${px1 - px0}" height="${py1 - py0}" fill="none" stroke="${COLORS.grid}"/>`);
  if (x && x.drift.status === 'ok' && x.drift.points.length > 1) {
    const pts = x.drift.points;
    const maxQ = pts[pts.length - 1]!.queries || 1;
    const lat = pts.map((p) => p.select1P50);
    const rss = pts.map((p) => (p.gatewayMB ?? 0) + (p.engineMB ?? 0));
    const line = (vals: number[], dash: string, color: string): void => {
      const vmax = Math.max(...vals) * 1.2 || 1;
      const d = pts.map((p, i) => `${(px0 + (p.queries / maxQ) * (px1 - px0)).toFixed(1)},${(py1 - (vals[i]! / vmax) * (py1 - py0)).toFixed(1)}`).join(' ');
      out.push(`<polyline points="${d}" fill="none" stroke="${color}" stroke-width="2" ${dash}/>`);
    };
    line(lat, '', COLORS.emulator);
    const rssShown = rss.some((v) => v > 0);
    if (rssShown) line(rss, 'stroke-dasharray="5 3"', '#7c3aed');
    // Start → end values as text: two series on one small plot would collide as labels.
    out.push(text(px0, py1 + 28, `p50 ${fmtMs(lat[0]!)} → ${fmtMs(lat[lat.length - 1]!)} ms`, `font-size="11" fill="${COLORS.emulator}"`));
    if (rssShown) {
      const idle = x.drift.afterIdle;
      const idleText = idle ? ` (${((idle.gatewayMB ?? 0) + (idle.engineMB ?? 0)).toFixed(0)} idle)` : '';
      out.push(text(px1, py1 + 28, `RSS ${rss[0]!.toFixed(0)} → ${rss[rss.length - 1]!.toFixed(0)} MB${idleText}`, `text-anchor="end" font-size="11" fill="#7c3aed"`));
    }
    out.push(text(px0, py1 + 14, '0', `font-size="10" fill="${COLORS.muted}"`));
    out.push(text(px1, py1 + 14, `${maxQ} queries`, `text-anchor="end" font-size="10" fill="${COLORS.muted}"`));
  } else {
    out.push(text((px0 + px1) / 2, (py0 + py1) / 2, x ? metricText(x.drift, () => '').slice(0, 40) || 'no data' : 'not run', `text-anchor="middle" fill="${COLORS.muted}"`));
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
