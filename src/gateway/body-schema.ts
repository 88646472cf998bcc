// The JSON types of REST request bodies, checked before a handler reads them.
// The real service turns a JSON body into its protobuf request and refuses a
// value of the wrong JSON type with messages like
//   Invalid value at 'job.configuration.query.maximum_bytes_billed.value' (TYPE_INT64), "None"
//   Invalid value at 'dataset.labels' (type.googleapis.com/google.cloud.bigquery.v2.Dataset.LabelsEntry), true
//   Invalid value at 'query_request' (query), Starting an object on a scalar field
//   Invalid JSON payload received. Unknown name "query" at 'table.view': Proto field is not repeating, cannot start list.
// (paths in the protobuf's snake_case names, one line per bad value). Fields
// not declared here pass unchecked: an unlisted field of a real client must
// never be refused. As the service reads JSON: null is an absent field, a
// single value where a list goes a one-element list (and a one-element list
// where a single value goes that value), and a number or boolean in a string
// field its text (clients rely on that for parameter values).
import { invalid, type RestError } from './errors.js';

/**
 * Message name -> its fields: `name` (a string), or `name:type` with type
 *   s i64 i32 u32 u64 d b   string, integers, double, bool
 *   e                       an enum (its name or number)
 *   any / obj               google.protobuf.Value (anything) / Struct (an object)
 *   Name                    another message
 * and `?` after a scalar for a wrapper type (Int64Value: paths end in .value),
 * `[t]` for a list, `{t}` for a map with string keys.
 */
const MESSAGES: Record<string, string> = {
  DatasetReference: 'datasetId projectId',
  TableReference: 'projectId datasetId tableId',
  RoutineReference: 'projectId datasetId routineId',
  ModelReference: 'projectId datasetId modelId',
  RowAccessPolicyReference: 'projectId datasetId tableId policyId',
  JobReference: 'projectId jobId location:s?',
  EncryptionConfiguration: 'kmsKeyName:s?',
  Expr: 'expression title description location',
  DatasetAccessEntry: 'dataset:DatasetReference targetTypes:[e]',
  Access: 'role userByEmail groupByEmail domain specialGroup iamMember view:TableReference routine:RoutineReference dataset:DatasetAccessEntry condition:Expr',
  LinkedDatasetSource: 'sourceDataset:DatasetReference',
  ExternalDatasetReference: 'externalSource connection',
  GcpTag: 'tagKey tagValue',
  Dataset:
    'kind etag id selfLink datasetReference:DatasetReference friendlyName:s? description:s? defaultTableExpirationMs:i64? ' +
    'defaultPartitionExpirationMs:i64? labels:{s} access:[Access] creationTime:i64 lastModifiedTime:i64 location ' +
    'defaultEncryptionConfiguration:EncryptionConfiguration satisfiesPzs:b? satisfiesPzi:b? type linkedDatasetSource:LinkedDatasetSource ' +
    'externalDatasetReference:ExternalDatasetReference isCaseInsensitive:b? defaultCollation:s? defaultRoundingMode:e ' +
    'maxTimeTravelHours:i64? tags:[GcpTag] storageBillingModel:e resourceTags:{s}',
  UndeleteDatasetRequest: 'deletionTime',

  PolicyTagList: 'names:[s]',
  RangeElementType: 'type',
  TableFieldSchema:
    'name type mode fields:[TableFieldSchema] description:s? policyTags:PolicyTagList maxLength:i64 precision:i64 scale:i64 ' +
    'roundingMode:e collation:s? defaultValueExpression:s? rangeElementType:RangeElementType foreignTypeDefinition timestampPrecision:i64?',
  TableSchema: 'fields:[TableFieldSchema]',
  TimePartitioning: 'type expirationMs:i64? field:s? requirePartitionFilter:b?',
  Range: 'start:i64 end:i64 interval:i64',
  RangePartitioning: 'field range:Range',
  Clustering: 'fields:[s]',
  UserDefinedFunctionResource: 'resourceUri:s? inlineCode:s?',
  ViewDefinition: 'query userDefinedFunctionResources:[UserDefinedFunctionResource] useLegacySql:b? useExplicitColumnNames:b',
  MaterializedViewDefinition: 'query lastRefreshTime:i64 enableRefresh:b? refreshIntervalMs:u64? allowNonIncrementalDefinition:b? maxStaleness',
  CsvOptions: 'fieldDelimiter skipLeadingRows:i64? quote:s? allowQuotedNewlines:b? allowJaggedRows:b? encoding preserveAsciiControlCharacters:b? nullMarker:s?',
  JsonOptions: 'encoding',
  HivePartitioningOptions: 'mode sourceUriPrefix requirePartitionFilter:b? fields:[s]',
  ExternalDataConfiguration:
    'sourceUris:[s] schema:TableSchema sourceFormat maxBadRecords:i32? autodetect:b? ignoreUnknownValues:b? compression ' +
    'csvOptions:CsvOptions jsonOptions:JsonOptions hivePartitioningOptions:HivePartitioningOptions connectionId referenceFileSchemaUri:s? ' +
    'decimalTargetTypes:[e] fileSetSpecType:e objectMetadata:e metadataCacheMode:e',
  PrimaryKey: 'columns:[s]',
  TableConstraints: 'primaryKey:PrimaryKey',
  Table:
    'kind etag id selfLink tableReference:TableReference friendlyName:s? description:s? labels:{s} schema:TableSchema ' +
    'timePartitioning:TimePartitioning rangePartitioning:RangePartitioning clustering:Clustering requirePartitionFilter:b? ' +
    'numBytes:i64? numLongTermBytes:i64? numRows:u64? creationTime:i64 expirationTime:i64? lastModifiedTime:u64 type ' +
    'view:ViewDefinition materializedView:MaterializedViewDefinition externalDataConfiguration:ExternalDataConfiguration location ' +
    'encryptionConfiguration:EncryptionConfiguration defaultCollation:s? defaultRoundingMode:e tableConstraints:TableConstraints ' +
    'resourceTags:{s} maxStaleness',
  Binding: 'role members:[s] condition:Expr',
  Policy: 'version:i32 bindings:[Binding] etag',
  GetPolicyOptions: 'requestedPolicyVersion:i32',
  // tables.{getIamPolicy,setIamPolicy,testIamPermissions} share their route: one message with each request's fields.
  TableIamRequest: 'policy:Policy updateMask options:GetPolicyOptions permissions:[s]',

  InsertAllRow: 'insertId json:obj',
  TableDataInsertAllRequest: 'kind skipInvalidRows:b? ignoreUnknownValues:b? templateSuffix rows:[InsertAllRow] traceId',

  StructType: 'name type:QueryParameterType description',
  QueryParameterType: 'type arrayType:QueryParameterType structTypes:[StructType] rangeElementType:QueryParameterType timestampPrecision:i64?',
  RangeValue: 'start:QueryParameterValue end:QueryParameterValue',
  QueryParameterValue: 'value:s? arrayValues:[QueryParameterValue] structValues:{QueryParameterValue} rangeValue:RangeValue',
  QueryParameter: 'name parameterType:QueryParameterType parameterValue:QueryParameterValue',
  ConnectionProperty: 'key value',
  DataFormatOptions: 'useInt64Timestamp:b? timestampOutputFormat:e',
  ScriptOptions: 'statementTimeoutMs:i64? statementByteBudget:i64? keyResultStatement:e',
  JobConfigurationQuery:
    'query destinationTable:TableReference externalTableDefinitions:{ExternalDataConfiguration} ' +
    'userDefinedFunctionResources:[UserDefinedFunctionResource] createDisposition writeDisposition defaultDataset:DatasetReference ' +
    'priority allowLargeResults:b? useQueryCache:b? flattenResults:b? maximumBillingTier:i32? maximumBytesBilled:i64? useLegacySql:b? ' +
    'parameterMode queryParameters:[QueryParameter] schemaUpdateOptions:[s] timePartitioning:TimePartitioning ' +
    'rangePartitioning:RangePartitioning clustering:Clustering destinationEncryptionConfiguration:EncryptionConfiguration ' +
    'scriptOptions:ScriptOptions connectionProperties:[ConnectionProperty] createSession:b? continuous:b?',
  DestinationTableProperties: 'friendlyName:s? description:s? labels:{s}',
  JobConfigurationLoad:
    'sourceUris:[s] schema:TableSchema destinationTable:TableReference destinationTableProperties:DestinationTableProperties ' +
    'createDisposition writeDisposition nullMarker:s? fieldDelimiter skipLeadingRows:i32? encoding quote:s? maxBadRecords:i32? ' +
    'allowQuotedNewlines:b? sourceFormat allowJaggedRows:b? ignoreUnknownValues:b? projectionFields:[s] autodetect:b? ' +
    'schemaUpdateOptions:[s] timePartitioning:TimePartitioning rangePartitioning:RangePartitioning clustering:Clustering ' +
    'destinationEncryptionConfiguration:EncryptionConfiguration useAvroLogicalTypes:b? referenceFileSchemaUri:s? ' +
    'hivePartitioningOptions:HivePartitioningOptions decimalTargetTypes:[e] preserveAsciiControlCharacters:b? ' +
    'connectionProperties:[ConnectionProperty] createSession:b? nullMarkers:[s] timeZone:s?',
  JobConfigurationTableCopy:
    'sourceTable:TableReference sourceTables:[TableReference] destinationTable:TableReference createDisposition writeDisposition ' +
    'destinationEncryptionConfiguration:EncryptionConfiguration operationType:e destinationExpirationTime',
  JobConfigurationExtract:
    'sourceTable:TableReference sourceModel:ModelReference destinationUri destinationUris:[s] printHeader:b? fieldDelimiter ' +
    'destinationFormat compression useAvroLogicalTypes:b?',
  JobConfiguration:
    'jobType query:JobConfigurationQuery load:JobConfigurationLoad copy:JobConfigurationTableCopy extract:JobConfigurationExtract ' +
    'dryRun:b? jobTimeoutMs:i64? labels:{s} reservation',
  Job: 'kind etag id selfLink user_email configuration:JobConfiguration jobReference:JobReference',
  QueryRequest:
    'kind query maxResults:u32? defaultDataset:DatasetReference timeoutMs:u32? dryRun:b preserveNulls:b? useQueryCache:b? ' +
    'useLegacySql:b? parameterMode queryParameters:[QueryParameter] location formatOptions:DataFormatOptions ' +
    'connectionProperties:[ConnectionProperty] labels:{s} maximumBytesBilled:i64? requestId createSession:b? jobCreationMode:e ' +
    'destinationEncryptionConfiguration:EncryptionConfiguration',

  StandardSqlField: 'name type:StandardSqlDataType',
  StandardSqlStructType: 'fields:[StandardSqlField]',
  StandardSqlDataType: 'typeKind arrayElementType:StandardSqlDataType structType:StandardSqlStructType rangeElementType:StandardSqlDataType',
  StandardSqlTableType: 'columns:[StandardSqlField]',
  Argument: 'name argumentKind mode dataType:StandardSqlDataType isAggregate:b?',
  RemoteFunctionOptions: 'endpoint connection userDefinedContext:{s} maxBatchingRows:i64',
  Routine:
    'etag routineReference:RoutineReference routineType creationTime:i64 lastModifiedTime:i64 language arguments:[Argument] ' +
    'returnType:StandardSqlDataType returnTableType:StandardSqlTableType importedLibraries:[s] definitionBody description ' +
    'determinismLevel securityMode:e strictMode:b? remoteFunctionOptions:RemoteFunctionOptions dataGovernanceType:e',
  Model:
    'etag modelReference:ModelReference creationTime:i64 lastModifiedTime:i64 description:s? friendlyName:s? labels:{s} ' +
    'expirationTime:i64? location encryptionConfiguration:EncryptionConfiguration modelType',
  RowAccessPolicy: 'etag rowAccessPolicyReference:RowAccessPolicyReference filterPredicate creationTime lastModifiedTime grantees:[s]',
};

type Scalar = 's' | 'i64' | 'i32' | 'u32' | 'u64' | 'd' | 'b' | 'e' | 'any' | 'obj';
type FieldType =
  | { readonly k: 'scalar'; readonly t: Scalar; readonly wrapped: boolean }
  | { readonly k: 'msg'; readonly name: string }
  | { readonly k: 'list'; readonly of: FieldType }
  | { readonly k: 'map'; readonly of: FieldType };

const SCALARS = new Set<string>(['s', 'i64', 'i32', 'u32', 'u64', 'd', 'b', 'e', 'any', 'obj']);

function parseType(t: string): FieldType {
  if (t.startsWith('[')) return { k: 'list', of: parseType(t.slice(1, -1)) };
  if (t.startsWith('{')) return { k: 'map', of: parseType(t.slice(1, -1)) };
  const wrapped = t.endsWith('?');
  const base = wrapped ? t.slice(0, -1) : t;
  if (SCALARS.has(base)) return { k: 'scalar', t: base as Scalar, wrapped };
  if (!(base in MESSAGES)) throw new Error(`body-schema: unknown type ${base}`);
  return { k: 'msg', name: base };
}

const fields = new Map<string, Map<string, FieldType>>();
for (const [name, spec] of Object.entries(MESSAGES)) {
  const m = new Map<string, FieldType>();
  for (const f of spec.split(/\s+/)) {
    const colon = f.indexOf(':');
    m.set(colon < 0 ? f : f.slice(0, colon), colon < 0 ? { k: 'scalar', t: 's', wrapped: false } : parseType(f.slice(colon + 1)));
  }
  fields.set(name, m);
}

export type BodyMessage = keyof typeof MESSAGES;

const TYPE_NAME: Record<Scalar, string> = {
  s: 'TYPE_STRING', i64: 'TYPE_INT64', i32: 'TYPE_INT32', u32: 'TYPE_UINT32', u64: 'TYPE_UINT64', d: 'TYPE_DOUBLE', b: 'TYPE_BOOL', e: 'TYPE_ENUM',
  any: 'type.googleapis.com/google.protobuf.Value', obj: 'type.googleapis.com/google.protobuf.Struct',
};

const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const show = (v: unknown): string => JSON.stringify(v) ?? String(v);
const INTEGER = /^-?\d+$/;
/** Integer scalars' ranges (proto3 JSON refuses a value past its field's type). */
const INTEGER_RANGE: Record<'i64' | 'i32' | 'u32' | 'u64', readonly [bigint, bigint]> = {
  i64: [-(2n ** 63n), 2n ** 63n - 1n],
  i32: [-(2n ** 31n), 2n ** 31n - 1n],
  u32: [0n, 2n ** 32n - 1n],
  u64: [0n, 2n ** 64n - 1n],
};

/** Whether `v` is a JSON value protobuf reads as this scalar (numbers may come as strings). */
function scalarFits(t: Scalar, v: unknown): boolean {
  switch (t) {
    case 's':
      // Numbers and booleans are read as their text: the Node client sends BOOL parameter values
      // as JSON booleans and the Python client FLOAT64 ones as numbers, and the service takes both.
      return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
    case 'b':
      return typeof v === 'boolean' || v === 'true' || v === 'false';
    case 'e':
      return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
    case 'any':
      return true;
    case 'obj':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'd':
      return (typeof v === 'number') || (typeof v === 'string' && (v === 'NaN' || v === 'Infinity' || v === '-Infinity' || (v.trim() !== '' && Number.isFinite(Number(v)))));
    default: {
      // Integers: a JSON number with no fraction, or a decimal string, within the type's range
      // (a string exactly: "9223372036854775808" is past INT64; a number as the double it is).
      let n: bigint;
      if (typeof v === 'number') {
        if (!Number.isInteger(v)) return false;
        n = BigInt(v);
      } else if (typeof v === 'string' && INTEGER.test(v.trim())) n = BigInt(v.trim());
      else return false;
      const [lo, hi] = INTEGER_RANGE[t];
      // No double is 2^63 - 1 (or 2^64 - 1): a number sent as that top reads as one past it.
      const top = typeof v === 'number' && (t === 'i64' || t === 'u64') ? hi + 1n : hi;
      return n >= lo && n <= top;
    }
  }
}

const MAX_PROBLEMS = 20;

class Checker {
  readonly problems: string[] = [];

  private add(p: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(p);
  }

  /**
   * Checks `obj` as message `name` at `path`, in place: a single value where a
   * list goes becomes a list, a number or boolean in a string field its text.
   */
  message(name: string, obj: Record<string, unknown>, path: string): void {
    const spec = fields.get(name)!;
    for (const key of Object.keys(obj)) {
      const t = spec.get(key);
      const v = obj[key];
      if (t === undefined || v === null || v === undefined) continue;
      const at = path ? `${path}.${snake(key)}` : snake(key);
      if (t.k === 'list') {
        const list = Array.isArray(v) ? v : (obj[key] = [v]) as unknown[];
        list.forEach((e, i) => (list[i] = this.value(t.of, e, `${at}[${i}]`, path, key, true)));
      } else if (Array.isArray(v) && t.k === 'scalar' && t.t !== 'any' && v.length === 1) {
        // The service reads a one-element list where one value goes as that value (the
        // samples send `writeDisposition: ['WRITE_APPEND']`); a longer list it refuses.
        obj[key] = this.value(t, v[0], at, path, key, false);
      } else if (Array.isArray(v) && !(t.k === 'scalar' && t.t === 'any')) {
        this.add(`Invalid JSON payload received. Unknown name "${key}" at '${path}': Proto field is not repeating, cannot start list.`);
      } else if (t.k === 'map') {
        if (typeof v !== 'object') {
          this.add(`Invalid value at '${at}' (type.googleapis.com/google.cloud.bigquery.v2.${name}.${key[0]!.toUpperCase()}${key.slice(1)}Entry), ${show(v)}`);
          continue;
        }
        // Map entries: null values stay (a PATCH removes those keys).
        const m = v as Record<string, unknown>;
        Object.keys(m).forEach((k, i) => {
          if (m[k] !== null) m[k] = this.value(t.of, m[k], `${at}[${i}].value`, `${at}[${i}]`, 'value', false);
        });
      } else obj[key] = this.value(t, v, at, path, key, false);
    }
  }

  /** The value as the field holds it (a string field's number as text). */
  private value(t: FieldType, v: unknown, at: string, parent: string, key: string, inList: boolean): unknown {
    if (v === null && inList) {
      this.add(`Invalid value at '${at}' (${t.k === 'msg' ? `type.googleapis.com/google.cloud.bigquery.v2.${t.name}` : t.k === 'scalar' ? TYPE_NAME[t.t] : 'TYPE_MESSAGE'}), null`);
      return v;
    }
    if (t.k === 'msg') {
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) this.message(t.name, v as Record<string, unknown>, at);
      else this.add(`Invalid value at '${at}' (type.googleapis.com/google.cloud.bigquery.v2.${t.name}), ${show(v)}`);
      return v;
    }
    if (t.k !== 'scalar') return v;
    if (scalarFits(t.t, v)) return t.t === 's' && typeof v !== 'string' ? String(v) : v;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      this.add(parent ? `Invalid value at '${parent}' (${snake(key)}), Starting an object on a scalar field` : `Invalid value (${snake(key)}), Starting an object on a scalar field`);
    } else this.add(`Invalid value at '${t.wrapped ? `${at}.value` : at}' (${TYPE_NAME[t.t]}), ${show(v)}`);
    return v;
  }
}

/**
 * Checks a request body's JSON types as message `name`, under the request's
 * body field `root` ('dataset', 'query_request', ...; '' for a whole-request body).
 */
export function checkBody(name: BodyMessage, body: unknown, root: string): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) return;
  const c = new Checker();
  c.message(name, body as Record<string, unknown>, root);
  if (c.problems.length > 0) throw invalid(c.problems.join('\n'));
}

/** Nesting past this is refused before anything walks a body (ESF's own limit is about as deep). */
export const MAX_BODY_DEPTH = 100;

/**
 * The refusal of a JSON text nested deeper than `max` arrays and objects, or
 * undefined: a byte scan (strings skipped), so that a 10,000-deep body never
 * reaches a recursive walk or JSON.stringify.
 */
export function tooDeep(body: Buffer, max = MAX_BODY_DEPTH): RestError | undefined {
  if (body.length <= 2 * max) return undefined;
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === 0x22) {
      for (i++; i < body.length && body[i] !== 0x22; i++) if (body[i] === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) {
        const key = /"((?:[^"\\]|\\.)*)"\s*:\s*[[{\s]*$/.exec(body.subarray(Math.max(0, i - 200), i).toString('latin1'))?.[1] ?? '';
        return invalid(`Invalid JSON payload received. Message too deep. Max recursion depth reached for key '${key}'`);
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}
