// Reading and writing the files load and extract jobs name: local paths
// (file:// or absolute), the object-store emulator (gs:// / obj://, fake-gcs
// JSON API at STORAGE_EMULATOR_HOST), and the alternate S3-style store
// (s3:// / alt://, path-style at S3_ENDPOINT / ALT_ENDPOINT).
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { invalid, RestError } from '../errors.js';

export interface SourceFile {
  uri: string;
  data: Buffer;
}

function globToRegExp(glob: string): RegExp {
  return new RegExp('^' + glob.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
}

function objectStoreHost(): string | undefined {
  const env = process.env;
  if (env['STORAGE_EMULATOR_HOST']) {
    const h = env['STORAGE_EMULATOR_HOST'];
    return /^https?:\/\//.test(h) ? h.replace(/\/+$/, '') : `http://${h}`;
  }
  const port = env['FAKE_GCS_PORT'] || env['FAKE_OBJSTORE_PORT'];
  return port ? `http://localhost:${port}` : undefined;
}

function altEndpoint(): string | undefined {
  const e = process.env['S3_ENDPOINT'] || process.env['ALT_ENDPOINT'];
  return e ? e.replace(/\/+$/, '') : undefined;
}

function split(uri: string, scheme: string): { bucket: string; key: string } {
  const rest = uri.slice(scheme.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) throw invalid(`Invalid URI ${uri}: expected ${scheme}bucket/object`);
  return { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}

async function httpGet(url: string, what: string): Promise<Buffer> {
  let r: Response;
  try {
    r = await fetch(url);
  } catch (e) {
    throw new RestError(400, 'invalid', `Cannot read ${what}: ${(e as Error).message}`);
  }
  if (r.status === 404) throw new RestError(404, 'notFound', `Not found: URI ${what}`);
  if (!r.ok) throw new RestError(400, 'invalid', `Cannot read ${what}: HTTP ${r.status}`);
  return Buffer.from(await r.arrayBuffer());
}

/** Expands one source URI (a `*` wildcard allowed in the object/file name) and reads every match. */
export async function readSource(uri: string): Promise<SourceFile[]> {
  if (uri.startsWith('file://') || uri.startsWith('/')) {
    const path = uri.startsWith('file://') ? decodeURIComponent(uri.slice('file://'.length)) : uri;
    if (!path.includes('*')) {
      try {
        return [{ uri, data: await readFile(path) }];
      } catch {
        throw new RestError(404, 'notFound', `Not found: URI ${uri}`);
      }
    }
    const dir = dirname(path);
    const re = globToRegExp(basename(path));
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => re.test(n)).sort();
    if (!names.length) throw new RestError(404, 'notFound', `Not found: URI ${uri}`);
    return Promise.all(names.map(async (n) => ({ uri: `${dir}/${n}`, data: await readFile(`${dir}/${n}`) })));
  }
  for (const scheme of ['gs://', 'obj://']) {
    if (!uri.startsWith(scheme)) continue;
    const host = objectStoreHost();
    if (!host) throw invalid(`Cannot read ${uri}: set STORAGE_EMULATOR_HOST (or FAKE_GCS_PORT) to the object-store emulator`);
    const { bucket, key } = split(uri, scheme);
    if (!key.includes('*')) {
      return [{ uri, data: await httpGet(`${host}/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(key)}?alt=media`, uri) }];
    }
    const prefix = key.slice(0, key.indexOf('*'));
    const list = JSON.parse((await httpGet(`${host}/storage/v1/b/${encodeURIComponent(bucket)}/o?prefix=${encodeURIComponent(prefix)}`, uri)).toString()) as { items?: { name: string }[] };
    const re = globToRegExp(key);
    const names = (list.items ?? []).map((i) => i.name).filter((n) => re.test(n)).sort();
    if (!names.length) throw new RestError(404, 'notFound', `Not found: URI ${uri}`);
    return Promise.all(names.map(async (n) => ({
      uri: `${scheme}${bucket}/${n}`,
      data: await httpGet(`${host}/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(n)}?alt=media`, n),
    })));
  }
  for (const scheme of ['s3://', 'alt://']) {
    if (!uri.startsWith(scheme)) continue;
    const ep = altEndpoint();
    if (!ep) throw invalid(`Cannot read ${uri}: ${scheme} sources need S3_ENDPOINT (or ALT_ENDPOINT) set to a path-style endpoint`);
    const { bucket, key } = split(uri, scheme);
    return [{ uri, data: await httpGet(`${ep}/${bucket}/${key}`, uri) }];
  }
  throw invalid(`Unsupported source URI ${uri}: use file://, an absolute path, gs:// (object-store emulator) or s3:// (S3_ENDPOINT)`);
}

export function maybeGunzip(data: Buffer): Buffer {
  return data.length > 2 && data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data) : data;
}

export async function writeDestination(uri: string, data: Buffer): Promise<void> {
  if (uri.startsWith('file://') || uri.startsWith('/')) {
    const path = uri.startsWith('file://') ? decodeURIComponent(uri.slice('file://'.length)) : uri;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, data);
    return;
  }
  for (const scheme of ['gs://', 'obj://']) {
    if (!uri.startsWith(scheme)) continue;
    const host = objectStoreHost();
    if (!host) throw invalid(`Cannot write ${uri}: set STORAGE_EMULATOR_HOST (or FAKE_GCS_PORT) to the object-store emulator`);
    const { bucket, key } = split(uri, scheme);
    const r = await fetch(`${host}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=media&name=${encodeURIComponent(key)}`, {
      method: 'POST',
      body: data,
      headers: { 'content-type': 'application/octet-stream' },
    }).catch((e: Error) => {
      throw new RestError(400, 'invalid', `Cannot write ${uri}: ${e.message}`);
    });
    if (!r.ok) throw new RestError(400, 'invalid', `Cannot write ${uri}: HTTP ${r.status}`);
    return;
  }
  for (const scheme of ['s3://', 'alt://']) {
    if (!uri.startsWith(scheme)) continue;
    const ep = altEndpoint();
    if (!ep) throw invalid(`Cannot write ${uri}: set S3_ENDPOINT (or ALT_ENDPOINT)`);
    const { bucket, key } = split(uri, scheme);
    const r = await fetch(`${ep}/${bucket}/${key}`, { method: 'PUT', body: data });
    if (!r.ok) throw new RestError(400, 'invalid', `Cannot write ${uri}: HTTP ${r.status}`);
    return;
  }
  throw invalid(`Unsupported destination URI ${uri}`);
}
