// tables.* (spec §4.3) and the IAM stubs on tables.
import { deletePartition } from '../jobs/partition-copy.js';
import type { FastifyInstance } from 'fastify';
import type { Family, GatewayContext } from '../context.js';
import { kind } from '../context.js';
import { invalid, notFound, notImplemented, RestError } from '../errors.js';
import { bodyObject, checkDatasetId, checkProjectId, checkTableId, isObj, qInt, qStr, schemaFieldsIn, str, type Json, type Query } from '../validate.js';
import { checkIfMatch, etagOf, int64Strings, listItems, noContent, policyBindings, resourceOut, type DatasetParams, type TableParams } from './common.js';
import { materializeExternal, rejectUnsupportedExternal, type RestField } from '../jobs/data-jobs.js';
import { anonymousTable, isAnonDataset } from './anon-tables.js';

/** 501 rules of §4.3.1. */
function reject501(body: Json): void {
  if (body['biglakeConfiguration'] != null) throw notImplemented('biglakeConfiguration is not supported by the emulator');
  if (body['objectTableOptions'] != null) throw notImplemented('objectTableOptions is not supported by the emulator');
  const ext = body['externalDataConfiguration'];
  if (isObj(ext) && String(ext['sourceFormat'] ?? '').toUpperCase() === 'OBJECT_TABLE') {
    throw notImplemented('Object tables (sourceFormat OBJECT_TABLE) are not supported by the emulator');
  }
}

function reconcileReference(body: Json, p: string, d: string, t: string | undefined): string {
  const ref = isObj(body['tableReference']) ? body['tableReference'] : {};
  const bp = str(ref['projectId']);
  const bd = str(ref['datasetId']);
  const bt = str(ref['tableId']);
  if (bp && bp !== p) throw invalid(`Project ID in the table reference (${bp}) doesn't match the project ID in the request (${p}).`);
  if (bd && bd !== d) throw invalid(`Dataset ID in the table reference (${bd}) doesn't match the dataset ID in the request (${d}).`);
  if (t !== undefined && bt && bt !== t) throw invalid(`Table ID in the table reference (${bt}) doesn't match the table ID in the request (${t}).`);
  const id = t ?? bt;
  if (!id) throw invalid('Required parameter is missing: tableReference.tableId');
  checkTableId(id);
  body['tableReference'] = { projectId: p, datasetId: d, tableId: id };
  return id;
}

/**
 * A view inserted or updated through REST is checked as the real service
 * checks it: its query is planned (a dry run), and a query the service would
 * refuse (syntax, unknown names, missing tables: the engine's 4xx) refuses the
 * request. It gets the schema the service reports for it (bq show prints it),
 * the columns of its query, unless the body gives one. An engine failure of
 * its own (5xx) leaves the view stored as given: querying it reports the error.
 * Legacy SQL views are stored unchecked.
 */
async function checkView(ctx: GatewayContext, p: string, body: Json): Promise<void> {
  const v = isObj(body['view']) ? body['view'] : isObj(body['materializedView']) ? body['materializedView'] : undefined;
  const query = v ? str(v['query']) : undefined;
  if (!query || v?.['useLegacySql'] === true) return;
  try {
    const r = await ctx.call('ExecuteQuery', {
      project_id: p, job_id: '', query, dry_run: true, view_body: true, write_disposition: '', create_disposition: '', table_definitions_json: '',
      jobs_snapshot_json: '', location: '', session_id: '', max_results: -1, timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: false,
    });
    if (r.schema_json && !isObj(body['schema'])) body['schema'] = JSON.parse(r.schema_json) as Json;
  } catch (e) {
    if (e instanceof RestError && e.code >= 400 && e.code < 500) throw e;
  }
}

/** int64 fields of the Table resource a client may send as JSON numbers (the service echoes strings). */
const INT64_FIELDS = ['expirationTime', 'timePartitioning.expirationMs', 'rangePartitioning.range.start', 'rangePartitioning.range.end', 'rangePartitioning.range.interval'];

/** What tables.get?view=BASIC leaves out: the storage statistics (the default view, STORAGE_STATS, has them). */
const STORAGE_STATS = [
  'numBytes', 'numLongTermBytes', 'numRows', 'numActiveLogicalBytes', 'numLongTermLogicalBytes', 'numTotalLogicalBytes',
  'numActivePhysicalBytes', 'numLongTermPhysicalBytes', 'numTotalPhysicalBytes', 'numTimeTravelPhysicalBytes', 'numPhysicalBytes',
  'numCurrentPhysicalBytes', 'lastModifiedTime', 'streamingBuffer',
];

/**
 * A table's default collation (its own, else its dataset's) applies to its
 * STRING fields that name none, as the service stores it (recursively into RECORDs).
 * `only`: just these fields (new ones of an update).
 */
function applyCollation(fields: RestField[], collation: string, only?: (f: RestField) => boolean): RestField[] {
  return fields.map((f) => {
    if (only && !only(f)) return f;
    const t = String(f.type ?? '').toUpperCase();
    if ((t === 'RECORD' || t === 'STRUCT') && Array.isArray(f.fields)) return { ...f, fields: applyCollation(f.fields, collation) };
    return t === 'STRING' && f['collation'] === undefined ? { ...f, collation } : f;
  });
}

function fieldsOfBody(body: Json): RestField[] | undefined {
  const s = body['schema'];
  return isObj(s) && Array.isArray(s['fields']) ? (s['fields'] as RestField[]) : undefined;
}

/** int64 members of the body as the service echoes them (strings), its schema's fields too (schemaFieldsIn). */
function normalizeInt64s(body: Json): void {
  int64Strings(body, INT64_FIELDS);
  const fields = fieldsOfBody(body);
  if (fields) body['schema'] = { ...(body['schema'] as Json), fields: schemaFieldsIn(fields) };
}

/** tables.get?selectedFields=a,b: the schema of those top-level columns only (as ListRows selects them; `a.b` selects `a`). */
function selectSchema(table: Json, selected: string): void {
  const s = table['schema'];
  if (!isObj(s) || !Array.isArray(s['fields'])) return;
  const names = new Set(selected.split(',').map((n) => n.trim().split('.')[0]!.toLowerCase()));
  table['schema'] = { ...s, fields: (s['fields'] as RestField[]).filter((f) => names.has(f.name.toLowerCase())) };
}

export function registerTables(app: FastifyInstance, ctx: GatewayContext, family: Family): void {
  const base = '/projects/:projectId/datasets/:datasetId/tables';

  app.get<{ Params: DatasetParams; Querystring: Query }>(base, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const reply = await ctx.call('ListTables', {
      project_id: p,
      dataset_id: d,
      page_token: qStr(req.query, 'pageToken') ?? '',
      max_results: qInt(req.query, 'maxResults') ?? 0,
    });
    const tables = listItems(reply, family, 'table');
    const out: Json = { kind: kind(family, 'tableList'), etag: etagOf(reply.items_json.join('\n')) };
    if (tables.length) out['tables'] = tables;
    if (reply.next_page_token) out['nextPageToken'] = reply.next_page_token;
    out['totalItems'] = reply.total_items || tables.length;
    return out;
  });

  app.post<{ Params: DatasetParams }>(base, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const body = { ...bodyObject(req.body) };
    reject501(body);
    const t = reconcileReference(body, p, d, undefined);
    normalizeInt64s(body);
    const fields = fieldsOfBody(body);
    if (fields) {
      const collation = str(body['defaultCollation']) ?? str(JSON.parse((await ctx.call('GetDataset', { project_id: p, dataset_id: d })).resource_json).defaultCollation);
      if (collation) body['schema'] = { ...(body['schema'] as Json), fields: applyCollation(fields, collation) };
    }
    const ext = isObj(body['externalDataConfiguration']) ? body['externalDataConfiguration'] : undefined;
    if (ext) rejectUnsupportedExternal(ext);
    await checkView(ctx, p, body);
    const r = await ctx.call('InsertTable', { project_id: p, dataset_id: d, table_id: t, resource_json: JSON.stringify(body) });
    if (!ext) return resourceOut(r.resource_json, family, 'table');
    // External sources are read now and their rows stored (spec §4.3.2); a failed read undoes the insert.
    const ref = { project_id: p, dataset_id: d, table_id: t };
    const schemaOf = (v: unknown): RestField[] | undefined => (isObj(v) && Array.isArray(v['fields']) ? (v['fields'] as RestField[]) : undefined);
    try {
      await materializeExternal(ctx, ref, ext, schemaOf(body['schema']) ?? schemaOf(ext['schema']));
    } catch (e) {
      await ctx.call('DeleteTable', { project_id: p, dataset_id: d, table_id: t }).catch(() => undefined);
      throw e;
    }
    const fresh = await ctx.call('GetTable', { project_id: p, dataset_id: d, table_id: t });
    return resourceOut(fresh.resource_json, family, 'table');
  });

  app.get<{ Params: TableParams; Querystring: Query }>(`${base}/:tableId`, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const t = checkTableId(req.params.tableId);
    const options: Record<string, string> = {};
    const sel = qStr(req.query, 'selectedFields');
    if (sel) options['selectedFields'] = sel;
    const view = qStr(req.query, 'view');
    if (view) options['view'] = view;
    const anon = isAnonDataset(d) ? await anonymousTable(ctx, family, p, d, t) : undefined;
    if (anon) return anon;
    const r = await ctx.call('GetTable', { project_id: p, dataset_id: d, table_id: t, options });
    const out = resourceOut(r.resource_json, family, 'table');
    if (sel) selectSchema(out, sel);
    if (view?.toUpperCase() === 'BASIC') for (const k of STORAGE_STATS) delete out[k];
    return out;
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<{ Params: TableParams; Querystring: Query }>({
      method,
      url: `${base}/:tableId`,
      handler: async (req) => {
        const p = checkProjectId(req.params.projectId);
        const d = checkDatasetId(req.params.datasetId);
        const t = checkTableId(req.params.tableId);
        const body = { ...bodyObject(req.body) };
        reject501(body);
        reconcileReference(body, p, d, t);
        normalizeInt64s(body);
        const fields = fieldsOfBody(body);
        if (req.headers['if-match'] || fields) {
          const current = JSON.parse((await ctx.call('GetTable', { project_id: p, dataset_id: d, table_id: t })).resource_json) as Json;
          checkIfMatch(req.headers['if-match'], current['etag']);
          // Fields the update adds take the table's default collation (as it is after the update).
          const collation = body['defaultCollation'] !== undefined ? str(body['defaultCollation']) : str(current['defaultCollation']);
          const had = new Set((fieldsOfBody(current) ?? []).map((f) => f.name.toLowerCase()));
          if (fields && collation) body['schema'] = { ...(body['schema'] as Json), fields: applyCollation(fields, collation, (f) => !had.has(String(f.name).toLowerCase())) };
        }
        await checkView(ctx, p, body);
        const options: Record<string, string> = method === 'PATCH' ? { patch: 'true' } : {};
        const auto = qStr(req.query, 'autodetect_schema');
        if (auto) options['autodetectSchema'] = auto;
        const r = await ctx.call('UpdateTable', { project_id: p, dataset_id: d, table_id: t, resource_json: JSON.stringify(body), options });
        return resourceOut(r.resource_json, family, 'table');
      },
    });
  }

  app.delete<{ Params: TableParams }>(`${base}/:tableId`, async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const dollar = req.params.tableId.indexOf('$');
    if (dollar >= 0) {
      // A partition decorator deletes that partition only.
      const ref = { project_id: p, dataset_id: d, table_id: checkTableId(req.params.tableId.slice(0, dollar)) };
      await deletePartition(ctx, ref, req.params.tableId.slice(dollar + 1));
      return noContent(reply);
    }
    const t = checkTableId(req.params.tableId);
    await ctx.call('DeleteTable', { project_id: p, dataset_id: d, table_id: t });
    return noContent(reply);
  });

  // IAM stubs: `{tableId}:getIamPolicy` etc. They check the table exists and enforce nothing.
  app.post<{ Params: TableParams }>(`${base}/:tableId`, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const seg = req.params.tableId;
    const colon = seg.lastIndexOf(':');
    const verb = colon >= 0 ? seg.slice(colon + 1) : '';
    if (!['getIamPolicy', 'setIamPolicy', 'testIamPermissions'].includes(verb)) {
      throw notFound(`Not found: POST ${req.url.split('?')[0]}`);
    }
    const t = checkTableId(seg.slice(0, colon));
    const body = bodyObject(req.body);
    if (verb === 'getIamPolicy') {
      // The bindings GRANT/REVOKE keep on the table (omitted when there are none, as the service does).
      const r = await ctx.call('GetTable', { project_id: p, dataset_id: d, table_id: t, options: { iamPolicy: 'true' } });
      const policy = JSON.parse(r.resource_json || '{}') as { bindings?: unknown };
      const bindings = Array.isArray(policy.bindings) && policy.bindings.length ? policy.bindings : undefined;
      return { version: 1, etag: etagOf(JSON.stringify(bindings ?? [])), ...(bindings ? { bindings } : {}) };
    }
    if (verb === 'setIamPolicy') {
      // Replaces the bindings GRANT/REVOKE keep (what getIamPolicy and OBJECT_PRIVILEGES read); nothing is enforced.
      const bindings = policyBindings(body);
      await ctx.call('UpdateTable', { project_id: p, dataset_id: d, table_id: t, resource_json: JSON.stringify({ iamPolicy: { bindings } }), options: { iamPolicy: 'true' } });
      return { version: 1, etag: etagOf(JSON.stringify(bindings.length ? bindings : [])), ...(bindings.length ? { bindings } : {}) };
    }
    await ctx.call('GetTable', { project_id: p, dataset_id: d, table_id: t });
    const perms = Array.isArray(body['permissions']) ? body['permissions'].filter((x): x is string => typeof x === 'string') : [];
    return perms.length ? { permissions: perms } : {};
  });
}
