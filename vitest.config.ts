import { configDefaults, defineConfig } from 'vitest/config';

const include = ['grammar/**/*.test.ts', 'src/**/*.test.ts', 'test/**/*.test.ts', 'conformance/**/*.test.ts', 'bench/**/*.test.ts'];
// Files whose checks depend on having the machine to themselves run last, one at a time, with nothing beside
// them: the integrity tests (workloads of a fixed time, every kind of write acknowledged in it), the
// memory-limit test (the emulator's resident set), the benchmark runner's (run-time budgets, a frozen gateway
// detected by its silence) and the console's (a real browser's timings). Every other file runs two at a time
// (CI has 2 cores; one file at a time left one idle).
const alone = ['test/integrity/**/*.test.ts', 'test/e2e/memory-limit.test.ts', 'bench/bench.test.ts', 'test/console/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // In-process engines run JavaScript UDFs in isolated-vm isolates, which need it (see src/gateway/supervisor.ts).
    execArgv: ['--no-node-snapshot'],
    projects: [
      { extends: true, test: { name: 'shared', include, exclude: [...configDefaults.exclude, ...alone], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
