// Harness self-check: a tiny stand-in for the emulator's REST API whose
// queries are evaluated by the GoogleSQL reference implementation. Running the
// harness against it (`--url`) shows what the harness itself gets wrong: with
// a correct oracle behind the API, every failure of a plain SELECT case is a
// harness (parser/comparator/request) bug or a reference-vs-BigQuery dialect
// difference. Dev-only; needs `npm install --no-save @fivetrandevelopers/zetasql`.
//
//   node --import tsx conformance/refserver.ts [--port 9555]
//   node --import tsx conformance/run.ts --url http://127.0.0.1:9555
//
// Supported: datasets.insert, tables.insert (schema), insertAll, jobs.query of
// one SELECT or `CREATE TABLE t AS SELECT ...` (no DML, no scripts, no DDL).

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, languageOptions, restField, typeProtoOfField, valueProto, wireOf, type Call, type Column, type EvalResponse, type TypeProto, type ValueProto, type YamlField } from './lib/reference.js';
import type { QueryParameter, QueryParameterType, QueryParameterValue } from './lib/client.js';

interface Table { cols: Column[]; rows: ValueProto[][] }
const datasets = new Map<string, Map<string, Table>>();
let jobSeq = 0;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, message: string, reason = 'invalidQuery'): void {
  send(res, status, { error: { code: status, message, status: reason, errors: [{ domain: 'global', reason, message }] } });
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function paramTypeProto(t: QueryParameterType): TypeProto {
  if (t.type === 'ARRAY') return { type_kind: 'TYPE_ARRAY', array_type: { element_type: paramTypeProto(t.arrayType!) } };
  if (t.type === 'STRUCT') return { type_kind: 'TYPE_STRUCT', struct_type: { field: (t.structTypes ?? []).map((f) => ({ field_name: f.name ?? '', field_type: paramTypeProto(f.type) })) } };
  return typeProtoOfField({ name: 'p', type: t.type });
}

function paramJson(t: QueryParameterType, v: QueryParameterValue): unknown {
  if (t.type === 'ARRAY') return v.arrayValues ? v.arrayValues.map((e) => paramJson(t.arrayType!, e)) : null;
  if (t.type === 'STRUCT') {
    if (!v.structValues) return null;
    const o: Record<string, unknown> = {};
    for (const f of t.structTypes ?? []) o[f.name ?? ''] = paramJson(f.type, v.structValues[f.name ?? ''] ?? {});
    return o;
  }
  return v.value ?? null;
}

/** ValueProto → REST cell `v` (f/v encoding, int64 TIMESTAMP micros). */
function cellOf(t: TypeProto, v: ValueProto): unknown {
  if (!v.value) return t.type_kind === 'TYPE_ARRAY' ? [] : null;
  if (t.type_kind === 'TYPE_ARRAY') return (v.array_value?.element ?? []).map((e) => ({ v: cellOf(t.array_type!.element_type, e) }));
  if (t.type_kind === 'TYPE_STRUCT') return { f: t.struct_type!.field.map((f, i) => ({ v: cellOf(f.field_type, v.struct_value?.field?.[i] ?? {}) })) };
  const w = wireOf(t, v);
  return typeof w === 'number' ? String(w) : w === true || w === false ? String(w) : w;
}

async function evaluate(call: Call, lang: Record<string, unknown>, project: string, sql: string, defaultDataset: string | null, params: QueryParameter[], timeZone: string): Promise<EvalResponse> {
  const content: Record<string, unknown> = {};
  const top: unknown[] = [];
  const nested: unknown[] = [];
  for (const [key, tables] of datasets) {
    const [p, ds] = key.split('/');
    if (p !== project) continue;
    const list = [...tables.entries()].map(([name, t]) => ({ name, column: t.cols }));
    nested.push({ name: ds, table: list });
    if (ds === defaultDataset) top.push(...list);
    // content is keyed by bare table name: the default dataset's tables win
    for (const [name, t] of tables) {
      const data = { table_data: { row: t.rows.map((cells) => ({ cell: cells })) } };
      if (ds === defaultDataset || !(name in content)) content[name] = data;
      content[`${ds}.${name}`] = data;
      content[`${project}.${ds}.${name}`] = data;
    }
  }
  const ps = params.map((p) => {
    const type = paramTypeProto(p.parameterType);
    return { name: p.name ?? '', type, value: valueProto(type, paramJson(p.parameterType, p.parameterValue)) };
  });
  return call<EvalResponse>('EvaluateQuery', {
    sql,
    options: { language_options: lang, default_timezone: timeZone, query_parameters: ps.map((p) => ({ name: p.name, type: p.type })) },
    simple_catalog: { name: 'catalog', table: top, catalog: [...nested, { name: project, catalog: nested }], builtin_function_options: { language_options: lang } },
    table_content: content,
    params: ps.map((p) => ({ name: p.name, value: p.value })),
  });
}

async function main(): Promise<void> {
  const portArg = process.argv.indexOf('--port');
  const port = portArg > 0 ? Number(process.argv[portArg + 1]) : 9555;
  let ref = await connect();
  const lang = await languageOptions(ref.call);
  // The reference service can die on some inputs: restart it, and say which.
  let restarting: Promise<void> | null = null;
  const ensureAlive = async (lastQuery: string) => {
    if (ref.alive()) return;
    if (!restarting) {
      console.log(`refserver: reference service died (last query: ${lastQuery.replace(/\s+/g, ' ').slice(0, 300)}); restarting`);
      restarting = connect().then((r) => { ref = r; restarting = null; });
    }
    await restarting;
  };
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const p = url.pathname.replace(/^\/(bigquery|warehouse)\/v2/, '');
      if (p === '/healthz' || p === '/') return send(res, 200, { service: 'refserver', status: 'ok' });
      const body = req.method === 'POST' ? await readBody(req) : {};
      let m = /^\/projects\/([^/]+)\/datasets$/.exec(p);
      if (m && req.method === 'POST') {
        const ds = (body['datasetReference'] as { datasetId: string }).datasetId;
        const key = `${decodeURIComponent(m[1]!)}/${ds}`;
        if (datasets.has(key)) return error(res, 409, `Already Exists: Dataset ${key}`, 'duplicate');
        datasets.set(key, new Map());
        return send(res, 200, { kind: 'bigquery#dataset', datasetReference: body['datasetReference'] });
      }
      m = /^\/projects\/([^/]+)\/datasets\/([^/]+)\/tables$/.exec(p);
      if (m && req.method === 'POST') {
        const tables = datasets.get(`${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`);
        if (!tables) return error(res, 404, 'Not found: Dataset', 'notFound');
        const ref2 = body['tableReference'] as { tableId: string };
        const fields = ((body['schema'] as { fields?: YamlField[] } | undefined)?.fields) ?? [];
        try {
          tables.set(ref2.tableId, { cols: fields.map((f) => ({ name: f.name, type: typeProtoOfField(f) })), rows: [] });
        } catch (e) {
          return error(res, 400, (e as Error).message, 'invalid');
        }
        return send(res, 200, { kind: 'bigquery#table', tableReference: ref2 });
      }
      m = /^\/projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)\/insertAll$/.exec(p);
      if (m && req.method === 'POST') {
        const t = datasets.get(`${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`)?.get(decodeURIComponent(m[3]!));
        if (!t) return error(res, 404, 'Not found: Table', 'notFound');
        try {
          for (const r of (body['rows'] as Array<{ json: Record<string, unknown> }>) ?? []) t.rows.push(t.cols.map((c) => valueProto(c.type, r.json[c.name])));
        } catch (e) {
          return send(res, 200, { insertErrors: [{ index: 0, errors: [{ reason: 'invalid', message: (e as Error).message }] }] });
        }
        return send(res, 200, { kind: 'bigquery#tableDataInsertAllResponse' });
      }
      m = /^\/projects\/([^/]+)\/queries$/.exec(p);
      if (m && req.method === 'POST') {
        const project = decodeURIComponent(m[1]!);
        const query = String(body['query'] ?? '');
        const dd = (body['defaultDataset'] as { datasetId?: string } | undefined)?.datasetId ?? null;
        const params = (body['queryParameters'] as QueryParameter[] | undefined) ?? [];
        const props = (body['connectionProperties'] as Array<{ key: string; value: string }> | undefined) ?? [];
        const timeZone = props.find((cp) => cp.key === 'time_zone')?.value ?? 'UTC';
        const ctas = /^\s*CREATE\s+TABLE\s+([`\w.-]+)\s+AS\s+([\s\S]*)$/i.exec(query);
        // CREATE TABLE t (col TYPE, ...) with scalar column types
        const ddl = /^\s*CREATE\s+TABLE\s+([`\w.-]+)\s*\(([^()]*)\)\s*$/i.exec(query);
        if (ddl) {
          const parts = ddl[1]!.replace(/`/g, '').split('.');
          const name = parts.pop()!;
          const ds = parts.pop() ?? dd ?? '';
          const tables = datasets.get(`${parts.pop() ?? project}/${ds}`);
          if (!tables) return error(res, 404, `Not found: Dataset ${project}:${ds}`, 'notFound');
          try {
            const cols = ddl[2]!.split(',').map((c) => c.trim().split(/\s+/)).map(([n, t]) => ({ name: n!, type: typeProtoOfField({ name: n!, type: t! }) }));
            tables.set(name, { cols, rows: [] });
          } catch (e) {
            return error(res, 400, (e as Error).message);
          }
          return send(res, 200, { kind: 'bigquery#queryResponse', jobReference: { projectId: project, jobId: `job_${++jobSeq}` }, jobComplete: true, totalRows: '0' });
        }
        if (process.env['REFSERVER_LOG']) console.log(`query: ${query.replace(/\s+/g, ' ').slice(0, 300)}`);
        await ensureAlive('(before) ' + query);
        try {
          const r = await evaluate(ref.call, lang, project, ctas ? ctas[2]! : query, dd, params, timeZone);
          const cols = r.prepared?.columns ?? [];
          const rows = (r.content?.table_data?.row ?? []).map((row) => row.cell ?? []);
          const jobReference = { projectId: project, jobId: `job_${++jobSeq}` };
          if (ctas) {
            const parts = ctas[1]!.replace(/`/g, '').split('.');
            const name = parts.pop()!;
            const ds = parts.pop() ?? dd ?? '';
            const proj = parts.pop() ?? project;
            const tables = datasets.get(`${proj}/${ds}`);
            if (!tables) return error(res, 404, `Not found: Dataset ${proj}:${ds}`, 'notFound');
            tables.set(name, { cols: cols.map((c, i) => ({ name: c.name || `_col${i}`, type: c.type })), rows });
            return send(res, 200, { kind: 'bigquery#queryResponse', jobReference, jobComplete: true, totalRows: '0' });
          }
          return send(res, 200, {
            kind: 'bigquery#queryResponse',
            jobReference,
            jobComplete: true,
            schema: { fields: cols.map((c, i) => restField(c.name || `f${i}_`, c.type)) },
            rows: rows.map((cells) => ({ f: cols.map((c, i) => ({ v: cellOf(c.type, cells[i] ?? {}) })) })),
            totalRows: String(rows.length),
          });
        } catch (e) {
          const msg = (e as { details?: string }).details ?? (e as Error).message;
          await new Promise((r) => setTimeout(r, 50));
          if (!ref.alive()) {
            await ensureAlive(query);
            return error(res, 500, `reference service crashed on this query`, 'internalError');
          }
          return error(res, 400, msg);
        }
      }
      error(res, 404, `refserver: ${req.method} ${p} not supported`, 'notFound');
    })().catch((e: unknown) => error(res, 500, String(e), 'internalError'));
  });
  server.listen(port, '127.0.0.1', () => console.log(`refserver: listening on http://127.0.0.1:${port}`));
  const stop = () => {
    ref.stop();
    server.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
