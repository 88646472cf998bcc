// JavaScript UDF isolation through the SQL path: the known ways out of a
// JavaScript sandbox, each tried by a UDF body that, if it got hold of the
// host's `process`, would write a marker file, read a secret file and report
// the pid. None may: every probe must report that it found nothing, no file
// may appear, and the secret and this process's pid must never come back.
// Loops, allocation bombs and hostile thrown values fail their own query, by
// the limits, and the next query works.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

let h: Harness;
let n = 0;
let dir: string;
let secretFile: string;
let markerFile: string;
const SECRET = `secret-${process.pid}-${Date.now()}`;
const saved: Record<string, string | undefined> = {};
const outputs: string[] = [];

beforeAll(async () => {
  h = await openHarness();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'udf-iso-'));
  secretFile = path.join(dir, 'secret.txt');
  markerFile = path.join(dir, 'escaped.txt');
  fs.writeFileSync(secretFile, SECRET);
  // Short limits: the loops and bombs below fail quickly.
  for (const [k, v] of [['WAREHOUSE_UDF_TIMEOUT_MS', '1500'], ['WAREHOUSE_UDF_MEMORY_MB', '64']] as const) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});

afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await h?.close();
  // Nothing any probe did reached the file system or the host process.
  expect(fs.existsSync(markerFile)).toBe(false);
  for (const o of outputs) {
    expect(o).not.toContain(SECRET);
    expect(o).not.toMatch(new RegExp(`\\b${process.pid}\\b`));
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function query(sql: string): Promise<unknown[][]> {
  const projectId = `iso${++n}`;
  await setupDataset(h, projectId, 'ds');
  const rows = rowsOf(await run(h, sql, { projectId, defaultDataset: { projectId, datasetId: 'ds' } })) as unknown[][];
  outputs.push(JSON.stringify(rows));
  return rows;
}

async function queryError(sql: string): Promise<string> {
  try {
    await query(sql);
  } catch (e) {
    const m = errorMessage(e);
    outputs.push(m);
    return m;
  }
  throw new Error('expected the query to fail');
}

/** After a failure, the engine still answers UDF queries. */
async function stillServes(): Promise<void> {
  expect(await query(`CREATE TEMP FUNCTION ok(x FLOAT64) RETURNS FLOAT64 LANGUAGE js AS "return x * 2;"; SELECT ok(21)`)).toEqual([['42.0']]);
}

// What a probe does with whatever it found: use it as `process` if it is one.
const use = () => `
function use(p, how) {
  try {
    if (p && typeof p === 'object' && typeof p.pid === 'number') {
      let req = null;
      try { req = (p.mainModule && p.mainModule.require.bind(p.mainModule)) || (typeof p.getBuiltinModule === 'function' && p.getBuiltinModule.bind(p)); } catch (e) {}
      if (req) { try { const f = req('fs'); f.writeFileSync(${JSON.stringify(markerFile)}, 'x'); return 'ESCAPED ' + how + ' pid ' + p.pid + ' ' + f.readFileSync(${JSON.stringify(secretFile)}, 'utf8'); } catch (e) {} }
      return 'ESCAPED ' + how + ' pid ' + p.pid;
    }
  } catch (e) {}
  return '';
}
function tryChain(o, how) {
  const out = [];
  for (const get of [(x) => x.constructor.constructor, (x) => Object.getPrototypeOf(x).constructor.constructor, (x) => x.constructor]) {
    try { const F = get(o); out.push(use(F('return typeof process === "undefined" ? this && this.process : process')(), how)); } catch (e) {}
  }
  return out.join('');
}`;

/** A scalar UDF whose body is `code` (with use/tryChain in scope) returning a STRING report. */
function probe(code: string, params = '', args = ''): string {
  const body = `${use()}\n${code}`;
  return `CREATE TEMP FUNCTION probe(${params}) RETURNS STRING LANGUAGE js AS r"""${body}""";\nSELECT probe(${args}) AS r`;
}

async function report(sql: string): Promise<string> {
  const rows = await query(sql);
  const r = String(rows[0]![0]);
  expect(r).not.toContain('ESCAPED');
  return r;
}

describe('JavaScript UDF escapes find nothing of the host', () => {
  it('no process, require, module, Buffer, timers, fetch or engine internals among the globals', async () => {
    const rows = await query(`CREATE TEMP FUNCTION g() RETURNS STRING LANGUAGE js AS "return JSON.stringify(Object.getOwnPropertyNames(globalThis));"; SELECT g()`);
    const names = JSON.parse(String(rows[0]![0])) as string[];
    for (const bad of ['process', 'require', 'module', 'exports', 'Buffer', 'global', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'fetch', 'FinalizationRegistry']) expect(names).not.toContain(bad);
    expect(names.filter((k) => k.startsWith('_'))).toEqual([]);
    expect(names).toContain('Math');
    expect(await report(probe(`return [typeof process, typeof require, typeof Buffer, typeof setTimeout, typeof Atomics.waitAsync, typeof globalThis.process].join(' ');`))).toBe('undefined undefined undefined undefined undefined undefined');
  });

  it('constructor chains from this, functions, arguments of every type, promises and thrown errors', async () => {
    const r = await report(
      probe(
        `let out = tryChain(this, 'this') + tryChain(function () {}, 'fn') + tryChain(async function () {}, 'async') + tryChain(function* () {}, 'gen');
         for (const a of [s, j, d, t, xs, st]) out += tryChain(a, 'arg');
         out += tryChain(Promise.resolve(1), 'promise') + tryChain(new Promise(() => {}).then(), 'then');
         try { null.x; } catch (e) { out += tryChain(e, 'TypeError'); }
         try { new Array(-1); } catch (e) { out += tryChain(e, 'RangeError'); }
         try { JSON.parse('{'); } catch (e) { out += tryChain(e, 'SyntaxError'); }
         return 'checked:' + out;`,
        's STRING, j JSON, d DATE, t TIMESTAMP, xs ARRAY<INT64>, st STRUCT<a INT64>',
        `'x', JSON '{"a": [1]}', DATE '2024-01-01', TIMESTAMP '2024-01-01 00:00:00.5+00', [1, 2], STRUCT(1 AS a)`,
      ),
    );
    expect(r).toBe('checked:');
  });

  it('Error.prepareStackTrace cannot be set; CallSite getThis/getFunction and captureStackTrace give nothing', async () => {
    const r = await report(
      probe(`const seen = [];
        try { Error.prepareStackTrace = (e, cs) => { for (const c of cs) { try { seen.push(c.getThis(), c.getFunction()); } catch (x) {} } return 'hooked'; }; } catch (e) {}
        const stack = (function deep() { return new Error('x').stack; })();
        const o = {}; Error.captureStackTrace(o);
        let out = '';
        for (const s of seen) if (s) out += tryChain(s, 'callsite');
        return typeof Error.prepareStackTrace + ' ' + (stack === 'hooked') + ' ' + seen.length + ' ' + typeof o.stack + out;`),
    );
    expect(r).toBe('undefined false 0 string');
  });

  it('getters, Proxies and Symbol.species in results and promises see only the isolate', async () => {
    // One function (one isolate), called four times in a query: the first three calls return objects that
    // capture whatever touches them (the runtime reading the results, settling the promises); the last inspects.
    const rows = await query(`CREATE TEMP FUNCTION f(mode STRING) RETURNS JSON LANGUAGE js AS r"""${use()}
        const leaks = (globalThis.leaks = globalThis.leaks || []);
        if (mode === 'plant') {
          const spy = { get a() { leaks.push(this); return 1; } };
          const prox = new Proxy([1, 2], { get(t, k, r) { leaks.push(t, r); return Reflect.get(t, k, r); }, ownKeys(t) { leaks.push(t); return Reflect.ownKeys(t); } });
          class Evil extends Array { static get [Symbol.species]() { return function (...a) { leaks.push(this, ...a); return []; }; } }
          const evil = Evil.from([1, 2]);
          evil.map((v) => v);
          return { spy, prox, evil };
        }
        if (mode === 'species') {
          class P extends Promise { static get [Symbol.species]() { return function (exec) { leaks.push(this, exec); return new Promise(exec); }; } }
          return new P((ok) => ok('settled'));
        }
        if (mode === 'thenable') return { then(ok, bad) { leaks.push(this, ok, bad); ok('thenable'); } };
        let out = '';
        for (const l of leaks.slice()) if (l && (typeof l === 'object' || typeof l === 'function')) out += tryChain(l, 'leak');
        return leaks.length + ':' + out;
      """;
      SELECT TO_JSON_STRING(f('plant')) AS a, TO_JSON_STRING(f('species')) AS b, TO_JSON_STRING(f('thenable')) AS c, TO_JSON_STRING(f('inspect')) AS d`);
    expect(rows[0]!.slice(0, 3)).toEqual(['{"evil":[1,2],"prox":[1,2],"spy":{"a":1}}', '"settled"', '"thenable"']);
    const inspected = String(rows[0]![3]);
    expect(inspected).not.toContain('ESCAPED');
    expect(inspected).toMatch(/^"[1-9][0-9]*:"$/);
  });

  it('import() is refused, awaited or not', async () => {
    expect(await queryError(probe(`return import('fs').then((m) => use(m, 'import'));`))).toContain('Not supported');
    expect(await queryError(probe(`import('node:child_process'); return 'after';`))).toContain('Not supported');
    await stillServes();
  });

  it('callbacks after the call returned run inside the call or not at all', async () => {
    // No timer exists; a promise callback runs in the call's own microtasks, under its time limit.
    expect(await report(probe(`let t = []; for (const k of ['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'FinalizationRegistry']) t.push(typeof globalThis[k]); return t.join(',');`))).toBe('undefined,undefined,undefined,undefined,undefined');
    expect(await queryError(probe(`Promise.resolve().then(() => { while (true) {} }); return 'returned';`))).toContain('exceeded the CPU time limit');
    await stillServes();
  });

  it('SharedArrayBuffer and Atomics: waiting is stopped by the time limit, waitAsync is gone', async () => {
    expect(await queryError(probe(`Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return 'woke';`))).toContain('exceeded the CPU time limit');
    await stillServes();
  });

  it('WebAssembly runs inside the isolate only, synchronously or through promises; its memory is capped', async () => {
    // (module (func (export "f") (result i32) i32.const 42))
    const bytes = '[0,97,115,109,1,0,0,0,1,5,1,96,0,1,127,3,2,1,0,7,5,1,1,102,0,0,10,6,1,4,0,65,42,11]';
    expect(
      await query(`CREATE TEMP FUNCTION w() RETURNS STRING LANGUAGE js AS r"""
        const b = new Uint8Array(${bytes});
        const sync = new WebAssembly.Instance(new WebAssembly.Module(b)).exports.f();
        return WebAssembly.instantiate(b).then((r) => sync + ' ' + r.instance.exports.f());
      """; SELECT w()`),
    ).toEqual([['42 42']]);
    const msg = await queryError(probe(`const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); for (let i = 0; i < 64; i++) m.grow(1024); return 'grew';`));
    expect(msg).toMatch(/Maximum memory size exceeded|out of memory|allocation failed/i);
    await stillServes();
  });
});

describe('a UDF that loops, allocates too much or throws something hostile fails its own query', () => {
  it('an infinite loop hits the CPU time limit; SAFE. cannot be put on a UDF to hide it', async () => {
    expect(await queryError(`CREATE TEMP FUNCTION spin(x FLOAT64) RETURNS FLOAT64 LANGUAGE js AS "while (true) {} return x;"; SELECT spin(x) FROM UNNEST([1.0, 2.0]) x`)).toContain(
      'Resources exceeded during query execution: JavaScript UDF spin(FLOAT64) exceeded the CPU time limit',
    );
    expect(await queryError(`CREATE TEMP FUNCTION spin(x FLOAT64) RETURNS FLOAT64 LANGUAGE js AS "while (true) {} return x;"; SELECT SAFE.spin(x) FROM UNNEST([1.0, 2.0]) x`)).toContain('SAFE is not supported for function spin');
    await stillServes();
  });

  it('allocation bombs: heap, strings, ArrayBuffers', async () => {
    expect(await queryError(probe(`const a = []; while (true) a.push(new Array(1e5).fill(1.5)); return '';`))).toContain('Resources exceeded during query execution: UDF out of memory.');
    await stillServes();
    expect(await queryError(probe(`let s = 'x'; while (true) s += s; return s;`))).toContain('RangeError: Invalid string length');
    expect(await queryError(probe(`const a = []; for (let i = 0; i < 64; i++) a.push(new ArrayBuffer(256 * 1024 * 1024)); return '' + a.length;`))).toMatch(/Array buffer allocation failed|out of memory/);
    await stillServes();
  });

  it('an aggregate that loops or allocates fails the same way', async () => {
    const agg = (body: string) => `CREATE TEMP AGGREGATE FUNCTION bad(x FLOAT64) RETURNS FLOAT64 LANGUAGE js AS r'''
        export function initialState() { return {s: 0}; }
        export function aggregate(state, x) { ${body} }
        export function merge(state, p) { state.s += p.s; }
        export function finalize(state) { return state.s; }
      '''; SELECT bad(x) FROM UNNEST([1.0, 2.0]) x`;
    expect(await queryError(agg('while (true) {}'))).toContain('JavaScript UDF bad(FLOAT64) exceeded the CPU time limit');
    expect(await queryError(agg('const a = []; while (true) a.push(new Array(1e5).fill(x));'))).toContain('UDF out of memory');
    await stillServes();
  });

  it('thrown Proxies, looping getters and cyclic results fail by the limit, not by hanging the engine', async () => {
    for (const thrown of [
      `new Proxy(new Error('p'), { get() { while (true) {} } })`,
      `{ get message() { while (true) {} } }`,
      `Object.defineProperty(new Error('s'), 'stack', { get() { while (true) {} } })`,
    ]) {
      expect(await queryError(probe(`throw ${thrown};`))).toContain('exceeded the CPU time limit');
    }
    expect(await queryError(probe(`throw { toString() { return 'custom'; } };`))).toBe('custom at probe()');
    expect(await queryError(`CREATE TEMP FUNCTION cyc() RETURNS JSON LANGUAGE js AS "const o = {}; o.self = o; return o;"; SELECT cyc()`)).toContain('nested more than 1000 levels');
    expect(await queryError(`CREATE TEMP FUNCTION loopy() RETURNS JSON LANGUAGE js AS "return new Proxy({}, { ownKeys() { while (true) {} } });"; SELECT loopy()`)).toContain('exceeded the CPU time limit');
    await stillServes();
  });

  it('a library that throws something hostile at load time fails the query', async () => {
    const lib = path.join(dir, 'hostile.js');
    fs.writeFileSync(lib, `const helper = 1;\nthrow { get message() { while (true) {} } };\n`);
    expect(await queryError(`CREATE TEMP FUNCTION f(x FLOAT64) RETURNS FLOAT64 LANGUAGE js OPTIONS (library = 'file://${lib}') AS "return x;"; SELECT f(1)`)).toContain('exceeded the CPU time limit');
    await stillServes();
  });
});
