// Discovery documents: bq fetches /$discovery/rest?version=v2 for any non-Google --api,
// and ?version=v1 for its data transfer client (bq ls/mk/show --transfer_config).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { discoveryDocument } from '../discovery/document.js';
import { transferDiscoveryDocument } from '../discovery/transfer.js';

type Api = 'bigquery' | 'warehouse' | 'transfer';

function rootUrl(req: FastifyRequest): string {
  const proto = String(req.headers['x-forwarded-proto'] ?? req.protocol ?? 'http').split(',')[0]!.trim();
  const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost').split(',')[0]!.trim();
  return `${proto}://${host}/`;
}

export function registerDiscovery(app: FastifyInstance): void {
  // The v2 document is ~40 KB; cache the serialized text per (api, root).
  const cache = new Map<string, string>();
  const send = (api: Api, req: FastifyRequest, reply: FastifyReply) => {
    const root = rootUrl(req);
    const key = `${api} ${root}`;
    let text = cache.get(key);
    if (!text) {
      text = JSON.stringify(api === 'transfer' ? transferDiscoveryDocument(root) : discoveryDocument(api, root));
      if (cache.size > 64) cache.clear();
      cache.set(key, text);
    }
    return reply.type('application/json; charset=UTF-8').send(text);
  };
  app.get('/discovery/v1/apis/warehouse/v2/rest', (req, reply) => send('warehouse', req, reply));
  app.get('/discovery/v1/apis/bigquery/v2/rest', (req, reply) => send('bigquery', req, reply));
  app.get('/discovery/v1/apis/bigquerydatatransfer/v1/rest', (req, reply) => send('transfer', req, reply));
  app.get<{ Querystring: { version?: string } }>('/$discovery/rest', (req, reply) => send(req.query.version === 'v1' ? 'transfer' : 'bigquery', req, reply));
}
