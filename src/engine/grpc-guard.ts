// Requests whose bytes are no message of their method's type (garbage, a
// varint past its end, nesting past protobufjs's 100 levels). grpc-js answers
// a request its deserializer throws on with INTERNAL, a server error, although
// the client sent it. Here such a request reaches its handler as a marker and
// is answered INVALID_ARGUMENT without reaching the implementation; a client
// stream's handler checks each message with `isUndecodable`.
import type * as grpc from '@grpc/grpc-js';
import { invalid } from '../storage/errors.js';
import { toServiceError } from './service.js';

const UNDECODABLE = Symbol('undecodable request');

interface Undecodable {
  readonly [UNDECODABLE]: string;
}

export function isUndecodable(m: unknown): m is Undecodable {
  return typeof m === 'object' && m !== null && UNDECODABLE in m;
}

export function undecodableError(m: Undecodable): grpc.ServiceError {
  return toServiceError(invalid(`Invalid request: ${m[UNDECODABLE]}`));
}

/** The service with request decoders that never throw (they give the marker instead). */
export function tolerantDecoding(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(def)) {
    const decode = m.requestDeserialize;
    out[name] = {
      ...m,
      requestDeserialize: (b: Buffer): unknown => {
        try {
          return decode(b);
        } catch (e) {
          const marker: Undecodable = { [UNDECODABLE]: `the request is not a valid ${name} message (${e instanceof Error ? e.message : String(e)})` };
          return marker;
        }
      },
    };
  }
  return out;
}

type AnyHandler = (call: { request?: unknown; emit(event: 'error', e: unknown): boolean }, callback?: grpc.sendUnaryData<unknown>) => void;

/** Handlers of unary and server-streaming methods that answer an undecodable request themselves. */
export function refuseUndecodable(def: grpc.ServiceDefinition, impl: grpc.UntypedServiceImplementation): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, h] of Object.entries(impl)) {
    if (def[name]?.requestStream) {
      out[name] = h;
      continue;
    }
    const inner = h as unknown as AnyHandler;
    const guarded: AnyHandler = (call, callback) => {
      if (!isUndecodable(call.request)) return inner(call, callback);
      const err = undecodableError(call.request);
      if (callback) callback(err);
      else call.emit('error', err);
    };
    out[name] = guarded as unknown as grpc.UntypedHandleCall;
  }
  return out;
}
