// The scale set at a tiny size: the size flag, the SVG, and every case run on
// the real emulator and on DuckDB with equal answers (so the two loads hold the
// same data and the hand-written query pairs mean the same). Never timings.
import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../lib/cases.js';
import { parseRows, sizeLabel } from './dataset.js';
import { runScale } from './runner.js';
import { renderScaleSvg, renderScaleTable } from './report.js';

describe('scale size flag', () => {
  it('reads 10m, 100m, 500k and plain digits', () => {
    expect(parseRows('10m')).toBe(10_000_000);
    expect(parseRows('100M')).toBe(100_000_000);
    expect(parseRows('500k')).toBe(500_000);
    expect(parseRows('1.5m')).toBe(1_500_000);
    expect(parseRows('20000')).toBe(20_000);
    expect(() => parseRows('12345')).toThrow(/multiple of 1,000/);
    expect(() => parseRows('ten')).toThrow(/cannot read/);
    expect(sizeLabel(10_000_000)).toBe('10m');
    expect(sizeLabel(1_500_000)).toBe('1.5m');
    expect(sizeLabel(20_000)).toBe('20k');
  });
});

describe.skipIf(!existsSync(path.join(repoRoot, 'dist', 'gateway.js')))('scale set end to end (20k rows)', () => {
  it('loads both sides and every case answers the same on the emulator and DuckDB', async () => {
    const r = await runScale({
      rows: 20_000, warmup: 0, iterations: 1, caseFilter: null, url: null, emulator: true, duckdb: true,
      duckdbThreads: 2, outDir: null, projectId: 'scale-test', timeoutMs: 60_000, memoryLimit: '64MB', restart: true, log: () => {},
    });
    expect(r.load.emulator.status, r.load.emulator.error).toBe('ok');
    expect(r.load.duckdb.status, r.load.duckdb.error).toBe('ok');
    expect(r.cases.map((c) => `${c.name}: ${c.match.status} ${c.emulator.error ?? ''}${c.duckdb.error ?? ''}${c.match.detail}`))
      .toEqual(r.cases.map((c) => expect.stringMatching(new RegExp(`^${c.name}: equal `))));
    expect(r.cases).toHaveLength(9);
    for (const c of r.cases) expect(c.emulator.peakRssMB).toBeGreaterThan(0);
    // Restarted on its data directory, the engine answers again from the files, the same.
    expect(r.restart.status, r.restart.error).toBe('ok');
    expect(r.restart.cases.map((c) => `${c.name} ${c.status} ${c.equal} ${c.error ?? ''}`)).toEqual(['count_star ok true ', 'sum_avg_by_key1000 ok true ']);
    expect(renderScaleSvg(r)).toContain('✓ same');
    expect(renderScaleTable(r)).toContain('same rows 9/9');
  }, 90_000);
});
