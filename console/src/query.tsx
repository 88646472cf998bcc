// One query tab: the editor, its toolbar (run, run selection, dry run,
// parameters, cancel), the live validation line (a dry run after each pause
// in typing, as the cloud console does) and the results (grid, JSON, chart,
// job information, export).
import type { EditorView } from '@codemirror/view';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, type FieldSchema, type Job, type Row } from './api.js';
import type { Catalog } from './catalog.js';
import { Chart } from './chart.js';
import { clearErrors, createEditor, markError, runnableText } from './editor.js';
import { decodeRows, ResultGrid } from './grid.js';
import { cancelJob, dryRunQuery, getJob, insertQueryJob, newJobId, PARAM_TYPES, resultsPage, waitForResults, type QueryParam } from './run.js';
import { announce, download } from './ui.js';
import { formatBytes, formatDuration, toCsv, toJsonLines } from './values.js';

export interface HistoryEntry { at: number; text: string; jobId: string; state: 'done' | 'error' | 'cancelled'; error?: string; ms: number }

interface RunState {
  status: 'running' | 'done' | 'error' | 'cancelled';
  jobId: string;
  location?: string;
  startedAt: number;
  elapsedMs: number;
  error?: string;
  job?: Job;
  fields?: FieldSchema[];
  rows?: Row[];
  total: number;
  start: number;
  loading: boolean;
  dmlRows?: string;
}

const EXPORT_LIMIT = 100_000;

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function QueryTab(props: {
  project: string;
  catalog: Catalog;
  text: string;
  active: boolean;
  onText: (t: string) => void;
  onHistory: (h: HistoryEntry) => void;
  onOpenJob: (jobId: string, location?: string) => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const [params, setParams] = useState<QueryParam[]>([]);
  const [showParams, setShowParams] = useState(false);
  const [validation, setValidation] = useState<{ state: 'idle' | 'checking' | 'ok' | 'error'; text: string }>({ state: 'idle', text: '' });
  const [run, setRun] = useState<RunState | undefined>();
  const [pageSize, setPageSize] = useState(100);
  const [view_, setView] = useState<'results' | 'json' | 'chart' | 'job'>('results');
  const [now, setNow] = useState(Date.now());
  const runRef = useRef<() => void>(() => undefined);
  const validateTimer = useRef<number | undefined>(undefined);
  const validateAbort = useRef<AbortController | undefined>(undefined);
  const paramsRef = useRef(params);
  paramsRef.current = params;

  const validate = (text: string): void => {
    window.clearTimeout(validateTimer.current);
    validateAbort.current?.abort();
    if (!text.trim()) {
      setValidation({ state: 'idle', text: '' });
      return;
    }
    validateTimer.current = window.setTimeout(async () => {
      const ac = new AbortController();
      validateAbort.current = ac;
      setValidation({ state: 'checking', text: 'Checking…' });
      try {
        const job = await dryRunQuery(props.project, text, paramsRef.current, ac.signal);
        if (ac.signal.aborted) return;
        if (view.current) clearErrors(view.current);
        setValidation({ state: 'ok', text: `This query will process ${formatBytes(job.statistics?.totalBytesProcessed)} when run.` });
      } catch (e) {
        if (ac.signal.aborted || (e instanceof DOMException && e.name === 'AbortError')) return;
        setValidation({ state: 'error', text: errorText(e) });
        if (view.current) markError(view.current, errorText(e), 0);
      }
    }, 700);
  };

  useEffect(() => {
    if (!host.current) return;
    const v = createEditor(host.current, props.text, props.catalog, {
      run: () => runRef.current(),
      change: (t) => {
        props.onText(t);
        validate(t);
      },
    });
    view.current = v;
    if (props.text.trim()) validate(props.text);
    return () => v.destroy();
  }, []);
  useEffect(() => {
    if (props.active) view.current?.focus();
  }, [props.active]);
  useEffect(() => {
    if (run?.status !== 'running') return;
    const t = window.setInterval(() => setNow(Date.now()), 100);
    return () => window.clearInterval(t);
  }, [run?.status]);

  const execute = async (onlySelection: boolean): Promise<void> => {
    const v = view.current;
    if (!v || run?.status === 'running') return;
    const sel = runnableText(v);
    const text = onlySelection || sel.selection ? sel.text : v.state.doc.toString();
    const base = onlySelection || sel.selection ? sel.base : 0;
    if (!text.trim()) return;
    clearErrors(v);
    const jobId = newJobId();
    const startedAt = Date.now();
    const t0 = performance.now();
    setRun({ status: 'running', jobId, startedAt, elapsedMs: 0, total: 0, start: 0, loading: true });
    setView('results');
    let state: HistoryEntry['state'] = 'done';
    let error: string | undefined;
    try {
      const inserted = await insertQueryJob(props.project, jobId, text, params);
      const location = inserted.jobReference.location;
      setRun((r) => r && { ...r, location });
      if (inserted.status.errorResult) throw new ApiError(inserted.status.errorResult.message ?? 'Query failed', 400, inserted.status.errorResult.reason ?? 'invalidQuery');
      const res = await waitForResults(props.project, jobId, location, pageSize);
      const job = await getJob(props.project, jobId, location);
      setRun({
        status: 'done',
        jobId,
        location,
        startedAt,
        elapsedMs: performance.now() - t0,
        job,
        fields: res.schema?.fields,
        rows: res.rows ?? [],
        total: Number(res.totalRows ?? res.rows?.length ?? 0),
        start: 0,
        loading: false,
        dmlRows: res.numDmlAffectedRows ?? job.statistics?.query?.numDmlAffectedRows,
      });
      props.catalog.invalidate(); // DDL and DML change what completion offers
      announce(`Query done in ${formatDuration(performance.now() - t0)}`);
    } catch (e) {
      error = errorText(e);
      state = /cancel/i.test(error) ? 'cancelled' : 'error';
      let job: Job | undefined;
      try {
        job = await getJob(props.project, jobId);
      } catch {
        // a job the service refused before registering it
      }
      setRun({ status: state, jobId, startedAt, elapsedMs: performance.now() - t0, error, job, total: 0, start: 0, loading: false });
      if (state === 'error') markError(v, error, base);
      announce(state === 'cancelled' ? 'Query cancelled' : 'Query failed');
    }
    props.onHistory({ at: startedAt, text, jobId, state, ms: Math.round(performance.now() - t0), ...(error ? { error } : {}) });
  };
  runRef.current = () => void execute(false);

  const cancel = async (): Promise<void> => {
    if (!run || run.status !== 'running') return;
    try {
      await cancelJob(props.project, run.jobId, run.location);
      announce('Cancel requested');
    } catch (e) {
      announce(`Cancel failed: ${errorText(e)}`);
    }
  };

  const dryRunNow = async (): Promise<void> => {
    const v = view.current;
    if (!v) return;
    const { text, base } = runnableText(v);
    if (!text.trim()) return;
    setValidation({ state: 'checking', text: 'Dry run…' });
    try {
      const job = await dryRunQuery(props.project, text, params);
      clearErrors(v);
      const st = job.statistics?.query?.statementType;
      setValidation({ state: 'ok', text: `Dry run: this ${st ? st + ' ' : ''}query will process ${formatBytes(job.statistics?.totalBytesProcessed)} (${Number(job.statistics?.totalBytesProcessed ?? 0).toLocaleString()} bytes).` });
    } catch (e) {
      setValidation({ state: 'error', text: errorText(e) });
      markError(v, errorText(e), base);
    }
  };

  const page = async (start: number, size = pageSize): Promise<void> => {
    if (!run || run.status !== 'done') return;
    setRun((r) => r && { ...r, loading: true });
    try {
      const res = await resultsPage(props.project, run.jobId, run.location, start, size);
      setRun((r) => r && { ...r, rows: res.rows ?? [], start, loading: false, total: Number(res.totalRows ?? r.total) });
    } catch (e) {
      setRun((r) => r && { ...r, loading: false, error: errorText(e) });
    }
  };

  const exportAs = async (format: 'csv' | 'json'): Promise<void> => {
    if (!run?.fields) return;
    announce(`Exporting ${format.toUpperCase()}…`);
    const all: Row[] = [];
    while (all.length < Math.min(run.total, EXPORT_LIMIT)) {
      const res = await resultsPage(props.project, run.jobId, run.location, all.length, Math.min(10_000, EXPORT_LIMIT - all.length));
      if (!res.rows?.length) break;
      all.push(...res.rows);
    }
    const decoded = decodeRows(run.fields, all);
    if (format === 'csv') download(`results-${run.jobId}.csv`, 'text/csv', toCsv(run.fields, decoded));
    else download(`results-${run.jobId}.json`, 'application/x-ndjson', toJsonLines(run.fields, decoded));
    announce(`Exported ${decoded.length} rows as ${format.toUpperCase()}`);
  };

  const decoded = useMemo(() => (run?.fields && run.rows ? decodeRows(run.fields, run.rows) : []), [run?.fields, run?.rows]);
  const stats = run?.job?.statistics;
  const bytes = stats?.query?.totalBytesProcessed ?? stats?.totalBytesProcessed;
  const elapsed = run ? (run.status === 'running' ? now - run.startedAt : run.elapsedMs) : 0;

  return (
    <div class="query-tab" hidden={!props.active}>
      <div class="editor-host" ref={host} />
      <div class="toolbar" role="toolbar" aria-label="Query actions">
        <button type="button" class="primary" onClick={() => void execute(false)} disabled={run?.status === 'running'} title="Run (Ctrl+Enter)" aria-keyshortcuts="Control+Enter">
          ▶ Run
        </button>
        <button type="button" onClick={() => void execute(true)} disabled={run?.status === 'running'}>Run selection</button>
        <button type="button" onClick={() => void dryRunNow()}>Dry run</button>
        <button type="button" aria-expanded={showParams} onClick={() => setShowParams(!showParams)}>
          Parameters{params.length ? ` (${params.length})` : ''}
        </button>
        {run?.status === 'running' && (
          <button type="button" class="danger" onClick={() => void cancel()}>■ Cancel</button>
        )}
        <span class={`validation ${validation.state}`} role="status" title={validation.text}>
          {validation.state === 'ok' ? '✓ ' : validation.state === 'error' ? '✗ ' : ''}
          {validation.text}
        </span>
      </div>
      {showParams && <ParamsEditor params={params} onChange={setParams} />}
      <section class="results" aria-label="Query results" data-run-id={run?.jobId} data-run-state={run?.status}>
        {!run && <p class="empty">Run a query to see its results here.</p>}
        {run && (
          <>
            <div class="results-head">
              <div role="tablist" aria-label="Result views" class="subtabs">
                {(['results', 'json', 'chart', 'job'] as const).map((k) => (
                  <button key={k} type="button" role="tab" aria-selected={view_ === k} onClick={() => setView(k)}>
                    {k === 'results' ? 'Results' : k === 'json' ? 'JSON' : k === 'chart' ? 'Chart' : 'Job information'}
                  </button>
                ))}
              </div>
              <span class="run-stats" aria-live="polite">
                {run.status === 'running' ? `Running… ${formatDuration(elapsed)}` : `${run.status === 'done' ? 'Done' : run.status === 'cancelled' ? 'Cancelled' : 'Failed'} · ${formatDuration(elapsed)}`}
                {bytes !== undefined && ` · ${formatBytes(bytes)} processed`}
              </span>
              {run.status === 'done' && run.fields && (
                <span class="export">
                  <button type="button" onClick={() => void exportAs('csv')}>Export CSV</button>
                  <button type="button" onClick={() => void exportAs('json')}>Export JSON</button>
                </span>
              )}
            </div>
            {run.error && run.status !== 'done' && (
              <div class={run.status === 'cancelled' ? 'notice' : 'error-box'} role="alert">{run.error}</div>
            )}
            {view_ === 'results' && run.status === 'done' && !run.fields && (
              <p class="notice">
                {stats?.query?.statementType ?? 'Statement'} done
                {run.dmlRows !== undefined ? `: ${run.dmlRows} row${run.dmlRows === '1' ? '' : 's'} affected.` : '.'}
              </p>
            )}
            {view_ === 'results' && run.fields && (
              <ResultGrid
                label="Query results"
                fields={run.fields}
                rows={decoded}
                paging={{
                  start: run.start,
                  pageSize,
                  total: run.total,
                  loading: run.loading,
                  onPage: (s) => void page(s),
                  onPageSize: (n) => {
                    setPageSize(n);
                    void page(0, n);
                  },
                }}
              />
            )}
            {view_ === 'json' && run.fields && <pre class="json-view">{toJsonLines(run.fields, decoded)}</pre>}
            {view_ === 'chart' && run.fields && <Chart fields={run.fields} rows={decoded} />}
            {view_ === 'job' && (
              <div class="job-info">
                <p>
                  Job{' '}
                  <button type="button" class="link" onClick={() => props.onOpenJob(run.jobId, run.location)}>{run.jobId}</button>
                  {run.location ? ` (${run.location})` : ''}
                </p>
                <p>Statement: {stats?.query?.statementType ?? '—'} · bytes processed {Number(bytes ?? 0).toLocaleString()} · billed {Number(stats?.query?.totalBytesBilled ?? 0).toLocaleString()}</p>
              </div>
            )}
          </>
        )}
      </section>
    </div>
  );
}

function ParamsEditor(props: { params: QueryParam[]; onChange: (p: QueryParam[]) => void }) {
  const set = (i: number, patch: Partial<QueryParam>): void => props.onChange(props.params.map((p, k) => (k === i ? { ...p, ...patch } : p)));
  return (
    <fieldset class="params">
      <legend>Query parameters (named: use them as @name)</legend>
      {props.params.map((p, i) => (
        <div class="param" key={i}>
          <input aria-label={`Parameter ${i + 1} name`} placeholder="name" value={p.name} onInput={(e) => set(i, { name: (e.currentTarget as HTMLInputElement).value })} />
          <select aria-label={`Parameter ${i + 1} type`} value={p.type} onChange={(e) => set(i, { type: (e.currentTarget as HTMLSelectElement).value })}>
            {PARAM_TYPES.map((t) => <option key={t}>{t}</option>)}
          </select>
          <input aria-label={`Parameter ${i + 1} value`} placeholder={p.type.startsWith('ARRAY') ? '["a", "b"]' : 'value'} value={p.value} onInput={(e) => set(i, { value: (e.currentTarget as HTMLInputElement).value })} />
          <button type="button" aria-label={`Remove parameter ${i + 1}`} onClick={() => props.onChange(props.params.filter((_, k) => k !== i))}>×</button>
        </div>
      ))}
      <button type="button" onClick={() => props.onChange([...props.params, { name: '', type: 'STRING', value: '' }])}>+ Add parameter</button>
    </fieldset>
  );
}
