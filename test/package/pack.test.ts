// The npm package as a user gets it: scripts/pack-smoke.mjs packs a staging
// copy, installs the tarball into an empty directory, and runs the spec
// §1.4.5 smoke check through `npx warehouse-emulator` and the programmatic
// start from there (needs the npm registry, as any install does).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/emulator.js';

it('packs, installs into an empty directory and passes the smoke check from there', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((res) =>
    execFile(process.execPath, [join(ROOT, 'scripts', 'pack-smoke.mjs')], { timeout: 280_000 }, (err, stdout, stderr) =>
      res({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  expect(code, stderr).toBe(0);
  expect(stderr).toMatch(/smoke ok: .* SELECT 1 = 1/);
  const m = JSON.parse(stdout.trim().split('\n').pop()!) as { files: number; tarballBytes: number; apiStartMs: number };
  expect(m.files).toBeGreaterThan(4);
  expect(m.apiStartMs).toBeGreaterThan(0);
  process.stderr.write(`pack smoke: ${stdout}`);
}, 300_000);
