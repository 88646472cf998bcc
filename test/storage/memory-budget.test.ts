// The budget the caches and operators share under --memory-limit leaves room
// for what the processes hold outside it (memory-budget.ts budgetOf), so the
// resident set of gateway + engine stays within the limit.
import { describe, expect, it } from 'vitest';
import { budgetOf } from '../../src/storage/memory-budget.js';

const MB = 1024 * 1024;

describe('budgetOf', () => {
  it('is the limit less the processes at rest, their workers, uncollected garbage, batches in flight and a 10% margin', () => {
    // 4 GB, 2 workers: 160 MB at rest + 2 × 40 MB + 128 MB of garbage + 128 MB in flight + 409.6 MB of margin.
    expect(budgetOf(4096 * MB, 2)).toBe(Math.floor((4096 - 160 - 80 - 128 - 128 - 409.6) * MB));
    // 1 GB, no workers: garbage at its 64 MB floor.
    expect(budgetOf(1024 * MB, 0)).toBe(Math.floor((1024 - 160 - 64 - 32 - 102.4) * MB));
    // Each worker takes its share.
    expect(budgetOf(8192 * MB, 4) - budgetOf(8192 * MB, 8)).toBe(4 * 40 * MB);
  });

  it('keeps half of a limit too small for the overhead, and grows with the limit', () => {
    expect(budgetOf(24 * MB, 2)).toBe(12 * MB);
    expect(budgetOf(256 * MB, 2)).toBe(128 * MB);
    let last = 0;
    for (let mb = 16; mb <= 64 * 1024; mb *= 2) {
      const b = budgetOf(mb * MB, 2);
      expect(b).toBeGreaterThan(last);
      expect(b).toBeLessThanOrEqual(mb * MB);
      last = b;
    }
  });
});
