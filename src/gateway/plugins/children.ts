// models, routines and row-access policies: metadata resources the engine keeps
// in its catalog, reached through PutChild/GetChild/ListChildren/DeleteChild.
import type { FastifyInstance } from 'fastify';
import type { Family, GatewayContext } from '../context.js';
import { invalid, RestError } from '../errors.js';
import { bodyObject, boolish, checkChildId, checkDatasetId, checkProjectId, checkTableId, isObj, qBool, qInt, qStr, str, type Json, type Query } from '../validate.js';
import { noContent, parseJson } from './common.js';
import { checkRoutine, listedRoutine, routineOut, routineTypeFilter } from './routines.js';

interface ChildKind {
  /** URL collection segment and ChildRequest.kind. */
  collection: 'models' | 'routines' | 'rowAccessPolicies';
  /** Id path parameter / reference field. */
  idField: 'modelId' | 'routineId' | 'policyId';
  refField: 'modelReference' | 'routineReference' | 'rowAccessPolicyReference';
  word: string;
  underTable: boolean;
}

const KINDS: ChildKind[] = [
  { collection: 'models', idField: 'modelId', refField: 'modelReference', word: 'model', underTable: false },
  { collection: 'routines', idField: 'routineId', refField: 'routineReference', word: 'routine', underTable: false },
  { collection: 'rowAccessPolicies', idField: 'policyId', refField: 'rowAccessPolicyReference', word: 'row access policy', underTable: true },
];

type Params = { projectId: string; datasetId: string; tableId?: string } & Record<string, string>;

export function registerChildren(app: FastifyInstance, _ctx: GatewayContext, _family: Family): void {
  for (const k of KINDS) registerKind(app, _ctx, k);
}

function registerKind(app: FastifyInstance, ctx: GatewayContext, k: ChildKind): void {
  const parent = k.underTable ? '/projects/:projectId/datasets/:datasetId/tables/:tableId' : '/projects/:projectId/datasets/:datasetId';
  const coll = `${parent}/${k.collection}`;
  const item = `${coll}/:${k.idField}`;
  const scope = (params: Params) => ({
    project_id: checkProjectId(params.projectId),
    dataset_id: checkDatasetId(params.datasetId),
    table_id: k.underTable ? checkTableId(params.tableId ?? '') : '',
    kind: k.collection,
  });
  const reference = (params: Params, id: string): Json => ({
    projectId: params.projectId,
    datasetId: params.datasetId,
    ...(k.underTable ? { tableId: params.tableId } : {}),
    [k.idField]: id,
  });
  /** Body reference must agree with the URL; fills what is missing. */
  const withReference = (params: Params, body: Json, urlId: string | undefined): { id: string; body: Json } => {
    const ref = isObj(body[k.refField]) ? body[k.refField] as Json : {};
    const bodyId = str(ref[k.idField]);
    if (urlId !== undefined && bodyId && bodyId !== urlId) {
      throw invalid(`${k.word} ID in the reference (${bodyId}) doesn't match the ${k.word} ID in the request (${urlId}).`);
    }
    const id = urlId ?? bodyId;
    if (!id) throw invalid(`Required parameter is missing: ${k.refField}.${k.idField}`);
    checkChildId(k.word, id);
    return { id, body: { ...body, [k.refField]: reference(params, id) } };
  };

  /** A routine as get / insert / update answer (routines.ts). */
  const shown = (r: Json): Json => (k.collection === 'routines' ? routineOut(r) : r);

  app.get<{ Params: Params; Querystring: Query }>(coll, async (req) => {
    const q = req.query;
    const routines = k.collection === 'routines';
    const routineType = routines ? routineTypeFilter(qStr(q, 'filter')) : undefined;
    const r = await ctx.call('ListChildren', {
      ...scope(req.params),
      page_token: qStr(q, 'pageToken') ?? '',
      max_results: qInt(q, 'maxResults') ?? qInt(q, 'pageSize') ?? 0,
      ...(routineType ? { routine_type: routineType } : {}),
    });
    const out: Json = {};
    const items = r.items_json.map((t) => parseJson(t, k.word)).map((item) => (routines ? listedRoutine(item, qStr(q, 'readMask')) : item));
    if (items.length) out[k.collection] = items;
    if (r.next_page_token) out['nextPageToken'] = r.next_page_token;
    return out;
  });

  app.get<{ Params: Params }>(item, async (req) => {
    const id = checkChildId(k.word, req.params[k.idField] ?? '');
    const r = await ctx.call('GetChild', { ...scope(req.params), child_id: id });
    return shown(parseJson(r.resource_json, k.word));
  });

  app.delete<{ Params: Params; Querystring: Query }>(item, async (req, reply) => {
    const id = checkChildId(k.word, req.params[k.idField] ?? '');
    // rowAccessPolicies.delete `force`: the table's last policy goes too (the engine refuses it otherwise).
    await ctx.call('DeleteChild', { ...scope(req.params), child_id: id, force: qBool(req.query, 'force') ?? false });
    return noContent(reply);
  });

  if (k.collection === 'rowAccessPolicies') {
    // rowAccessPolicies.batchDelete: {policyIds, force}, all deleted or (one missing, the last one without force) none.
    app.post<{ Params: Params }>(`${coll}::batchDelete`, async (req) => {
      const body = bodyObject(req.body);
      const raw = body['policyIds'];
      if (!Array.isArray(raw) || raw.length === 0) throw invalid('Required parameter is missing: policyIds');
      const ids = raw.map((x) => checkChildId(k.word, typeof x === 'string' ? x : ''));
      const force = body['force'] === undefined ? false : boolish(body['force']);
      if (force === undefined) throw invalid(`Invalid value for force: ${JSON.stringify(body['force'])}`);
      await ctx.call('DeleteChild', { ...scope(req.params), child_ids: ids, force });
      return {};
    });
  }

  // Models are created by CREATE MODEL only; routines and policies by REST too.
  const checked = (body: Json): Json => (k.collection === 'routines' ? checkRoutine(body) : body);
  if (k.collection !== 'models') {
    app.post<{ Params: Params }>(coll, async (req) => {
      const s = scope(req.params);
      const { id, body } = withReference(req.params, checked(bodyObject(req.body)), undefined);
      if (k.collection === 'rowAccessPolicies') await checkPolicy(ctx, s, body);
      const r = await ctx.call('PutChild', { ...s, child_id: id, resource_json: JSON.stringify(body), create_only: true });
      return shown(parseJson(r.resource_json, k.word));
    });
    app.put<{ Params: Params }>(item, async (req) => {
      const s = scope(req.params);
      const { id, body } = withReference(req.params, checked(bodyObject(req.body)), req.params[k.idField] ?? '');
      await ctx.call('GetChild', { ...s, child_id: id });
      if (k.collection === 'rowAccessPolicies') await checkPolicy(ctx, s, body);
      const r = await ctx.call('PutChild', { ...s, child_id: id, resource_json: JSON.stringify(body), create_only: false });
      return shown(parseJson(r.resource_json, k.word));
    });
  } else {
    // models.patch: merge the writable fields over the stored model.
    app.patch<{ Params: Params }>(item, async (req) => {
      const s = scope(req.params);
      const id = checkChildId(k.word, req.params[k.idField] ?? '');
      const current = parseJson((await ctx.call('GetChild', { ...s, child_id: id })).resource_json, k.word);
      const patch = bodyObject(req.body);
      const merged: Json = { ...current };
      for (const f of ['description', 'friendlyName', 'labels', 'expirationTime', 'encryptionConfiguration']) {
        if (f in patch) merged[f] = patch[f];
      }
      merged['lastModifiedTime'] = String(Date.now());
      const r = await ctx.call('PutChild', { ...s, child_id: id, resource_json: JSON.stringify(merged), create_only: false });
      return parseJson(r.resource_json, k.word);
    });
  }
}

/** rowAccessPolicies grantees (REST reference, grantees[]): a typed principal, or allUsers / allAuthenticatedUsers (as CREATE ROW ACCESS POLICY). */
const GRANTEE = /^(user|group|serviceAccount|domain):.+$|^(allUsers|allAuthenticatedUsers)$/;

/**
 * A row access policy from REST meets the rules CREATE ROW ACCESS POLICY checks (planner/ddl-access.ts):
 * filterPredicate "Required. A SQL boolean expression" over the table's columns, grantees principals.
 * The predicate is type-checked by a dry run of a query filtering the table by it, which runs nothing.
 */
async function checkPolicy(ctx: GatewayContext, s: { project_id: string; dataset_id: string; table_id: string }, body: Json): Promise<void> {
  const filter = body['filterPredicate'];
  if (typeof filter !== 'string' || filter.trim() === '') throw invalid('Required parameter is missing: filterPredicate');
  const grantees = body['grantees'];
  for (const g of Array.isArray(grantees) ? grantees : grantees === undefined || grantees === null ? [] : [grantees]) {
    if (typeof g !== 'string' || !GRANTEE.test(g)) {
      throw invalid(`Invalid grantee ${JSON.stringify(g)}: expected user:, group:, serviceAccount: or domain: followed by the principal, allUsers or allAuthenticatedUsers`);
    }
  }
  const table = '`' + `${s.project_id}.${s.dataset_id}.${s.table_id}`.replace(/[`\\]/g, '') + '`';
  const probe = (query: string) =>
    ctx.call('ExecuteQuery', {
      project_id: s.project_id, job_id: '', query, dry_run: true, write_disposition: '', create_disposition: '',
      table_definitions_json: '', jobs_snapshot_json: '', location: '', session_id: '', max_results: -1, timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: false,
    });
  const query = `SELECT 1 FROM ${table} WHERE (${filter}\n)`;
  const reply = await probe(query).catch(async (e: unknown) => {
    if (!(e instanceof RestError) || e.code !== 400) throw e;
    // A table that requires a partition filter: the predicate analyzed (that check comes after), so probe once more
    // with a partition filter keeping every row, for the statement's kind.
    const column = /without a filter over column\(s\) '([^']+)'/.exec(e.message)?.[1];
    if (column) return probe(`${query} AND (\`${column}\` IS NULL OR \`${column}\` IS NOT NULL)`);
    // The engine's words for the predicate, without the position in the query built here.
    throw invalid(`Invalid filterPredicate: ${e.message.replace(/ at \[\d+:\d+\]$/, '')}`);
  });
  // A predicate that closes the parenthesis and goes on (`TRUE); DROP ...`) makes a script, never one query.
  if (reply.statement_type !== 'SELECT') throw invalid('Invalid filterPredicate: it must be one boolean expression');
}
