// The web console (console/, built into dist/console/ by scripts/build.mjs):
// static files served at /console. Nothing is read until a browser asks, so a
// gateway whose console is never opened pays only for these two routes; the
// files are then held in memory (a few hundred KB) with their gzipped twins,
// and read again when a build replaces the directory.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { packageRoot } from '../paths.js';

export const CONSOLE_PATH = '/console/';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

/** Everything comes from this origin: the console loads nothing from the internet. */
const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; frame-ancestors 'self'";

interface Asset { type: string; body: Buffer; gzip: Buffer | undefined; etag: string }

let assets: { builtMs: number; files: Map<string, Asset> } | undefined;

/** The built files by name (names come from the directory, never from the URL); read again after a rebuild. */
function loadAssets(): Map<string, Asset> {
  const dir = join(packageRoot(), 'dist', 'console');
  let builtMs = 0;
  try {
    builtMs = statSync(dir).mtimeMs;
  } catch {
    // not built
  }
  if (assets && assets.builtMs === builtMs) return assets.files;
  const m = new Map<string, Asset>();
  if (builtMs) {
    for (const f of readdirSync(dir)) {
      if (f.endsWith('.gz')) continue;
      const gz = join(dir, f + '.gz');
      m.set(f, {
        type: TYPES[f.slice(f.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
        body: readFileSync(join(dir, f)),
        gzip: existsSync(gz) ? readFileSync(gz) : undefined,
        etag: `"${Math.round(builtMs).toString(36)}-${f}"`,
      });
    }
  }
  assets = { builtMs, files: m };
  return m;
}

function send(req: FastifyRequest, reply: FastifyReply, name: string): FastifyReply {
  const a = loadAssets().get(name);
  if (!a) {
    const missing = name === 'index.html' ? 'The console is not built: run `npm run build`.' : `Not found: ${name}`;
    return reply.code(404).type('text/plain; charset=utf-8').send(missing);
  }
  void reply.type(a.type).header('content-security-policy', CSP).header('x-content-type-options', 'nosniff')
    // index.html names the bundle without a hash: browsers revalidate, so a rebuilt console is seen on reload.
    .header('cache-control', 'no-cache').header('vary', 'accept-encoding').header('etag', a.etag);
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
  const accept = req.headers['accept-encoding'];
  if (a.gzip && typeof accept === 'string' && /\bgzip\b/.test(accept)) return reply.header('content-encoding', 'gzip').send(a.gzip);
  return reply.send(a.body);
}

/** True when `GET /` comes from a browser (it asks for HTML), which is sent to the console instead of the health answer. */
export function wantsConsole(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && accept.includes('text/html');
}

export function registerConsole(app: FastifyInstance): void {
  // `/console` and `/console/` are one route (ignoreTrailingSlash); index.html uses absolute asset paths.
  app.get('/console', (req, reply) => send(req, reply, 'index.html'));
  app.get<{ Params: { '*': string } }>('/console/*', (req, reply) => send(req, reply, req.params['*'] || 'index.html'));
}
