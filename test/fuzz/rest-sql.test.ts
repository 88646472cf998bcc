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
import { P, Rng, generate, projectSql, type Req } from './gen.js';

const SEED = Number(process.env.FUZZ_SEED ?? 15);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 1200);

/** errors[].reason values of the service's error table (docs: error-messages), plus parseError for unparseable bodies. */
const KNOWN_REASONS = new Set([
  'accessDenied', 'backendError', 'badRequest', 'billingNotEnabled', 'billingTierLimitExceeded', 'blocked', 'duplicate', 'internalError', 'invalid',
  'invalidQuery', 'invalidUser', 'jobBackendError', 'jobInternalError', 'jobRateLimitExceeded', 'notFound', 'notImplemented', 'quotaExceeded',
  'rateLimitExceeded', 'resourceInUse', 'resourcesExceeded', 'responseTooLarge', 'stopped', 'tableUnavailable', 'timeout', 'parseError', 'bytesBilledLimitExceeded',
]);

interface Res {
  status: number;
  body: any;
}

type Json = Record<string, unknown>;

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
      // A job answered 200 may carry its own error (async jobs, loads): a known reason too, never an internal one.
      const jobError = res.status === 200 ? res.body?.status?.errorResult : undefined;
      if (jobError && (!KNOWN_REASONS.has(jobError.reason) || jobError.reason === 'internalError' || jobError.reason === 'backendError')) {
        failures.push(`job error ${jobError.reason}: ${what} -> ${JSON.stringify(jobError).slice(0, 300)}`);
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
    const logged = log.split('\n').filter((l, i, all) => /engine: (exited|killed)|internal error|unhandled promise rejection|uncaught exception/.test(l) || /internal error/.test(all[i - 1] ?? '') || /internal error/.test(all[i - 2] ?? ''));
    expect(logged).toEqual([]);
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
