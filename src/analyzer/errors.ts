// Analysis errors carry the real service's wording and a `[line:col]` suffix
// taken from the AST node that caused them.
import type { Loc } from '../../grammar/ast.js';
import { QueryError } from '../types/errors.js';

export function at(loc: Loc | undefined): string {
  return loc ? ` at [${loc.line}:${loc.column}]` : '';
}

/** An invalidQuery error at a source position. */
export function sqlError(message: string, loc?: Loc): QueryError {
  return new QueryError(message + at(loc), 'invalidQuery', 400);
}

export function notFound(message: string): QueryError {
  return new QueryError(message, 'notFound', 404);
}
