// Decoding of REST query results (schema + f/v rows) and of expected wire
// values written in YAML (fixtures, recorded oracles, project cases) into the
// typed value model, so that every source compares through one comparator.

import {
  canonicalCivil, canonicalDecimal, canonicalWkt, NULL, parseFloatLiteral, parseIntervalText,
  parseTimestampText, type Val,
} from './value.js';
import { normalizeRestType } from './sqltype.js';

export interface RestField {
  name: string;
  type: string;
  mode?: string;
  fields?: RestField[];
  rangeElementType?: { type: string };
}

export interface RestCell {
  v?: unknown;
}

export interface RestRow {
  f?: RestCell[];
}

export class WireDecodeError extends Error {}

/** Decodes a REST cell per its schema field (handles REPEATED and RECORD). */
export function decodeCell(field: RestField, v: unknown): Val {
  if ((field.mode ?? '').toUpperCase() === 'REPEATED') {
    // BigQuery sends an empty list for a NULL array.
    if (v === null || v === undefined) return { k: 'array', elems: [], ordered: true };
    if (!Array.isArray(v)) throw new WireDecodeError(`field ${field.name}: REPEATED cell is not a list`);
    const elemField = { ...field, mode: 'NULLABLE' };
    return { k: 'array', elems: v.map((c) => decodeCell(elemField, unwrapV(c))), ordered: true };
  }
  return decodeScalar(field, v);
}

function unwrapV(c: unknown): unknown {
  if (c !== null && typeof c === 'object' && 'v' in (c as Record<string, unknown>)) return (c as RestCell).v;
  return c;
}

function decodeScalar(field: RestField, v: unknown): Val {
  if (v === null || v === undefined) return NULL;
  const type = normalizeRestType(field.type);
  const str = (): string => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
    throw new WireDecodeError(`field ${field.name}: ${type} cell is ${typeof v}`);
  };
  switch (type) {
    case 'INTEGER': {
      const s = str().trim();
      if (!/^[-+]?\d+$/.test(s)) throw new WireDecodeError(`field ${field.name}: bad INTEGER ${JSON.stringify(v)}`);
      return { k: 'int', v: BigInt(s) };
    }
    case 'FLOAT': {
      if (typeof v === 'number') return { k: 'float', v };
      const n = parseFloatLiteral(str().trim());
      if (Number.isNaN(n) && !/nan/i.test(str())) throw new WireDecodeError(`field ${field.name}: bad FLOAT ${JSON.stringify(v)}`);
      return { k: 'float', v: n };
    }
    case 'BOOLEAN': {
      if (typeof v === 'boolean') return { k: 'bool', v };
      const s = str().toLowerCase();
      if (s !== 'true' && s !== 'false') throw new WireDecodeError(`field ${field.name}: bad BOOLEAN ${JSON.stringify(v)}`);
      return { k: 'bool', v: s === 'true' };
    }
    case 'STRING': return { k: 'string', v: str() };
    case 'BYTES': return { k: 'bytes', v: Buffer.from(str(), 'base64').toString('base64') };
    case 'NUMERIC': case 'BIGNUMERIC': return { k: 'decimal', v: canonicalDecimal(str()) };
    case 'DATE': case 'DATETIME': case 'TIME': return { k: 'civil', type, v: canonicalCivil(type, str()) };
    case 'TIMESTAMP': {
      const micros = decodeTimestamp(str());
      if (micros === null) throw new WireDecodeError(`field ${field.name}: bad TIMESTAMP ${JSON.stringify(v)}`);
      return { k: 'timestamp', micros };
    }
    case 'JSON': {
      if (typeof v !== 'string') return { k: 'json', v };
      try {
        return { k: 'json', v: JSON.parse(v) };
      } catch {
        throw new WireDecodeError(`field ${field.name}: JSON cell is not JSON text: ${v.slice(0, 60)}`);
      }
    }
    case 'GEOGRAPHY': return { k: 'geography', v: canonicalWkt(str()) };
    case 'INTERVAL': {
      const iv = parseIntervalText(str());
      if (!iv) throw new WireDecodeError(`field ${field.name}: bad INTERVAL ${JSON.stringify(v)}`);
      return iv;
    }
    case 'RANGE': {
      const et = field.rangeElementType?.type ?? 'DATE';
      return decodeRange(str(), { name: field.name, type: et });
    }
    case 'RECORD': {
      const fields = field.fields ?? [];
      let cells: unknown[];
      if (v !== null && typeof v === 'object' && Array.isArray((v as { f?: unknown }).f)) {
        cells = ((v as { f: unknown[] }).f).map(unwrapV);
      } else if (Array.isArray(v)) {
        cells = v.map(unwrapV);
      } else if (typeof v === 'object') {
        // YAML-written expectations may give a struct as a name → value map.
        const o = v as Record<string, unknown>;
        cells = fields.map((f) => o[f.name]);
      } else {
        throw new WireDecodeError(`field ${field.name}: RECORD cell is ${typeof v}`);
      }
      return { k: 'struct', fields: fields.map((f, i) => decodeCell(f, cells[i])) };
    }
    default:
      return { k: 'raw', v: str() };
  }
}

/**
 * TIMESTAMP wire forms: int64 microseconds (useInt64Timestamp), float epoch
 * seconds in E-notation (real family: "1.7040672E9"), or RFC 3339 text.
 */
export function decodeTimestamp(s: string): bigint | null {
  const t = s.trim();
  if (/^-?\d+$/.test(t)) return BigInt(t);
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(t)) {
    // exact decimal → micros, without float rounding
    const dec = canonicalDecimal(t);
    const [ip = '0', fp = ''] = dec.replace('-', '').split('.');
    const micros = BigInt(ip) * 1_000_000n + BigInt((fp + '000000').slice(0, 6));
    return dec.startsWith('-') ? -micros : micros;
  }
  return parseTimestampText(t.replace(/ UTC$/, 'Z'));
}

function decodeRange(s: string, elem: RestField): Val {
  const m = /^\[\s*([^,]*?)\s*,\s*([^,]*?)\s*\)$/.exec(s.trim());
  if (!m) throw new WireDecodeError(`bad RANGE ${JSON.stringify(s)}`);
  const side = (x: string): Val => (/^(UNBOUNDED|NULL)$/i.test(x) ? NULL : decodeScalar(elem, x));
  return { k: 'range', start: side(m[1]!), end: side(m[2]!) };
}

/** Decodes all rows of a REST result. */
export function decodeRows(fields: RestField[], rows: RestRow[]): Val[][] {
  return rows.map((r, ri) => {
    const cells = r.f ?? [];
    if (cells.length !== fields.length) throw new WireDecodeError(`row ${ri} has ${cells.length} cells, schema has ${fields.length}`);
    return fields.map((f, i) => decodeCell(f, cells[i]?.v));
  });
}
