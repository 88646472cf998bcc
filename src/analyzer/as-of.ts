// FOR SYSTEM_TIME AS OF's instant (a table reference's, CREATE TABLE ... CLONE's).
import type * as A from '../../grammar/ast.js';
import { T, typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { coerce } from './coercion.js';
import { resolveExpr } from './expr.js';
import { constantValue } from './names.js';
import { Scope } from './scope.js';
import { someCall } from './ast-search.js';
import { findUdf } from './sql-udfs.js';
import { withLiteralTimeZone } from './types.js';

/**
 * The instant (epoch micros) of a FOR SYSTEM_TIME AS OF expression. Its zone-less literals, strings and
 * conversions read America/Los_Angeles unless @@time_zone or the request chose a zone (query-syntax.md,
 * FOR SYSTEM_TIME AS OF; system-variables.md, @@time_zone: kept for backward compatibility).
 */
export function asOfMicros(an: Analyzer, e: A.Expr): bigint {
  const zone = an.env.asOfTimeZone ?? an.env.timeZone ?? 'UTC';
  // query-syntax.md, FOR SYSTEM_TIME AS OF, Limitations: the expression can't call user-defined functions.
  let udf: string | undefined;
  someCall(e, (c) => !!c.name && findUdf(an, c.name) !== undefined && (udf = c.name.join('.')) !== undefined);
  if (udf !== undefined) throw sqlError(`FOR SYSTEM_TIME AS OF expression cannot call user-defined function ${udf}`, e.loc);
  return withLiteralTimeZone(zone, () => {
    let x = resolveExpr(an, e, { scope: new Scope(), clause: 'FOR SYSTEM_TIME AS OF' });
    // A string is read as a TIMESTAMP (a literal that is none is the cast's error).
    if (x.type.kind === 'STRING') x = coerce(x, T.TIMESTAMP, e.loc);
    // The reference resolver's wording (resolver_query.cc, ResolveForSystemTimeExpr).
    if (x.type.kind !== 'TIMESTAMP') throw sqlError(`FOR SYSTEM_TIME AS OF must be of type TIMESTAMP but was of type ${typeToSql(x.type)}`, e.loc);
    const v = constantValue(x, zone);
    if (typeof v !== 'bigint') throw sqlError('FOR SYSTEM_TIME AS OF expression must be a constant TIMESTAMP', e.loc);
    return v;
  });
}
