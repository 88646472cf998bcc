// The data transfer v1 discovery document (spec §4.11): bq builds its transfer
// client from `/$discovery/rest?version=v1` of its --api, so `bq ls
// --transfer_config`, `bq show --transfer_config` and `bq mk --transfer_config`
// reach the stubs in plugins/transfer.ts instead of failing inside bq. Only
// the methods and parameters bq calls; googleapiclient needs no schemas.
import { COMMON_PARAMETERS, SCOPES } from './document.js';

type Json = Record<string, unknown>;

interface V1Method {
  name: string;
  http: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** `name` or `parent`: the one path parameter, a resource name. */
  on: 'name' | 'parent';
  /** What follows `{+name}` / `{+parent}` in the path. */
  suffix?: string;
  query?: string;
  body?: boolean;
}

const CONFIG_METHODS: V1Method[] = [
  { name: 'create', http: 'POST', on: 'parent', suffix: '/transferConfigs', query: 'authorizationCode versionInfo serviceAccountName', body: true },
  { name: 'list', http: 'GET', on: 'parent', suffix: '/transferConfigs', query: 'dataSourceIds[] pageSize:integer pageToken' },
  { name: 'get', http: 'GET', on: 'name' },
  { name: 'patch', http: 'PATCH', on: 'name', query: 'updateMask authorizationCode versionInfo serviceAccountName', body: true },
  { name: 'delete', http: 'DELETE', on: 'name' },
  { name: 'startManualRuns', http: 'POST', on: 'parent', suffix: ':startManualRuns', body: true },
  { name: 'scheduleRuns', http: 'POST', on: 'parent', suffix: ':scheduleRuns', body: true },
];
const RUN_METHODS: V1Method[] = [
  { name: 'list', http: 'GET', on: 'parent', suffix: '/runs', query: 'states[] pageSize:integer pageToken runAttempt' },
  { name: 'get', http: 'GET', on: 'name' },
  { name: 'delete', http: 'DELETE', on: 'name' },
];
const LOG_METHODS: V1Method[] = [{ name: 'list', http: 'GET', on: 'parent', suffix: '/transferLogs', query: 'messageTypes[] pageSize:integer pageToken' }];
const SOURCE_METHODS: V1Method[] = [
  { name: 'list', http: 'GET', on: 'parent', suffix: '/dataSources', query: 'pageSize:integer pageToken' },
  { name: 'get', http: 'GET', on: 'name' },
  { name: 'checkValidCreds', http: 'POST', on: 'name', suffix: ':checkValidCreds', body: true },
];
const LOCATION_METHODS: V1Method[] = [
  { name: 'list', http: 'GET', on: 'name', suffix: '/locations', query: 'filter pageSize:integer pageToken' },
  { name: 'get', http: 'GET', on: 'name' },
];

function method(id: string, m: V1Method): Json {
  const parameters: Json = { [m.on]: { type: 'string', location: 'path', required: true, pattern: '^projects/.*$' } };
  for (const q of (m.query ?? '').split(/\s+/).filter(Boolean)) {
    const [raw, type = 'string'] = q.split(':') as [string, string];
    const repeated = raw.endsWith('[]');
    parameters[raw.replace('[]', '')] = { type, location: 'query', ...(type === 'integer' ? { format: 'int32' } : {}), ...(repeated ? { repeated: true } : {}) };
  }
  return {
    id: `bigquerydatatransfer.${id}.${m.name}`,
    path: `v1/{+${m.on}}${m.suffix ?? ''}`,
    httpMethod: m.http,
    parameters,
    parameterOrder: [m.on],
    ...(m.body ? { request: { $ref: 'Object' } } : {}),
    response: { $ref: 'Object' },
    scopes: SCOPES,
  };
}

function resource(id: string, methods: V1Method[], children: Record<string, Json> = {}): Json {
  return { methods: Object.fromEntries(methods.map((m) => [m.name, method(id, m)])), ...(Object.keys(children).length ? { resources: children } : {}) };
}

/** projects.{dataSources,transferConfigs} and the same under projects.locations. */
function scoped(prefix: string): Record<string, Json> {
  const runs = resource(`${prefix}.transferConfigs.runs`, RUN_METHODS, { transferLogs: resource(`${prefix}.transferConfigs.runs.transferLogs`, LOG_METHODS) });
  return {
    dataSources: resource(`${prefix}.dataSources`, SOURCE_METHODS),
    transferConfigs: resource(`${prefix}.transferConfigs`, CONFIG_METHODS, { runs }),
  };
}

export function transferDiscoveryDocument(rootUrl: string): Json {
  const root = rootUrl.endsWith('/') ? rootUrl : rootUrl + '/';
  return {
    kind: 'discovery#restDescription',
    discoveryVersion: 'v1',
    id: 'bigquerydatatransfer:v1',
    name: 'bigquerydatatransfer',
    canonicalName: 'BigQuery Data Transfer Service',
    version: 'v1',
    revision: '20250101',
    title: 'BigQuery Data Transfer API (local emulator stubs)',
    protocol: 'rest',
    rootUrl: root,
    mtlsRootUrl: root,
    servicePath: '',
    basePath: '',
    baseUrl: root,
    batchPath: 'batch',
    fullyEncodeReservedExpansion: true,
    parameters: COMMON_PARAMETERS,
    auth: { oauth2: { scopes: Object.fromEntries(SCOPES.map((s) => [s, { description: s }])) } },
    schemas: { Object: { id: 'Object', type: 'object', additionalProperties: { type: 'any' } } },
    resources: {
      projects: {
        resources: {
          ...scoped('projects'),
          locations: resource('projects.locations', LOCATION_METHODS, scoped('projects.locations')),
        },
      },
    },
  };
}
