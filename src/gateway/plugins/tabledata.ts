// tabledata.list / tabledata.insertAll (spec §4.4). Rows cross the gRPC
// boundary as pre-encoded JSON (insertAll: the request's own bytes) and list
// rows are written into the answer unparsed (rows-body.ts).
import type { FastifyInstance } from 'fastify';
import type { Family, GatewayContext } from '../context.js';
import { kind, timestampFormat } from '../context.js';
import { invalid, RestError } from '../errors.js';
import { InsertAllBody, rowsKind } from '../insert-body.js';
import { bodyObject, boolish, checkDatasetId, checkProjectId, checkTableId, qInt, qPageToken, qStr, str, type Query } from '../validate.js';
import { sendJsonText, type TableParams } from './common.js';
import { PAGE_BYTES, rowsOf, sendRowsBody } from '../rows-body.js';

export const ROWS_DEFAULT = 10_000;
export const ROWS_CAP = 100_000;

/** maxResults / pageToken / startIndex -> [start, max]; pageToken (a decimal row index) wins over startIndex. */
export function pageWindow(q: Query, defaultMax = ROWS_DEFAULT): { start: number; max: number } {
  const maxRaw = qInt(q, 'maxResults');
  const max = maxRaw === undefined ? defaultMax : Math.min(maxRaw, ROWS_CAP);
  const start = qStr(q, 'pageToken') ? qPageToken(q) : (qInt(q, 'startIndex') ?? 0);
  return { start, max };
}

/** A table id, or one with a partition decorator (`t$20240101`: the engine reads or writes that partition), checked on the table's name. */
function decoratedTableId(id: string): string {
  const dollar = id.indexOf('$');
  return dollar < 0 ? checkTableId(id) : checkTableId(id.slice(0, dollar)) + id.slice(dollar);
}

export function registerTabledata(app: FastifyInstance, ctx: GatewayContext, family: Family): void {
  const base = '/projects/:projectId/datasets/:datasetId/tables/:tableId';

  app.get<{ Params: TableParams; Querystring: Query }>(`${base}/data`, async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const t = decoratedTableId(req.params.tableId);
    const { start, max } = pageWindow(req.query);
    const r = await ctx.call('ListRows', {
      table: { project_id: p, dataset_id: d, table_id: t },
      start_index: start,
      max_results: max,
      selected_fields: qStr(req.query, 'selectedFields') ?? '',
      timestamp_format: timestampFormat(family, qStr(req.query, 'formatOptions.useInt64Timestamp'), qStr(req.query, 'formatOptions.timestampOutputFormat')),
      string_scalars: family === 'bigquery',
      want_rows_utf8: true,
      max_bytes: PAGE_BYTES,
    });
    // Zero maxResults: totalRows and etag only (spec §4.4).
    const head = `{"kind":${JSON.stringify(kind(family, 'tableDataList'))},"etag":${JSON.stringify(r.etag || '')},"totalRows":"${r.total_rows}"`;
    const token = max > 0 && r.next_index >= 0 && r.next_index < r.total_rows ? `,"pageToken":"${r.next_index}"` : '';
    return sendRowsBody(reply, { head, rows: max > 0 ? rowsOf(r) : undefined, tail: token + '}' });
  });

  /** The InsertRows request of a parsed insertAll body (rows re-encoded as JSON text). */
  const parsedInsert = (body: Record<string, unknown>): { rowsJson: string; body: Record<string, unknown> } => {
    const rows = body['rows'];
    if (rows !== undefined && rows !== null && !Array.isArray(rows)) throw invalid('Invalid value for rows: expected a list of rows');
    if (!Array.isArray(rows) || rows.length === 0) throw invalid('No rows present in the request.');
    return { rowsJson: JSON.stringify(rows), body };
  };

  app.post<{ Params: TableParams }>(`${base}/insertAll`, async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const d = checkDatasetId(req.params.datasetId);
    const t = decoratedTableId(req.params.tableId);
    const call = (body: Record<string, unknown>, rowsJson: string, rowsUtf8: Buffer | undefined) => ctx.call('InsertRows', {
      table: { project_id: p, dataset_id: d, table_id: t },
      rows_json: rowsJson,
      rows_utf8: rowsUtf8,
      skip_invalid_rows: boolish(body['skipInvalidRows']) ?? false,
      ignore_unknown_values: boolish(body['ignoreUnknownValues']) ?? false,
      template_suffix: str(body['templateSuffix']) ?? '',
      streaming: true,
    });
    let r;
    if (req.body instanceof InsertAllBody) {
      // Fast path: the rows bytes are forwarded as sent (the engine parses them once).
      const split = req.body;
      const k = rowsKind(split.rows);
      if (k === 'other') throw invalid('Invalid value for rows: expected a list of rows');
      if (k !== 'items') throw invalid('No rows present in the request.');
      try {
        r = await call(split.rest, '', split.rows);
      } catch (e) {
        if (!(e instanceof RestError && e.message.startsWith('Invalid JSON payload received'))) throw e;
        // The engine could not parse the forwarded rows text: answer with the
        // same parse error a fully parsed body would have given.
        let whole: unknown;
        try {
          whole = JSON.parse(split.text);
        } catch (pe) {
          throw new RestError(400, 'parseError', `Parse error: invalid JSON payload received. ${pe instanceof Error ? pe.message : String(pe)}`, 'invalid');
        }
        // A valid body whose rows were not where the unscanned split assumed
        // (another key after them): the parsed body's rows, as any other body.
        if (split.scanned) throw e;
        const again = parsedInsert(bodyObject(whole));
        r = await call(again.body, again.rowsJson, undefined);
      }
    } else {
      const { body, rowsJson } = parsedInsert(bodyObject(req.body));
      r = await call(body, rowsJson, undefined);
    }
    let text = `{"kind":${JSON.stringify(kind(family, 'tableDataInsertAllResponse'))}`;
    if (r.insert_errors_json && r.insert_errors_json !== '[]') text += `,"insertErrors":${r.insert_errors_json}`;
    return sendJsonText(reply, text + '}');
  });
}
