// Builds the Fastify app: cross-cutting hooks (auth parse, body decoding,
// request logging, the error envelope, 404/405) and the route plugins under
// every path family of naming.md.
import { createGunzip, createInflate, createBrotliDecompress } from 'node:zlib';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, type preValidationHookHandler } from 'fastify';
import { EMULATOR_PRINCIPAL_EMAIL, type Family, type GatewayContext, type Principal } from './context.js';
import { envelope, RestError, type ErrorInfo } from './errors.js';
import { registerHealth } from './plugins/health.js';
import { registerConsole } from './plugins/console.js';
import { registerDiscovery } from './plugins/discovery.js';
import { registerDatasets } from './plugins/datasets.js';
import { registerTables } from './plugins/tables.js';
import { registerTabledata } from './plugins/tabledata.js';
import { registerJobs } from './plugins/jobs.js';
import { registerUploads } from './plugins/uploads.js';
import { registerProjects } from './plugins/projects.js';
import { registerChildren } from './plugins/children.js';
import { registerMigration } from './plugins/migration.js';
import { registerTransfer } from './plugins/transfer.js';
import { registerSeedApi } from './plugins/seed-api.js';
import { InsertAllBody, splitInsertAllBody } from './insert-body.js';
import { checkBody, tooDeep, type BodyMessage } from './body-schema.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    startedAt: bigint;
  }
}

const BODY_LIMIT = 256 * 1024 * 1024;

/** REST families: prefix -> family. The bare prefix is what the Node client sends under BIGQUERY_EMULATOR_HOST. */
export const REST_PREFIXES: readonly (readonly [string, Family])[] = [
  ['/warehouse/v2', 'warehouse'],
  ['/bigquery/v2', 'bigquery'],
  ['', 'bigquery'],
];
export const UPLOAD_PREFIXES: readonly (readonly [string, Family])[] = [
  ['/upload/warehouse/v2', 'warehouse'],
  ['/upload/bigquery/v2', 'bigquery'],
  ['/resumable/upload/bigquery/v2', 'bigquery'],
  ['/bigquery/v2/upload/bigquery/v2', 'bigquery'],
  ['/warehouse/v2/upload/warehouse/v2', 'warehouse'],
];

export function parseAuthorization(header: string | undefined): Principal {
  if (header === undefined || header.trim() === '') {
    return { email: EMULATOR_PRINCIPAL_EMAIL, anonymous: true, credential: undefined };
  }
  const m = /^\s*bearer\s+(.*)$/i.exec(header);
  return { email: EMULATOR_PRINCIPAL_EMAIL, anonymous: false, credential: m ? m[1]!.trim() : header };
}

/**
 * The answer to a request Node's HTTP parser refused before Fastify saw it
 * (Fastify's default writes its own JSON shape): the envelope, then close.
 */
function clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const info: ErrorInfo =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? { code: 431, status: 'invalid', reason: 'invalid', message: `Request Header Fields Too Large: the request line and headers exceed ${maxHeaderSize} bytes.` }
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? { code: 408, status: 'deadlineExceeded', reason: 'timeout', message: 'The request was not received in time.' }
        : { code: 400, status: 'invalid', reason: 'invalid', message: `Bad Request: the HTTP request could not be parsed (${err.code ?? err.message}).` };
  if (socket.writable) {
    const body = JSON.stringify(envelope(info));
    socket.write(`HTTP/1.1 ${info.code} ${STATUS_CODES[info.code]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=UTF-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

function fastifyErrorInfo(err: FastifyError): ErrorInfo {
  if (typeof err.code === 'string' && err.code.startsWith('Z_')) {
    return { code: 400, status: 'invalid', reason: 'parseError', message: `Parse error: the request body could not be decompressed (${err.message})` };
  }
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      return { code: 400, status: 'invalid', reason: 'invalid', message: `Invalid request URL: ${err.message}` };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 413, status: 'payloadTooLarge', reason: 'invalid', message: `Request payload size exceeds the limit: ${BODY_LIMIT} bytes.` };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 400, status: 'invalid', reason: 'parseError', message: err.message };
    default:
      break;
  }
  // V8 giving out on what a client sent (a stack overflow walking a deep body, a string past its maximum length).
  if (err instanceof RangeError && /^(Maximum call stack size exceeded|Invalid (string|array) length)/.test(err.message)) {
    return { code: 400, status: 'invalid', reason: 'resourcesExceeded', message: `Resources exceeded: the request is too large or too deeply nested (${err.message}).` };
  }
  const code = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
  return {
    code,
    status: code === 500 ? 'internal' : 'invalid',
    reason: code === 500 ? 'internalError' : 'invalid',
    message: code === 500 ? `An internal error occurred and the request could not be completed. (${err.message})` : err.message,
  };
}

/** Request bodies by route: URL (suffix), methods, the body's message and its field in the request ('' = the whole request). */
const ROUTE_BODIES: readonly (readonly [RegExp, readonly string[], BodyMessage, string])[] = [
  [/\/projects\/:projectId\/datasets$/, ['POST'], 'Dataset', 'dataset'],
  [/\/datasets\/:datasetId$/, ['PUT', 'PATCH'], 'Dataset', 'dataset'],
  [/\/datasets\/:datasetId$/, ['POST'], 'UndeleteDatasetRequest', ''],
  [/\/tables$/, ['POST'], 'Table', 'table'],
  [/\/tables\/:tableId$/, ['PUT', 'PATCH'], 'Table', 'table'],
  [/\/tables\/:tableId$/, ['POST'], 'TableIamRequest', ''],
  [/\/insertAll$/, ['POST'], 'TableDataInsertAllRequest', ''],
  // Upload routes share the path; their bodies are bytes, which checkBody leaves alone.
  [/\/projects\/:projectId\/jobs$/, ['POST'], 'Job', 'job'],
  [/\/projects\/:projectId\/queries$/, ['POST'], 'QueryRequest', 'query_request'],
  [/\/routines(\/:routineId)?$/, ['POST', 'PUT'], 'Routine', 'routine'],
  [/\/models\/:modelId$/, ['PATCH'], 'Model', 'model'],
  [/\/rowAccessPolicies(\/:policyId)?$/, ['POST', 'PUT'], 'RowAccessPolicy', 'row_access_policy'],
];

/** Route patterns seen by onRoute, so the not-found handler can tell 404 from 405. */
class RouteIndex {
  private readonly routes: { re: RegExp; methods: Set<string> }[] = [];
  private readonly byUrl = new Map<string, { re: RegExp; methods: Set<string> }>();

  add(url: string, methods: string | string[]): void {
    let entry = this.byUrl.get(url);
    if (!entry) {
      const pattern = url
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      entry = { re: new RegExp('^' + pattern + '/?$'), methods: new Set() };
      this.byUrl.set(url, entry);
      this.routes.push(entry);
    }
    for (const m of Array.isArray(methods) ? methods : [methods]) entry.methods.add(m);
  }

  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.routes) if (r.re.test(path)) for (const m of r.methods) out.add(m);
    return [...out];
  }
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<CompilersFactory['buildValidator']>;
type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>;

/**
 * No route declares a JSON schema, yet Fastify loads ajv and
 * fast-json-stringify's compiler when it starts (~90 modules, a few MB of an
 * idle gateway). These factories load them only if a schema is ever compiled.
 */
const requireHere = createRequire(import.meta.url);
type AnyFactory = (externalSchemas?: unknown, options?: unknown) => unknown;
const lazyCompilers: CompilersFactory = {
  buildValidator: ((schemas?: unknown, options?: unknown) =>
    (requireHere('@fastify/ajv-compiler') as () => AnyFactory)()(schemas, options)) as ValidatorFactory,
  buildSerializer: ((schemas?: unknown, options?: unknown) =>
    (requireHere('@fastify/fast-json-stringify-compiler') as () => AnyFactory)()(schemas, options)) as SerializerFactory,
};

export async function buildServer(ctx: GatewayContext): Promise<FastifyInstance> {
  const app = Fastify({
    schemaController: { compilersFactory: lazyCompilers },
    logger: false,
    bodyLimit: BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 10_000, ignoreDuplicateSlashes: true },
    forceCloseConnections: true,
    // Long-polled getQueryResults may hold a request for timeoutMs.
    requestTimeout: 0,
    // Requests Node's HTTP parser refuses (a 70 KB URL, a malformed request line) get the envelope too.
    clientErrorHandler: clientError,
    // Errors raised before routing (bad percent-encoding) get the envelope too.
    frameworkErrors: (err, _req, reply) => {
      const info = fastifyErrorInfo(err);
      // The generic reply type here is too narrow for a computed status; the raw form is equivalent.
      (reply as unknown as FastifyReply).code(info.code).type('application/json; charset=UTF-8').send(envelope(info));
    },
  });

  const index = new RouteIndex();
  app.addHook('onRoute', (r) => {
    const url = r.url ?? r.path;
    index.add(url, r.method);
    // Routes that take a JSON body check its JSON types first (body-schema.ts).
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    const typed = ROUTE_BODIES.find(([re, ms]) => re.test(url) && methods.some((m) => ms.includes(m)));
    if (!typed) return;
    const [, , message, root] = typed;
    const check: preValidationHookHandler = (req, _reply, done) => {
      try {
        checkBody(message, req.body instanceof InsertAllBody ? req.body.rest : req.body, root);
      } catch (e) {
        done(e as Error);
        return;
      }
      done();
    };
    const before = r.preValidation;
    r.preValidation = before === undefined ? [check] : [...(Array.isArray(before) ? before : [before]), check];
  });

  // The principal is parsed when a handler reads it (a few job routes), not in
  // a hook on every request.
  app.decorateRequest('principal', {
    getter(this: FastifyRequest): Principal {
      return parseAuthorization(this.headers.authorization);
    },
  });
  app.decorateRequest('startedAt', 0n);

  // Hooks in callback form: an async hook costs a promise and a microtask hop
  // on every request, which shows on the SELECT 1 round trip.
  if (ctx.config.logRequests) {
    app.addHook('onRequest', (req, _reply, done) => {
      req.startedAt = process.hrtime.bigint();
      done();
    });
  }

  // gzip/deflate request bodies: decode before the content-type parser sees them.
  app.addHook('preParsing', (req, _reply, payload, done) => {
    const raw = req.headers['content-encoding'];
    const enc = raw === undefined ? '' : String(raw).toLowerCase().trim();
    if (enc === '' || enc === 'identity') {
      done(null, payload);
      return;
    }
    let decoder: NodeJS.ReadWriteStream;
    if (enc === 'gzip' || enc === 'x-gzip') decoder = createGunzip();
    else if (enc === 'deflate') decoder = createInflate();
    else if (enc === 'br') decoder = createBrotliDecompress();
    else {
      done(new RestError(415, 'invalid', `Unsupported Content-Encoding: ${enc}`));
      return;
    }
    const out = payload.pipe(decoder) as unknown as Readable & { receivedEncodedLength?: number };
    // Let Fastify's content-length check see the encoded size it expects.
    out.receivedEncodedLength = 0;
    payload.on('data', (b: Buffer) => {
      out.receivedEncodedLength = (out.receivedEncodedLength ?? 0) + b.length;
    });
    delete req.headers['content-length'];
    done(null, out);
  });

  // One parser for every content type: JSON wherever JSON is sent (bq, Node, curl
  // without a content-type); uploads keep the raw bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    if (req.url.includes('/upload/')) {
      done(null, body);
      return;
    }
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    if (req.url.includes('/insertAll')) {
      // insertAll: the rows bytes go to the engine undecoded and unparsed (see insert-body.ts).
      const split = splitInsertAllBody(body);
      if (split) {
        done(null, split);
        return;
      }
    }
    const text = body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    const deep = tooDeep(body);
    if (deep) {
      done(deep, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      done(new RestError(400, 'parseError', `Parse error: invalid JSON payload received. ${detail}`, 'invalid'), undefined);
    }
  });

  if (ctx.config.logRequests) app.addHook('onResponse', async (req, reply) => {
    const ms = Number(process.hrtime.bigint() - req.startedAt) / 1e6;
    const inBytes = req.headers['content-length'] ?? (req.headers['transfer-encoding'] ? 'chunked' : '0');
    const outBytes = reply.getHeader('content-length') ?? '?';
    ctx.log(`${req.method} ${req.url} -> ${reply.statusCode} (${ms.toFixed(1)} ms, in ${inBytes} B, out ${String(outBytes)} B)`);
  });

  app.setErrorHandler((err: FastifyError | RestError, _req: FastifyRequest, reply: FastifyReply) => {
    const info = err instanceof RestError ? err.toInfo() : fastifyErrorInfo(err as FastifyError);
    if (info.code >= 500 && info.code !== 501 && info.code !== 503) ctx.log(`internal error: ${(err as Error).stack ?? String(err)}`);
    void reply.code(info.code).type('application/json; charset=UTF-8').send(envelope(info));
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? req.url;
    const allowed = index.allowed(path).filter((m) => m !== req.method);
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      const info: ErrorInfo = {
        code: 405,
        status: 'methodNotAllowed',
        reason: 'invalid',
        message: `Request method '${req.method}' is not supported for ${path}. Allowed: ${allowed.sort().join(', ')}`,
      };
      void reply.code(405).header('allow', allowed.join(', ')).send(envelope(info));
      return;
    }
    void reply.code(404).send(envelope({ code: 404, status: 'notFound', reason: 'notFound', message: `Not found: ${req.method} ${path}` }));
  });

  await app.register(async (root) => {
    registerHealth(root, ctx.supervisor, ctx.config.console);
    if (ctx.config.console) registerConsole(root);
    registerDiscovery(root);
    registerMigration(root);
    registerTransfer(root);
    registerSeedApi(root, ctx);
    for (const [prefix, family] of REST_PREFIXES) {
      await root.register(
        async (sub) => {
          registerProjects(sub, ctx, family);
          registerDatasets(sub, ctx, family);
          registerTables(sub, ctx, family);
          registerTabledata(sub, ctx, family);
          registerChildren(sub, ctx, family);
          registerJobs(sub, ctx, family);
        },
        { prefix },
      );
    }
    for (const [prefix, family] of UPLOAD_PREFIXES) {
      await root.register(async (sub) => registerUploads(sub, ctx, family), { prefix });
    }
  });

  return app;
}
