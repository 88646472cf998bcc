// A REST schema's column defaults (tables.insert / update / patch: TableFieldSchema.defaultValueExpression) go through
// the checks CREATE TABLE ... DEFAULT makes (ddl-columns.ts checkDefault, checkDefaultValue), so both surfaces refuse
// the same defaults with the same words. default-values.md: a default is a literal or one of the listed functions
// (or an ARRAY / STRUCT of them) whose type coerces to the column's; a STRUCT takes one default as a whole (none on
// its fields). A column added to an existing table with a default is refused by the schema-evolution check
// (storage/resources.ts checkSchemaEvolution: default-values.md, Limitations).
import { parseExpression } from '../../grammar/index.js';
import type { QueryContext } from './api.js';
import { QueryError } from './api.js';
import { checkDefault, checkDefaultValue } from './ddl-columns.js';
import { Session } from './session.js';
import { restFieldToColumn, type RestField } from '../types/schema.js';

/**
 * Refuses the first default of `fields` CREATE TABLE would refuse. Errors are 400 invalid (a resource, not a query)
 * with the DDL's message, without the position inside the expression text.
 */
export async function checkRestDefaults(ctx: QueryContext, fields: readonly RestField[]): Promise<void> {
  for (const f of fields) {
    const nested = nestedDefault(f.fields ?? [], f.name);
    if (nested) throw invalid(`Field ${nested} has a default value; a STRUCT column takes one default value as a whole, not one for each field`);
    const text = f.defaultValueExpression;
    if (text === undefined || text === null) continue;
    const s = new Session({ ...ctx, sql: text });
    try {
      const e = parseExpression(text);
      const col = restFieldToColumn(f);
      checkDefault(s, e, col.type);
      await checkDefaultValue(s, e, col, f);
    } catch (err) {
      const message = err instanceof Error ? err.message.replace(/ at \[\d+:\d+\]$/, '') : String(err);
      throw invalid(`Invalid default value expression for column ${f.name}: ${message}`);
    }
  }
}

function nestedDefault(fields: readonly RestField[], path: string): string | undefined {
  for (const f of fields) {
    const here = `${path}.${f.name}`;
    if (f.defaultValueExpression !== undefined && f.defaultValueExpression !== null) return here;
    const deeper = nestedDefault(f.fields ?? [], here);
    if (deeper) return deeper;
  }
  return undefined;
}

function invalid(message: string): QueryError {
  return new QueryError(message, 'invalid', 400);
}
