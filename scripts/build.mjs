// Bundles the two process entry points into dist/ so that start-up does not pay
// for a TypeScript loader (start to healthy is a measured target).
//
// Packages stay external (loaded from node_modules), except chevrotain, the
// grammar's parser library: unbundled, its module graph (lodash-es: hundreds of
// small ESM files) costs ~300 ms to load; bundled it loads in a few tens of ms.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const BUNDLED = /^(chevrotain|@chevrotain\/.*|lodash-es)(\/|$)/;

/** `packages: 'external'`, except for chevrotain and what chevrotain itself imports. */
const externalPackagesExceptChevrotain = {
  name: 'external-packages-except-chevrotain',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      if (BUNDLED.test(args.path)) return undefined; // resolved and bundled by esbuild
      return { path: args.path, external: true };
    });
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  plugins: [externalPackagesExceptChevrotain],
  logLevel: 'warning',
};

// The gateway is split: its entry (CLI, data dir, engine spawn) loads first and
// spawns the engine; gRPC, protobuf and Fastify come in dynamically imported
// chunks afterwards, so engine boot overlaps the gateway's module loading.
for (const f of existsSync('dist') ? readdirSync('dist') : []) if (f.startsWith('gateway-')) rmSync(join('dist', f));
await build({ ...common, entryPoints: { gateway: 'src/gateway/main.ts' }, outdir: 'dist', splitting: true, chunkNames: 'gateway-[name]-[hash]' });
await build({ ...common, entryPoints: { engine: 'src/engine/main.ts' }, outdir: 'dist' });
