// The gateway in front of an engine it did not spawn (`--engine-binary ""`):
// every call crosses the Engine gRPC service of proto/ (the spawned engine is
// reached over its local socket instead), so this is the test of that path
// with the real engine: DDL, insertAll, a query with paging, and errors.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_JS, ensureBuilt, freePort, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe('gateway over gRPC to an engine it did not spawn', () => {
  let engine: ChildProcess;
  let emu: Emulator;
  let dataDir: string;
  const base = (): string => `${emu.url}/bigquery/v2/projects/ext`;

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'wh-ext-engine-'));
    const grpcPort = await freePort();
    engine = spawn(process.execPath, [ENGINE_JS, '--grpc-port', String(grpcPort), '--data-dir', dataDir, '--host', '127.0.0.1'], { stdio: 'ignore' });
    emu = await startEmulator({ engineBinary: '', args: ['--grpc-port', String(grpcPort)], dataDir });
    // The gateway answers health by itself; wait until the engine serves too.
    const deadline = Date.now() + 30_000;
    while ((await rest(`${base()}/datasets`)).status === 503) {
      if (Date.now() > deadline) throw new Error('engine did not start serving');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  afterAll(async () => {
    await emu?.stop();
    engine?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs DDL, insertAll and a paged query through the Engine service', async () => {
    expect((await rest(`${base()}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
    const q = (query: string, extra: Record<string, unknown> = {}) =>
      rest(`${base()}/queries`, { method: 'POST', json: { query, useLegacySql: false, ...extra } });
    expect((await q('CREATE TABLE d.t (id INT64, name STRING)')).status).toBe(200);
    const rows = Array.from({ length: 25 }, (_, i) => ({ insertId: `r${i}`, json: { id: i, name: `n${i}` } }));
    const ins = await rest(`${base()}/datasets/d/tables/t/insertAll`, { method: 'POST', json: { rows } });
    expect(ins.status).toBe(200);
    expect(ins.body.insertErrors).toBeUndefined();

    const first = await q('SELECT id, name FROM d.t ORDER BY id', { maxResults: 10 });
    expect(first.status).toBe(200);
    expect(first.body.totalRows).toBe('25');
    expect(first.body.rows).toHaveLength(10);
    expect(first.body.rows[9].f).toEqual([{ v: '9' }, { v: 'n9' }]);
    const { jobId } = first.body.jobReference;
    const page = await rest(`${base()}/queries/${jobId}?pageToken=${encodeURIComponent(first.body.pageToken)}&maxResults=100`);
    expect(page.status).toBe(200);
    expect(page.body.rows).toHaveLength(15);
    expect(page.body.rows[14].f).toEqual([{ v: '24' }, { v: 'n24' }]);
  });

  it('returns the engine\'s errors in the real envelope', async () => {
    const r = await rest(`${base()}/queries`, { method: 'POST', json: { query: 'SELECT nope FROM d.t', useLegacySql: false } });
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalidQuery');
    expect(r.body.error.message).toMatch(/^Unrecognized name: nope; Did you mean name\? at \[1:8\]/);
  });

  it('carries any error text through gRPC metadata, cut when it would not fit', async () => {
    const q = (query: string) => rest(`${base()}/queries`, { method: 'POST', json: { query, useLegacySql: false } });
    const r = await q('SELECT ERROR("café ☃ 😀")');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('café ☃ 😀');
    // 100,000 emoji escaped into headers once made the client drop the call (503).
    const long = await q("SELECT ERROR(REPEAT('😀', 100000))");
    expect(long.status).toBe(400);
    expect(long.body.error.message.endsWith('😀…')).toBe(true);
    expect((await q('SELECT 1')).status).toBe(200);
  });
});
