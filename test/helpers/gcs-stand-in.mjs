// A STAND-IN for a Cloud Storage emulator, for tests only: no GCS emulator
// installs on this machine (fake-gcs-server is a Go binary found in neither npm
// nor Debian; the Python ones come from a registry we cannot reach). It speaks
// the part of the GCS JSON API that the emulator's gs:// loads/extracts and the
// real `@google-cloud/storage` client use: buckets (insert, get, list, delete),
// objects (simple, multipart and resumable uploads; metadata and media reads;
// prefix listings; delete). Objects carry md5Hash and crc32c (the client checks
// them after an upload and deletes the object when they are missing).
//
// Objects are files under the root directory (root/<bucket>/<encoded name>), so
// a worker thread serving HTTP and the test thread reading/writing fixtures see
// the same state. Paths are accepted with or without the `/storage/v1` prefix,
// since the client puts STORAGE_EMULATOR_HOST itself before `/b/...`.
//
// Run it as a worker (workerData = root directory; posts its port) or as a
// script: `node gcs-stand-in.mjs <root> [port]` prints the port.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

/** Where an object's bytes live: one file per object, its name percent-encoded (names may hold `/`). */
export function objectFile(root, bucket, name) {
  return join(root, bucket, encodeURIComponent(name));
}

const CRC32C = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

function crc32c(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC32C[(c ^ b) & 0xff] ^ (c >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32BE((c ^ 0xffffffff) >>> 0);
  return out.toString('base64');
}

function send(res, code, body, headers = {}) {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

function error(res, code, message, reason) {
  send(res, code, { error: { code, message, errors: [{ message, reason, domain: 'global' }] } });
}

/** Parts of a multipart/related body: [{headers text, data}]. */
function multipart(body, contentType) {
  const m = /boundary="?([^";]+)"?/i.exec(contentType || '');
  if (!m) return [];
  const delim = Buffer.from('--' + m[1]);
  const parts = [];
  let pos = body.indexOf(delim);
  while (pos >= 0) {
    let start = pos + delim.length;
    if (body[start] === 0x2d && body[start + 1] === 0x2d) break;
    if (body[start] === 0x0d) start++;
    if (body[start] === 0x0a) start++;
    const next = body.indexOf(delim, start);
    if (next < 0) break;
    let end = next;
    if (body[end - 1] === 0x0a) end--;
    if (body[end - 1] === 0x0d) end--;
    const part = body.subarray(start, end);
    const sep = part.indexOf('\r\n\r\n');
    parts.push(sep < 0 ? { headers: '', data: part } : { headers: part.subarray(0, sep).toString(), data: part.subarray(sep + 4) });
    pos = next;
  }
  return parts;
}

export function createGcsStandIn(root) {
  const sessions = new Map(); // resumable upload id -> {bucket, meta, chunks, received}
  const bucketDir = (b) => join(root, b);
  const bucketMetaFile = (b) => join(root, `${b}.bucket.json`);
  const hasBucket = (b) => existsSync(bucketDir(b)) && statSync(bucketDir(b)).isDirectory();
  const metaFile = (b, n) => objectFile(root, b, n) + '.meta.json';

  const bucketResource = (b) => {
    let meta = {};
    try {
      meta = JSON.parse(readFileSync(bucketMetaFile(b), 'utf8'));
    } catch {
      // a bucket made by mkdir (fixtures): defaults
    }
    const t = statSync(bucketDir(b)).birthtime.toISOString();
    return {
      kind: 'storage#bucket', id: b, name: b, selfLink: `/storage/v1/b/${b}`, projectNumber: '0', metageneration: '1',
      location: 'US', storageClass: 'STANDARD', etag: 'CAE=', timeCreated: t, updated: t, ...meta,
    };
  };

  const objectResource = (b, name) => {
    const file = objectFile(root, b, name);
    const data = readFileSync(file);
    const st = statSync(file);
    let extra = {};
    try {
      extra = JSON.parse(readFileSync(metaFile(b, name), 'utf8'));
    } catch {
      // written by the fixture helpers: no stored metadata
    }
    const generation = String(Math.floor(st.mtimeMs * 1000));
    return {
      kind: 'storage#object', id: `${b}/${name}/${generation}`, selfLink: `/storage/v1/b/${b}/o/${encodeURIComponent(name)}`,
      mediaLink: `/download/storage/v1/b/${b}/o/${encodeURIComponent(name)}?generation=${generation}&alt=media`,
      name, bucket: b, generation, metageneration: '1', contentType: 'application/octet-stream', storageClass: 'STANDARD',
      size: String(data.length), md5Hash: createHash('md5').update(data).digest('base64'), crc32c: crc32c(data),
      etag: 'CAE=', timeCreated: st.mtime.toISOString(), updated: st.mtime.toISOString(), ...extra,
    };
  };

  const store = (res, b, name, data, meta) => {
    if (!hasBucket(b)) return error(res, 404, 'The specified bucket does not exist.', 'notFound');
    if (!name) return error(res, 400, 'Required parameter: name', 'required');
    writeFileSync(objectFile(root, b, name), data);
    const keep = {};
    for (const k of ['contentType', 'metadata', 'contentEncoding', 'cacheControl']) if (meta && meta[k] !== undefined) keep[k] = meta[k];
    writeFileSync(metaFile(b, name), JSON.stringify(keep));
    return send(res, 200, objectResource(b, name));
  };

  const listObjects = (b, prefix) =>
    readdirSync(bucketDir(b))
      .filter((f) => !f.endsWith('.meta.json'))
      .map((f) => decodeURIComponent(f))
      .filter((n) => n.startsWith(prefix))
      .sort();

  const handle = (req, res, body) => {
    const u = new URL(req.url || '/', 'http://x');
    let p = u.pathname;
    let upload = false;
    let download = false;
    const up = p.indexOf('/upload/storage/v1/');
    if (up >= 0) {
      upload = true;
      p = p.slice(up + '/upload/storage/v1'.length);
    } else if (p.startsWith('/download/storage/v1/')) {
      download = true;
      p = p.slice('/download/storage/v1'.length);
    } else if (p.startsWith('/storage/v1/')) {
      p = p.slice('/storage/v1'.length);
    }
    const seg = p.split('/').slice(1);
    const q = u.searchParams;
    if (seg[0] !== 'b') return error(res, 404, `No such route ${req.method} ${u.pathname}`, 'notFound');
    const b = seg[1] ? decodeURIComponent(seg[1]) : undefined;

    if (upload) {
      if (!b || seg[2] !== 'o') return error(res, 404, 'Not Found', 'notFound');
      const type = q.get('uploadType') || 'media';
      if (req.method === 'POST' && type === 'media') return store(res, b, q.get('name'), body, {});
      if (req.method === 'POST' && type === 'multipart') {
        const [metaPart, dataPart] = multipart(body, req.headers['content-type']);
        const meta = metaPart ? JSON.parse(metaPart.data.toString() || '{}') : {};
        const ct = /content-type:\s*([^\r\n]+)/i.exec(dataPart?.headers ?? '');
        return store(res, b, meta.name || q.get('name'), dataPart ? dataPart.data : Buffer.alloc(0), { contentType: ct?.[1], ...meta });
      }
      if (req.method === 'POST' && type === 'resumable') {
        if (!hasBucket(b)) return error(res, 404, 'The specified bucket does not exist.', 'notFound');
        const meta = body.length ? JSON.parse(body.toString()) : {};
        const id = randomBytes(12).toString('hex');
        sessions.set(id, { bucket: b, meta: { ...meta, name: meta.name || q.get('name') }, chunks: [], received: 0 });
        const host = req.headers.host;
        return send(res, 200, undefined, { location: `http://${host}/upload/storage/v1/b/${encodeURIComponent(b)}/o?uploadType=resumable&upload_id=${id}` });
      }
      if (req.method === 'PUT' && type === 'resumable') {
        const s = sessions.get(q.get('upload_id') || '');
        if (!s) return error(res, 404, 'No such upload session', 'notFound');
        const range = /bytes (\*|(\d+)-(\d+))\/(\*|\d+)/.exec(String(req.headers['content-range'] || ''));
        if (body.length) {
          const at = range && range[2] !== undefined ? Number(range[2]) : s.received;
          if (at === s.received) {
            s.chunks.push(body);
            s.received += body.length;
          }
        }
        const total = range && range[4] !== '*' ? Number(range[4]) : range ? undefined : s.received;
        if (total === undefined || s.received < total) {
          res.writeHead(308, s.received ? { range: `bytes=0-${s.received - 1}` } : {});
          return res.end();
        }
        sessions.delete(q.get('upload_id'));
        return store(res, s.bucket, s.meta.name, Buffer.concat(s.chunks), s.meta);
      }
      return error(res, 400, `Unsupported upload ${req.method} ${type}`, 'invalid');
    }

    // Buckets
    if (!b) {
      if (req.method === 'POST') {
        let meta = {};
        try {
          meta = JSON.parse(body.toString() || '{}');
        } catch {
          return error(res, 400, 'Invalid JSON', 'parseError');
        }
        if (!meta.name) return error(res, 400, 'Required parameter: name', 'required');
        if (hasBucket(meta.name)) return error(res, 409, 'Your previous request to create the named bucket succeeded and you already own it.', 'conflict');
        mkdirSync(bucketDir(meta.name));
        const keep = {};
        for (const k of ['location', 'storageClass', 'labels']) if (meta[k] !== undefined) keep[k] = k === 'location' ? String(meta[k]).toUpperCase() : meta[k];
        writeFileSync(bucketMetaFile(meta.name), JSON.stringify(keep));
        return send(res, 200, bucketResource(meta.name));
      }
      if (req.method === 'GET') {
        const prefix = q.get('prefix') || '';
        const items = readdirSync(root, { withFileTypes: true })
          .filter((e) => e.isDirectory() && e.name.startsWith(prefix))
          .map((e) => bucketResource(e.name));
        return send(res, 200, { kind: 'storage#buckets', items });
      }
    }
    if (!hasBucket(b)) return error(res, 404, 'The specified bucket does not exist.', 'notFound');
    if (seg.length === 2) {
      if (req.method === 'GET') return send(res, 200, bucketResource(b));
      if (req.method === 'DELETE') {
        if (listObjects(b, '').length) return error(res, 409, 'The bucket you tried to delete is not empty.', 'conflict');
        rmSync(bucketDir(b), { recursive: true, force: true });
        rmSync(bucketMetaFile(b), { force: true });
        return send(res, 204);
      }
      if (req.method === 'PATCH') return send(res, 200, bucketResource(b));
    }
    if (seg[2] !== 'o') return error(res, 404, 'Not Found', 'notFound');

    // Objects
    if (seg.length === 3 && req.method === 'GET') {
      const prefix = q.get('prefix') || '';
      const items = listObjects(b, prefix).map((n) => objectResource(b, n));
      return send(res, 200, items.length ? { kind: 'storage#objects', items } : { kind: 'storage#objects' });
    }
    const name = decodeURIComponent(seg.slice(3).join('/'));
    const file = objectFile(root, b, name);
    if (!existsSync(file)) return error(res, 404, `No such object: ${b}/${name}`, 'notFound');
    if (req.method === 'DELETE') {
      rmSync(file, { force: true });
      rmSync(metaFile(b, name), { force: true });
      return send(res, 204);
    }
    if (req.method === 'GET' && (download || q.get('alt') === 'media')) {
      const o = objectResource(b, name);
      const data = readFileSync(file);
      res.writeHead(200, {
        'content-type': o.contentType,
        'content-length': data.length,
        'x-goog-hash': `crc32c=${o.crc32c},md5=${o.md5Hash}`,
        'x-goog-stored-content-encoding': 'identity',
        'x-goog-generation': o.generation,
      });
      return res.end(data);
    }
    if (req.method === 'GET' || req.method === 'PATCH') return send(res, 200, objectResource(b, name));
    return error(res, 405, `Unsupported ${req.method}`, 'invalid');
  };

  return http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (e) {
        error(res, 500, String(e && e.message), 'backendError');
      }
    });
  });
}

if (!isMainThread && parentPort && typeof workerData === 'string') {
  const server = createGcsStandIn(workerData);
  server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
} else if (isMainThread && process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const root = process.argv[2];
  mkdirSync(root, { recursive: true });
  const server = createGcsStandIn(root);
  server.listen(Number(process.argv[3] || 0), '127.0.0.1', () => console.log(server.address().port));
}
