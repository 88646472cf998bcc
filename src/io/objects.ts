// Reading and writing the files load/extract jobs and LOAD DATA / EXPORT DATA
// name: local paths (file:// or absolute), the object-store emulator (gs:// /
// obj://, fake-gcs JSON API at STORAGE_EMULATOR_HOST), and the alternate
// S3-style store (s3:// / alt://, path-style at S3_ENDPOINT / ALT_ENDPOINT).
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { ensureDir } from '../storage/fsutil.js';
import { basename, dirname } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { IoError, ioInvalid, ioNotFound } from './errors.js';
import { checkLocalPath } from './local-access.js';

export interface SourceFile {
  uri: string;
  data: Buffer;
}

function globToRegExp(glob: string): RegExp {
  return new RegExp('^' + glob.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
}

/** Object names under `key`'s literal prefix that match its wildcard pattern, sorted. */
async function globMatches(key: string, list: (prefix: string) => Promise<string[]>): Promise<string[]> {
  const star = key.indexOf('*');
  const re = globToRegExp(key);
  return (await list(star >= 0 ? key.slice(0, star) : key)).filter((n) => re.test(n)).sort();
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
  if (slash <= 0) throw ioInvalid(`Invalid URI ${uri}: expected ${scheme}bucket/object`);
  return { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}

/** A local path named by `file://...` or an absolute path; undefined for other schemes. Readers and writers check it with checkLocalPath (local-access.ts). */
export function localPath(uri: string): string | undefined {
  if (uri.startsWith('file://')) return decodeURIComponent(uri.slice('file://'.length));
  return uri.startsWith('/') ? uri : undefined;
}

async function httpGet(url: string, what: string): Promise<Buffer> {
  let r: Response;
  try {
    r = await fetch(url);
  } catch (e) {
    throw ioInvalid(`Cannot read ${what}: ${(e as Error).message}`);
  }
  if (r.status === 404) throw ioNotFound(`Not found: URI ${what}`);
  if (!r.ok) throw ioInvalid(`Cannot read ${what}: HTTP ${r.status}`);
  return Buffer.from(await r.arrayBuffer());
}

/** Object names under `bucket` starting with `prefix` (object-store emulator listing). */
async function listObjects(host: string, bucket: string, prefix: string, uri: string): Promise<string[]> {
  const list = JSON.parse((await httpGet(`${host}/storage/v1/b/${encodeURIComponent(bucket)}/o?prefix=${encodeURIComponent(prefix)}`, uri)).toString()) as { items?: { name: string }[] };
  return (list.items ?? []).map((i) => i.name);
}

/** Text of an XML element (S3 listings escape &, <, >, quotes and control characters). */
function xmlText(s: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (all, e: string) =>
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : named[e] ?? all);
}

/** Keys under `bucket` starting with `prefix` (S3 ListObjectsV2, path-style, following continuation tokens). */
async function listS3(ep: string, bucket: string, prefix: string, uri: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = `${ep}/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}${token ? `&continuation-token=${encodeURIComponent(token)}` : ''}`;
    const xml = (await httpGet(page, uri)).toString();
    for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(xmlText(m[1]!));
    const next = /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)?.[1];
    token = /<IsTruncated>true<\/IsTruncated>/.test(xml) && next ? xmlText(next) : undefined;
  } while (token);
  return keys;
}

/**
 * An object store the URIs of one family name: where its endpoint is set, how
 * an object is read, listed and written. The gs:// family talks to the
 * object-store emulator's JSON API, the s3:// family to a path-style S3
 * endpoint.
 */
interface ObjectStore {
  readonly schemes: readonly string[];
  endpoint(): string | undefined;
  /** Why a read or write cannot start without an endpoint. */
  noEndpoint(uri: string, scheme: string, op: 'read' | 'write'): string;
  objectUrl(ep: string, bucket: string, key: string): string;
  list(ep: string, bucket: string, prefix: string, uri: string): Promise<string[]>;
  put(ep: string, bucket: string, key: string, data: Buffer, uri: string): Promise<Response>;
}

const STORES: readonly ObjectStore[] = [
  {
    schemes: ['gs://', 'obj://'],
    endpoint: objectStoreHost,
    noEndpoint: (uri, _scheme, op) => `Cannot ${op} ${uri}: set STORAGE_EMULATOR_HOST (or FAKE_GCS_PORT) to the object-store emulator`,
    objectUrl: (host, bucket, key) => `${host}/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(key)}?alt=media`,
    list: listObjects,
    put: (host, bucket, key, data, uri) =>
      fetch(`${host}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=media&name=${encodeURIComponent(key)}`, {
        method: 'POST',
        body: data,
        headers: { 'content-type': 'application/octet-stream' },
      }).catch((e: Error) => {
        throw ioInvalid(`Cannot write ${uri}: ${e.message}`);
      }),
  },
  {
    schemes: ['s3://', 'alt://'],
    endpoint: altEndpoint,
    noEndpoint: (uri, scheme, op) =>
      op === 'read' ? `Cannot read ${uri}: ${scheme} sources need S3_ENDPOINT (or ALT_ENDPOINT) set to a path-style endpoint` : `Cannot write ${uri}: set S3_ENDPOINT (or ALT_ENDPOINT)`,
    objectUrl: (ep, bucket, key) => `${ep}/${bucket}/${key}`,
    list: listS3,
    put: (ep, bucket, key, data) => fetch(`${ep}/${bucket}/${key}`, { method: 'PUT', body: data }),
  },
];

/** The store and scheme a URI names, or undefined for other schemes. */
function storeOf(uri: string): { store: ObjectStore; scheme: string } | undefined {
  for (const store of STORES) {
    const scheme = store.schemes.find((s) => uri.startsWith(s));
    if (scheme) return { store, scheme };
  }
  return undefined;
}

/** The guidance when `uri` names an object store whose endpoint is not set (no request could reach it), else undefined. */
export function missingEndpoint(uri: string): string | undefined {
  const named = storeOf(uri);
  return named && !named.store.endpoint() ? named.store.noEndpoint(uri, named.scheme, 'read') : undefined;
}

/** At most this many directory entries are looked at for one local wildcard (a runaway pattern fails, not hangs). */
const MAX_LOCAL_ENTRIES = 100_000;

/**
 * The files under `dir` (absolute, ending in `/`) whose paths match `re`,
 * sorted. As an object store's `*` does, the wildcard matches across `/`: the
 * walk goes into subdirectories, but at the first level only into those that
 * begin with `lead` (the pattern's literal text before the `*`), so
 * `/tmp/x_*.csv` never walks the rest of /tmp. Symlinked directories are not
 * followed.
 */
async function walkMatches(dir: string, lead: string, re: RegExp, uri: string): Promise<string[]> {
  const out: string[] = [];
  let seen = 0;
  const visit = async (d: string, top: boolean): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (++seen > MAX_LOCAL_ENTRIES) throw ioInvalid(`Invalid URI ${uri}: its wildcard matches more than ${MAX_LOCAL_ENTRIES} local entries`);
      if (top && !e.name.startsWith(lead)) continue;
      const path = d + e.name;
      if (e.isDirectory()) await visit(path + '/', false);
      else if (re.test(path)) out.push(path);
    }
  };
  await visit(dir, true);
  return out.sort();
}

/**
 * The local files a `file://` or absolute-path source URI names (a `*`
 * matches several, sorted; like an object store's wildcard it matches across
 * directories: `/data/*` names every file below /data); undefined for other
 * schemes.
 */
export async function localFiles(uri: string): Promise<string[] | undefined> {
  checkWildcards(uri);
  const named = localPath(uri);
  if (named === undefined) return undefined;
  if (!named.includes('*')) {
    const path = checkLocalPath(named, uri);
    try {
      if ((await stat(path)).isFile()) return [path];
    } catch {
      // reported below
    }
    throw ioNotFound(`Not found: URI ${uri}`);
  }
  const star = named.indexOf('*');
  const cut = named.lastIndexOf('/', star) + 1;
  const dir = checkLocalPath(dirname(named.slice(0, cut) + 'x'), uri);
  const base = dir.endsWith('/') ? dir : dir + '/';
  // The pattern over the checked directory (checkLocalPath may have resolved it): the rest of the path after it.
  const re = globToRegExp(base + named.slice(cut));
  const names = await walkMatches(base, named.slice(cut, star), re, uri);
  if (!names.length) throw ioNotFound(`Not found: URI ${uri}`);
  // A match may be a symlink out of the allowed directories.
  return names.map((n) => checkLocalPath(n, uri));
}

/**
 * A source URI holds at most one `*`, never in the bucket name (external-data-cloud-storage.md, Wildcard support;
 * tables.md and Job.md, sourceUris).
 */
function checkWildcards(uri: string): void {
  if (uri.indexOf('*') !== uri.lastIndexOf('*')) throw ioInvalid(`Invalid source URI ${uri}: a URI can hold only one * wildcard`);
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)/i.exec(uri);
  if (m && !/^file:/i.test(uri) && m[1]!.includes('*')) throw ioInvalid(`Invalid source URI ${uri}: the bucket name cannot hold a * wildcard`);
}

/** Expands one source URI (a `*` wildcard allowed in the object/file name) and reads every match. */
export async function readSource(uri: string): Promise<SourceFile[]> {
  const local = await localFiles(uri);
  if (local) {
    return Promise.all(
      local.map(async (p) => {
        try {
          return { uri: uri.includes('*') ? p : uri, data: await readFile(p) };
        } catch {
          throw ioNotFound(`Not found: URI ${uri}`);
        }
      }),
    );
  }
  const named = storeOf(uri);
  if (!named) throw ioInvalid(`Unsupported source URI ${uri}: use file://, an absolute path, gs:// (object-store emulator) or s3:// (S3_ENDPOINT)`);
  const { store, scheme } = named;
  const ep = store.endpoint();
  if (!ep) throw ioInvalid(store.noEndpoint(uri, scheme, 'read'));
  const { bucket, key } = split(uri, scheme);
  if (!key.includes('*')) return [{ uri, data: await httpGet(store.objectUrl(ep, bucket, key), uri) }];
  const names = await globMatches(key, (prefix) => store.list(ep, bucket, prefix, uri));
  if (!names.length) throw ioNotFound(`Not found: URI ${uri}`);
  return Promise.all(names.map(async (n) => ({ uri: `${scheme}${bucket}/${n}`, data: await httpGet(store.objectUrl(ep, bucket, n), n) })));
}

/** Reads every source URI (each may hold a wildcard), in order. */
export async function readSources(uris: readonly string[]): Promise<SourceFile[]> {
  return (await Promise.all(uris.map(readSource))).flat();
}

/**
 * Whether anything already exists where a wildcard destination would write
 * (EXPORT DATA without overwrite). Local, gs:// and s3:// destinations are
 * listed; other schemes report false.
 */
export async function destinationHasFiles(uri: string): Promise<boolean> {
  const path = localPath(uri);
  if (path !== undefined) {
    const re = globToRegExp(basename(path));
    return (await readdir(checkLocalPath(dirname(path), uri)).catch(() => [] as string[])).some((n) => re.test(n));
  }
  const named = storeOf(uri);
  const ep = named?.store.endpoint();
  if (!named || !ep) return false;
  const { bucket, key } = split(uri, named.scheme);
  try {
    return (await globMatches(key, (prefix) => named.store.list(ep, bucket, prefix, uri))).length > 0;
  } catch (e) {
    if (e instanceof IoError && e.code === 404) return false;
    throw e;
  }
}

export function maybeGunzip(data: Buffer): Buffer {
  return data.length > 2 && data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data) : data;
}

export async function writeDestination(uri: string, data: Buffer): Promise<void> {
  const local = localPath(uri);
  if (local !== undefined) {
    const path = checkLocalPath(local, uri);
    try {
      await ensureDir(dirname(path));
      await writeFile(path, data);
    } catch (e) {
      throw ioInvalid(`Cannot write ${uri}: ${(e as Error).message}`);
    }
    return;
  }
  const named = storeOf(uri);
  if (!named) throw ioInvalid(`Unsupported destination URI ${uri}`);
  const ep = named.store.endpoint();
  if (!ep) throw ioInvalid(named.store.noEndpoint(uri, named.scheme, 'write'));
  const { bucket, key } = split(uri, named.scheme);
  const r = await named.store.put(ep, bucket, key, data, uri);
  if (!r.ok) throw ioInvalid(`Cannot write ${uri}: HTTP ${r.status}`);
}
