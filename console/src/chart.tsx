// A quick look at a result page: bar, line or scatter of one column against
// another, drawn as SVG (no chart library: the bundle stays small).
import { useMemo, useState } from 'preact/hooks';
import type { FieldSchema } from './api.js';
import { isNumericType, preview, type Value } from './values.js';

type Kind = 'bar' | 'line' | 'scatter';
const W = 720;
const H = 300;
const PAD = { l: 64, r: 16, t: 16, b: 48 };

function num(v: Value | undefined): number | undefined {
  if (!v || v.kind !== 'scalar') return undefined;
  const n = Number(v.raw);
  return Number.isFinite(n) ? n : undefined;
}

function tick(n: number): string {
  if (n === 0) return '0';
  const a = Math.abs(n);
  return a >= 1e6 || a < 1e-3 ? n.toExponential(2) : Number(n.toPrecision(4)).toLocaleString();
}

export function Chart(props: { fields: FieldSchema[]; rows: Value[][] }) {
  const { fields, rows } = props;
  const scalar = fields.map((f, i) => ({ f, i })).filter(({ f }) => f.mode !== 'REPEATED' && f.type !== 'RECORD' && f.type !== 'STRUCT');
  const numeric = scalar.filter(({ f }) => isNumericType(f.type));
  const [kind, setKind] = useState<Kind>('bar');
  const [x, setX] = useState(scalar.find(({ f }) => !isNumericType(f.type))?.i ?? scalar[0]?.i ?? 0);
  const [y, setY] = useState(numeric.find(({ i }) => i !== x)?.i ?? numeric[0]?.i ?? -1);

  const points = useMemo(() => {
    const out: { label: string; x: number; y: number }[] = [];
    rows.forEach((r, k) => {
      const yv = num(r[y]);
      if (yv === undefined) return;
      const xv = kind === 'bar' ? k : num(r[x]) ?? k;
      out.push({ label: preview(r[x] ?? { kind: 'null' }, 24), x: xv, y: yv });
    });
    if (kind === 'line') out.sort((a, b) => a.x - b.x);
    return out.slice(0, 2000);
  }, [rows, x, y, kind]);

  if (numeric.length === 0) return <p class="empty">No numeric column to chart.</p>;
  const ys = points.map((p) => p.y);
  const xs = points.map((p) => p.x);
  const yMin = Math.min(0, ...ys);
  const yMax = Math.max(...ys, yMin + 1);
  const xMin = kind === 'bar' ? 0 : Math.min(...xs);
  const xMax = kind === 'bar' ? Math.max(1, points.length) : Math.max(...xs, xMin + 1);
  const sx = (v: number): number => PAD.l + ((v - xMin) / (xMax - xMin)) * (W - PAD.l - PAD.r);
  const sy = (v: number): number => H - PAD.b - ((v - yMin) / (yMax - yMin)) * (H - PAD.t - PAD.b);
  const barW = Math.max(1, (W - PAD.l - PAD.r) / Math.max(1, points.length) - 2);
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => yMin + f * (yMax - yMin));
  const select = (label: string, value: number, set: (n: number) => void, opts: { f: FieldSchema; i: number }[]) => (
    <label>
      {label}{' '}
      <select value={String(value)} onChange={(e) => set(Number((e.currentTarget as HTMLSelectElement).value))}>
        {opts.map(({ f, i }) => <option key={i} value={String(i)}>{f.name}</option>)}
      </select>
    </label>
  );

  return (
    <div class="chart">
      <div class="toolbar" role="group" aria-label="Chart settings">
        <label>
          Chart{' '}
          <select value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as Kind)}>
            <option value="bar">Bar</option>
            <option value="line">Line</option>
            <option value="scatter">Scatter</option>
          </select>
        </label>
        {select(kind === 'bar' ? 'Labels' : 'X', x, setX, kind === 'bar' ? scalar : numeric)}
        {select('Y', y, setY, numeric)}
        <span class="muted">{points.length} points of this page</span>
      </div>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${kind} chart of ${fields[y]?.name ?? ''} by ${fields[x]?.name ?? ''}`}>
        {yTicks.map((v) => (
          <g key={v}>
            <line x1={PAD.l} x2={W - PAD.r} y1={sy(v)} y2={sy(v)} class="gridline" />
            <text x={PAD.l - 6} y={sy(v) + 4} text-anchor="end" class="tick">{tick(v)}</text>
          </g>
        ))}
        <line x1={PAD.l} x2={W - PAD.r} y1={sy(0)} y2={sy(0)} class="axis" />
        {kind === 'bar' &&
          points.map((p, k) => (
            <rect key={k} x={sx(k) + 1} y={Math.min(sy(p.y), sy(0))} width={barW} height={Math.abs(sy(0) - sy(p.y))} class="mark">
              <title>{`${p.label}: ${p.y}`}</title>
            </rect>
          ))}
        {kind === 'line' && <polyline points={points.map((p) => `${sx(p.x)},${sy(p.y)}`).join(' ')} class="line" />}
        {kind !== 'bar' &&
          points.map((p, k) => (
            <circle key={k} cx={sx(p.x)} cy={sy(p.y)} r={kind === 'line' ? 2.5 : 3.5} class="mark">
              <title>{`${p.x}, ${p.y}`}</title>
            </circle>
          ))}
        {kind === 'bar' && points.length <= 30 &&
          points.map((p, k) => (
            <text key={k} x={sx(k) + barW / 2 + 1} y={H - PAD.b + 14} text-anchor="middle" class="tick">{p.label.slice(0, 10)}</text>
          ))}
        {kind !== 'bar' && [xMin, (xMin + xMax) / 2, xMax].map((v) => (
          <text key={v} x={sx(v)} y={H - PAD.b + 14} text-anchor="middle" class="tick">{tick(v)}</text>
        ))}
      </svg>
    </div>
  );
}
