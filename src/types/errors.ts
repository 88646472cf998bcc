// The error of a query or a statement: the REST envelope's reason and HTTP
// status with the service's message. Raised by every stage (analyzer,
// planner, executor, storage transactions) and passed to the gateway unchanged.
export class QueryError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalidQuery' | 'invalid' | 'notFound' | 'duplicate' | 'notImplemented' | 'stopped' | 'accessDenied' | 'quotaExceeded' = 'invalidQuery',
    readonly httpCode = 400,
  ) {
    super(message);
  }
}

