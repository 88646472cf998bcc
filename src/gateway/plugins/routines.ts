// routines.insert / update / list: the Routine resource rules of reference/rest/v2/routines.md and routines/list.md
// that the gateway keeps (the engine stores the resource as given).
import { invalid } from '../errors.js';
import { isObj, str, type Json } from '../validate.js';

const ROUTINE_TYPES = new Set(['SCALAR_FUNCTION', 'PROCEDURE', 'TABLE_VALUED_FUNCTION', 'AGGREGATE_FUNCTION']);

/**
 * A routine resource as insert / update take it: routineType and definitionBody are required; language defaults to
 * SQL unless remoteFunctionOptions is set; returnType is required for a function of another language than SQL and
 * cannot be set on a table function; returnTableType only on a table function; an argument's mode only for a
 * procedure.
 */
export function checkRoutine(body: Json): Json {
  const type = str(body['routineType']);
  if (!type || type === 'ROUTINE_TYPE_UNSPECIFIED') throw invalid('Required field routineType is missing: the type of the routine (SCALAR_FUNCTION, PROCEDURE, TABLE_VALUED_FUNCTION, AGGREGATE_FUNCTION)');
  if (!ROUTINE_TYPES.has(type)) throw invalid(`Invalid value for routineType: ${JSON.stringify(body['routineType'])}`);
  if (typeof body['definitionBody'] !== 'string') throw invalid('Required field definitionBody is missing: the body of the routine');
  const out: Json = { ...body };
  // `ddl` is no field of the resource: the engine keeps the CREATE statement of a routine made by DDL there, and a
  // client sending back what it read must not pin the old statement over the fields it changed.
  delete out['ddl'];
  if (out['language'] === undefined && !isObj(out['remoteFunctionOptions'])) out['language'] = 'SQL';
  const language = str(out['language']);
  const hasReturn = isObj(out['returnType']);
  if (type === 'TABLE_VALUED_FUNCTION' && hasReturn) throw invalid('returnType cannot be set on a routine of type TABLE_VALUED_FUNCTION; use returnTableType');
  if (type !== 'TABLE_VALUED_FUNCTION' && isObj(out['returnTableType'])) throw invalid(`returnTableType can be set only on a routine of type TABLE_VALUED_FUNCTION, not ${type}`);
  if (type !== 'PROCEDURE' && language && language !== 'SQL' && !hasReturn && !isObj(out['remoteFunctionOptions'])) {
    throw invalid(`returnType is required for a function of language ${language}`);
  }
  const args = Array.isArray(out['arguments']) ? out['arguments'] : [];
  for (const a of args) {
    if (type !== 'PROCEDURE' && isObj(a) && a['mode'] !== undefined && a['mode'] !== 'MODE_UNSPECIFIED') {
      throw invalid(`Argument mode can be set for procedures only; argument ${str(a['name']) ?? ''} of a ${type} has mode ${JSON.stringify(a['mode'])}`);
    }
  }
  return out;
}

/** A routine as routines.get / insert / update answer: the resource's fields, not the engine's kept DDL. */
export function routineOut(r: Json): Json {
  const { ddl: _ddl, ...out } = r;
  return out;
}

/** routines.list `filter`: routineType:{RoutineType}, the one format the page supports. */
export function routineTypeFilter(filter: string | undefined): string | undefined {
  if (filter === undefined || filter.trim() === '') return undefined;
  const m = /^\s*routineType\s*:\s*([A-Z_]+)\s*$/.exec(filter);
  if (!m || !ROUTINE_TYPES.has(m[1]!)) throw invalid(`Invalid filter: ${JSON.stringify(filter)}; the supported format is routineType:{RoutineType}`);
  return m[1];
}

/** The fields routines.list gives without readMask (remoteFunctionOptions when the routine has it). */
const LIST_FIELDS = ['etag', 'routineReference', 'routineType', 'creationTime', 'lastModifiedTime', 'language', 'remoteFunctionOptions'];

/** A listed routine: the default fields, or with readMask the masked fields and the reference. */
export function listedRoutine(r: Json, readMask: string | undefined): Json {
  const fields = readMask === undefined ? LIST_FIELDS : ['routineReference', ...readMask.split(',').map((f) => f.trim().split('.')[0]!).filter((f) => f)];
  const out: Json = {};
  for (const f of fields) if (r[f] !== undefined) out[f] = r[f];
  return out;
}
