// A bounded, seeded fuzz run over the REST API and SQL against the real
// gateway and engine (issue 15: nothing a client sends takes the engine down).
// Every route family gets mutated bodies and query parameters; SQL comes
// mutated from the project's own SQL and as random calls of every registered
// function over awkward literals, plus nesting to random depths and raw HTTP
// oddities. Every answer must be a 2xx or a 4xx in the error envelope with a
// known reason (never a 5xx, never a hang); the engine process never changes;
// a rejected write leaves the protected dataset, table and rows as they were.
// FUZZ_SEED and FUZZ_ROUNDS change the run; the counts are printed.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../src/functions/index.js';
import { allFunctions } from '../../src/functions/registry.js';
import { collectCorpus } from '../../grammar/corpus.js';
import { ROOT, enginePid, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { Rng, dataFile, deepSql, mutateJson, mutateSql, oddValue, projectSql, randomCall, randomExpr } from './gen.js';

const SEED = Number(process.env.FUZZ_SEED ?? 15);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 1200);

/** errors[].reason values of the service's error table (docs: error-messages), plus parseError for unparseable bodies. */
const KNOWN_REASONS = new Set([
  'accessDenied', 'backendError', 'badRequest', 'billingNotEnabled', 'billingTierLimitExceeded', 'blocked', 'duplicate', 'internalError', 'invalid',
  'invalidQuery', 'invalidUser', 'jobBackendError', 'jobInternalError', 'jobRateLimitExceeded', 'notFound', 'notImplemented', 'quotaExceeded',
  'rateLimitExceeded', 'resourceInUse', 'resourcesExceeded', 'responseTooLarge', 'stopped', 'tableUnavailable', 'timeout', 'parseError',
]);

interface Req {
  kind: string;
  method: string;
  path: string;
  body?: unknown;
  /** Raw body (with its content type), instead of JSON. */
  raw?: { text: string | Buffer; type: string; encoding?: string };
  /** Writes to the protected dataset/table: checked against the snapshot when rejected. */
  protectedWrite?: boolean;
}

interface Res {
  status: number;
  body: any;
}

type Json = Record<string, unknown>;

const P = '/bigquery/v2/projects/fz';

describe('fuzz: REST bodies and SQL never crash the engine', () => {
  let emu: Emulator;
  let pid: number;

  beforeAll(async () => {
    // Runaway scripts of the run end after a second.
    emu = await startEmulator({ env: { WAREHOUSE_EMULATOR_SCRIPT_TIMEOUT_MS: '1000' } });
    pid = enginePid(emu);
    const q = (query: string) => rest(`${emu.url}${P}/queries`, { method: 'POST', json: { query, useLegacySql: false } });
    expect((await rest(`${emu.url}${P}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'fz' }, labels: { keep: 'yes' } } })).status).toBe(200);
    expect((await rest(`${emu.url}${P}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'scratch' } } })).status).toBe(200);
    const ddl = await q(
      'CREATE TABLE fz.t (id INT64, s STRING, f FLOAT64, b BOOL, n NUMERIC, ts TIMESTAMP, a ARRAY<INT64>, r STRUCT<x INT64, y STRING>, j JSON, g GEOGRAPHY)',
    );
    expect(ddl.status).toBe(200);
    const ins = await q(
      `INSERT fz.t VALUES (1, 'a-b', 1.5, TRUE, 1.25, TIMESTAMP '2020-01-01', [1, 2], STRUCT(1, 'x'), JSON '{"k": [1]}', ST_GEOGPOINT(1, 2)),
       (2, 'café', NULL, FALSE, NULL, NULL, [], NULL, NULL, NULL), (3, NULL, -0.0, NULL, 99.9, TIMESTAMP '1970-01-01', NULL, STRUCT(NULL, NULL), JSON 'null', NULL)`,
    );
    expect(ins.status).toBe(200);
    expect((await q('CREATE TABLE scratch.s (id INT64)')).status).toBe(200);
  }, 60_000);

  afterAll(async () => emu?.stop());

  it(`survives ${ROUNDS} seeded requests (seed ${SEED})`, async () => {
    const r = new Rng(SEED);
    const functions = [...new Set([...allFunctions()].map(([n, d]) => d.name).filter((n) => !n.startsWith('$')))].sort();
    const corpus = [...projectSql(ROOT), ...collectCorpus().map((c) => c.sql)];
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const reasons = new Map<string, number>();
    let snapshot = await takeSnapshot(emu);
    const t0 = Date.now();

    for (let i = 0; i < ROUNDS; i++) {
      const req = generate(r, functions, corpus, i);
      const res = await send(emu, req);
      const what = `#${i} ${req.kind} ${req.method} ${req.path.slice(0, 120)} ${JSON.stringify(req.body ?? String(req.raw?.text ?? '')).slice(0, 300)}`;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 0 || res.status >= 500) failures.push(`${res.status || 'no answer'}: ${what} -> ${JSON.stringify(res.body).slice(0, 300)}`);
      else if (res.status >= 400) {
        const e = res.body?.error;
        const reason = e?.errors?.[0]?.reason;
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        const shaped = e && e.code === res.status && typeof e.message === 'string' && typeof e.status === 'string' && Array.isArray(e.errors) && e.errors[0]?.domain === 'global';
        if (!shaped || !KNOWN_REASONS.has(reason)) failures.push(`bad envelope ${res.status}: ${what} -> ${JSON.stringify(res.body).slice(0, 300)}`);
      }
      if (req.protectedWrite) {
        const now = await takeSnapshot(emu);
        const rejected = res.status >= 400 || (req.kind === 'insertAll' && res.body?.insertErrors?.length && !(req.body as Json | undefined)?.['skipInvalidRows']);
        if (rejected && now !== snapshot) {
          let at = 0;
          while (now[at] === snapshot[at]) at++;
          failures.push(`a rejected write changed stored data: ${what} -> ${res.status}\nbefore ...${snapshot.slice(at - 100, at + 200)}\nafter  ...${now.slice(at - 100, at + 200)}`);
        }
        snapshot = now;
      }
    }

    const pidAfter = enginePid(emu);
    const log = emu.output();
    const report = {
      seed: SEED,
      requests: ROUNDS,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
      statuses: Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])),
      '4xx by reason': Object.fromEntries([...reasons].sort((a, b) => b[1] - a[1])),
      'engine exits': pidAfter === pid ? 0 : 1,
    };
    console.log(`fuzz report: ${JSON.stringify(report)}`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(pidAfter).toBe(pid);
    expect(log).not.toMatch(/engine: (exited|killed)|engine internal error|internal error:|unhandled promise rejection|uncaught exception/);
  }, 600_000);
});

/** The protected state: dataset fz's writable fields, table t's schema and fields, and every row of t. */
async function takeSnapshot(emu: Emulator): Promise<string> {
  const ds = (await rest(`${emu.url}${P}/datasets/fz`)).body as Json;
  const t = (await rest(`${emu.url}${P}/datasets/fz/tables/t`)).body as Json;
  const rows = await rest(`${emu.url}${P}/queries`, { method: 'POST', json: { query: 'SELECT TO_JSON_STRING(t) AS r FROM fz.t AS t ORDER BY r', useLegacySql: false } });
  const pick = (o: Json, keys: string[]): Json => Object.fromEntries(keys.map((k) => [k, o?.[k]]));
  return JSON.stringify({
    ds: pick(ds, ['labels', 'description', 'friendlyName', 'access', 'defaultTableExpirationMs', 'location']),
    t: pick(t, ['schema', 'labels', 'description', 'friendlyName', 'expirationTime', 'timePartitioning', 'clustering', 'view']),
    rows: rows.body?.rows,
  });
}

async function send(emu: Emulator, req: Req): Promise<Res> {
  if (req.kind === 'http') return rawHttp(emu.httpPort, String(req.raw!.text));
  const headers: Record<string, string> = {};
  let body: string | Buffer | undefined;
  if (req.raw) {
    body = req.raw.text;
    headers['content-type'] = req.raw.type;
    if (req.raw.encoding) headers['content-encoding'] = req.raw.encoding;
  } else if (req.body !== undefined) {
    body = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  try {
    const r = await fetch(emu.url + req.path, { method: req.method, headers, body, signal: AbortSignal.timeout(60_000) });
    const text = await r.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the checks above report it
    }
    return { status: r.status, body: parsed };
  } catch (e) {
    return { status: 0, body: String(e) };
  }
}

/** Bytes on a socket, for requests fetch refuses to send; the status line's code. */
function rawHttp(port: number, text: string): Promise<Res> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    const t = setTimeout(() => sock.destroy(), 30_000);
    sock.on('data', (b) => (out += b.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(t);
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(out)?.[1] ?? 0);
      const i = out.indexOf('\r\n\r\n');
      let body: unknown = out;
      try {
        body = JSON.parse(out.slice(i + 4));
      } catch {
        // keep the text
      }
      // A connection closed without an answer is what a client sees of a crash.
      resolve({ status, body });
    });
    sock.end(text);
  });
}

// ---------------------------------------------------------------- request generators

const VALID_TABLE = { tableReference: { tableId: 'x' }, schema: { fields: [{ name: 'a', type: 'STRING', mode: 'NULLABLE' }, { name: 'r', type: 'RECORD', fields: [{ name: 'b', type: 'INTEGER' }] }] }, labels: { k: 'v' }, description: 'd', timePartitioning: { type: 'DAY' } };
const VALID_DATASET = { datasetReference: { datasetId: 'x' }, labels: { k: 'v' }, description: 'd', defaultTableExpirationMs: '3600000', access: [{ role: 'READER', specialGroup: 'projectReaders' }] };
const PARAMS = [
  { name: 'x', parameterType: { type: 'INT64' }, parameterValue: { value: '1' } },
  { name: 'y', parameterType: { type: 'ARRAY', arrayType: { type: 'STRING' } }, parameterValue: { arrayValues: [{ value: 'a' }, { value: null }] } },
  { name: 'z', parameterType: { type: 'STRUCT', structTypes: [{ name: 'a', type: { type: 'DATE' } }] }, parameterValue: { structValues: { a: { value: '2020-01-01' } } } },
  { name: 'w', parameterType: { type: 'RANGE', rangeElementType: { type: 'DATE' } }, parameterValue: { rangeValue: { start: { value: '2020-01-01' }, end: { value: null } } } },
];
const DML = [
  "UPDATE fz.t SET s = CONCAT(s, '!') WHERE id = 1",
  'UPDATE fz.t SET id = CAST(10 / (id - 2) AS INT64) WHERE TRUE',
  "UPDATE fz.t SET s = ERROR('stop') WHERE id = 3",
  "INSERT fz.t (id, s) SELECT 100 + i, IF(i = 3, ERROR('stop'), 'v') FROM UNNEST([1, 2, 3]) AS i",
  'DELETE fz.t WHERE id / (id - 2) > 0',
  "MERGE fz.t AS t USING (SELECT 1 AS id UNION ALL SELECT 1) AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.s = 'twice'",
  'ALTER TABLE fz.t ADD COLUMN id INT64',
  'ALTER TABLE fz.t ALTER COLUMN id SET DATA TYPE STRING',
  "INSERT fz.t (id, j) VALUES (200, JSON '[[[[1]]]]')",
  'TRUNCATE TABLE fz.t_missing',
];

function generate(r: Rng, functions: readonly string[], corpus: readonly string[], i: number): Req {
  // SQL that never writes the protected table (jobs may finish after later requests).
  const sql = (): string => {
    switch (r.int(7)) {
      case 0:
      case 1:
        return mutateSql(r, r.pick(corpus));
      case 2:
        return r.pick(corpus);
      case 3:
        return randomCall(r, functions);
      case 4:
        return r.chance(0.5) ? randomCall(r, functions) : randomExpr(r);
      case 5:
        return deepSql(r);
      default:
        return `DECLARE i INT64 DEFAULT 0; ${r.pick(['WHILE TRUE DO SET i = i + 1; END WHILE', 'LOOP SELECT i; SET i = i + 1; END LOOP', 'REPEAT SET i = i + 1; UNTIL i < 0 END REPEAT'])}; SELECT i`;
    }
  };
  const scratch = `s${i}`;
  switch (r.int(15)) {
    case 13: {
      // A load job of a damaged data file (multipart upload into a scratch table).
      const { format, bytes } = dataFile(r);
      const meta = mutateJson(r, { configuration: { load: { destinationTable: { datasetId: 'scratch', tableId: `l${i}` }, sourceFormat: format, autodetect: r.chance(0.3), schema: { fields: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING' }] } } } } as never);
      const b = 'fuzz_boundary';
      const body = Buffer.concat([
        Buffer.from(`--${b}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n--${b}\r\nContent-Type: application/octet-stream\r\n\r\n`),
        bytes,
        Buffer.from(`\r\n--${b}--`),
      ]);
      return { kind: `load ${format}`, method: 'POST', path: `/upload${P}/jobs?uploadType=multipart`, raw: { text: body, type: `multipart/related; boundary=${b}` } };
    }
    case 0:
      return { kind: 'datasets.insert', method: 'POST', path: `${P}/datasets`, body: mutateJson(r, { ...VALID_DATASET, datasetReference: { datasetId: `d${i}` } } as never) };
    case 1:
      return { kind: 'datasets.patch', method: r.pick(['PATCH', 'PUT']), path: `${P}/datasets/fz`, body: mutateJson(r, { ...VALID_DATASET, datasetReference: { datasetId: 'fz' } } as never), protectedWrite: true };
    case 2:
      return { kind: 'tables.insert', method: 'POST', path: `${P}/datasets/scratch/tables`, body: mutateJson(r, { ...VALID_TABLE, tableReference: { tableId: scratch } } as never) };
    case 3:
      return { kind: 'tables.patch', method: r.pick(['PATCH', 'PUT']), path: `${P}/datasets/fz/tables/t`, body: mutateJson(r, { schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'extra', type: 'STRING' }] }, labels: { a: 'b' } } as never), protectedWrite: true };
    case 4: {
      const rows = [{ insertId: `i${i}`, json: { id: 1000 + i, s: 'ok', a: [1], r: { x: 1, y: 'y' }, j: { k: 1 } } }, { json: { id: 'x', nope: 1, a: 'no', r: 5, ts: 'never', g: 'POINT(1' } }];
      return { kind: 'insertAll', method: 'POST', path: `${P}/datasets/fz/tables/t/insertAll`, body: mutateJson(r, { skipInvalidRows: false, rows } as never), protectedWrite: true };
    }
    case 5:
      return { kind: 'jobs.insert', method: 'POST', path: `${P}/jobs`, body: mutateJson(r, { configuration: { query: { query: sql(), useLegacySql: false, queryParameters: PARAMS, maximumBytesBilled: '1000000', labels: { a: 'b' } } } } as never) };
    case 6:
    case 7:
    case 8: {
      const body: Json = { query: sql(), useLegacySql: false, timeoutMs: 20_000 };
      if (r.chance(0.4)) body['queryParameters'] = r.chance(0.5) ? PARAMS : mutateJson(r, PARAMS as never);
      const dml = r.chance(0.2);
      if (dml) body['query'] = mutateSql(r, r.pick(DML));
      return { kind: dml ? 'jobs.query dml' : 'jobs.query', method: 'POST', path: `${P}/queries`, body: r.chance(0.2) ? mutateJson(r, body as never) : body, protectedWrite: dml };
    }
    case 9: {
      const family = r.pick(['routines', 'models', 'rowAccessPolicies']);
      if (family === 'routines') return { kind: 'routines', method: r.pick(['POST', 'PUT']), path: `${P}/datasets/scratch/routines${r.chance(0.5) ? '' : '/f'}`, body: mutateJson(r, { routineReference: { routineId: `f${i}` }, routineType: 'SCALAR_FUNCTION', language: 'SQL', definitionBody: 'x + 1', arguments: [{ name: 'x', dataType: { typeKind: 'INT64' } }] } as never) };
      if (family === 'models') return { kind: 'models', method: 'PATCH', path: `${P}/datasets/scratch/models/m`, body: mutateJson(r, { description: 'd', labels: { a: 'b' }, expirationTime: '1' } as never) };
      return { kind: 'rowAccessPolicies', method: 'POST', path: `${P}/datasets/scratch/tables/s/rowAccessPolicies`, body: mutateJson(r, { rowAccessPolicyReference: { policyId: `p${i}` }, filterPredicate: 'id > 0', grantees: ['user:a@b.c'] } as never) };
    }
    case 10: {
      // List routes and getQueryResults with random query parameters.
      const path = r.pick(['datasets', 'datasets/fz/tables', 'jobs', 'datasets/fz/routines', 'datasets/fz/models', 'datasets/fz/tables/t/data', 'datasets/fz/tables/t/rowAccessPolicies', 'queries/nope']);
      const params = Array.from({ length: 1 + r.int(3) }, () => `${r.pick(['maxResults', 'pageToken', 'startIndex', 'timeoutMs', 'pageSize', 'all', 'stateFilter', 'selectedFields', 'formatOptions.useInt64Timestamp', 'minCreationTime'])}=${encodeURIComponent(String(r.pick([-1, 0, 1, 'abc', '1e3', '99999999999999999999', '', 'true', '%', '😀', 'a'.repeat(500)])))}`);
      return { kind: 'list', method: 'GET', path: `${P}/${path}?${params.join('&')}` };
    }
    case 11: {
      // Bodies that are no JSON object, in every encoding a client might claim.
      const text = r.pick(['', '{', '[]', 'null', '"x"', '{"query": 1', '\u0000\u0001', '{"a":' + '['.repeat(3000), JSON.stringify(oddValue(r)), '{"query": "SELECT 1"}']);
      const path = r.pick([`${P}/queries`, `${P}/datasets`, `${P}/jobs`, `${P}/datasets/fz/tables/t/insertAll`, `${P}/datasets/fz/tables`]);
      return { kind: 'body', method: 'POST', path, raw: { text, type: r.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/related; boundary=x']), ...(r.chance(0.2) ? { encoding: r.pick(['gzip', 'deflate', 'br', 'zstd']) } : {}) } };
    }
    case 12: {
      // Raw HTTP the parser or router refuses.
      const text = r.pick([
        `GET /bigquery/v2/projects/fz/datasets/${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        'GARBAGE / HTTP/9.9\r\n\r\n',
        `POST ${P}/queries HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n{}`,
        `POST ${P}/queries HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}`,
        `GET ${P}/datasets/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET ${P}/datasets/..%2F..%2Fetc HTTP/1.1\r\nHost: x\r\n\r\n`,
        `DELETE ${P}/datasets/fz/tables/%00 HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET /bigquery/v2/projects/${'p'.repeat(200)}/datasets HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`,
      ]);
      return { kind: 'http', method: 'RAW', path: '', raw: { text, type: '' } };
    }
    default: {
      // A body nested to a random depth on a route that takes one.
      const depth = r.pick([50, 99, 100, 101, 500, 10_000]);
      const text = `{"query": "SELECT 1", "queryParameters": [{"name": "x", "parameterType": ${'{"type": "ARRAY", "arrayType": '.repeat(depth)}{"type": "INT64"}${'}'.repeat(depth)}}]}`;
      return { kind: 'deep body', method: 'POST', path: `${P}/queries`, raw: { text, type: 'application/json' } };
    }
  }
}
