// The error of a query or a statement: the REST envelope's reason and HTTP
// status with the service's message. Raised by every stage (analyzer,
// planner, executor, storage transactions) and passed to the gateway unchanged.
export class QueryError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalidQuery' | 'invalid' | 'notFound' | 'duplicate' | 'notImplemented' | 'stopped' | 'accessDenied' | 'quotaExceeded' | 'resourcesExceeded' | 'timeout' | 'bytesBilledLimitExceeded' = 'invalidQuery',
    readonly httpCode = 400,
  ) {
    super(message);
  }
}

/** The service's row and value size limit ("Cannot query rows larger than 100MB limit."). */
export const MAX_ROW_BYTES = 100 * 1024 * 1024;

export const rowTooLarge = (): QueryError => new QueryError('Cannot query rows larger than 100MB limit.', 'resourcesExceeded');

/**
 * V8 running out on what a query or request built (a stack overflow, a string
 * or array past its maximum length, a failed buffer allocation), as the
 * service reports running out of resources; undefined for any other error.
 */
export function resourceError(e: unknown): QueryError | undefined {
  if (!(e instanceof RangeError)) return undefined;
  if (e.message.startsWith('Maximum call stack size exceeded')) {
    return new QueryError('Out of stack space due to deeply nested query expression during query resolution.', 'resourcesExceeded');
  }
  if (/^(Invalid (string|array|typed array) length|Array buffer allocation failed)/.test(e.message)) {
    return new QueryError('Resources exceeded during query execution: The query could not be executed in the allotted memory.', 'resourcesExceeded');
  }
  return undefined;
}
