// Errors of the file codecs and object I/O. Stage-neutral (no gateway or
// engine types): the gateway maps them to its REST envelope, the engine to a
// QueryError, each keeping code, reason and message.

export type IoReason = 'invalid' | 'notFound' | 'notImplemented' | 'accessDenied';

export class IoError extends Error {
  constructor(
    readonly code: 400 | 403 | 404 | 501,
    readonly reason: IoReason,
    message: string,
  ) {
    super(message);
  }
}

export const ioInvalid = (message: string): IoError => new IoError(400, 'invalid', message);
export const ioNotFound = (message: string): IoError => new IoError(404, 'notFound', message);
export const ioNotImplemented = (message: string): IoError => new IoError(501, 'notImplemented', message);

/** A REST-style JSON object (a row, a configuration block). */
export type Json = Record<string, unknown>;

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
