// Pages of rows in REST answers (tabledata.list, jobs.query,
// jobs.getQueryResults). The engine sends a large page as UTF-8 bytes
// (`rows_utf8`) and a small one, or any page of an external engine, as text
// (`rows_json`); either is the JSON of the REST `rows` array, spliced into
// the answer unparsed. Bytes are written out as they came: a 10,000-row page
// (~0.5-1.5 MB) is never decoded into a string, concatenated and encoded
// again, which cost the gateway milliseconds per page and a full GC every
// few pages.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { sendJsonText } from './plugins/common.js';

/**
 * Bytes of rows in one answer: the real service limits every response to
 * 10 MB besides maxResults, and a query result's pages (jobs.query,
 * getQueryResults) have no row default at all, only this bound. Here they
 * default to ROWS_CAP (plugins/tabledata.ts) rows within it: a client that pages a large result
 * without maxResults (the Node client) fetches ~10x fewer pages than at
 * 10,000 rows each.
 */
export const PAGE_BYTES = 10 * 1024 * 1024;

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
 * text. Bytes rows are written as they came (a view of the engine's reply
 * frame), between the head and the tail: a stream of three chunks with the
 * content-length Fastify would compute, rather than one concatenated copy.
 * Copies of a megabyte count as external memory, which V8 adds to the old
 * generation: one per page brought a full GC every ~4 pages.
 */
export function sendRowsBody(reply: FastifyReply, b: RowsBody): FastifyReply {
  if (typeof b.rows !== 'object') return sendJsonText(reply, b.rows === undefined ? b.head + b.tail : b.head + ',"rows":' + b.rows + b.tail);
  const open = Buffer.from(b.head + ',"rows":', 'utf8');
  const close = Buffer.from(b.tail, 'utf8');
  const body = new Readable({ read: () => undefined });
  body.push(open);
  body.push(b.rows);
  body.push(close);
  body.push(null);
  return reply
    .type('application/json; charset=UTF-8')
    .header('content-length', String(open.length + b.rows.length + close.length))
    .send(body);
}
