// Where the package lives (dist/ bundle or src/ under tsx): found from this
// file upwards by proto/engine.proto. Kept free of heavy imports: the start-up
// path uses it before gRPC and Fastify are loaded.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'proto', 'engine.proto'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error('proto/engine.proto not found above ' + fileURLToPath(import.meta.url));
}
