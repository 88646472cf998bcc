// The scale run as a stdout table and a hand-written SVG: per case, two bars
// on one log-scale axis (emulator, DuckDB), the ratio, both peak RSS values
// and the result check.
import type { ScaleResult } from './runner.js';
import { probeText } from '../lib/report.js';

const fmt = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined || Number.isNaN(v) ? '-' : v >= 1000 ? v.toFixed(0) : v.toFixed(digits);

function pad(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
}

export function renderScaleTable(r: ScaleResult): string {
  const m = r.machine;
  const lines: string[] = [];
  lines.push(`scale ${r.size} (${r.rows.toLocaleString('en')} rows)  ${m.date}  commit ${m.gitCommit ?? '-'}  node ${m.node}  ${m.cpus}x ${m.cpuModel}  DuckDB ${m.duckdb ?? '-'} (${r.options.duckdbThreads} threads)  load ${m.loadAvg1m}  speed probe ${probeText(m.speedProbeMs)}`);
  if (r.emulator.status === 'error') lines.push(`emulator: ERROR ${r.emulator.error?.split('\n')[0] ?? ''}`);
  const loadLine = (label: string, l: ScaleResult['load']['emulator']): string =>
    l.status === 'ok' ? `${label} ${fmt((l.ms ?? 0) / 1000)} s (${(l.rowsPerSec ?? 0).toLocaleString('en')} rows/s), RSS after ${fmt(l.rssMB, 0)} MB`
      : l.status === 'error' ? `${label} ERROR ${l.error?.split('\n')[0] ?? ''}` : `${label} skipped`;
  lines.push(`load: ${loadLine('emulator', r.load.emulator)}; ${loadLine('DuckDB', r.load.duckdb)}`);
  lines.push('');
  const head = ['case', 'emu p50', 'duck p50', 'emu/duck', 'emu RSS', 'duck RSS', 'result'];
  const widths = [Math.max(4, ...r.cases.map((c) => c.name.length)), 9, 9, 9, 9, 9, 10];
  lines.push(pad(head, widths));
  lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  const problems: string[] = [];
  for (const c of r.cases) {
    const side = (s: typeof c.emulator): string => (s.status === 'ok' ? fmt(s.latency?.p50) : s.status === 'error' ? 'ERR' : '-');
    lines.push(pad([
      c.name, side(c.emulator), side(c.duckdb), c.ratio === null ? '-' : `${fmt(c.ratio, 2)}x`,
      fmt(c.emulator.peakRssMB, 0), fmt(c.duckdb.peakRssMB, 0), c.match.status,
    ], widths));
    if (c.emulator.status === 'error') problems.push(`${c.name} [emulator]: ${c.emulator.error?.split('\n')[0] ?? ''}`);
    if (c.duckdb.status === 'error') problems.push(`${c.name} [duckdb]: ${c.duckdb.error?.split('\n')[0] ?? ''}`);
    if (c.match.status === 'different') problems.push(`${c.name} [result]: ${c.match.detail}`);
  }
  lines.push('(ms p50 of the timed runs; emu = REST round trip incl. all pages; RSS = peak MB during the case: emulator gateway + engine, DuckDB bench process)');
  const s = r.summary;
  lines.push(`same rows ${s.equal}/${s.cases}, different ${s.different}, geometric mean emu/duck ${s.geomeanRatio === null ? '-' : `${s.geomeanRatio}x`}, worst ${s.worstRatio === null ? '-' : `${s.worstRatio}x`}`);
  lines.push(restartLine(r));
  if (problems.length) lines.push('', 'problems:', ...problems.map((p) => `  ${p}`));
  lines.push('', `total ${(r.totalMs / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

/** The restart check in one line (also under the chart). */
export function restartLine(r: ScaleResult): string {
  const rs = r.restart;
  if (!rs || rs.status === 'skipped') return 'restart: not run';
  if (rs.status === 'error') return `restart: ERROR ${rs.error?.split('\n')[0] ?? ''}`;
  const cases = rs.cases.map((c) => (c.status === 'ok' ? `${c.name} ${fmt(c.ms)} ms cold${c.equal === false ? ' DIFFERENT' : c.equal ? ' same' : ''}` : `${c.name} ERROR ${c.error?.split('\n')[0] ?? ''}`));
  return `restart (same data dir${r.options.memoryLimit ? `, --memory-limit ${r.options.memoryLimit}` : ''}): healthy in ${fmt(rs.startMs, 0)} ms, emulator RSS ${fmt(rs.idleRssMB, 0)} MB; ${cases.join('; ')}`;
}

const COLORS = { emulator: '#2563eb', duckdb: '#f59e0b', error: '#dc2626', grid: '#e5e7eb', text: '#111827', muted: '#6b7280', ok: '#059669' };
const esc = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
const text = (x: number, y: number, s: string, attrs = ''): string => `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${esc(s)}</text>`;

export function renderScaleSvg(r: ScaleResult): string {
  const W = 1100;
  const nameW = 320;
  const barX0 = nameW + 10;
  const barX1 = 790;
  const top = 110;
  const bar = 9;
  const group = 2 * bar + 18;
  const values = r.cases.flatMap((c) => [c.emulator.latency?.p50, c.duckdb.latency?.p50]).filter((v): v is number => v !== undefined && v > 0);
  const lo = 1;
  const hi = Math.max(1000, 10 ** Math.ceil(Math.log10(Math.max(...values, 1))));
  const xOf = (v: number): number => barX0 + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (barX1 - barX0);
  const H = top + r.cases.length * group + 66;
  const m = r.machine;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12" fill="${COLORS.text}">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(text(16, 26, `Scale set, ${r.rows.toLocaleString('en')} rows × 8 columns: emulator vs DuckDB (${r.options.duckdbThreads} threads)`, 'font-size="16" font-weight="600"'));
  out.push(text(16, 46, `${m.date.slice(0, 16).replace('T', ' ')} UTC · commit ${m.gitCommit ?? '-'} · ${m.cpus}× ${m.cpuModel} · load ${m.loadAvg1m} · speed probe ${probeText(m.speedProbeMs)} · node ${m.node} · DuckDB ${m.duckdb ?? '-'}`, `fill="${COLORS.muted}"`));
  const l = r.load;
  const loadText = (x: typeof l.emulator): string => (x.status === 'ok' ? `${fmt((x.ms ?? 0) / 1000)} s` : x.status);
  out.push(text(16, 62, `p50 of ${r.options.iterations} runs (after ${r.options.warmup} warmup), ms, log scale · emulator = REST round trip · load: emulator CTAS ${loadText(l.emulator)} (emulator RSS ${fmt(l.emulator.rssMB, 0)} MB), DuckDB ${loadText(l.duckdb)}`, `fill="${COLORS.muted}"`));
  let lx = 16;
  for (const [label, color] of [['emulator', COLORS.emulator], ['DuckDB', COLORS.duckdb]] as const) {
    out.push(`<rect x="${lx}" y="74" width="12" height="12" fill="${color}"/>`);
    out.push(text(lx + 16, 84, label));
    lx += 100;
  }
  out.push(text(barX1 + 20, top - 8, 'emu/duck', `font-weight="600"`));
  out.push(text(barX1 + 90, top - 8, 'peak RSS emu / duck', `font-weight="600"`));
  out.push(text(barX1 + 235, top - 8, 'result', `font-weight="600"`));
  const bottom = top + r.cases.length * group;
  for (let v = lo; v <= hi; v *= 10) {
    const x = xOf(v);
    out.push(`<line x1="${x.toFixed(1)}" y1="${top - 4}" x2="${x.toFixed(1)}" y2="${bottom}" stroke="${COLORS.grid}"/>`);
    out.push(text(x, bottom + 14, v >= 1000 ? `${v / 1000} s` : `${v} ms`, `text-anchor="middle" fill="${COLORS.muted}"`));
  }
  r.cases.forEach((c, i) => {
    const y = top + i * group;
    out.push(text(16, y + bar + 1, c.name));
    out.push(text(16, y + 2 * bar + 10, c.what, `font-size="10" fill="${COLORS.muted}"`));
    ([['emulator', c.emulator], ['duckdb', c.duckdb]] as const).forEach(([k, s], j) => {
      const by = y + j * (bar + 1);
      if (s.status === 'ok' && s.latency) {
        const w = Math.max(1, xOf(s.latency.p50) - barX0);
        out.push(`<rect x="${barX0}" y="${by}" width="${w.toFixed(1)}" height="${bar}" fill="${COLORS[k]}"><title>${esc(`${k} p50 ${s.latency.p50} ms (min ${s.latency.min}, max ${s.latency.max})`)}</title></rect>`);
        out.push(text(barX0 + w + 4, by + bar - 1, fmt(s.latency.p50), `font-size="10" fill="${COLORS.muted}"`));
      } else if (s.status === 'error') {
        out.push(text(barX0, by + bar - 1, `error: ${(s.error ?? '').split('\n')[0]!.slice(0, 80)}`, `font-size="10" fill="${COLORS.error}"`));
      }
    });
    if (c.ratio !== null) out.push(text(barX1 + 20, y + bar + 4, `${fmt(c.ratio, 2)}×`, `fill="${c.ratio > 2 ? COLORS.error : COLORS.ok}" font-weight="600"`));
    out.push(text(barX1 + 90, y + bar + 4, `${fmt(c.emulator.peakRssMB, 0)} / ${fmt(c.duckdb.peakRssMB, 0)} MB`));
    const ok = c.match.status === 'equal';
    const color = ok ? COLORS.ok : c.match.status === 'different' ? COLORS.error : COLORS.muted;
    const label = ok ? '✓ same' : c.match.status === 'different' ? '✗ differs' : 'n/a';
    out.push(`<text x="${barX1 + 235}" y="${y + bar + 4}" fill="${color}"><title>${esc(c.match.detail)}</title>${esc(label)}</text>`);
  });
  const s = r.summary;
  out.push(text(16, H - 20, restartLine(r), `fill="${r.restart?.status === 'error' || r.restart?.cases.some((c) => c.status === 'error' || c.equal === false) ? COLORS.error : COLORS.muted}"`));
  out.push(text(16, H - 36, `geometric mean emu/duck ${s.geomeanRatio ?? '-'}× · worst ${s.worstRatio ?? '-'}× · same rows ${s.equal}/${s.cases} · ratio red above 2× (the issue's target at 10M rows)`, `fill="${COLORS.muted}"`));
  out.push('</svg>');
  return out.join('\n') + '\n';
}
