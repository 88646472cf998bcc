// The bq CLI against the real engine, fetching the gateway's discovery
// document (no --discovery_file), as shared/clients/real-client-traces.md
// records it: the `bq` wrapper as users run it (gcloud bootstrapping included).
// Its own file: each bq run costs seconds, so it runs in parallel with the other
// suites (bq-cli-query.test.ts, bq-cli-data.test.ts: the bq program without the wrapper).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { bqFor, hasBq } from './bq-cli-setup.js';

describe.skipIf(!hasRealEngine() || !hasBq())('bq CLI', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const bqUrl = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;

  it('bq CLI: mk, ls, show, insert, head, query, rm through the served discovery document', async () => {
    const bq = bqFor(emu.url);
    const rowsFile = join(bq.dir, 'rows.json');
    writeFileSync(rowsFile, '{"name":"a","age":3}\n{"name":"b","age":4}\n');
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
