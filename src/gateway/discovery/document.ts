// Generates the discovery document of the v2 REST API from a compact table,
// so `bq` works against any --api without --discovery_file. googleapiclient
// builds its method objects from it and rejects undeclared parameters, so the
// parameter lists below must cover what bq sends; schemas only need to exist
// (they feed docstrings), so they carry the main properties only.

type ParamType = 'string' | 'integer' | 'boolean';

interface MethodSpec {
  resource: string;
  name: string;
  http: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Query parameters: `name:type`, `[]` suffix = repeated. */
  query?: string;
  request?: string;
  response?: string;
  media?: boolean;
}

const DS = 'projects/{+projectId}/datasets/{+datasetId}';
const TB = `${DS}/tables/{+tableId}`;

const METHODS: MethodSpec[] = [
  { resource: 'datasets', name: 'delete', http: 'DELETE', path: DS, query: 'deleteContents:boolean' },
  { resource: 'datasets', name: 'get', http: 'GET', path: DS, query: 'accessPolicyVersion:integer datasetView:string', response: 'Dataset' },
  { resource: 'datasets', name: 'insert', http: 'POST', path: 'projects/{+projectId}/datasets', query: 'accessPolicyVersion:integer', request: 'Dataset', response: 'Dataset' },
  { resource: 'datasets', name: 'list', http: 'GET', path: 'projects/{+projectId}/datasets', query: 'all:boolean filter:string maxResults:integer pageToken:string', response: 'DatasetList' },
  { resource: 'datasets', name: 'patch', http: 'PATCH', path: DS, query: 'accessPolicyVersion:integer updateMode:string', request: 'Dataset', response: 'Dataset' },
  { resource: 'datasets', name: 'update', http: 'PUT', path: DS, query: 'accessPolicyVersion:integer updateMode:string', request: 'Dataset', response: 'Dataset' },
  { resource: 'datasets', name: 'undelete', http: 'POST', path: `${DS}:undelete`, request: 'UndeleteDatasetRequest', response: 'Dataset' },

  { resource: 'tables', name: 'delete', http: 'DELETE', path: TB },
  { resource: 'tables', name: 'get', http: 'GET', path: TB, query: 'selectedFields:string view:string', response: 'Table' },
  { resource: 'tables', name: 'insert', http: 'POST', path: `${DS}/tables`, request: 'Table', response: 'Table' },
  { resource: 'tables', name: 'list', http: 'GET', path: `${DS}/tables`, query: 'maxResults:integer pageToken:string', response: 'TableList' },
  { resource: 'tables', name: 'patch', http: 'PATCH', path: TB, query: 'autodetect_schema:boolean', request: 'Table', response: 'Table' },
  { resource: 'tables', name: 'update', http: 'PUT', path: TB, query: 'autodetect_schema:boolean', request: 'Table', response: 'Table' },
  { resource: 'tables', name: 'getIamPolicy', http: 'POST', path: '{+resource}:getIamPolicy', request: 'GetIamPolicyRequest', response: 'Policy' },
  { resource: 'tables', name: 'setIamPolicy', http: 'POST', path: '{+resource}:setIamPolicy', request: 'SetIamPolicyRequest', response: 'Policy' },
  { resource: 'tables', name: 'testIamPermissions', http: 'POST', path: '{+resource}:testIamPermissions', request: 'TestIamPermissionsRequest', response: 'TestIamPermissionsResponse' },

  { resource: 'tabledata', name: 'insertAll', http: 'POST', path: `${TB}/insertAll`, request: 'TableDataInsertAllRequest', response: 'TableDataInsertAllResponse' },
  { resource: 'tabledata', name: 'list', http: 'GET', path: `${TB}/data`, query: 'formatOptions.useInt64Timestamp:boolean formatOptions.timestampOutputFormat:string maxResults:integer pageToken:string selectedFields:string startIndex:string', response: 'TableDataList' },

  { resource: 'jobs', name: 'cancel', http: 'POST', path: 'projects/{+projectId}/jobs/{+jobId}/cancel', query: 'location:string', response: 'JobCancelResponse' },
  { resource: 'jobs', name: 'delete', http: 'DELETE', path: 'projects/{+projectId}/jobs/{+jobId}/delete', query: 'location:string' },
  { resource: 'jobs', name: 'get', http: 'GET', path: 'projects/{+projectId}/jobs/{+jobId}', query: 'location:string', response: 'Job' },
  { resource: 'jobs', name: 'getQueryResults', http: 'GET', path: 'projects/{+projectId}/queries/{+jobId}', query: 'formatOptions.useInt64Timestamp:boolean formatOptions.timestampOutputFormat:string location:string maxResults:integer pageToken:string startIndex:string timeoutMs:integer', response: 'GetQueryResultsResponse' },
  { resource: 'jobs', name: 'insert', http: 'POST', path: 'projects/{+projectId}/jobs', request: 'Job', response: 'Job', media: true },
  { resource: 'jobs', name: 'list', http: 'GET', path: 'projects/{+projectId}/jobs', query: 'allUsers:boolean maxCreationTime:string maxResults:integer minCreationTime:string pageToken:string parentJobId:string projection:string stateFilter:string[]', response: 'JobList' },
  { resource: 'jobs', name: 'query', http: 'POST', path: 'projects/{+projectId}/queries', request: 'QueryRequest', response: 'QueryResponse' },

  { resource: 'projects', name: 'getServiceAccount', http: 'GET', path: 'projects/{+projectId}/serviceAccount', response: 'GetServiceAccountResponse' },
  { resource: 'projects', name: 'list', http: 'GET', path: 'projects', query: 'maxResults:integer pageToken:string', response: 'ProjectList' },

  { resource: 'models', name: 'delete', http: 'DELETE', path: `${DS}/models/{+modelId}` },
  { resource: 'models', name: 'get', http: 'GET', path: `${DS}/models/{+modelId}`, response: 'Model' },
  { resource: 'models', name: 'list', http: 'GET', path: `${DS}/models`, query: 'maxResults:integer pageToken:string', response: 'ListModelsResponse' },
  { resource: 'models', name: 'patch', http: 'PATCH', path: `${DS}/models/{+modelId}`, request: 'Model', response: 'Model' },

  { resource: 'routines', name: 'delete', http: 'DELETE', path: `${DS}/routines/{+routineId}` },
  { resource: 'routines', name: 'get', http: 'GET', path: `${DS}/routines/{+routineId}`, query: 'readMask:string', response: 'Routine' },
  { resource: 'routines', name: 'insert', http: 'POST', path: `${DS}/routines`, request: 'Routine', response: 'Routine' },
  { resource: 'routines', name: 'list', http: 'GET', path: `${DS}/routines`, query: 'filter:string maxResults:integer pageToken:string readMask:string', response: 'ListRoutinesResponse' },
  { resource: 'routines', name: 'update', http: 'PUT', path: `${DS}/routines/{+routineId}`, request: 'Routine', response: 'Routine' },

  { resource: 'rowAccessPolicies', name: 'batchDelete', http: 'POST', path: `${TB}/rowAccessPolicies:batchDelete`, request: 'BatchDeleteRowAccessPoliciesRequest' },
  { resource: 'rowAccessPolicies', name: 'delete', http: 'DELETE', path: `${TB}/rowAccessPolicies/{+policyId}`, query: 'force:boolean' },
  { resource: 'rowAccessPolicies', name: 'get', http: 'GET', path: `${TB}/rowAccessPolicies/{+policyId}`, response: 'RowAccessPolicy' },
  { resource: 'rowAccessPolicies', name: 'insert', http: 'POST', path: `${TB}/rowAccessPolicies`, request: 'RowAccessPolicy', response: 'RowAccessPolicy' },
  { resource: 'rowAccessPolicies', name: 'list', http: 'GET', path: `${TB}/rowAccessPolicies`, query: 'pageSize:integer pageToken:string', response: 'ListRowAccessPoliciesResponse' },
  { resource: 'rowAccessPolicies', name: 'update', http: 'PUT', path: `${TB}/rowAccessPolicies/{+policyId}`, request: 'RowAccessPolicy', response: 'RowAccessPolicy' },
];

/**
 * Schema name -> properties. `name` = string, `name:integer|boolean|object`,
 * `name:Ref` = $ref, `name:[]` = array of strings, `name:[Ref]` = array of refs.
 */
const SCHEMAS: Record<string, string> = {
  Dataset: 'kind id etag selfLink datasetReference:DatasetReference friendlyName description labels:object location creationTime lastModifiedTime defaultTableExpirationMs defaultPartitionExpirationMs access:[DatasetAccess] type defaultCollation maxTimeTravelHours isCaseInsensitive:boolean',
  DatasetAccess: 'role userByEmail groupByEmail domain specialGroup iamMember view:TableReference dataset:object routine:RoutineReference',
  DatasetReference: 'projectId datasetId',
  DatasetList: 'kind etag nextPageToken datasets:[DatasetListItem] unreachable:[]',
  DatasetListItem: 'kind id datasetReference:DatasetReference friendlyName labels:object location',
  UndeleteDatasetRequest: 'deletionTime',
  BatchDeleteRowAccessPoliciesRequest: 'policyIds:[] force:boolean',
  Table: 'kind id etag selfLink tableReference:TableReference friendlyName description labels:object schema:TableSchema type view:ViewDefinition materializedView:object externalDataConfiguration:object timePartitioning:object rangePartitioning:object clustering:object expirationTime creationTime lastModifiedTime numRows numBytes numLongTermBytes location requirePartitionFilter:boolean',
  TableReference: 'projectId datasetId tableId',
  TableSchema: 'fields:[TableFieldSchema]',
  TableFieldSchema: 'name type mode description fields:[TableFieldSchema] maxLength precision scale timestampPrecision collation defaultValueExpression rangeElementType:object policyTags:object',
  ViewDefinition: 'query useLegacySql:boolean',
  TableList: 'kind etag nextPageToken tables:[TableListItem] totalItems:integer',
  TableListItem: 'kind id tableReference:TableReference friendlyName type labels:object creationTime expirationTime view:object',
  TableRow: 'f:[TableCell]',
  TableCell: 'v:object',
  TableDataList: 'kind etag totalRows pageToken rows:[TableRow]',
  TableDataInsertAllRequest: 'kind skipInvalidRows:boolean ignoreUnknownValues:boolean templateSuffix traceId rows:[TableDataInsertAllRequestRow]',
  TableDataInsertAllRequestRow: 'insertId json:object',
  TableDataInsertAllResponse: 'kind insertErrors:[InsertError]',
  InsertError: 'index:integer errors:[ErrorProto]',
  ErrorProto: 'reason location debugInfo message',
  Job: 'kind etag id selfLink user_email principal_subject jobReference:JobReference configuration:JobConfiguration status:JobStatus statistics:JobStatistics jobCreationReason:object',
  JobReference: 'projectId jobId location',
  JobStatus: 'state errorResult:ErrorProto errors:[ErrorProto]',
  JobConfiguration: 'jobType dryRun:boolean jobTimeoutMs labels:object query:JobConfigurationQuery load:JobConfigurationLoad copy:JobConfigurationTableCopy extract:JobConfigurationExtract',
  JobConfigurationQuery: 'query useLegacySql:boolean defaultDataset:DatasetReference destinationTable:TableReference writeDisposition createDisposition priority parameterMode queryParameters:[QueryParameter] tableDefinitions:object useQueryCache:boolean allowLargeResults:boolean flattenResults:boolean maximumBytesBilled continuous:boolean createSession:boolean connectionProperties:[ConnectionProperty]',
  JobConfigurationLoad: 'destinationTable:TableReference sourceUris:[] sourceFormat schema:TableSchema skipLeadingRows:integer writeDisposition createDisposition autodetect:boolean fieldDelimiter quote allowJaggedRows:boolean allowQuotedNewlines:boolean ignoreUnknownValues:boolean maxBadRecords:integer nullMarker nullMarkers:[] projectionFields:[] decimalTargetTypes:[] encoding',
  JobConfigurationTableCopy: 'sourceTable:TableReference sourceTables:[TableReference] destinationTable:TableReference writeDisposition createDisposition operationType destinationExpirationTime',
  JobConfigurationExtract: 'sourceTable:TableReference sourceModel:object destinationUris:[] destinationFormat compression fieldDelimiter printHeader:boolean',
  JobStatistics: 'creationTime startTime endTime totalBytesProcessed totalSlotMs numChildJobs parentJobId query:JobStatistics2 load:object copy:object extract:object',
  JobStatistics2: 'totalBytesProcessed totalBytesBilled billingTier:integer totalSlotMs timeline:[object] referencedTables:[TableReference] referencedRoutines:[RoutineReference] ddlTargetDataset:DatasetReference ddlTargetRowAccessPolicy:object ddlDestinationTable:TableReference cacheHit:boolean statementType numDmlAffectedRows ddlOperationPerformed ddlTargetTable:TableReference ddlTargetRoutine:RoutineReference ddlAffectedRowAccessPolicyCount schema:TableSchema dmlStats:object',
  JobList: 'kind etag nextPageToken jobs:[JobListItem] unreachable:[]',
  JobListItem: 'kind id jobReference:JobReference state errorResult:ErrorProto configuration:JobConfiguration status:JobStatus statistics:JobStatistics user_email principal_subject',
  JobCancelResponse: 'kind job:Job',
  QueryParameter: 'name parameterType:QueryParameterType parameterValue:QueryParameterValue',
  QueryParameterType: 'type arrayType:QueryParameterType structTypes:[object] rangeElementType:QueryParameterType timestampPrecision',
  QueryParameterValue: 'value arrayValues:[QueryParameterValue] structValues:object rangeValue:object',
  ConnectionProperty: 'key value',
  DataFormatOptions: 'useInt64Timestamp:boolean timestampOutputFormat',
  QueryRequest: 'kind query useLegacySql:boolean defaultDataset:DatasetReference maxResults:integer timeoutMs:integer dryRun:boolean useQueryCache:boolean parameterMode queryParameters:[QueryParameter] location requestId formatOptions:DataFormatOptions jobCreationMode createSession:boolean connectionProperties:[ConnectionProperty] labels:object maximumBytesBilled continuous:boolean',
  QueryResponse: 'kind jobReference:JobReference queryId jobCreationReason:object schema:TableSchema rows:[TableRow] totalRows pageToken totalBytesProcessed jobComplete:boolean errors:[ErrorProto] cacheHit:boolean numDmlAffectedRows dmlStats:object sessionInfo:object location creationTime startTime endTime',
  GetQueryResultsResponse: 'kind etag jobReference:JobReference schema:TableSchema rows:[TableRow] totalRows pageToken totalBytesProcessed jobComplete:boolean errors:[ErrorProto] cacheHit:boolean numDmlAffectedRows',
  ProjectList: 'kind etag nextPageToken projects:[ProjectListItem] totalItems:integer',
  ProjectListItem: 'kind id numericId projectReference:ProjectReference friendlyName',
  ProjectReference: 'projectId',
  GetServiceAccountResponse: 'kind email',
  Model: 'etag modelReference:ModelReference creationTime lastModifiedTime description friendlyName labels:object expirationTime location modelType',
  ModelReference: 'projectId datasetId modelId',
  ListModelsResponse: 'models:[Model] nextPageToken',
  Routine: 'etag routineReference:RoutineReference routineType creationTime lastModifiedTime language arguments:[object] returnType:object returnTableType:object importedLibraries:[] definitionBody description determinismLevel',
  RoutineReference: 'projectId datasetId routineId',
  ListRoutinesResponse: 'routines:[Routine] nextPageToken',
  RowAccessPolicy: 'etag rowAccessPolicyReference:RowAccessPolicyReference filterPredicate creationTime lastModifiedTime grantees:[]',
  RowAccessPolicyReference: 'projectId datasetId tableId policyId',
  ListRowAccessPoliciesResponse: 'rowAccessPolicies:[RowAccessPolicy] nextPageToken',
  GetIamPolicyRequest: 'options:object',
  SetIamPolicyRequest: 'policy:Policy updateMask',
  Policy: 'version:integer bindings:[object] etag',
  TestIamPermissionsRequest: 'permissions:[]',
  TestIamPermissionsResponse: 'permissions:[]',
};

type Json = Record<string, unknown>;

function propertySchema(spec: string): Json {
  const [, type = 'string'] = spec.split(':');
  if (type === 'string' || type === 'integer' || type === 'boolean') {
    return type === 'integer' ? { type: 'integer', format: 'int32' } : { type };
  }
  if (type === 'object') return { type: 'object', additionalProperties: { type: 'any' } };
  if (type === '[]') return { type: 'array', items: { type: 'string' } };
  const arr = /^\[(.+)\]$/.exec(type);
  if (arr) return { type: 'array', items: arr[1] === 'object' ? { type: 'object', additionalProperties: { type: 'any' } } : { $ref: arr[1] } };
  return { $ref: type };
}

function schemas(): Json {
  const out: Json = {};
  for (const [name, props] of Object.entries(SCHEMAS)) {
    const properties: Json = {};
    for (const p of props.split(/\s+/).filter(Boolean)) properties[p.split(':')[0]!] = propertySchema(p);
    out[name] = { id: name, type: 'object', properties };
  }
  return out;
}

export const SCOPES = ['https://www.googleapis.com/auth/bigquery', 'https://www.googleapis.com/auth/cloud-platform'];

function method(m: MethodSpec, api: string): Json {
  const parameters: Json = {};
  const order: string[] = [];
  const flat = m.path.replace(/\{\+(\w+)\}/g, (_s, n: string) => `{${n === 'resource' ? 'resource' : n}}`);
  for (const match of m.path.matchAll(/\{\+(\w+)\}/g)) {
    const n = match[1]!;
    order.push(n);
    parameters[n] =
      n === 'resource'
        ? { type: 'string', location: 'path', required: true, pattern: '^projects/[^/]+/datasets/[^/]+/tables/[^/]+$', description: 'REQUIRED: The resource for which the policy is being requested.' }
        : { type: 'string', location: 'path', required: true, pattern: '^[^/]+$', description: `Required. ${n}` };
  }
  for (const q of (m.query ?? '').split(/\s+/).filter(Boolean)) {
    const [name, t = 'string'] = q.split(':') as [string, string];
    const repeated = t.endsWith('[]');
    const type = t.replace('[]', '') as ParamType;
    parameters[name] = { type, location: 'query', ...(type === 'integer' ? { format: 'uint32' } : {}), ...(repeated ? { repeated: true } : {}) };
  }
  const out: Json = {
    id: `${api}.${m.resource}.${m.name}`,
    path: m.path,
    flatPath: flat,
    httpMethod: m.http,
    parameters,
    parameterOrder: order,
    scopes: SCOPES,
  };
  if (m.request) out['request'] = { $ref: m.request };
  if (m.response) out['response'] = { $ref: m.response };
  if (m.media) {
    out['supportsMediaUpload'] = true;
    out['mediaUpload'] = {
      accept: ['*/*'],
      protocols: {
        simple: { multipart: true, path: `/upload/${api}/v2/${m.path}` },
        resumable: { multipart: true, path: `/upload/${api}/v2/${m.path}` },
      },
    };
  }
  return out;
}

/** The query parameters every Google API method takes. */
export const COMMON_PARAMETERS: Json = {
  alt: { type: 'string', location: 'query', default: 'json', enum: ['json', 'media', 'proto'], enumDescriptions: ['JSON', 'Media', 'Protobuf'], description: 'Data format for response.' },
  fields: { type: 'string', location: 'query', description: 'Selector specifying which fields to include in a partial response.' },
  key: { type: 'string', location: 'query', description: 'API key.' },
  oauth_token: { type: 'string', location: 'query', description: 'OAuth 2.0 token for the current user.' },
  access_token: { type: 'string', location: 'query', description: 'OAuth access token.' },
  prettyPrint: { type: 'boolean', location: 'query', default: 'true', description: 'Returns response with indentations and line breaks.' },
  quotaUser: { type: 'string', location: 'query', description: 'Quota user.' },
  callback: { type: 'string', location: 'query', description: 'JSONP' },
  uploadType: { type: 'string', location: 'query', description: 'Legacy upload protocol for media (e.g. "media", "multipart").' },
  upload_protocol: { type: 'string', location: 'query', description: 'Upload protocol for media (e.g. "raw", "multipart").' },
  '$.xgafv': { type: 'string', location: 'query', enum: ['1', '2'], enumDescriptions: ['v1 error format', 'v2 error format'], description: 'V1 error format.' },
};

/** The document for `api` (bigquery or warehouse), rooted at the caller's own address. */
export function discoveryDocument(api: 'bigquery' | 'warehouse', rootUrl: string): Json {
  const root = rootUrl.endsWith('/') ? rootUrl : rootUrl + '/';
  const resources: Record<string, { methods: Json }> = {};
  for (const m of METHODS) {
    const r = (resources[m.resource] ??= { methods: {} });
    r.methods[m.name] = method(m, api);
  }
  return {
    kind: 'discovery#restDescription',
    discoveryVersion: 'v1',
    id: `${api}:v2`,
    name: api,
    canonicalName: api === 'bigquery' ? 'Bigquery' : 'Warehouse',
    version: 'v2',
    revision: '20250101',
    title: api === 'bigquery' ? 'BigQuery API (local emulator)' : 'Warehouse API (local emulator)',
    description: 'A local emulator of the data warehouse v2 REST interface.',
    ownerDomain: 'local',
    ownerName: 'warehouse-emulator',
    documentationLink: 'https://cloud.google.com/bigquery/',
    protocol: 'rest',
    rootUrl: root,
    mtlsRootUrl: root,
    servicePath: `${api}/v2/`,
    basePath: `/${api}/v2/`,
    baseUrl: `${root}${api}/v2/`,
    batchPath: `batch/${api}/v2`,
    fullyEncodeReservedExpansion: true,
    parameters: COMMON_PARAMETERS,
    auth: { oauth2: { scopes: Object.fromEntries(SCOPES.map((s) => [s, { description: s }])) } },
    schemas: schemas(),
    resources,
  };
}
