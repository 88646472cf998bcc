// The one error shape every non-2xx answer uses (spec §7), plus the helpers
// that spell the real service's messages.

export interface ErrorInfo {
  code: number;
  status: string;
  reason: string;
  message: string;
}

export interface ErrorEnvelope {
  error: {
    code: number;
    message: string;
    status: string;
    errors: { domain: string; reason: string; message: string }[];
  };
}

/** Spec §7 status words by HTTP code; a caller may pass a more precise one (failedPrecondition). */
export function statusForCode(code: number): string {
  switch (code) {
    case 400: return 'invalid';
    case 401: return 'unauthenticated';
    case 403: return 'permissionDenied';
    case 404: return 'notFound';
    case 405: return 'methodNotAllowed';
    case 409: return 'alreadyExists';
    case 412: return 'failedPrecondition';
    case 413: return 'payloadTooLarge';
    case 415: return 'invalid';
    case 429: return 'resourceExhausted';
    case 499: return 'cancelled';
    case 501: return 'notImplemented';
    case 503: return 'unavailable';
    case 504: return 'deadlineExceeded';
    default: return code >= 500 ? 'internal' : 'invalid';
  }
}

export class RestError extends Error {
  readonly status: string;
  constructor(readonly code: number, readonly reason: string, message: string, status?: string) {
    super(message);
    this.status = status ?? statusForCode(code);
  }

  static from(info: ErrorInfo): RestError {
    return new RestError(info.code, info.reason, info.message, info.status);
  }

  toInfo(): ErrorInfo {
    return { code: this.code, status: this.status, reason: this.reason, message: this.message };
  }
}

export function envelope(e: ErrorInfo): ErrorEnvelope {
  return {
    error: {
      code: e.code,
      message: e.message,
      status: e.status,
      errors: [{ domain: 'global', reason: e.reason, message: e.message }],
    },
  };
}

export const invalid = (message: string): RestError => new RestError(400, 'invalid', message);
export const invalidQuery = (message: string): RestError => new RestError(400, 'invalidQuery', message);
export const notFound = (message: string): RestError => new RestError(404, 'notFound', message);
export const duplicate = (message: string): RestError => new RestError(409, 'duplicate', message);
export const notImplemented = (message: string): RestError => new RestError(501, 'notImplemented', message);
export const unavailable = (message = 'The service is currently unavailable.'): RestError =>
  new RestError(503, 'backendError', message);

// Message forms of the real service (project:dataset.table).
export const datasetNotFound = (p: string, d: string): RestError => notFound(`Not found: Dataset ${p}:${d}`);
export const tableNotFound = (p: string, d: string, t: string): RestError => notFound(`Not found: Table ${p}:${d}.${t}`);
export const jobNotFound = (p: string, j: string, location?: string): RestError =>
  notFound(`Not found: Job ${p}:${location ? `${location}.` : ''}${j}`);
