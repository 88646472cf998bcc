// Bundles the two process entry points into dist/ so that start-up does not pay
// for a TypeScript loader (start to healthy is a measured target).
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  packages: 'external',
  logLevel: 'warning',
};

await build({ ...common, entryPoints: { gateway: 'src/gateway/main.ts', engine: 'src/engine/main.ts' }, outdir: 'dist' });
