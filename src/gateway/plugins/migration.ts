// Migration workflows (spec §4.10): an in-process store, no translation, no execution.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { bodyObject, qInt, qStr, type Json, type Query } from '../validate.js';

interface Params { projectId: string; location: string; workflowId: string }

const MAX_WORKFLOWS = 10_000;

export function registerMigration(app: FastifyInstance): void {
  const store = new Map<string, Json>();
  for (const version of ['v2alpha', 'v2']) {
    const coll = `/${version}/projects/:projectId/locations/:location/workflows`;
    const nameOf = (p: Params, id: string): string => `projects/${p.projectId}/locations/${p.location}/workflows/${id}`;
    const get = (p: Params, id: string): Json => {
      const w = store.get(nameOf(p, id));
      if (!w) throw notFound(`Not found: Migration workflow ${nameOf(p, id)}`);
      return w;
    };

    app.get<{ Params: Params; Querystring: Query }>(coll, async (req) => {
      const prefix = nameOf(req.params, '');
      const all = [...store.values()].filter((w) => String(w['name']).startsWith(prefix));
      const start = Number(qStr(req.query, 'pageToken') ?? '0') || 0;
      const size = qInt(req.query, 'pageSize') ?? 100;
      const page = all.slice(start, start + size);
      return { migrationWorkflows: page, ...(start + size < all.length ? { nextPageToken: String(start + size) } : {}) };
    });

    app.post<{ Params: Params }>(coll, async (req) => {
      const body = bodyObject(req.body);
      const now = new Date().toISOString();
      const w: Json = { ...body, name: nameOf(req.params, randomUUID()), state: 'DRAFT', createTime: now, lastUpdateTime: now };
      if (store.size >= MAX_WORKFLOWS) store.delete(store.keys().next().value as string);
      store.set(w['name'] as string, w);
      return w;
    });

    app.get<{ Params: Params }>(`${coll}/:workflowId`, async (req) => get(req.params, req.params.workflowId));

    app.delete<{ Params: Params }>(`${coll}/:workflowId`, async (req) => {
      get(req.params, req.params.workflowId);
      store.delete(nameOf(req.params, req.params.workflowId));
      return {};
    });

    // `{workflowId}:start`
    app.post<{ Params: Params }>(`${coll}/:workflowId`, async (req) => {
      const seg = req.params.workflowId;
      const colon = seg.lastIndexOf(':');
      if (colon < 0 || seg.slice(colon + 1) !== 'start') throw notFound(`Not found: POST ${req.url.split('?')[0]}`);
      const w = get(req.params, seg.slice(0, colon));
      w['state'] = 'RUNNING';
      w['lastUpdateTime'] = new Date().toISOString();
      return {};
    });
  }
}
