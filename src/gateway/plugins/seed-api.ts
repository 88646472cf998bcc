// Production seed API (spec §1.3.3, §4.13). This build has no production
// reader: an accepted, valid POST answers 501 pointing at --seed-data-file.
// The gates (loopback, token) and request validation run first so callers
// see the same rejections a full build would give.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayContext } from '../context.js';
import { invalid, notFound, notImplemented, RestError } from '../errors.js';
import { bodyObject, isObj, str } from '../validate.js';

function isLoopback(addr: string | undefined): boolean {
  if (!addr) return false;
  if (addr === '::1') return true;
  const v4 = addr.startsWith('::ffff:') ? addr.slice(7) : addr;
  return /^127\./.test(v4);
}

function gate(req: FastifyRequest, ctx: GatewayContext): void {
  if (!ctx.config.seedApiAllowRemote && !isLoopback(req.socket.remoteAddress)) {
    throw new RestError(403, 'accessDenied', 'The seed API only accepts loopback callers (start with --seed-api-allow-remote to lift this).');
  }
  const token = ctx.config.seedApiSeedToken;
  if (token) {
    const sent = req.headers['x-warehouse-emulator-seed-token'] ?? req.headers['x-bigquery-emulator-seed-token'];
    if (sent !== token) throw new RestError(403, 'accessDenied', 'Missing or wrong X-Warehouse-Emulator-Seed-Token header.');
  }
}

export function validateSeedRequest(body: Record<string, unknown>): void {
  const source = body['source'];
  if (!isObj(source) || !str(source['project'])) throw invalid('source.project is required');
  if (str(source['table']) && !str(source['dataset'])) throw invalid('source.table requires source.dataset');
  const dest = body['destination'];
  if (dest !== undefined && dest !== null) {
    if (!isObj(dest)) throw invalid('destination must be an object');
    const sourceScope = str(source['table']) ? 'table' : str(source['dataset']) ? 'dataset' : 'project';
    if (sourceScope === 'project' && (str(dest['dataset']) || str(dest['table']))) {
      throw invalid('A project-scope source cannot be combined with a dataset- or table-scope destination');
    }
  }
  const max = body['maxRowsPerTable'];
  if (max !== undefined && max !== null && !(typeof max === 'number' && Number.isInteger(max) && max >= 0)) {
    throw invalid('maxRowsPerTable must be a non-negative integer');
  }
}

export function registerSeedApi(app: FastifyInstance, ctx: GatewayContext): void {
  if (!ctx.config.enableSeedApi) return;
  app.post('/api/emulator/seed', async (req) => {
    gate(req, ctx);
    validateSeedRequest(bodyObject(req.body));
    throw notImplemented('This emulator build has no production reader; seed local data with --seed-data-file (YAML) instead.');
  });
  app.get<{ Params: { id: string } }>('/api/emulator/seed/operations/:id', async (req) => {
    gate(req, ctx);
    throw notFound(`Not found: Seed operation ${req.params.id}`);
  });
}
