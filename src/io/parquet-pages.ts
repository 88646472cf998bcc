// A local Parquet file's row groups decoded on a worker thread, one row
// group at a time (the next one is decoded while the caller converts this
// one): hyparquet loops without end on some damaged pages, so no decoding
// of a client's file runs on the engine's own thread, and a row group that
// takes past its deadline ends the worker (an error). Flat columns are read
// from their pages with hyparquet's page decoders (headers, codecs,
// encodings, dictionaries, type conversions) but without its record
// assembly, which rebuilds an OPTIONAL column value by value and was most of
// a load's time: a page without NULLs stays as decoded (typed arrays stay
// typed, and cross to this thread without a copy), NULLs are placed by one
// loop over the definition levels. Nested columns go through hyparquet's
// records.
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FileMetaData } from 'hyparquet';
import { PARQUET_DEADLINE, WORKER_PARSERS_JS, workerCompressorsJs } from './parquet.js';

/** What to decode of a row group: flat columns (raw: RAW_PARSERS, else TEXT_PARSERS) and nested ones (TEXT_PARSERS). */
export interface GroupRequest {
  readonly flat: readonly { readonly name: string; readonly raw: boolean }[];
  readonly nested: readonly string[];
}

/** Decoded columns of a row group by name: values as the parsers make them, NULL as null. */
export type GroupColumns = Map<string, ArrayLike<unknown>>;

/** The top-level columns of a file that are flat (no repetition, no group), by name. */
export async function flatColumns(metadata: FileMetaData): Promise<Set<string>> {
  const { parquetSchema } = await import('hyparquet');
  const tree = parquetSchema(metadata);
  return new Set(tree.children.filter((c) => c.element.repetition_type !== 'REPEATED' && c.children.length === 0).map((c) => c.element.name));
}

let urls: Record<string, string> | null = null;
function libUrls(): Record<string, string> {
  const req = createRequire(import.meta.url);
  const url = (m: string): string => pathToFileURL(req.resolve(m)).href;
  return (urls ??= {
    main: url('hyparquet'),
    column: url('hyparquet/src/column.js'),
    convert: url('hyparquet/src/convert.js'),
    datapage: url('hyparquet/src/datapage.js'),
    schema: url('hyparquet/src/schema.js'),
  });
}

/** The worker's source (JS text: workers run no TypeScript). */
const WORKER_JS = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
${WORKER_PARSERS_JS}
${workerCompressorsJs()}
// The file is opened (and closed) by the thread that made this one: a worker ended at its deadline leaves no descriptor open.
const { fd, start, end, urls } = workerData;
const size = (end > 0 ? end : fs.fstatSync(fd).size) - start;
const file = {
  byteLength: size,
  slice(from, to) {
    const n = Math.max(0, Math.min(to === undefined ? size : to, size) - from);
    const buf = Buffer.allocUnsafeSlow(n);
    for (let off = 0; off < n; ) {
      const got = fs.readSync(fd, buf, off, n - off, start + from + off);
      if (got === 0) throw new Error('unexpected end of file');
      off += got;
    }
    return buf.buffer;
  },
};
let lib, metadata, groupStarts;

async function init() {
  const [main, column, convert, datapage, schema] = await Promise.all([urls.main, urls.column, urls.convert, urls.datapage, urls.schema].map((u) => import(u)));
  lib = { main, column, convert, datapage, schema };
  metadata = await main.parquetMetadataAsync(file);
  if (metadata.row_groups.some((g) => g.columns.some((c) => c.meta_data && c.meta_data.codec === 'ZSTD'))) await withZstd();
  groupStarts = [];
  let at = 0;
  for (const g of metadata.row_groups) { groupStarts.push(at); at += Number(g.num_rows); }
}

function flatColumn(rg, name, parsers) {
  const { column, convert, datapage, schema } = lib;
  const group = metadata.row_groups[rg];
  const n = Number(group.num_rows);
  const meta = group.columns.map((c) => c.meta_data).find((m) => m && m.path_in_schema.length === 1 && m.path_in_schema[0] === name);
  if (!meta) throw new Error('column ' + name + ' has no data in row group ' + rg);
  const schemaPath = schema.getSchemaPath(metadata.schema, [name]);
  // utf8: false keeps unannotated byte arrays as bytes (BYTES), as the file declares them.
  const decoder = {
    pathInSchema: [name], type: meta.type, element: schemaPath[schemaPath.length - 1].element, schemaPath, codec: meta.codec,
    parsers: { ...convert.DEFAULT_PARSERS, ...parsers }, compressors, utf8: false,
  };
  const maxDef = schema.getMaxDefinitionLevel(schemaPath);
  const at = Number(meta.dictionary_page_offset || meta.data_page_offset);
  const reader = { view: new DataView(file.slice(at, at + Number(meta.total_compressed_size))), offset: 0 };
  let dictionary;
  const pages = [];
  let rows = 0;
  while (rows < n && reader.offset < reader.view.byteLength) {
    const header = column.parquetHeader(reader);
    if (header.type === 'DICTIONARY_PAGE') {
      const { data } = column.readPage(reader, header, decoder, undefined, undefined, 0);
      if (data) dictionary = convert.convert(data, decoder);
      continue;
    }
    const compressed = new Uint8Array(reader.view.buffer, reader.view.byteOffset + reader.offset, header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    let page, count, encoding;
    if (header.type === 'DATA_PAGE') {
      const h = header.data_page_header;
      page = datapage.readDataPage(datapage.decompressPage(compressed, Number(header.uncompressed_page_size), decoder.codec, compressors), h, decoder);
      count = h.num_values;
      encoding = h.encoding;
    } else if (header.type === 'DATA_PAGE_V2') {
      const h = header.data_page_header_v2;
      page = datapage.readDataPageV2(compressed, header, decoder);
      count = h.num_values;
      encoding = h.encoding;
    } else continue; // index pages
    const defs = page.definitionLevels;
    // A dictionary of values other than numbers (strings, bytes) is kept with each page's indices.
    const indexed = dictionary !== undefined && Array.isArray(dictionary) && encoding.endsWith('_DICTIONARY');
    const values = indexed ? page.dataPage : convert.convertWithDictionary(page.dataPage, dictionary, encoding, decoder);
    pages.push({ values, indexed, defs: maxDef > 0 && defs && defs.length > 0 ? defs : null, count });
    rows += count;
  }
  if (rows !== n) throw new Error('column ' + name + ' of row group ' + rg + ' has ' + rows + ' values for ' + n + ' rows');
  if (pages.length > 0 && pages.every((p) => p.indexed)) {
    const indices = new Int32Array(n);
    let nulls = null;
    let k = 0;
    for (const { values, defs, count } of pages) {
      if (defs === null) for (let i = 0; i < count; i++) indices[k + i] = values[i];
      else {
        nulls ??= new Uint8Array(n);
        for (let i = 0, j = 0; i < count; i++) {
          if (defs[i] === maxDef) indices[k + i] = values[j++];
          else nulls[k + i] = 1;
        }
      }
      k += count;
    }
    return { dictionary, indices, nulls };
  }
  for (const p of pages) if (p.indexed) p.values = convert.convertWithDictionary(p.values, dictionary, 'RLE_DICTIONARY', decoder);
  if (pages.length === 1 && pages[0].defs === null) return pack(pages[0].values, n);
  const first = pages[0] && pages[0].values;
  if (first && ArrayBuffer.isView(first) && pages.every((p) => p.defs === null && p.values.constructor === first.constructor)) {
    const out = new first.constructor(n);
    let k = 0;
    for (const p of pages) { out.set(p.values, k); k += p.count; }
    return { values: out, nulls: null };
  }
  const out = new Array(n);
  let k = 0;
  for (const { values, defs, count } of pages) {
    if (defs === null) for (let i = 0; i < count; i++) out[k + i] = values[i];
    else for (let i = 0, j = 0; i < count; i++) out[k + i] = defs[i] === maxDef ? values[j++] : null;
    k += count;
  }
  return pack(out, n);
}

// Values cross to the other thread as typed arrays where they can (a structured
// clone of 100,000 strings or bigints costs tens of ms): numbers, bigints and
// booleans with a NULL map; anything else as it is.
function pack(v, n) {
  if (ArrayBuffer.isView(v)) return { values: v, nulls: null };
  let kind = '';
  let nulls = null;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (x === null || x === undefined) {
      nulls ??= new Uint8Array(n);
      nulls[i] = 1;
      continue;
    }
    const t = typeof x;
    if (t !== 'number' && t !== 'bigint' && t !== 'boolean') return { values: v, nulls: null };
    if (kind === '') kind = t;
    else if (kind !== t) return { values: v, nulls: null };
  }
  if (kind === '') return { values: v, nulls: null };
  const out = kind === 'number' ? new Float64Array(n) : kind === 'bigint' ? new BigInt64Array(n) : new Uint8Array(n);
  if (kind === 'boolean') for (let i = 0; i < n; i++) out[i] = v[i] === true ? 1 : 0;
  else for (let i = 0; i < n; i++) if (nulls === null || nulls[i] === 0) out[i] = v[i];
  return { values: out, nulls, bool: kind === 'boolean' };
}

async function nestedColumns(rg, names, out) {
  const rowStart = groupStarts[rg];
  const n = Number(metadata.row_groups[rg].num_rows);
  const data = new Map(names.map((name) => [name, new Array(n).fill(null)]));
  await lib.main.parquetRead({
    file, metadata, rowStart, rowEnd: rowStart + n, columns: names, utf8: false, parsers: TEXT_PARSERS, compressors,
    onChunk: (ch) => {
      const arr = data.get(ch.columnName);
      const d = ch.columnData;
      for (let i = 0; i < d.length; i++) arr[ch.rowStart - rowStart + i] = d[i];
    },
  });
  for (const [name, arr] of data) out.push([name, { values: arr, nulls: null }]);
}

parentPort.on('message', async ({ id, rg, flat, nested }) => {
  try {
    if (!lib) await init();
    const out = [];
    for (const { name, raw } of flat) out.push([name, flatColumn(rg, name, raw ? RAW_PARSERS : TEXT_PARSERS)]);
    if (nested.length) await nestedColumns(rg, nested, out);
    // Typed arrays cross without a copy: each on a buffer of its own.
    const transfer = new Set();
    for (const [, col] of out) {
      for (const key of ['values', 'indices', 'nulls']) {
        let v = col[key];
        if (!v || !ArrayBuffer.isView(v)) continue;
        if (v.byteOffset !== 0 || v.byteLength !== v.buffer.byteLength || transfer.has(v.buffer)) col[key] = v = v.slice();
        transfer.add(v.buffer);
      }
    }
    parentPort.postMessage({ id, columns: out }, [...transfer]);
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});`;

/** A column as the worker sends it (see pack). */
type Packed =
  | { readonly values: ArrayLike<unknown>; readonly nulls: Uint8Array | null; readonly bool?: boolean }
  | { readonly dictionary: readonly unknown[]; readonly indices: Int32Array; readonly nulls: Uint8Array | null };

/** A packed column as values, NULL as null. */
function unpack(p: Packed): ArrayLike<unknown> {
  const nulls = p.nulls;
  if ('indices' in p) {
    const { dictionary, indices } = p;
    const out = new Array<unknown>(indices.length);
    for (let k = 0; k < indices.length; k++) out[k] = nulls !== null && nulls[k] === 1 ? null : dictionary[indices[k]!];
    return out;
  }
  const { values, bool } = p;
  if (nulls === null && !bool) return values;
  const out = new Array<unknown>(values.length);
  for (let k = 0; k < values.length; k++) out[k] = nulls !== null && nulls[k] === 1 ? null : bool ? values[k] === 1 : values[k];
  return out;
}

interface Pending {
  resolve(c: GroupColumns): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * Decodes row groups of the Parquet bytes [start, end) of a local file
 * (end 0: to its end) on a worker of its own. Requests are answered in
 * order; each has PARQUET_DEADLINE from when it is made (base + per MB of
 * its column chunks), past which the worker is ended and every request
 * fails.
 */
export class RowGroupDecoder {
  private readonly worker: Worker;
  private readonly fd: number;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failed: Error | null = null;

  constructor(path: string, start = 0, end = 0) {
    this.fd = openSync(path, 'r');
    this.worker = new Worker(WORKER_JS, { eval: true, workerData: { fd: this.fd, start, end, urls: libUrls() } });
    this.worker.on('message', (m: { id: number; columns?: [string, Packed][]; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(new Map(m.columns!.map(([name, col]) => [name, unpack(col)])));
    });
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', () => this.fail(new Error('the Parquet decoder stopped')));
  }

  /** Row group `rg` (`bytes`: its compressed size, for the deadline). */
  decode(rg: number, req: GroupRequest, bytes: number): Promise<GroupColumns> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    const deadlineMs = PARQUET_DEADLINE.baseMs + (PARQUET_DEADLINE.perMbMs * bytes) / (1 << 20);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new Error(`decoding did not finish within ${Math.round(deadlineMs / 1000)} s`)), deadlineMs);
      this.pending.set(id, { resolve, reject, timer });
      this.worker.postMessage({ id, rg, flat: req.flat, nested: req.nested });
    });
  }

  async close(): Promise<void> {
    this.fail(new Error('the Parquet decoder was closed'));
    await this.worker.terminate();
    closeSync(this.fd);
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(this.failed);
    }
    this.pending.clear();
    void this.worker.terminate();
  }
}
