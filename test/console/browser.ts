// What the console's browser tests share: Debian's chromium (installed by
// .ci/run; never a downloaded browser build) and a console bundle no older
// than its sources.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/emulator.js';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function newest(dir: string): number {
  return Math.max(0, ...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));
}

/** Builds dist/console when a console source is newer than its index.html (the full build does it too). */
export async function ensureConsoleBuilt(): Promise<void> {
  const index = join(ROOT, 'dist', 'console', 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newest(join(ROOT, 'console', 'src'))) return;
  const r = spawnSync(process.execPath, ['scripts/build.mjs', '--console-only'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('console build failed');
}
