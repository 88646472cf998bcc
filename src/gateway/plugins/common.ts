// Small helpers the resource plugins share.
import type { FastifyReply } from 'fastify';
import type { Family } from '../context.js';
import { kind } from '../context.js';
import type { ListReply } from '../engine-client.js';
import { invalid, RestError } from '../errors.js';
import { isObj, type Json } from '../validate.js';

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

/**
 * `If-Match` on a PUT/PATCH (the Node client sends the resource's etag): the
 * service answers 412 when the resource changed since (its etag differs).
 */
export function checkIfMatch(header: string | string[] | undefined, current: unknown): void {
  const want = Array.isArray(header) ? header[0] : header;
  if (!want || want === '*' || want === current) return;
  throw new RestError(412, 'conditionNotMet', 'Precondition check failed.');
}

/** The int64 fields of a resource (dotted paths) as the JSON strings the service echoes; clients may send numbers. */
export function int64Strings(body: Json, paths: readonly string[]): void {
  for (const path of paths) {
    const keys = path.split('.');
    let o: unknown = body;
    for (const k of keys.slice(0, -1)) o = o && typeof o === 'object' ? (o as Json)[k] : undefined;
    const last = keys[keys.length - 1]!;
    if (o && typeof o === 'object' && typeof (o as Json)[last] === 'number') (o as Json)[last] = String((o as Json)[last]);
  }
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

/** `policy.bindings` of a setIamPolicy body, checked; bindings without members are dropped. */
export function policyBindings(body: Json): { role: string; members: string[] }[] {
  const policy = isObj(body['policy']) ? body['policy'] : {};
  const raw = policy['bindings'] ?? [];
  if (!Array.isArray(raw)) throw invalid("Invalid value at 'policy.bindings'");
  return raw
    .map((b, i) => {
      const members = isObj(b) ? b['members'] ?? [] : undefined;
      if (!isObj(b) || typeof b['role'] !== 'string' || !Array.isArray(members) || !members.every((m) => typeof m === 'string')) {
        throw invalid(`Invalid value at 'policy.bindings[${i}]'`);
      }
      return { role: b['role'], members: members as string[] };
    })
    .filter((b) => b.members.length);
}
