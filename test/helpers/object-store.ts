// Object stores for the tests of load/extract jobs, EXPORT DATA / LOAD DATA and
// JavaScript UDF libraries.
//
// s3://: s3rver, a real S3 emulator (path-style, anonymous requests), served in this
// process from a temp directory: what S3_ENDPOINT points at.
//
// gs://: the stand-in of ./gcs-stand-in.mjs (no GCS emulator installs here; see
// its header), run on a worker thread because a JavaScript UDF reads its library
// synchronously (blocking this thread); objects are files under a temp
// directory, so that both threads see them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import S3rver from 's3rver';
import { objectFile } from './gcs-stand-in.mjs';

export interface ObjectStore {
  /** What STORAGE_EMULATOR_HOST (host:port) or S3_ENDPOINT (a URL) is set to. */
  endpoint: string;
  put(bucket: string, key: string, data: Buffer | string): Promise<void>;
  /** The object's bytes, undefined when it does not exist. */
  get(bucket: string, key: string): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

/** The gs:// stand-in (see the header), with `buckets` created. */
export async function startGcsStandIn(buckets: readonly string[]): Promise<ObjectStore> {
  const root = mkdtempSync(join(tmpdir(), 'gcs-stand-in-'));
  for (const b of buckets) mkdirSync(join(root, b));
  const worker = new Worker(new URL('./gcs-stand-in.mjs', import.meta.url), { workerData: root });
  const port = await new Promise<number>((res, rej) => {
    worker.once('message', res);
    worker.once('error', rej);
  });
  const file = (bucket: string, key: string): string => objectFile(root, bucket, key);
  return {
    endpoint: `127.0.0.1:${port}`,
    put: async (bucket, key, data) => {
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
