// The results grid: one page of rows (fetched by the caller), rendered
// virtually (only the rows in view are in the DOM, so a 10,000-row page
// scrolls smoothly), moved through with the arrow keys; the selected cell's
// value opens in an inspector where STRUCT and ARRAY values expand and JSON
// is pretty-printed.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { FieldSchema, Row } from './api.js';
import { decode, isNumericType, prettyJson, preview, type Value } from './values.js';

const ROW_H = 26;
const OVERSCAN = 8;

export interface Paging {
  start: number;
  pageSize: number;
  total: number;
  loading: boolean;
  onPage: (start: number) => void;
  onPageSize: (n: number) => void;
}

export function decodeRows(fields: readonly FieldSchema[], rows: readonly Row[]): Value[][] {
  return rows.map((r) => fields.map((f, i) => decode(f, r.f[i]?.v ?? null)));
}

function typeLabel(f: FieldSchema): string {
  const t = f.type === 'RECORD' ? 'STRUCT' : f.type;
  return f.mode === 'REPEATED' ? `ARRAY<${t}>` : t;
}

function columnWidth(f: FieldSchema, rows: readonly Value[][], i: number): number {
  let chars = Math.max(f.name.length, typeLabel(f).length * 0.8);
  for (let r = 0; r < Math.min(rows.length, 50); r++) chars = Math.max(chars, preview(rows[r]![i]!, 60).length);
  return Math.round(Math.min(420, Math.max(72, chars * 7.6 + 20)));
}

export function ResultGrid(props: { fields: FieldSchema[]; rows: Value[][]; paging: Paging; label: string }) {
  const { fields, rows, paging } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(400);
  const [active, setActive] = useState<{ r: number; c: number }>({ r: 0, c: 0 });
  const [inspect, setInspect] = useState<{ r: number; c: number } | undefined>();
  const widths = useMemo(() => fields.map((f, i) => columnWidth(f, rows, i)), [fields, rows]);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    // A new page starts at its top.
    setActive({ r: 0, c: 0 });
    setInspect(undefined);
    if (scroller.current) scroller.current.scrollTop = 0;
    setScrollTop(0);
  }, [rows]);

  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_H) + OVERSCAN);

  const moveTo = (r: number, c: number): void => {
    r = Math.max(0, Math.min(rows.length - 1, r));
    c = Math.max(0, Math.min(fields.length - 1, c));
    setActive({ r, c });
    const el = scroller.current;
    if (el) {
      const top = r * ROW_H;
      const header = ROW_H + 4;
      if (top < el.scrollTop) el.scrollTop = top;
      else if (top + ROW_H > el.scrollTop + el.clientHeight - header) el.scrollTop = top + ROW_H - el.clientHeight + header;
    }
    requestAnimationFrame(() => (scroller.current?.querySelector(`[data-cell="${r}:${c}"]`) as HTMLElement | null)?.focus());
  };

  const onKey = (e: KeyboardEvent): void => {
    const page = Math.max(1, Math.floor(height / ROW_H) - 1);
    const k = e.key;
    const { r, c } = active;
    if (k === 'ArrowDown') moveTo(r + 1, c);
    else if (k === 'ArrowUp') moveTo(r - 1, c);
    else if (k === 'ArrowRight') moveTo(r, c + 1);
    else if (k === 'ArrowLeft') moveTo(r, c - 1);
    else if (k === 'PageDown') moveTo(r + page, c);
    else if (k === 'PageUp') moveTo(r - page, c);
    else if (k === 'Home') moveTo(e.ctrlKey ? 0 : r, 0);
    else if (k === 'End') moveTo(e.ctrlKey ? rows.length - 1 : r, fields.length - 1);
    else if (k === 'Enter' || k === ' ') setInspect({ r, c });
    else if (k === 'Escape') setInspect(undefined);
    else return;
    e.preventDefault();
  };

  const end = Math.min(paging.total, paging.start + rows.length);
  const pages = Math.max(1, Math.ceil(paging.total / paging.pageSize));
  const pageNo = Math.floor(paging.start / paging.pageSize) + 1;
  const inspected = inspect && rows[inspect.r] ? { field: fields[inspect.c]!, value: rows[inspect.r]![inspect.c]!, row: paging.start + inspect.r + 1 } : undefined;

  return (
    <div class="grid-wrap">
      <div class="grid-main">
        <div class="grid-scroll" ref={scroller} onScroll={(e) => setScrollTop((e.currentTarget as HTMLElement).scrollTop)}>
          <table class="grid" role="grid" aria-label={props.label} aria-rowcount={paging.total + 1} aria-colcount={fields.length + 1} onKeyDown={onKey}>
            <colgroup>
              <col style={{ width: '56px' }} />
              {widths.map((w, i) => <col key={i} style={{ width: `${w}px` }} />)}
            </colgroup>
            <thead>
              <tr role="row" aria-rowindex={1}>
                <th scope="col" class="rownum">Row</th>
                {fields.map((f) => (
                  <th scope="col" key={f.name} title={`${f.name} ${typeLabel(f)}${f.description ? ' — ' + f.description : ''}`}>
                    <span class="col-name">{f.name}</span>
                    <span class="col-type">{typeLabel(f)}</span>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {first > 0 && <tr aria-hidden="true" style={{ height: `${first * ROW_H}px` }} />}
              {rows.slice(first, last).map((row, k) => {
                const r = first + k;
                return (
                  <tr key={r} role="row" aria-rowindex={paging.start + r + 2} class={r === active.r ? 'active-row' : ''}>
                    <th scope="row" class="rownum">{paging.start + r + 1}</th>
                    {row.map((v, c) => {
                      const f = fields[c]!;
                      const isActive = r === active.r && c === active.c;
                      const cls = `cell ${v.kind === 'null' ? 'null' : v.kind === 'scalar' && isNumericType(v.type) ? 'num' : v.kind !== 'scalar' ? 'nested' : ''}${isActive ? ' active' : ''}`;
                      return (
                        <td
                          key={c}
                          role="gridcell"
                          class={cls}
                          data-cell={`${r}:${c}`}
                          data-col={f.name}
                          tabIndex={isActive ? 0 : -1}
                          aria-selected={isActive}
                          onClick={() => {
                            setActive({ r, c });
                            if (v.kind === 'array' || v.kind === 'struct' || (v.kind === 'scalar' && (v.type === 'JSON' || v.text.length > 60))) setInspect({ r, c });
                          }}
                          onDblClick={() => setInspect({ r, c })}
                        >
                          {v.kind !== 'scalar' && v.kind !== 'null' ? <span class="expand" aria-hidden="true">▸ </span> : null}
                          {preview(v)}
                        </td>
                      );
                    })}
                  </tr>
                );
              })}
              {last < rows.length && <tr aria-hidden="true" style={{ height: `${(rows.length - last) * ROW_H}px` }} />}
            </tbody>
          </table>
          {rows.length === 0 && <p class="empty">{paging.loading ? 'Loading…' : 'No rows.'}</p>}
        </div>
        <div class="pager" role="group" aria-label="Result pages">
          <span class="pager-info" aria-live="polite">
            {paging.total === 0 ? '0 rows' : `Rows ${(paging.start + 1).toLocaleString()}–${end.toLocaleString()} of ${paging.total.toLocaleString()}`}
            {paging.loading ? ' · loading…' : ''}
          </span>
          <label>
            Page size{' '}
            <select value={String(paging.pageSize)} onChange={(e) => paging.onPageSize(Number((e.currentTarget as HTMLSelectElement).value))}>
              {[50, 100, 500, 1000, 5000].map((n) => <option key={n} value={String(n)}>{n}</option>)}
            </select>
          </label>
          <button type="button" aria-label="First page" disabled={pageNo <= 1 || paging.loading} onClick={() => paging.onPage(0)}>«</button>
          <button type="button" disabled={pageNo <= 1 || paging.loading} onClick={() => paging.onPage(Math.max(0, paging.start - paging.pageSize))}>‹ Previous page</button>
          <span>Page {pageNo} of {pages}</span>
          <button type="button" disabled={pageNo >= pages || paging.loading} onClick={() => paging.onPage(paging.start + paging.pageSize)}>Next page ›</button>
          <button type="button" aria-label="Last page" disabled={pageNo >= pages || paging.loading} onClick={() => paging.onPage((pages - 1) * paging.pageSize)}>»</button>
        </div>
      </div>
      {inspected && (
        <aside class="inspector" aria-label="Cell value">
          <header>
            <strong>{inspected.field.name}</strong> <span class="col-type">{typeLabel(inspected.field)}</span> · row {inspected.row}
            <button type="button" class="icon" aria-label="Close the cell value" onClick={() => setInspect(undefined)}>×</button>
          </header>
          <div class="value-tree">
            <ValueTree value={inspected.value} />
          </div>
        </aside>
      )}
    </div>
  );
}

/** A value as a tree: arrays and structs are <details> (keyboard-expandable), JSON is indented. */
export function ValueTree(props: { value: Value; depth?: number }) {
  const v = props.value;
  const depth = props.depth ?? 0;
  switch (v.kind) {
    case 'null':
      return <span class="null">NULL</span>;
    case 'scalar':
      if (v.type === 'JSON') return <pre class="json">{prettyJson(v.raw)}</pre>;
      return <span class={`scalar${isNumericType(v.type) ? ' num' : ''}`}>{v.type === 'STRING' ? JSON.stringify(v.text) : v.text}</span>;
    case 'array':
      return (
        <details open={depth < 2}>
          <summary>ARRAY [{v.items.length}]</summary>
          <ol start={0}>
            {v.items.map((x, i) => (
              <li key={i}>
                <ValueTree value={x} depth={depth + 1} />
              </li>
            ))}
          </ol>
        </details>
      );
    case 'struct':
      return (
        <details open={depth < 2}>
          <summary>STRUCT {'{'}{v.fields.length}{'}'}</summary>
          <ul>
            {v.fields.map((f) => (
              <li key={f.name}>
                <span class="field-name">{f.name}</span>: <ValueTree value={f.value} depth={depth + 1} />
              </li>
            ))}
          </ul>
        </details>
      );
  }
}
