// Google's Go client end to end: test/clients/go/main.go is built in GOPATH
// mode, offline, against Debian's golang-google-cloud-dev (.ci/run installs it
// with golang-go), and run against the emulator: datasets, tables, streaming
// insert, a query with parameters polled to DONE, every type the client
// decodes, positional parameters into a struct, a load from a local file.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startEmulator, type Emulator } from '../helpers/emulator.js';

const run = promisify(execFile);
const GOPATH = '/usr/share/gocode';

describe('the Go client (cloud.google.com/go/bigquery)', () => {
  let emu: Emulator;
  let bin: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'go-client-'));
    bin = join(dir, 'bqtest');
    // The build cache stays in the project's .tmp, so later runs link only.
    const cache = join(ROOT, '.tmp', 'go-build');
    mkdirSync(cache, { recursive: true });
    const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOCACHE: cache, GOFLAGS: '', GOPROXY: 'off', CGO_ENABLED: '0' };
    [emu] = await Promise.all([
      startEmulator({ args: ['--project-id', 'go-p'] }),
      run('go', ['build', '-o', bin, 'main.go'], { cwd: join(ROOT, 'test', 'clients', 'go'), env }),
    ]);
  }, 300_000);
  afterAll(async () => emu?.stop());

  it('runs datasets, tables, insertAll, parameterized query jobs, every type, and a local load', async () => {
    const csv = join(mkdtempSync(join(tmpdir(), 'go-csv-')), 'people.csv');
    writeFileSync(csv, 'name,n\nann,1\nbob,2\n');
    const { stdout } = await run(bin, [emu.url, 'go-p', csv], { timeout: 120_000 });
    const steps = stdout.trim().split('\n').map((l) => JSON.parse(l) as { step: string; value: unknown });
    const byStep = (s: string) => steps.filter((x) => x.step === s).map((x) => x.value);
    expect(byStep('dataset')).toEqual([{ location: 'US', description: 'updated', listed: ['go_ds'] }]);
    expect(byStep('table')).toEqual([{ fields: 13, type: 'TABLE', description: 'all types' }]);
    expect(byStep('job')).toEqual([{ state: true, location: 'US', sameId: true, polled: true }]);
    // Each value as the Go client decodes it (bytes base64 in JSON; civil types, big.Rat, time.Time by name).
    expect(byStep('row')).toEqual([
      [
        'alpha', { bytes: 'AAH/' }, 42, 2.5, true, { time: '2024-03-01T12:30:45.123456Z' },
        { 'civil.Date': '2024-02-29' }, { 'civil.Time': '23:59:58.500000000' }, { 'civil.DateTime': '1999-12-31T01:02:03' },
        { rat: '123.450000000' }, 'POINT(1 2)', ['a', 'b'], [7, ['p', 'q']],
      ],
      // The second insert of id r1 was de-duplicated: one alpha row.
      ['beta', null, null, null, null, null, null, null, null, null, null, [], null],
    ]);
    expect(byStep('rows')).toEqual([{ total: 2, schema: 13 }]);
    expect(byStep('positional')).toEqual([{ A: 'x', B: 42, C: ['u', 'v'] }]);
    expect(byStep('load')).toEqual([{ outputRows: 2, rows: [{ name: 'ann', n: 1 }, { name: 'bob', n: 2 }] }]);
    expect(byStep('error')).toEqual([{ message: 'googleapi: Error 404: Not found: Table go-p:go_ds.missing was not found in location US, notFound' }]);
    expect(byStep('done')).toEqual([true]);
  });
});
