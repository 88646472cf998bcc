// Command line (spec §1.1, §1.2): parsing in-process, exit behaviour through the real binary.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeArgv, parseCli } from '../../src/gateway/cli.js';
import { runGateway } from '../helpers/emulator.js';

describe('gateway command line', () => {
  it('accepts hyphen, underscore and alias spellings of every flag', () => {
    const c = parseCli([
      '--hostname=0.0.0.0', '--port', '1234', '--grpc_port=2345', '--engine_binary', '', '--data_dir', '/tmp/x',
      '--copy_engine_stdout', '--copy-engine-stderr=false', '--log_requests', '--debug', '--project', 'p1',
      '--dataset_id', 'ds', '--default_dataset_location', 'EU', '--enable_seed_api', '--seed_api_allow_remote',
      '--seed_api_seed_token', 'tok', '--seed-yaml', 'a.yaml', '--data_from_yaml', 'b.yaml', '--seed_data_file=c.yaml',
    ], {});
    expect(c).toMatchObject({
      listenHost: '0.0.0.0', httpPort: 1234, grpcPort: 2345, engineBinary: '', dataDir: '/tmp/x',
      copyEngineStdout: true, copyEngineStderr: false, logRequests: true, debug: true, projectId: 'p1', dataset: 'ds',
      defaultDatasetLocation: 'EU', enableSeedApi: true, seedApiAllowRemote: true, seedApiSeedToken: 'tok',
      seedDataFiles: ['a.yaml', 'b.yaml', 'c.yaml'],
    });
    expect(parseCli(['--listen_host', 'h', '--http_port', '1', '--project_id', 'q', '--dataset-id', 'd'], {})).toMatchObject({
      listenHost: 'h', httpPort: 1, projectId: 'q', dataset: 'd',
    });
    expect(normalizeArgv(['--no-copy-engine-stderr'])).toEqual(['--copy-engine-stderr=false']);
  });

  it('has the documented defaults and env fallbacks', () => {
    const d = parseCli([], {});
    expect(d).toMatchObject({ listenHost: 'localhost', httpPort: 9050, grpcPort: 9060, engineBinary: undefined, dataDir: './data', dataDirSource: 'default', copyEngineStderr: true, copyEngineStdout: false });
    expect(parseCli([], { BIGQUERY_EMULATOR_DATA_DIR: '/b' }).dataDir).toBe('/b');
    expect(parseCli([], { WAREHOUSE_EMULATOR_DATA_DIR: '/w', BIGQUERY_EMULATOR_DATA_DIR: '/b' }).dataDir).toBe('/w');
    expect(parseCli(['--data-dir', '/f'], { WAREHOUSE_EMULATOR_DATA_DIR: '/w' }).dataDir).toBe('/f');
    expect(parseCli([], { EMULATOR_INITIAL_DATA_DIR: '/i' }).initialDataDir).toBe('/i');
    expect(parseCli([], { BIGQUERY_EMULATOR_INITIAL_DATA_DIR: '/bi', EMULATOR_INITIAL_DATA_DIR: '/i' }).initialDataDir).toBe('/bi');
    expect(parseCli([], { BIGQUERY_EMULATOR_SEED_TOKEN: 't' }).seedApiSeedToken).toBe('t');
    expect(parseCli([], { WAREHOUSE_EMULATOR_SEED_TOKEN: 'w' }).seedApiSeedToken).toBe('w');
    expect(d.enablePythonUdfs).toBe(false);
    expect(parseCli(['--enable_python_udfs'], {}).enablePythonUdfs).toBe(true);
    expect(parseCli([], { BIGQUERY_EMULATOR_ENABLE_PYTHON_UDFS: '1' }).enablePythonUdfs).toBe(true);
    expect(parseCli(['--enable-python-udfs=false'], { WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS: 'true' }).enablePythonUdfs).toBe(false);
    expect(d.localFiles).toBeUndefined();
    expect(parseCli(['--local-files=/a,/b', '--local_files', '/c'], { WAREHOUSE_EMULATOR_LOCAL_FILES: '/w' }).localFiles).toEqual(['/a', '/b', '/c']);
    expect(parseCli([], { BIGQUERY_EMULATOR_LOCAL_FILES: '/x, /y' }).localFiles).toEqual(['/x', '/y']);
  });

  it('maps --database to its parent directory with a deprecation warning', () => {
    const c = parseCli(['--database', '/var/lib/old/emulator.db'], {});
    expect(c.dataDir).toBe('/var/lib/old');
    expect(c.warnings.join('\n')).toMatch(/deprecated/);
  });

  it('--help prints the flag surface, --version the metadata; both exit 0', async () => {
    const help = await runGateway(['--help']);
    expect(help.code).toBe(0);
    for (const f of ['--listen-host', '--hostname', '--http-port', '--http_port', '--port', '--grpc-port', '--engine-binary', '--data-dir',
      '--database', '--initial-data-dir', '--copy-engine-stdout', '--copy-engine-stderr', '--log-requests', '--debug', '--project-id',
      '--project', '--dataset', '--dataset-id', '--default-dataset-location', '--enable-seed-api', '--seed-api-allow-remote',
      '--seed-api-seed-token', '--seed-data-file', '--seed-yaml', '--data-from-yaml', '--version', '--help']) {
      expect(help.stdout).toContain(f);
    }
    const v = await runGateway(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^warehouse-emulator \d+\.\d+\.\d+/);
    expect(v.stdout).toMatch(/node v\d+/);
  });

  it('an unknown flag exits non-zero with a parse error', async () => {
    const r = await runGateway(['--no-such-flag']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown option '--no-such-flag'/);
  });

  it('a data dir that cannot be created exits 1 with a message (a recursive mkdir under /proc would hang)', async () => {
    const r = await runGateway(['--data-dir', '/proc/warehouse-emulator-nope/data', '--http-port', '0', '--grpc-port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toMatch(/cannot create the data dir \/proc\/warehouse-emulator-nope\/data/);
  });

  it('an engine binary that is missing or cannot run exits 1 at once, naming it (spec §1.1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wh-cli-'));
    try {
      const missing = await runGateway(['--engine-binary', join(dir, 'no-engine'), '--data-dir', dir, '--http-port', '0', '--grpc-port', '0']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(`--engine-binary ${join(dir, 'no-engine')}: no such file`);
      // On PATH lookup or not executable: the spawn error ends the start-up, not a wait for Health.
      const notExec = join(dir, 'engine.sh');
      writeFileSync(notExec, '#!/bin/sh\n', { mode: 0o644 });
      for (const bin of [notExec, 'warehouse-emulator-no-such-engine']) {
        const r = await runGateway(['--engine-binary', bin, '--data-dir', dir, '--http-port', '0', '--grpc-port', '0']);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/engine did not start: engine spawn failed: spawn \S+ (EACCES|ENOENT)/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
