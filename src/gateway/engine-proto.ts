// The Engine service's definition (proto/engine.proto), loaded once for both
// transports to the engine: gRPC (engine-client.ts) and the own engine's local
// socket (engine-local.ts). Options: snake_case fields, int64 as numbers,
// enums as names, defaults filled.
import { join } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { packageRoot } from './paths.js';

let loaded: protoLoader.PackageDefinition | undefined;

export function engineProto(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(join(packageRoot(), 'proto', 'engine.proto'), {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return loaded;
}
