// DATASTORE_BACKUP (and Firestore's DOCSTORE_BACKUP) loads: an export of the
// Datastore managed export service, named by its kind's `.export_metadata`
// file. That file lists the kind's output files beside it; each is a LevelDB
// log whose records are App Engine EntityProto messages (proto2, with groups).
// Entities become rows as the service documents it ("Loading data from
// Datastore exports"): a column per property (lists REPEATED, embedded entities
// and keys RECORDs, geo points {lat, long}, users {email, userid}, blobs and
// short blobs discarded, strings cut at 64 KB), then __key__ {namespace, app,
// path, kind, name, id}, __error__ and __has_error__. A property whose value
// has another type than the column the first entity gave it is left NULL in
// that row, which names it in __error__.
import { ioInvalid, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
import type { Parsed, RestField } from './schema.js';

// ---------- LevelDB log (table/log_format.md): 32 KB blocks of checksummed fragments ----------

const BLOCK = 32768;
const HEADER = 7;
const FULL = 1, FIRST = 2, MIDDLE = 3, LAST = 4;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C of `b` (Castagnoli), as LevelDB checksums records. */
function crc32c(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** LevelDB stores the CRC masked (rotated and offset). */
const unmask = (m: number): number => {
  const rot = (m - 0xa282ead8) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
};

/** The records of a LevelDB log; a damaged one refuses the file. */
export function levelDbRecords(data: Buffer, uri: string): Buffer[] {
  const out: Buffer[] = [];
  let parts: Buffer[] | null = null;
  const bad = (why: string): Error => ioInvalid(`Error while reading data, error message: not a readable Datastore export file (${why}) File: ${uri}`);
  for (let at = 0; at < data.length; ) {
    const left = BLOCK - (at % BLOCK);
    if (left < HEADER) {
      at += left; // the block's trailer
      continue;
    }
    if (at + HEADER > data.length) break;
    const length = data.readUInt16LE(at + 4);
    const type = data[at + 6]!;
    if (type === 0 && length === 0) {
      at += left; // zero padding to the end of the block
      continue;
    }
    const end = at + HEADER + length;
    if (end > data.length || length > left - HEADER) throw bad('a record runs past its block');
    const body = data.subarray(at + HEADER, end);
    if (crc32c(Buffer.concat([data.subarray(at + 6, at + 7), body])) !== unmask(data.readUInt32LE(at))) throw bad('checksum mismatch');
    if (type === FULL) out.push(Buffer.from(body));
    else if (type === FIRST) parts = [Buffer.from(body)];
    else if (type === MIDDLE || type === LAST) {
      if (!parts) throw bad('a record continues none');
      parts.push(Buffer.from(body));
      if (type === LAST) {
        out.push(Buffer.concat(parts));
        parts = null;
      }
    } else throw bad(`record type ${type}`);
    at = end;
  }
  return out;
}

// ---------- protobuf wire format (proto2 groups included) ----------

interface Wire {
  readonly field: number;
  /** varint as bigint, fixed64 / length-delimited as bytes, a group as its fields. */
  readonly value: bigint | Buffer | Wire[];
}

function decode(buf: Buffer, uri: string): Wire[] {
  let at = 0;
  const bad = (): Error => ioInvalid(`Error while reading data, error message: not a readable Datastore export file (malformed entity) File: ${uri}`);
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= buf.length || shift > 63n) throw bad();
      const b = buf[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  };
  const fields = (group: number): Wire[] => {
    const out: Wire[] = [];
    while (at < buf.length) {
      const key = Number(varint());
      const field = key >>> 3;
      switch (key & 7) {
        case 0:
          out.push({ field, value: varint() });
          break;
        case 1:
          if (at + 8 > buf.length) throw bad();
          out.push({ field, value: buf.subarray(at, (at += 8)) });
          break;
        case 2: {
          const n = Number(varint());
          if (at + n > buf.length) throw bad();
          out.push({ field, value: buf.subarray(at, (at += n)) });
          break;
        }
        case 3:
          out.push({ field, value: fields(field) });
          break;
        case 4:
          if (field !== group) throw bad();
          return out;
        case 5:
          if (at + 4 > buf.length) throw bad();
          at += 4;
          break;
        default:
          throw bad();
      }
    }
    if (group !== 0) throw bad();
    return out;
  };
  return fields(0);
}

const one = (ws: readonly Wire[], field: number): Wire['value'] | undefined => ws.find((w) => w.field === field)?.value;
const text = (v: Wire['value'] | undefined): string | undefined => (Buffer.isBuffer(v) ? v.toString('utf8') : undefined);
const int64 = (v: Wire['value'] | undefined): bigint | undefined => (typeof v === 'bigint' ? BigInt.asIntN(64, v) : undefined);
const double = (v: Wire['value'] | undefined): number | undefined => (Buffer.isBuffer(v) && v.length === 8 ? v.readDoubleLE(0) : undefined);

// ---------- EntityProto (App Engine entity.proto) -> rows ----------

/** Property.Meaning values that change what a value is. */
const GD_WHEN = 7, GEORSS_POINT = 9, BLOB = 14, BYTESTRING = 16, ENTITY_PROTO = 19, EMPTY_LIST = 24;

/** A property's value as a row cell, with the type of the column it needs; undefined: discarded (blobs); null: NULL. */
interface Cell {
  type: string;
  fields?: RestField[];
  value: unknown;
}

const nullable = (name: string, type: string): RestField => ({ name, type, mode: 'NULLABLE' });
const KEY_FIELDS: RestField[] = [
  nullable('namespace', 'STRING'), nullable('app', 'STRING'), nullable('path', 'STRING'), nullable('kind', 'STRING'), nullable('name', 'STRING'), nullable('id', 'INTEGER'),
];
const POINT_FIELDS: RestField[] = [nullable('lat', 'FLOAT'), nullable('long', 'FLOAT')];
const USER_FIELDS: RestField[] = [nullable('email', 'STRING'), nullable('userid', 'STRING')];

/** A key as its record: path is Key.flat() as text ("Parent", 1, "Child", "name"). */
function keyRecord(app: string | undefined, ns: string | undefined, elements: { kind: string; id?: bigint; name?: string }[]): Json {
  const last = elements[elements.length - 1];
  return {
    namespace: ns ?? '',
    app: app ?? null,
    path: elements.map((e) => [JSON.stringify(e.kind), e.name !== undefined ? JSON.stringify(e.name) : String(e.id ?? '')].join(', ')).join(', '),
    kind: last?.kind ?? null,
    name: last?.name ?? null,
    id: last?.name === undefined && last?.id !== undefined ? String(last.id) : null,
  };
}

/** Reference (entity key: app 13, path 14 {Element group 1: type 2, id 3, name 4}, name_space 20). */
function referenceKey(ws: Wire[]): Json {
  const path = one(ws, 14);
  const elements = (Buffer.isBuffer(path) ? decodeKnown(path) : []).filter((w) => w.field === 1 && Array.isArray(w.value)).map((w) => element(w.value as Wire[], 2, 3, 4));
  return keyRecord(text(one(ws, 13)), text(one(ws, 20)), elements);
}

function element(ws: Wire[], kindF: number, idF: number, nameF: number): { kind: string; id?: bigint; name?: string } {
  const id = int64(one(ws, idF));
  const name = text(one(ws, nameF));
  return { kind: text(one(ws, kindF)) ?? '', ...(id !== undefined ? { id } : {}), ...(name !== undefined ? { name } : {}) };
}

// Nested messages are decoded with the file's uri for errors; set while a file is read.
let currentUri = '';
const decodeKnown = (b: Buffer): Wire[] => decode(b, currentUri);

/** PropertyValue -> a cell (int64 1, boolean 2, string 3, double 4, PointValue group 5, UserValue group 8, ReferenceValue group 12). */
function cellOf(value: Wire[], meaning: number): Cell | undefined {
  if (meaning === BLOB || meaning === BYTESTRING) return undefined;
  const i = int64(one(value, 1));
  if (i !== undefined) {
    if (meaning === GD_WHEN) return { type: 'TIMESTAMP', value: timestampText(i) };
    return { type: 'INTEGER', value: String(i) };
  }
  const b = one(value, 2);
  if (typeof b === 'bigint') return { type: 'BOOLEAN', value: b !== 0n };
  const s = one(value, 3);
  if (Buffer.isBuffer(s)) {
    if (meaning === ENTITY_PROTO) {
      // An embedded entity is a record of its properties and its own (usually empty) __key__.
      const e = entityRow(decodeKnown(s));
      return { type: 'RECORD', fields: [...e.fields, { ...nullable('__key__', 'RECORD'), fields: KEY_FIELDS }], value: e.row };
    }
    // Strings longer than 64 KB are cut, as the service loads them.
    return { type: 'STRING', value: cut(s.toString('utf8')) };
  }
  const d = double(one(value, 4));
  if (d !== undefined) return { type: 'FLOAT', value: d };
  const point = one(value, 5);
  if (Array.isArray(point)) {
    return { type: 'RECORD', fields: POINT_FIELDS, value: { lat: double(one(point, 6)) ?? null, long: double(one(point, 7)) ?? null } };
  }
  const user = one(value, 8);
  if (Array.isArray(user)) {
    return { type: 'RECORD', fields: USER_FIELDS, value: { email: text(one(user, 9)) ?? null, userid: text(one(user, 18)) ?? null } };
  }
  const ref = one(value, 12);
  if (Array.isArray(ref)) {
    const elements = ref.filter((w) => w.field === 14 && Array.isArray(w.value)).map((w) => element(w.value as Wire[], 15, 16, 17));
    return { type: 'RECORD', fields: KEY_FIELDS, value: keyRecord(text(one(ref, 13)), text(one(ref, 20)), elements) };
  }
  if (meaning === GEORSS_POINT) return { type: 'RECORD', fields: POINT_FIELDS, value: null };
  return { type: '', value: null };
}

const MAX_STRING = 64 * 1024;
function cut(s: string): string {
  if (Buffer.byteLength(s) <= MAX_STRING) return s;
  let b = Buffer.from(s).subarray(0, MAX_STRING);
  // Never half a character.
  while (b.length && (b[b.length - 1]! & 0xc0) === 0x80) b = b.subarray(0, b.length - 1);
  if (b.length && b[b.length - 1]! >= 0xc0) b = b.subarray(0, b.length - 1);
  return b.toString('utf8');
}

function timestampText(micros: bigint): string {
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const frac = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const iso = new Date(Number(ms)).toISOString().slice(0, 19);
  return `${iso}.${String(frac).padStart(6, '0')}Z`;
}

interface EntityRow {
  fields: RestField[];
  row: Json;
  errors: string[];
}

/**
 * EntityProto (key 13, property 14, raw_property 15; Property: meaning 1,
 * name 3, multiple 4, value 5) -> its row and the fields its values need, in
 * the order the properties come. A list is one Property per element.
 */
function entityRow(ws: Wire[]): EntityRow {
  const fields: RestField[] = [];
  const row: Json = {};
  const errors: string[] = [];
  const byName = new Map<string, RestField>();
  for (const w of ws) {
    if ((w.field !== 14 && w.field !== 15) || !Buffer.isBuffer(w.value)) continue;
    const p = decodeKnown(w.value);
    const name = text(one(p, 3));
    if (name === undefined) continue;
    const meaning = Number(one(p, 1) ?? 0n);
    const multiple = one(p, 4) === 1n || meaning === EMPTY_LIST;
    const v = one(p, 5);
    const cell = meaning === EMPTY_LIST ? undefined : cellOf(Buffer.isBuffer(v) ? decodeKnown(v) : [], meaning);
    if (meaning === BLOB || meaning === BYTESTRING) continue;
    let f = byName.get(name);
    if (!f) {
      f = { name, type: cell?.type || '', mode: multiple ? 'REPEATED' : 'NULLABLE', ...(cell?.fields ? { fields: cell.fields } : {}) };
      byName.set(name, f);
      fields.push(f);
      if (multiple) row[name] = [];
    } else if (!f.type && cell?.type) {
      f.type = cell.type;
      if (cell.fields) f.fields = cell.fields;
    }
    if (!cell || cell.value === null) continue;
    if (f.type && cell.type !== f.type) {
      errors.push(`Property ${name}: a ${cell.type} value where the other values are ${f.type}`);
      continue;
    }
    if (f.mode === 'REPEATED') (row[name] as unknown[]).push(cell.value);
    else row[name] = cell.value;
  }
  const key = one(ws, 13);
  row['__key__'] = Buffer.isBuffer(key) ? referenceKey(decodeKnown(key)) : null;
  return { fields, row, errors };
}

/** Column types the rows settle on: the first entity's, later entities adding properties (a property never typed: STRING). */
function mergeFields(into: RestField[], more: readonly RestField[]): void {
  for (const f of more) {
    const have = into.find((x) => x.name === f.name);
    if (!have) into.push({ ...f });
    else if (!have.type && f.type) Object.assign(have, { type: f.type, ...(f.fields ? { fields: f.fields } : {}) });
    else if (have.type === 'RECORD' && f.type === 'RECORD' && have.fields && f.fields) {
      const nested = have.fields.map((x) => ({ ...x }));
      mergeFields(nested, f.fields);
      have.fields = nested;
    }
  }
}

/** The output files a kind's `.export_metadata` names (ExportMetadata: 2 {kind 1, files 2}), as URIs beside it. */
export function backupFileUris(metadata: SourceFile): string[] {
  currentUri = metadata.uri;
  if (!/\.export_metadata$/.test(metadata.uri)) {
    throw ioInvalid(`Error while reading data, error message: a Datastore export is loaded from its kind's .export_metadata file, not ${metadata.uri}`);
  }
  const kinds = decode(metadata.data, metadata.uri)
    .filter((w) => w.field === 2 && Buffer.isBuffer(w.value))
    .map((w) => decode(w.value as Buffer, metadata.uri));
  const names = kinds.flatMap((k) => k.filter((x) => x.field === 2).map((x) => text(x.value)!));
  // An export of all kinds names no kind (field 1 empty): the service cannot load it.
  if (names.length === 0 || kinds.some((k) => !text(one(k, 1)))) {
    throw ioInvalid(`Error while reading data, error message: ${metadata.uri} names no kind's files: export with an entity filter naming the kind to load it (an export of all kinds cannot be loaded)`);
  }
  const dir = metadata.uri.slice(0, metadata.uri.lastIndexOf('/') + 1);
  return names.map((n) => dir + n);
}

/**
 * The rows of a kind's output files. `projection`: only these top-level
 * properties (projectionFields). A stated schema is refused: the service
 * takes the schema from the export.
 */
export function datastoreRows(files: readonly SourceFile[], projection: readonly string[] | undefined): Parsed {
  const fields: RestField[] = [];
  const entities: EntityRow[] = [];
  const keep = projection?.length ? new Set(projection.map((p) => p.toLowerCase())) : undefined;
  for (const file of files) {
    currentUri = file.uri;
    for (const rec of levelDbRecords(file.data, file.uri)) {
      const e = entityRow(decode(rec, file.uri));
      if (keep) {
        e.fields = e.fields.filter((f) => keep.has(f.name.toLowerCase()));
        for (const k of Object.keys(e.row)) if (k !== '__key__' && !keep.has(k.toLowerCase())) delete e.row[k];
      }
      mergeFields(fields, e.fields);
      entities.push(e);
    }
  }
  for (const f of fields) if (!f.type) f.type = 'STRING';
  const rows = entities.map((e) => {
    const row: Json = { ...e.row };
    const errors = [...e.errors];
    // A value of another type than its column (or a RECORD of other fields) is left out and named.
    for (const f of fields) {
      const own = e.fields.find((x) => x.name === f.name);
      if (own?.type && own.type !== f.type && row[f.name] !== undefined) {
        errors.push(`Property ${f.name}: a ${own.type} value where the column is ${f.type}`);
        delete row[f.name];
      }
    }
    row['__error__'] = errors;
    row['__has_error__'] = errors.length > 0;
    return row;
  });
  return {
    fields: [...fields, { ...nullable('__key__', 'RECORD'), fields: KEY_FIELDS }, { name: '__error__', type: 'STRING', mode: 'REPEATED' }, nullable('__has_error__', 'BOOLEAN')],
    rows,
  };
}
