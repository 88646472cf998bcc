// Small helpers the resource plugins share.
import type { FastifyReply } from 'fastify';
import type { Family } from '../context.js';
import { kind } from '../context.js';
import type { ListReply } from '../engine-client.js';
import { RestError } from '../errors.js';
import type { Json } from '../validate.js';

export interface ProjectParams { projectId: string }
export interface DatasetParams extends ProjectParams { datasetId: string }
export interface TableParams extends DatasetParams { tableId: string }

export function parseJson(text: string, what: string): Json {
  if (!text) return {};
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new RestError(500, 'internalError', `The engine returned malformed ${what} JSON`);
  }
}

/** Engine resource JSON with the kind of the request's family stamped on. */
export function resourceOut(text: string, family: Family, what: string): Json {
  return stampKind(parseJson(text, what), kind(family, what));
}

/** Engine list items with the family's kind stamped on each. */
export function listItems(reply: ListReply, family: Family, what: string | undefined): Json[] {
  return reply.items_json.map((t) => {
    const item = parseJson(t, 'list item');
    return what ? stampKind(item, kind(family, what)) : item;
  });
}

export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=UTF-8').send(text);
}

export function noContent(reply: FastifyReply): FastifyReply {
  return reply.code(204).send();
}

/** A weak etag from content, like the real service's opaque base64 tags. */
export function etagOf(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return Buffer.from((h >>> 0).toString(16).padStart(8, '0')).toString('base64');
}

/** kind first (as the real service orders it), overriding whatever the engine stored. */
export function stampKind(r: Json, k: string): Json {
  const out: Json = { kind: k };
  Object.assign(out, r);
  out['kind'] = k;
  return out;
}
