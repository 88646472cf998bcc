// datasets.* (spec §4.2): REST shaping and validation here, catalog rules in the engine.
import type { FastifyInstance } from 'fastify';
import type { Family, GatewayContext } from '../context.js';
import { kind } from '../context.js';
import { invalid, notFound, notImplemented } from '../errors.js';
import { bodyObject, checkDatasetId, checkProjectId, isObj, qBool, qInt, qStr, str, type Json, type Query } from '../validate.js';
import { accessBindings, accessMember, iamRole, legacyRole, memberToAccess, type AccessEntry } from '../../storage/dataset-access.js';
import { checkIfMatch, etagOf, listItems, noContent, policyBindings, resourceOut, type DatasetParams, type ProjectParams } from './common.js';

function rejectExternal(body: Record<string, unknown>): void {
  if (body['externalDatasetReference'] !== undefined && body['externalDatasetReference'] !== null) {
    throw notImplemented('externalDatasetReference is not supported by the emulator');
  }
}

/** Body datasetReference must agree with the URL; missing parts are filled from it (Node omits projectId). */
function reconcileReference(body: Record<string, unknown>, projectId: string, datasetId: string | undefined): string {
  const ref = isObj(body['datasetReference']) ? { ...body['datasetReference'] } : {};
  const bodyProject = str(ref['projectId']);
  if (bodyProject && bodyProject !== projectId) {
    throw invalid(`Project ID in the dataset reference (${bodyProject}) doesn't match the project ID in the request (${projectId}).`);
  }
  const bodyDataset = str(ref['datasetId']);
  if (datasetId !== undefined && bodyDataset && bodyDataset !== datasetId) {
    throw invalid(`Dataset ID in the dataset reference (${bodyDataset}) doesn't match the dataset ID in the request (${datasetId}).`);
  }
  const id = datasetId ?? bodyDataset;
  if (!id) throw invalid('Required parameter is missing: datasetReference.datasetId');
  checkDatasetId(id);
  body['datasetReference'] = { projectId, datasetId: id };
  return id;
}

/**
 * The Dataset resource's ranges (datasets reference; the DDL options check the same in
 * planner/ddl-common.ts): defaultTableExpirationMs "the minimum lifetime value is 3600000
 * milliseconds (one hour)", 0 clearing it; maxTimeTravelHours "from 48 to 168 hours", in whole
 * days (time-travel page); defaultPartitionExpirationMs a lifetime, never negative. The JSON
 * types (and int64 range) are checked before, by body-schema.
 */
function checkDatasetRanges(body: Json): void {
  const int = (k: string): bigint | undefined => {
    const v = body[k];
    return typeof v === 'number' || (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) ? BigInt(typeof v === 'number' ? Math.trunc(v) : v.trim()) : undefined;
  };
  const table = int('defaultTableExpirationMs');
  if (table !== undefined && table !== 0n && table < 3_600_000n) {
    throw invalid(`Invalid value for defaultTableExpirationMs: ${table}; the minimum lifetime is 3600000 milliseconds (one hour), or 0 for none`);
  }
  const partition = int('defaultPartitionExpirationMs');
  if (partition !== undefined && partition < 0n) throw invalid(`Invalid value for defaultPartitionExpirationMs: ${partition}; it must not be negative`);
  const hours = int('maxTimeTravelHours');
  if (hours !== undefined && (hours < 48n || hours > 168n || hours % 24n !== 0n)) {
    throw invalid(`Invalid value for maxTimeTravelHours: ${hours}; it must be a multiple of 24 from 48 to 168`);
  }
}

/** int64 fields of the Dataset resource: JSON strings on the wire (bq sends them as numbers and they are stored as sent). */
const INT64_FIELDS = ['defaultTableExpirationMs', 'defaultPartitionExpirationMs', 'maxTimeTravelHours'];

function datasetOut(text: string, family: Family): Json {
  const out = resourceOut(text, family, 'dataset');
  for (const k of INT64_FIELDS) if (typeof out[k] === 'number') out[k] = String(out[k]);
  return out;
}

export function registerDatasets(app: FastifyInstance, ctx: GatewayContext, family: Family): void {
  const base = '/projects/:projectId/datasets';

  app.get<{ Params: ProjectParams; Querystring: Query }>(base, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const q = req.query;
    const reply = await ctx.call('ListDatasets', {
      project_id: p,
      page_token: qStr(q, 'pageToken') ?? '',
      max_results: qInt(q, 'maxResults') ?? 0,
      filter: qStr(q, 'filter') ?? '',
      all: qBool(q, 'all') ?? false,
    });
    const datasets = listItems(reply, family, 'dataset');
    const out: Record<string, unknown> = { kind: kind(family, 'datasetList'), etag: etagOf(reply.items_json.join('\n')) };
    if (datasets.length) out['datasets'] = datasets;
    if (reply.next_page_token) out['nextPageToken'] = reply.next_page_token;
    return out;
  });

  app.post<{ Params: ProjectParams; Querystring: Query }>(base, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const body = { ...bodyObject(req.body) };
    rejectExternal(body);
    checkDatasetRanges(body);
    const d = reconcileReference(body, p, undefined);
    if (!str(body['location'])) body['location'] = ctx.config.defaultDatasetLocation;
    const r = await ctx.call('InsertDataset', { project_id: p, dataset_id: d, resource_json: JSON.stringify(body) });
    return datasetOut(r.resource_json, family);
  });

  app.get<{ Params: DatasetParams }>(`${base}/:datasetId`, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const r = await ctx.call('GetDataset', { project_id: p, dataset_id: d });
    return datasetOut(r.resource_json, family);
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<{ Params: DatasetParams }>({
      method,
      url: `${base}/:datasetId`,
      handler: async (req) => {
        const p = checkProjectId(req.params.projectId);
        const d = checkDatasetId(req.params.datasetId);
        const body = { ...bodyObject(req.body) };
        rejectExternal(body);
        checkDatasetRanges(body);
        reconcileReference(body, p, d);
        if (req.headers['if-match']) checkIfMatch(req.headers['if-match'], JSON.parse((await ctx.call('GetDataset', { project_id: p, dataset_id: d })).resource_json).etag);
        const r = await ctx.call('UpdateDataset', {
          project_id: p,
          dataset_id: d,
          resource_json: JSON.stringify(body),
          options: method === 'PATCH' ? { patch: 'true' } : {},
        });
        return datasetOut(r.resource_json, family);
      },
    });
  }

  app.delete<{ Params: DatasetParams; Querystring: Query }>(`${base}/:datasetId`, async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const deleteContents = qBool(req.query, 'deleteContents') ?? false;
    await ctx.call('DeleteDataset', { project_id: p, dataset_id: d, options: { deleteContents: String(deleteContents) } });
    return noContent(reply);
  });

  // Colon methods on a dataset (`{datasetId}:undelete`, the IAM methods): the router hands us the whole segment.
  app.post<{ Params: DatasetParams }>(`${base}/:datasetId`, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const seg = req.params.datasetId;
    const colon = seg.lastIndexOf(':');
    const verb = colon >= 0 ? seg.slice(colon + 1) : '';
    if (!['undelete', 'getIamPolicy', 'setIamPolicy', 'testIamPermissions'].includes(verb)) throw notFound(`Not found: POST ${req.url.split('?')[0]}`);
    const d = checkDatasetId(seg.slice(0, colon));
    const body = bodyObject(req.body);
    if (verb === 'undelete') {
      const r = await ctx.call('UndeleteDataset', { project_id: p, dataset_id: d, resource_json: JSON.stringify(body) });
      return datasetOut(r.resource_json, family);
    }
    const access = (): Promise<AccessEntry[]> =>
      ctx.call('GetDataset', { project_id: p, dataset_id: d }).then((r) => (JSON.parse(r.resource_json) as { access?: AccessEntry[] }).access ?? []);
    if (verb === 'testIamPermissions') {
      await access();
      const perms = Array.isArray(body['permissions']) ? body['permissions'].filter((x): x is string => typeof x === 'string') : [];
      return perms.length ? { permissions: perms } : {};
    }
    if (verb === 'setIamPolicy') {
      // The policy's bindings replace the access list's role entries (view, routine and dataset entries stay), as the service keeps one list.
      // An entry whose grant the policy keeps stays as it was (a project special group keeps its specialGroup form).
      const bindings = policyBindings(body);
      const before = await access();
      const kept = before.filter((e) => typeof e.role !== 'string');
      const granted = bindings.flatMap((b) =>
        b.members.map((m) => before.find((e) => e.role && iamRole(e.role) === iamRole(b.role) && accessMember(e, p) === m) ?? { role: legacyRole(b.role), ...memberToAccess(m) }),
      );
      await ctx.call('UpdateDataset', { project_id: p, dataset_id: d, resource_json: JSON.stringify({ access: [...granted, ...kept] }), options: { patch: 'true' } });
    }
    // The dataset's access list as IAM bindings (the three basic roles in their roles/bigquery.data* form).
    const bindings = accessBindings(await access(), p);
    return { version: 1, etag: etagOf(JSON.stringify(bindings)), ...(bindings.length ? { bindings } : {}) };
  });
}

