import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['grammar/**/*.test.ts', 'src/**/*.test.ts', 'test/**/*.test.ts', 'conformance/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // In-process engines run JavaScript UDFs in isolated-vm isolates, which need it (see src/gateway/supervisor.ts).
    execArgv: ['--no-node-snapshot'],
  },
});
