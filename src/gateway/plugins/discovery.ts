// Discovery documents (bq fetches /$discovery/rest?version=v2 for any non-Google --api).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { discoveryDocument } from '../discovery/document.js';

function rootUrl(req: FastifyRequest): string {
  const proto = String(req.headers['x-forwarded-proto'] ?? req.protocol ?? 'http').split(',')[0]!.trim();
  const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost').split(',')[0]!.trim();
  return `${proto}://${host}/`;
}

export function registerDiscovery(app: FastifyInstance): void {
  // The document is ~40 KB; cache the serialized text per (api, root).
  const cache = new Map<string, string>();
  const serve = (api: 'bigquery' | 'warehouse') => async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const root = rootUrl(req);
    const key = `${api} ${root}`;
    let text = cache.get(key);
    if (!text) {
      text = JSON.stringify(discoveryDocument(api, root));
      if (cache.size > 64) cache.clear();
      cache.set(key, text);
    }
    return reply.type('application/json; charset=UTF-8').send(text);
  };
  app.get('/discovery/v1/apis/warehouse/v2/rest', serve('warehouse'));
  app.get('/discovery/v1/apis/bigquery/v2/rest', serve('bigquery'));
  app.get('/$discovery/rest', serve('bigquery'));
}
