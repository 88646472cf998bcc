// Pages of rows in REST answers (tabledata.list, jobs.query,
// jobs.getQueryResults). The engine sends a large page as UTF-8 bytes
// (`rows_utf8`) and a small one, or any page of an external engine, as text
// (`rows_json`); either is the JSON of the REST `rows` array, spliced into
// the answer unparsed. Bytes are written out as they came: a 10,000-row page
// (~0.5-1.5 MB) is never decoded into a string, concatenated and encoded
// again, which cost the gateway milliseconds per page and a full GC every
// few pages.
import type { FastifyReply } from 'fastify';
import { sendJsonText } from './plugins/common.js';

/** The rows of a ListRows or ExecuteQuery reply. */
export interface RowsReply {
  rows_json: string;
  /** Wins over rows_json when non-empty. */
  rows_utf8?: Buffer;
}

/** A page's `rows` array as the engine sent it; undefined when there are no rows. */
export function rowsOf(r: RowsReply): Buffer | string | undefined {
  const b = r.rows_utf8;
  if (b && b.length > 0) return b.length === 2 && b[0] === 0x5b && b[1] === 0x5d ? undefined : b;
  return r.rows_json && r.rows_json !== '[]' ? r.rows_json : undefined;
}

/** A page's `rows` array as text, for the gateway's own reading of rows (copy, extract). */
export function rowsText(r: RowsReply): string {
  const rows = rowsOf(r);
  return rows === undefined ? '[]' : typeof rows === 'string' ? rows : rows.toString('utf8');
}

/**
 * A JSON answer around a page of rows: `head`, then `,"rows":<rows>` when
 * there are rows, then `tail`. `head` opens the object and holds at least one
 * member; `tail` closes it.
 */
export interface RowsBody {
  readonly head: string;
  readonly rows: Buffer | string | undefined;
  readonly tail: string;
}

/**
 * Sends the answer with the same headers and bytes as sendJsonText of its
 * text: bytes rows go out as one Buffer (Fastify sets the same content-length
 * it computes for the text).
 */
export function sendRowsBody(reply: FastifyReply, b: RowsBody): FastifyReply {
  if (typeof b.rows !== 'object') return sendJsonText(reply, b.rows === undefined ? b.head + b.tail : b.head + ',"rows":' + b.rows + b.tail);
  const body = Buffer.concat([Buffer.from(b.head + ',"rows":', 'utf8'), b.rows, Buffer.from(b.tail, 'utf8')]);
  return reply.type('application/json; charset=UTF-8').send(body);
}
