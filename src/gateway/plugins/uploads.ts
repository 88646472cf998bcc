// Upload endpoints for load jobs (spec §4.5): multipart (job JSON part + data
// part) and resumable (POST metadata -> Location with upload_id, then PUT the
// bytes, maybe in Content-Range chunks answered 308 until complete).
//
// Request bodies are not parsed in memory: each is streamed to a spool file
// under `<data dir>/.uploads/` (gunzipped on the way when the request is
// Content-Encoding'd), and the load reads its data part from there, in
// chunks (io/stream.ts). Large uploads log their progress; the spool file is
// removed when the load ends. A gateway that dies leaves its spool files;
// the next start removes those of gateways no longer running.
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { appendFile, open, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import type { Family, GatewayContext } from '../context.js';
import { invalid, RestError } from '../errors.js';
import type { UploadedData } from '../jobs/data-jobs.js';
import { newJobId } from '../jobs/registry.js';
import { renderJob } from '../jobs/run.js';
import { checkBody, tooDeep } from '../body-schema.js';
import { checkJobId, checkProjectId, isObj, qStr, str, type Json, type Query } from '../validate.js';
import type { ProjectParams } from './common.js';
import { runDataJob } from './jobs.js';

interface UploadSession {
  projectId: string;
  metadata: Json;
  file: string;
  received: number;
  createdMs: number;
  userEmail: string;
}

const SESSION_TTL_MS = 60 * 60 * 1000;
const MAX_SESSIONS = 1000;
/** A progress line per this many bytes received. */
const LOG_EVERY = 256 * 1024 * 1024;
/** The metadata part of a multipart upload must end within this many bytes. */
const MAX_METADATA = 16 * 1024 * 1024;

/** Spool files and resumable sessions of one gateway (shared by every upload path prefix). */
class UploadStore {
  readonly dir: string;
  readonly sessions = new Map<string, UploadSession>();

  constructor(private readonly ctx: GatewayContext) {
    this.dir = join(ctx.config.dataDir, '.uploads');
    mkdirSync(this.dir, { recursive: true });
    for (const name of readdirSync(this.dir)) {
      const pid = Number(/^(\d+)-/.exec(name)?.[1]);
      if (pid !== process.pid && !alive(pid)) rmSync(join(this.dir, name), { force: true });
    }
  }

  newFile(): string {
    return join(this.dir, `${process.pid}-${randomBytes(8).toString('hex')}.upload`);
  }

  /** Appends a request body to `file`, logging progress of large uploads; returns the bytes written. */
  async spool(body: unknown, file: string, label: string, already = 0): Promise<number> {
    if (!isReadable(body)) {
      await appendFile(file, ''); // an empty body still makes (or keeps) the file
      return 0;
    }
    let n = 0;
    let nextLog = Math.ceil((already + 1) / LOG_EVERY) * LOG_EVERY;
    const started = Date.now();
    const count = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        n += chunk.length;
        if (already + n >= nextLog) {
          this.ctx.log(`upload ${label}: ${mb(already + n)} received (${mb((n / Math.max(1, Date.now() - started)) * 1000)}/s)`);
          nextLog += LOG_EVERY;
        }
        done(null, chunk);
      },
    });
    await pipeline(body, count, createWriteStream(file, { flags: 'a' }));
    if (already + n >= LOG_EVERY) this.ctx.log(`upload ${label}: complete, ${mb(already + n)}; loading`);
    return n;
  }

  expire(now: number): void {
    for (const [id, s] of this.sessions) {
      if (now - s.createdMs > SESSION_TTL_MS || this.sessions.size >= MAX_SESSIONS) {
        this.sessions.delete(id);
        void rm(s.file, { force: true });
      }
    }
  }
}

const stores = new WeakMap<GatewayContext, UploadStore>();

function alive(pid: number): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const isReadable = (v: unknown): v is Readable => typeof (v as Readable | undefined)?.pipe === 'function';
const mb = (bytes: number): string => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`);

async function readSmall(body: unknown, limit = 1024 * 1024): Promise<Buffer> {
  if (!isReadable(body)) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of body as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > limit) throw invalid('The job metadata of the upload is too large');
    parts.push(c);
  }
  return Buffer.concat(parts);
}

function metadataJson(buf: Buffer): Json {
  if (!buf.length) return {};
  const deep = tooDeep(buf);
  if (deep) throw deep;
  let v: unknown;
  try {
    v = JSON.parse(buf.toString('utf8'));
  } catch {
    // refused below
  }
  if (!isObj(v)) throw new RestError(400, 'parseError', 'Parse error: the job metadata of the upload is not a JSON object', 'invalid');
  checkBody('Job', v, 'job');
  return v;
}

/** Where a part's body starts: after its header block (a blank line; bare \n accepted). */
function afterHeaders(buf: Buffer, from: number): number {
  const crlf = buf.indexOf('\r\n\r\n', from);
  const lf = buf.indexOf('\n\n', from);
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return crlf + 4;
  return lf >= 0 ? lf + 2 : -1;
}

/** Cuts the line break that precedes a delimiter from a part's end. */
function trimBreak(buf: Buffer, end: number): number {
  if (buf[end - 1] === 0x0a) end--;
  if (buf[end - 1] === 0x0d) end--;
  return end;
}

/**
 * A spooled multipart/related body: the first part is the job's JSON, the
 * second its data, returned as a byte range of the file (read from its head
 * and tail only).
 */
export async function multipartLayout(file: string, contentType: string): Promise<{ metadata: Buffer; data: UploadedData }> {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!m) throw invalid('Multipart upload without a boundary');
  const delim = Buffer.from('--' + (m[1] ?? m[2]));
  const size = (await stat(file)).size;
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(Math.min(size, MAX_METADATA));
    await fh.read(head, 0, head.length, 0);
    const first = head.indexOf(delim);
    if (first < 0) throw invalid('Multipart upload without parts');
    const second = head.indexOf(delim, first + delim.length);
    const metaStart = afterHeaders(head, first + delim.length);
    if (metaStart < 0) throw invalid('Multipart upload without parts');
    const metadata = head.subarray(metaStart, second < 0 ? trimBreak(head, head.length) : trimBreak(head, second));
    // No data part: an empty range at the file's end (a range ending at 0 means the whole file to the engine).
    if (second < 0 || head[second + delim.length] === 0x2d) return { metadata, data: { path: file, start: size, end: size } };
    const dataStart = afterHeaders(head, second + delim.length);
    if (dataStart < 0) throw invalid('Multipart upload: the data part has no header block');
    // The data part ends at the last delimiter of the body (the closing `--boundary--`).
    const tailLen = Math.min(size - dataStart, 64 * 1024);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    const last = tail.lastIndexOf(delim);
    const end = last < 0 ? size : size - tailLen + trimBreak(tail, last);
    return { metadata, data: { path: file, start: dataStart, end: Math.max(dataStart, end) } };
  } finally {
    await fh.close();
  }
}

export function registerUploads(app: FastifyInstance, ctx: GatewayContext, family: Family): void {
  let store = stores.get(ctx);
  if (!store) stores.set(ctx, (store = new UploadStore(ctx)));
  const uploads = store;
  // Bodies reach the handlers as streams (decoded by the server's preParsing hook), not buffers.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  const startLoad = async (p: string, metadata: Json, data: UploadedData, userEmail: string, q: Query): Promise<Json> => {
    const ref = isObj(metadata['jobReference']) ? metadata['jobReference'] : {};
    const configuration = isObj(metadata['configuration']) ? metadata['configuration'] : undefined;
    if (!configuration || !isObj(configuration['load'])) throw invalid('Required parameter is missing: configuration.load');
    const job = await runDataJob(ctx, {
      projectId: p,
      jobId: str(ref['jobId']) ? checkJobId(str(ref['jobId'])!) : newJobId(),
      location: str(ref['location']) || qStr(q, 'location') || '',
      configuration,
      which: 'load',
      userEmail,
      uploaded: data,
    });
    return renderJob(job, family);
  };

  app.post<{ Params: ProjectParams; Querystring: Query }>('/projects/:projectId/jobs', async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const type = qStr(req.query, 'uploadType') ?? 'multipart';
    if (type === 'resumable') {
      const metadata = metadataJson(await readSmall(req.body));
      const now = Date.now();
      uploads.expire(now);
      const id = randomBytes(16).toString('hex');
      uploads.sessions.set(id, { projectId: p, metadata, file: uploads.newFile(), received: 0, createdMs: now, userEmail: req.principal.email });
      const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost');
      const path = req.url.split('?')[0];
      return reply.header('location', `${req.protocol}://${host}${path}?uploadType=resumable&upload_id=${id}`).send({});
    }
    if (type !== 'multipart') throw invalid(`Unsupported uploadType ${type}: use multipart or resumable`);
    const file = uploads.newFile();
    try {
      await uploads.spool(req.body, file, `multipart ${basename(file, '.upload')}`);
      const { metadata, data } = await multipartLayout(file, String(req.headers['content-type'] ?? ''));
      return await startLoad(p, metadataJson(metadata), data, req.principal.email, req.query);
    } finally {
      await rm(file, { force: true });
    }
  });

  app.put<{ Params: ProjectParams; Querystring: Query }>('/projects/:projectId/jobs', async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const id = qStr(req.query, 'upload_id') ?? '';
    const session = uploads.sessions.get(id);
    if (!session || session.projectId !== p) throw new RestError(404, 'notFound', `Not found: Upload session ${id}`);
    session.received += await uploads.spool(req.body, session.file, `resumable ${id.slice(0, 8)}`, session.received);
    // No Content-Range: the whole file in one PUT. `bytes a-b/*`: the total is not known yet, so more
    // chunks follow (the final one names it). `bytes a-b/N`: complete once N bytes are in.
    const m = /bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)/i.exec(String(req.headers['content-range'] ?? ''));
    if (m && (m[3] === '*' || session.received < Number(m[3]))) {
      if (session.received > 0) void reply.header('range', `bytes=0-${session.received - 1}`);
      return reply.code(308).send();
    }
    uploads.sessions.delete(id);
    try {
      return await startLoad(p, session.metadata, { path: session.file, start: 0, end: session.received }, session.userEmail, req.query);
    } finally {
      await rm(session.file, { force: true });
    }
  });
}
