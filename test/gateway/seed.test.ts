// Startup seeding (spec §1.3.1, §1.3.2) through the real processes.
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAKE_ENGINE, freePort, hasRealEngine, rest, runGateway, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('startup seeding', () => {
  const started: Emulator[] = [];
  afterAll(async () => {
    for (const e of started) await e.stop();
  });

  it('applies YAML seed files before serving, with project precedence and idempotent re-boots', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-'));
    const file = join(dir, 'seed.yaml');
    writeFileSync(file, [
      'project_id: filep',
      'datasets:',
      '  - id: s1',
      '    tables:',
      '      - id: people',
      '        schema:',
      '          - {name: name, type: STRING, mode: REQUIRED}',
      '          - {name: tags, type: STRUCT, mode: REPEATED, fields: [{name: k, type: STRING}, {name: j, type: JSON}]}',
      '        rows:',
      '          - {name: ann, tags: [{k: a, j: {"x": 1}}], extra: dropped}',
      '          - {name: bob}',
      '      - id: empty',
      '  - id: s2',
      '    project_id: dsp',
      '',
    ].join('\n'));
    const dataDir = mkdtempSync(join(tmpdir(), 'seed-data-'));
    const emu = await startEmulator({ dataDir, args: ['--seed-data-file', file, '--project-id', 'flagp'] });
    started.push(emu);
    const rows = await rest(`${emu.url}/bigquery/v2/projects/filep/datasets/s1/tables/people/data`);
    expect(rows.body.totalRows).toBe('2');
    expect((await rest(`${emu.url}/bigquery/v2/projects/filep/datasets/s1/tables/empty`)).status).toBe(200);
    expect((await rest(`${emu.url}/bigquery/v2/projects/dsp/datasets/s2`)).status).toBe(200);
    await emu.stop();
    started.pop();
    // Second boot on the same dir: ALREADY_EXISTS is success, rows are appended again.
    const again = await startEmulator({ dataDir, args: ['--seed-data-file', file] });
    started.push(again);
    expect((await rest(`${again.url}/bigquery/v2/projects/filep/datasets/s1/tables/people/data`)).body.totalRows).toBe('4');
  });

  it('fails startup naming the dataset when no project can be resolved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-'));
    const file = join(dir, 'seed.yaml');
    writeFileSync(file, 'datasets:\n  - id: orphan_ds\n');
    const grpcPort = await freePort();
    const r = await runGateway(['--seed-data-file', file, '--data-dir', join(dir, 'data'), '--http-port', '0', '--grpc-port', String(grpcPort), '--engine-binary', FAKE_ENGINE]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/orphan_ds/);
  });

  it('copies --initial-data-dir only on first boot and warns about stray *.db files', async () => {
    const template = mkdtempSync(join(tmpdir(), 'tmpl-'));
    // Build a template with one dataset by running an emulator on it once.
    const seedEmu = await startEmulator({ dataDir: template });
    await rest(`${seedEmu.url}/bigquery/v2/projects/p/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'from_template' } } });
    await seedEmu.stop();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'init-')), 'data');
    const emu = await startEmulator({ dataDir, args: ['--initial-data-dir', template] });
    started.push(emu);
    expect((await rest(`${emu.url}/bigquery/v2/projects/p/datasets/from_template`)).status).toBe(200);
    const stray = mkdtempSync(join(tmpdir(), 'stray-'));
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, 'old.db'), 'x');
    const s = await startEmulator({ dataDir: stray });
    started.push(s);
    expect(s.output()).toMatch(/old\.db/);
  });
});
