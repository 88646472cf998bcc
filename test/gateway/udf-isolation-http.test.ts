// UDF isolation end to end: a running emulator (gateway + engine processes)
// gets escape attempts, a loop, an allocation bomb and hostile throws through
// POST /queries. Each fails (or reports nothing found) as a 400 of its own
// query; the engine process is the same one throughout (same pid), no file
// was written, the secret file's text never comes back, and a normal UDF
// query works after each. Python UDFs: CREATE works, calls need the
// --enable-python-udfs flag, which the gateway passes on to the engine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonPath } from '../../src/udf/python.js';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

/** Pids of the processes whose parent is `ppid` (Linux /proc). */
function childPids(ppid: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may contain spaces, so read after the last ')'.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe.skipIf(!hasRealEngine() || process.platform !== 'linux')('UDF isolation over HTTP', () => {
  let emu: Emulator;
  let enginePid: number;
  let dir: string;
  const secret = `secret-${Date.now()}`;
  const seen: string[] = [];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'udf-iso-http-'));
    fs.writeFileSync(path.join(dir, 'secret.txt'), secret);
    emu = await startEmulator({ env: { WAREHOUSE_UDF_TIMEOUT_MS: '1500', WAREHOUSE_UDF_MEMORY_MB: '64', WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS: '' } });
    const kids = childPids(emu.proc.pid!);
    expect(kids).toHaveLength(1);
    enginePid = kids[0]!;
    expect((await rest(`${emu.url}/bigquery/v2/projects/iso/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => {
    await emu?.stop();
    expect(fs.existsSync(path.join(dir, 'escaped.txt'))).toBe(false);
    for (const s of seen) expect(s).not.toContain(secret);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function query(sql: string): Promise<{ status: number; body: { rows?: { f: { v: unknown }[] }[]; error?: { message: string; errors: { reason: string }[] } } }> {
    const r = await rest(`${emu.url}/bigquery/v2/projects/iso/queries`, { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000, defaultDataset: { projectId: 'iso', datasetId: 'd' } } });
    seen.push(JSON.stringify(r.body));
    return r as never;
  }

  /** The engine that answered is the one that started, and it still runs UDFs. */
  async function sameEngineServes(): Promise<void> {
    const q = await query(`CREATE TEMP FUNCTION ok(x FLOAT64) RETURNS FLOAT64 LANGUAGE js AS "return x * 2;"; SELECT ok(21)`);
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: '42.0' }] }]);
    expect(childPids(emu.proc.pid!)).toEqual([enginePid]);
  }

  async function fails(sql: string, text: string | RegExp): Promise<void> {
    const q = await query(sql);
    expect(q.status).toBe(400);
    expect(q.body.error!.errors[0]!.reason).toBe('invalidQuery');
    if (typeof text === 'string') expect(q.body.error!.message).toContain(text);
    else expect(q.body.error!.message).toMatch(text);
    await sameEngineServes();
  }

  it('escape attempts report nothing of the host', async () => {
    const marker = JSON.stringify(path.join(dir, 'escaped.txt'));
    const secretPath = JSON.stringify(path.join(dir, 'secret.txt'));
    const q = await query(`CREATE TEMP FUNCTION probe(j JSON) RETURNS STRING LANGUAGE js AS r"""
      const found = [];
      const tries = [() => this.constructor.constructor('return process')(), () => j.constructor.constructor('return process')(),
        () => Promise.resolve().constructor.constructor('return process')(), () => { try { null.x; } catch (e) { return e.constructor.constructor('return process')(); } }];
      try { Error.prepareStackTrace = (e, cs) => { for (const c of cs) tries.push(() => c.getThis().constructor.constructor('return process')()); return ''; }; new Error().stack; } catch (e) {}
      for (const t of tries) {
        try {
          const p = t();
          if (p && typeof p.pid === 'number') {
            found.push('pid ' + p.pid);
            const fs = p.mainModule.require('fs');
            fs.writeFileSync(${marker}, 'x');
            found.push(fs.readFileSync(${secretPath}, 'utf8'));
          }
        } catch (e) {}
      }
      return 'found:' + found.join(',') + ' ' + typeof process + ' ' + typeof require + ' ' + typeof Error.prepareStackTrace;
    """; SELECT probe(JSON '{"a": 1}')`);
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: 'found: undefined undefined undefined' }] }]);
    await sameEngineServes();
  });

  it('import(), awaited or not, fails its query', async () => {
    await fails(`CREATE TEMP FUNCTION imp() RETURNS STRING LANGUAGE js AS "import('fs'); return 'x';"; SELECT imp()`, 'Not supported');
    await fails(`CREATE TEMP FUNCTION imp() RETURNS STRING LANGUAGE js AS "return import('child_process').then((m) => typeof m);"; SELECT imp()`, 'Not supported');
  });

  it('an infinite loop, a promise callback that loops after return, an allocation bomb and a hostile throw each fail only their query', async () => {
    await fails(`CREATE TEMP FUNCTION spin(x FLOAT64) RETURNS FLOAT64 LANGUAGE js AS "while (true) {} return x;"; SELECT spin(1)`, 'Resources exceeded during query execution: JavaScript UDF spin(FLOAT64) exceeded the CPU time limit');
    await fails(`CREATE TEMP FUNCTION later() RETURNS FLOAT64 LANGUAGE js AS "Promise.resolve().then(() => { while (true) {} }); return 1;"; SELECT later()`, 'exceeded the CPU time limit');
    await fails(`CREATE TEMP FUNCTION bomb() RETURNS FLOAT64 LANGUAGE js AS "const a = []; while (true) a.push(new Array(1e5).fill(1.5)); return 1;"; SELECT bomb()`, 'Resources exceeded during query execution: UDF out of memory.');
    await fails(`CREATE TEMP FUNCTION hostile() RETURNS FLOAT64 LANGUAGE js AS "throw { get message() { while (true) {} } };"; SELECT hostile()`, 'exceeded the CPU time limit');
    await fails(`CREATE TEMP FUNCTION wait() RETURNS FLOAT64 LANGUAGE js AS "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return 1;"; SELECT wait()`, 'exceeded the CPU time limit');
  });

  it('a thrown error (any text) is a 400 naming the function', async () => {
    await fails(`CREATE TEMP FUNCTION boom(s STRING) RETURNS STRING LANGUAGE js AS "throw new Error('no ' + s);"; SELECT boom('way')`, /^Error: no way at boom\(STRING\) line 1, columns 6-7$/);
    await fails(`CREATE TEMP FUNCTION boom() RETURNS STRING LANGUAGE js AS "throw new Error('café ☕');"; SELECT boom()`, /^Error: café ☕ at boom\(\) line 1, columns 6-7$/);
  });

  it('Python UDFs: CREATE works; a call without --enable-python-udfs fails saying how to enable them', async () => {
    const c = await query(`CREATE FUNCTION d.py(x INT64) RETURNS INT64 LANGUAGE python OPTIONS (entry_point = 'main', runtime_version = 'python-3.11') AS "def main(x): return x + 1"`);
    expect(c.status).toBe(200);
    await fails('SELECT d.py(1)', 'Python UDFs are disabled in this emulator, because their code runs on its host with its rights. Start it with --enable-python-udfs');
  });

  it.skipIf(!pythonPath())('--enable-python-udfs reaches the engine: the call runs', async () => {
    const on = await startEmulator({ args: ['--enable-python-udfs'] });
    try {
      const url = `${on.url}/bigquery/v2/projects/py/queries`;
      const q = await rest(url, {
        method: 'POST',
        json: { query: `CREATE TEMP FUNCTION py(x INT64) RETURNS INT64 LANGUAGE python OPTIONS (entry_point = 'main', runtime_version = 'python-3.11') AS "def main(x): return x + 1"; SELECT py(41)`, useLegacySql: false, timeoutMs: 30000 },
      });
      expect(q.status).toBe(200);
      expect(q.body.rows).toEqual([{ f: [{ v: '42' }] }]);
    } finally {
      await on.stop();
    }
  });
});
