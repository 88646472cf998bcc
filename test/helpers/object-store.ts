// Object stores for the tests of load/extract jobs, EXPORT DATA / LOAD DATA and
// JavaScript UDF libraries.
//
// s3://: s3rver, a real S3 emulator (path-style, anonymous requests), served in this
// process from a temp directory: what S3_ENDPOINT points at.
//
// gs://: a STAND-IN for the object-store emulator (fake-gcs-server), written here
// because no GCS emulator installs on this machine: fake-gcs-server is a Go binary
// (not in npm or Debian) and the Python ones come from a registry we cannot reach.
// It serves only the part of the GCS JSON API the emulator calls at
// STORAGE_EMULATOR_HOST: media uploads, object reads (alt=media, or metadata),
// prefix listings; buckets must exist (unknown ones are 404, as in GCS). It runs
// on a worker thread, because a JavaScript UDF reads its library synchronously
// (blocking this thread), and keeps objects as files under a temp directory so
// that both threads see them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import S3rver from 's3rver';

export interface ObjectStore {
  /** What STORAGE_EMULATOR_HOST (host:port) or S3_ENDPOINT (a URL) is set to. */
  endpoint: string;
  put(bucket: string, key: string, data: Buffer | string): Promise<void>;
  /** The object's bytes, undefined when it does not exist. */
  get(bucket: string, key: string): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

// CommonJS, evaluated on the worker: the stand-in's HTTP server over workerData (the root directory).
const GCS_STAND_IN = `
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { parentPort, workerData: root } = require('node:worker_threads');
function walk(dir, rel, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const r = rel ? rel + '/' + e.name : e.name;
    if (e.isDirectory()) walk(path.join(dir, e.name), r, out);
    else out.push(r);
  }
  return out;
}
function notFound(res) {
  res.statusCode = 404;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ error: { code: 404, message: 'Not Found', errors: [{ message: 'Not Found', reason: 'notFound' }] } }));
}
const server = http.createServer((req, res) => {
  const u = new URL(req.url || '/', 'http://x');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let m;
    const bucketDir = (b) => path.join(root, decodeURIComponent(b));
    if (req.method === 'POST' && (m = /^\\/upload\\/storage\\/v1\\/b\\/([^/]+)\\/o$/.exec(u.pathname))) {
      const name = u.searchParams.get('name');
      if (!fs.existsSync(bucketDir(m[1]))) return notFound(res);
      const file = path.join(bucketDir(m[1]), name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, Buffer.concat(chunks));
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ kind: 'storage#object', bucket: decodeURIComponent(m[1]), name, size: String(fs.statSync(file).size) }));
    }
    if (req.method === 'GET' && (m = /^\\/storage\\/v1\\/b\\/([^/]+)\\/o$/.exec(u.pathname))) {
      if (!fs.existsSync(bucketDir(m[1]))) return notFound(res);
      const prefix = u.searchParams.get('prefix') || '';
      const items = walk(bucketDir(m[1]), '', []).filter((n) => n.startsWith(prefix)).sort()
        .map((name) => ({ kind: 'storage#object', bucket: decodeURIComponent(m[1]), name }));
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify(items.length ? { kind: 'storage#objects', items } : { kind: 'storage#objects' }));
    }
    if (req.method === 'GET' && (m = /^\\/(download\\/)?storage\\/v1\\/b\\/([^/]+)\\/o\\/(.+)$/.exec(u.pathname))) {
      const name = decodeURIComponent(m[3]);
      const file = path.join(bucketDir(m[2]), name);
      if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return notFound(res);
      if (m[1] || u.searchParams.get('alt') === 'media') return res.end(fs.readFileSync(file));
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ kind: 'storage#object', bucket: decodeURIComponent(m[2]), name, size: String(fs.statSync(file).size) }));
    }
    res.statusCode = 400;
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

/** The gs:// stand-in (see the header), with `buckets` created. */
export async function startGcsStandIn(buckets: readonly string[]): Promise<ObjectStore> {
  const root = mkdtempSync(join(tmpdir(), 'gcs-stand-in-'));
  for (const b of buckets) mkdirSync(join(root, b));
  const worker = new Worker(GCS_STAND_IN, { eval: true, workerData: root });
  const port = await new Promise<number>((res, rej) => {
    worker.once('message', res);
    worker.once('error', rej);
  });
  const file = (bucket: string, key: string): string => join(root, bucket, key);
  return {
    endpoint: `127.0.0.1:${port}`,
    put: async (bucket, key, data) => {
      mkdirSync(dirname(file(bucket, key)), { recursive: true });
      writeFileSync(file(bucket, key), data);
    },
    get: async (bucket, key) => {
      try {
        return readFileSync(file(bucket, key));
      } catch {
        return undefined;
      }
    },
    close: async () => {
      await worker.terminate();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** s3rver on a free port over a temp directory, with `buckets` created; reads and writes go through its HTTP API. */
export async function startS3(buckets: readonly string[]): Promise<ObjectStore> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const url = (bucket: string, key: string): string => `${endpoint}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  return {
    endpoint,
    put: async (bucket, key, data) => {
      const r = await fetch(url(bucket, key), { method: 'PUT', body: typeof data === 'string' ? data : new Uint8Array(data) });
      if (!r.ok) throw new Error(`s3rver PUT ${bucket}/${key}: HTTP ${r.status} ${await r.text()}`);
    },
    get: async (bucket, key) => {
      const r = await fetch(url(bucket, key));
      if (r.status === 404) return undefined;
      if (!r.ok) throw new Error(`s3rver GET ${bucket}/${key}: HTTP ${r.status}`);
      return Buffer.from(await r.arrayBuffer());
    },
    close: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
