// Shared by the bq CLI suites (bq-cli*.test.ts): runs the real `bq` (google-cloud-cli)
// against an emulator, fetching the gateway's discovery document (no --discovery_file),
// as shared/clients/real-client-traces.md records it.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

function bqOnPath(): string | undefined {
  for (const d of (process.env['PATH'] ?? '').split(':')) if (d && existsSync(join(d, 'bq'))) return join(d, 'bq');
  return undefined;
}

export function hasBq(): boolean {
  return bqOnPath() !== undefined;
}

/**
 * The SDK's bq program itself (`platform/bq/bq.py` under the SDK's bundled python),
 * without the `bin/bq` wrapper: the wrapper (gcloud bootstrapping, ~0.6 s of CPU per run)
 * only checks credentials and adds flags that --oauth_access_token and an empty config
 * make moot; every request and every printed line comes from bq.py. The wrapper
 * itself stays covered by bq-cli.test.ts.
 */
function directBq(): [string, string[]] | undefined {
  const wrapper = bqOnPath();
  if (!wrapper) return undefined;
  const sdk = dirname(dirname(realpathSync(wrapper)));
  const script = join(sdk, 'platform', 'bq', 'bq.py');
  const bundled = join(sdk, 'platform', 'bundledpythonunix', 'bin', 'python3');
  if (!existsSync(script)) return undefined;
  return [existsSync(bundled) ? bundled : 'python3', [script]];
}

export interface BqResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Bq {
  /** Runs bq; rejects (with its output) unless it exits 0. */
  (...args: string[]): Promise<string>;
  /** Runs bq and resolves whatever its exit status (for commands expected to fail). */
  run(...args: string[]): Promise<BqResult>;
  /** A scratch directory for input and output files. */
  dir: string;
}

/**
 * A bq bound to `url` and project `test`, with an empty bigqueryrc and config dir
 * (`direct`: the SDK's bq.py without the wrapper, see directBq).
 * bq shells out to `gcloud config list` on every run (~4 s of gcloud start-up). With an
 * empty CLOUDSDK_CONFIG that answer is `{}` anyway, so a stub on PATH gives the same
 * result without the wait; bq itself, its discovery fetch and its HTTP calls are real.
 */
export function bqFor(url: string, opts: { direct?: boolean } = {}): Bq {
  const [cmd, pre] = (opts.direct ? directBq() : undefined) ?? ['bq', []];
  const dir = mkdtempSync(join(tmpdir(), 'bq-cfg-'));
  const rc = join(dir, 'bigqueryrc');
  writeFileSync(rc, '');
  const stubDir = mkdtempSync(join(tmpdir(), 'gcloud-stub-'));
  writeFileSync(join(stubDir, 'gcloud'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
  const run = (...args: string[]): Promise<BqResult> =>
    new Promise((res) => {
      execFile(
        cmd,
        [...pre, `--bigqueryrc=${rc}`, `--api=${url.replace('localhost', '127.0.0.1')}`, '--project_id=test', '--oauth_access_token=fake', ...args],
        { cwd: dir, env: { ...process.env, CLOUDSDK_CONFIG: dir, PATH: `${stubDir}:${process.env['PATH'] ?? ''}` }, timeout: 90_000 },
        (err, stdout, stderr) => res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  const bq = (async (...args: string[]): Promise<string> => {
    const r = await run(...args);
    if (r.code !== 0) throw new Error(`bq ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  }) as Bq;
  bq.run = run;
  bq.dir = dir;
  return bq;
}

/** The rows of bq's default (pretty) table output, cells trimmed. */
export function prettyRows(out: string): string[][] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
}

/** bq wraps its messages at the terminal width: compare them with whitespace collapsed. */
export const oneLine = (r: { stdout: string; stderr: string }): string => `${r.stdout} ${r.stderr}`.replace(/\s+/g, ' ');
