// A resource's tab: a table's or view's details, schema and a paged preview
// (tabledata.list), a dataset's, routine's or model's details, and the
// actions: query it, copy its name, delete a table.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, enc, type FieldSchema, type Row, type Table } from './api.js';
import type { Resource } from './explorer.js';
import { decodeRows, ResultGrid } from './grid.js';
import { copyText, Dialog, ErrorBox, Facts } from './ui.js';
import { formatBytes, formatMillis } from './values.js';

function path(r: Resource): string {
  const base = `/projects/${enc(r.projectId)}/datasets/${enc(r.datasetId)}`;
  switch (r.kind) {
    case 'dataset':
      return base;
    case 'table':
      return `${base}/tables/${enc(r.id)}`;
    case 'routine':
      return `${base}/routines/${enc(r.id)}`;
    case 'model':
      return `${base}/models/${enc(r.id)}`;
  }
}

export function fullName(r: Resource): string {
  return r.kind === 'dataset' ? `${r.projectId}.${r.datasetId}` : `${r.projectId}.${r.datasetId}.${r.id}`;
}

export function ResourceTab(props: { resource: Resource; active: boolean; onQuery: (sql: string) => void; onDeleted: () => void }) {
  const r = props.resource;
  const [data, setData] = useState<Record<string, unknown> | undefined>();
  const [error, setError] = useState<string>();
  const [confirm, setConfirm] = useState(false);
  const [sub, setSub] = useState<'details' | 'schema' | 'preview'>(r.kind === 'table' ? 'schema' : 'details');
  const load = (): void => {
    setError(undefined);
    api<Record<string, unknown>>('GET', path(r)).then(setData, (e: Error) => setError(e.message));
  };
  useEffect(load, [fullName(r)]);

  const del = async (): Promise<void> => {
    try {
      await api('DELETE', path(r));
      setConfirm(false);
      props.onDeleted();
    } catch (e) {
      setError((e as Error).message);
      setConfirm(false);
    }
  };

  const name = fullName(r);
  const table = r.kind === 'table' ? (data as Table | undefined) : undefined;
  const isView = table?.type === 'VIEW' || table?.type === 'MATERIALIZED_VIEW';

  return (
    <div class="resource-tab" hidden={!props.active}>
      <header class="resource-head">
        <h2>
          <span class="muted">{r.kind === 'table' ? (table?.type ?? r.type).toLowerCase().replace('_', ' ') : r.kind}</span> {name}
        </h2>
        <div class="toolbar" role="toolbar" aria-label={`${r.kind} actions`}>
          {r.kind === 'table' && <button type="button" class="primary" onClick={() => props.onQuery(`SELECT * FROM \`${name}\` LIMIT 1000`)}>Query</button>}
          <button type="button" onClick={() => void copyText(name)}>Copy name</button>
          {r.kind === 'table' && <button type="button" class="danger" onClick={() => setConfirm(true)}>Delete {isView ? 'view' : 'table'}</button>}
          <button type="button" onClick={load}>Refresh</button>
        </div>
      </header>
      <ErrorBox error={error} />
      {r.kind === 'table' && (
        <div role="tablist" aria-label="Table views" class="subtabs">
          {(['schema', 'details', 'preview'] as const).map((k) => (
            <button key={k} type="button" role="tab" aria-selected={sub === k} onClick={() => setSub(k)}>
              {k === 'schema' ? 'Schema' : k === 'details' ? 'Details' : 'Preview'}
            </button>
          ))}
        </div>
      )}
      <div class="resource-body">
        {data && r.kind === 'table' && table && sub === 'schema' && <SchemaTable fields={table.schema?.fields ?? []} />}
        {data && r.kind === 'table' && table && sub === 'details' && <TableFacts t={table} />}
        {data && r.kind === 'table' && table && sub === 'preview' && (isView ? <p class="notice">A view has no stored rows: query it to see them.</p> : <Preview resource={r} fields={table.schema?.fields ?? []} />)}
        {data && r.kind === 'dataset' && <DatasetFacts d={data} />}
        {data && r.kind === 'routine' && <RoutineFacts d={data} />}
        {data && r.kind === 'model' && <ModelFacts d={data} />}
      </div>
      <Dialog title={`Delete ${isView ? 'view' : 'table'}`} open={confirm} onClose={() => setConfirm(false)}>
        <p>
          Delete <strong>{name}</strong>? Its rows are gone for good (unless restored within the time travel window).
        </p>
        <div class="dialog-actions">
          <button type="button" onClick={() => setConfirm(false)}>Cancel</button>
          <button type="button" class="danger" onClick={() => void del()}>Delete</button>
        </div>
      </Dialog>
    </div>
  );
}

export function SchemaTable(props: { fields: FieldSchema[] }) {
  const rows: { f: FieldSchema; depth: number; path: string }[] = [];
  const walk = (fs: FieldSchema[], depth: number, prefix: string): void => {
    for (const f of fs) {
      rows.push({ f, depth, path: prefix + f.name });
      if (f.fields) walk(f.fields, depth + 1, prefix + f.name + '.');
    }
  };
  walk(props.fields, 0, '');
  if (rows.length === 0) return <p class="empty">No columns.</p>;
  return (
    <table class="schema">
      <caption class="sr-only">Schema</caption>
      <thead>
        <tr>
          <th scope="col">Field name</th>
          <th scope="col">Type</th>
          <th scope="col">Mode</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(({ f, depth, path }) => (
          <tr key={path}>
            <td style={{ paddingLeft: `${8 + depth * 18}px` }}>{f.name}</td>
            <td>{f.type === 'RECORD' ? 'STRUCT' : f.type}</td>
            <td>{f.mode ?? 'NULLABLE'}</td>
            <td>{f.description ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Labels as chips; undefined (the fact is left out) when there are none. */
function labels(l: Record<string, string> | undefined) {
  const entries = Object.entries(l ?? {});
  if (entries.length === 0) return undefined;
  return <span class="labels">{entries.map(([k, v]) => <span class="label-chip" key={k}>{v ? `${k}: ${v}` : k}</span>)}</span>;
}

function TableFacts(props: { t: Table }) {
  const t = props.t;
  const tp = t.timePartitioning;
  const rp = t.rangePartitioning;
  return (
    <>
      <Facts
        items={[
          ['Table ID', `${t.tableReference.projectId}.${t.tableReference.datasetId}.${t.tableReference.tableId}`],
          ['Type', t.type],
          ['Description', t.description],
          ['Labels', labels(t.labels)],
          ['Number of rows', t.numRows !== undefined ? Number(t.numRows).toLocaleString() : undefined],
          ['Size', t.numBytes !== undefined ? formatBytes(t.numBytes) : undefined],
          ['Created', formatMillis(t.creationTime)],
          ['Last modified', formatMillis(t.lastModifiedTime)],
          ['Expires', formatMillis(t.expirationTime)],
          ['Location', t.location],
          ['Partitioned by', tp ? `${tp.type ?? 'DAY'}${tp.field ? ` on ${tp.field}` : ' (ingestion time)'}${tp.expirationMs ? `, partitions expire after ${Number(tp.expirationMs) / 86_400_000} days` : ''}` : rp ? `RANGE_BUCKET(${rp.field}, GENERATE_ARRAY(${rp.range?.start}, ${rp.range?.end}, ${rp.range?.interval}))` : undefined],
          ['Partition filter required', t.requirePartitionFilter ? 'yes' : undefined],
          ['Clustered by', t.clustering?.fields?.join(', ')],
        ]}
      />
      {(t.view?.query ?? t.materializedView?.query) && (
        <>
          <h3>Query</h3>
          <pre class="sql">{t.view?.query ?? t.materializedView?.query}</pre>
        </>
      )}
    </>
  );
}

const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : typeof v === 'string' ? v : JSON.stringify(v));

function DatasetFacts(props: { d: Record<string, unknown> }) {
  const d = props.d;
  return (
    <Facts
      items={[
        ['Dataset ID', str(d['id'])],
        ['Description', str(d['description'])],
        ['Labels', labels(d['labels'] as Record<string, string> | undefined)],
        ['Location', str(d['location'])],
        ['Created', formatMillis(str(d['creationTime']))],
        ['Last modified', formatMillis(str(d['lastModifiedTime']))],
        ['Default table expiration', d['defaultTableExpirationMs'] ? `${Number(d['defaultTableExpirationMs']) / 86_400_000} days` : undefined],
        ['Time travel window', d['maxTimeTravelHours'] ? `${str(d['maxTimeTravelHours'])} hours` : undefined],
      ]}
    />
  );
}

function typeText(t: unknown): string {
  if (!t || typeof t !== 'object') return '';
  const o = t as { typeKind?: string; arrayElementType?: unknown; structType?: { fields?: { name?: string; type?: unknown }[] } };
  if (o.typeKind === 'ARRAY') return `ARRAY<${typeText(o.arrayElementType)}>`;
  if (o.typeKind === 'STRUCT') return `STRUCT<${(o.structType?.fields ?? []).map((f) => `${f.name ?? ''} ${typeText(f.type)}`.trim()).join(', ')}>`;
  return o.typeKind ?? '';
}

function RoutineFacts(props: { d: Record<string, unknown> }) {
  const d = props.d;
  const args = (d['arguments'] as { name?: string; dataType?: unknown; argumentKind?: string; mode?: string }[] | undefined) ?? [];
  return (
    <>
      <Facts
        items={[
          ['Type', str(d['routineType'])],
          ['Language', str(d['language'])],
          ['Arguments', args.map((a) => `${a.mode ? a.mode + ' ' : ''}${a.name ?? ''} ${a.argumentKind === 'ANY_TYPE' ? 'ANY TYPE' : typeText(a.dataType)}`).join(', ') || '(none)'],
          ['Returns', typeText(d['returnType']) || str((d['returnTableType'] as unknown) && 'TABLE')],
          ['Description', str(d['description'])],
          ['Created', formatMillis(str(d['creationTime']))],
          ['Last modified', formatMillis(str(d['lastModifiedTime']))],
        ]}
      />
      {str(d['definitionBody']) && (
        <>
          <h3>Definition</h3>
          <pre class="sql">{str(d['definitionBody'])}</pre>
        </>
      )}
    </>
  );
}

function ModelFacts(props: { d: Record<string, unknown> }) {
  const d = props.d;
  const cols = (k: string): string | undefined => (d[k] as { name?: string; type?: unknown }[] | undefined)?.map((c) => `${c.name ?? ''} ${typeText(c.type)}`).join(', ');
  return (
    <Facts
      items={[
        ['Model type', str(d['modelType'])],
        ['Description', str(d['description'])],
        ['Labels', labels(d['labels'] as Record<string, string> | undefined)],
        ['Feature columns', cols('featureColumns')],
        ['Label columns', cols('labelColumns')],
        ['Created', formatMillis(str(d['creationTime']))],
        ['Last modified', formatMillis(str(d['lastModifiedTime']))],
        ['Location', str(d['location'])],
      ]}
    />
  );
}

function Preview(props: { resource: Resource; fields: FieldSchema[] }) {
  const [rows, setRows] = useState<Row[]>([]);
  const [start, setStart] = useState(0);
  const [pageSize, setPageSize] = useState(100);
  const [total, setTotal] = useState(0);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string>();
  const load = async (s: number, size: number): Promise<void> => {
    setLoading(true);
    try {
      const r = await api<{ rows?: Row[]; totalRows?: string }>('GET', `${path(props.resource)}/data`, {
        query: { startIndex: s, maxResults: size, 'formatOptions.useInt64Timestamp': true },
      });
      setRows(r.rows ?? []);
      setTotal(Number(r.totalRows ?? 0));
      setStart(s);
      setError(undefined);
    } catch (e) {
      setError((e as Error).message);
    }
    setLoading(false);
  };
  useEffect(() => void load(0, pageSize), []);
  const decoded = useMemo(() => decodeRows(props.fields, rows), [rows, props.fields]);
  return (
    <>
      <ErrorBox error={error} />
      <ResultGrid
        label="Table preview"
        fields={props.fields}
        rows={decoded}
        paging={{ start, pageSize, total, loading, onPage: (s) => void load(s, pageSize), onPageSize: (n) => { setPageSize(n); void load(0, n); } }}
      />
    </>
  );
}
