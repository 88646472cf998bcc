// The bq CLI against the real engine, fetching the gateway's discovery
// document (no --discovery_file), as shared/clients/real-client-traces.md
// records it. Its own file: each bq run costs seconds, so it runs in parallel
// with the other suites.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

function hasBq(): boolean {
  return (process.env['PATH'] ?? '').split(':').some((d) => d && existsSync(join(d, 'bq')));
}

describe.skipIf(!hasRealEngine() || !hasBq())('bq CLI', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const bqUrl = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;

  it('bq CLI: mk, ls, show, insert, head, query, rm through the served discovery document', async () => {
    const cfg = mkdtempSync(join(tmpdir(), 'bq-cfg-'));
    const rc = join(cfg, 'bigqueryrc');
    writeFileSync(rc, '');
    const rowsFile = join(cfg, 'rows.json');
    writeFileSync(rowsFile, '{"name":"a","age":3}\n{"name":"b","age":4}\n');
    // bq shells out to `gcloud config list` on every run (~4 s of gcloud start-up). With an
    // empty CLOUDSDK_CONFIG that answer is `{}` anyway, so a stub on PATH gives the same
    // result without the wait; bq itself, its discovery fetch and its HTTP calls are real.
    const stubDir = mkdtempSync(join(tmpdir(), 'gcloud-stub-'));
    writeFileSync(join(stubDir, 'gcloud'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
    const bq = (...args: string[]): Promise<string> =>
      new Promise((res, rej) => {
        execFile('bq', [`--bigqueryrc=${rc}`, `--api=${emu.url.replace('localhost', '127.0.0.1')}`, '--project_id=test', '--oauth_access_token=fake', ...args],
          { env: { ...process.env, CLOUDSDK_CONFIG: cfg, PATH: `${stubDir}:${process.env['PATH'] ?? ''}` }, timeout: 60_000 }, (err, stdout, stderr) => {
            if (err) rej(new Error(`bq ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`));
            else res(stdout);
          });
      });
    // Each bq run costs seconds (it shells out to `gcloud config list`): independent commands run in parallel waves.
    expect(await bq('mk', '--dataset', 'test:bqds')).toMatch(/successfully created/);
    expect(await bq('mk', '--table', 'test:bqds.people', 'name:STRING,age:INTEGER')).toMatch(/successfully created/);
    const [ls, lsTables, show, , query, dry] = await Promise.all([
      bq('ls'), bq('ls', 'bqds'), bq('show', 'bqds.people'), bq('insert', 'bqds.people', rowsFile),
      bq('--format=json', 'query', '--nouse_legacy_sql', '--parameter=x:INT64:5', '--parameter=s::hello', 'SELECT @x + 1 AS y, @s AS s'),
      bq('query', '--nouse_legacy_sql', '--dry_run', 'SELECT 1'),
    ]);
    expect(JSON.parse(query)).toEqual([{ y: '6', s: 'hello' }]);
    expect(dry).toMatch(/successfully validated/);
    expect(ls).toContain('bqds');
    expect(lsTables).toContain('people');
    expect(show).toContain('age: integer');
    const head = await bq('--format=json', 'head', 'bqds.people');
    expect(JSON.parse(head)).toEqual(expect.arrayContaining([{ name: 'a', age: '3' }, { name: 'b', age: '4' }]));
    // rm -r -d drops the table with the dataset (one bq run fewer than rm -t + rm -d).
    await bq('rm', '-r', '-f', '-d', 'bqds');
    expect((await rest(bqUrl('/datasets/bqds/tables/people'))).status).toBe(404);
    expect((await rest(bqUrl('/datasets/bqds'))).status).toBe(404);
  }, 120_000);
});
