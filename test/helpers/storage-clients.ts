// The real @google-cloud/bigquery-storage clients pointed at an emulator's gRPC port: no TLS, the fixed token of
// auth.ts. The gapic clients open their channel on first use, so a test file takes all three and uses what it needs.
import * as grpc from '@grpc/grpc-js';
import { managedwriter, v1 } from '@google-cloud/bigquery-storage';
import { fakeAuth } from './auth.js';
import type { Emulator } from './emulator.js';

export interface StorageClients {
  writer: managedwriter.WriterClient;
  write: v1.BigQueryWriteClient;
  read: v1.BigQueryReadClient;
  close(): Promise<void>;
}

export function storageClients(emu: Emulator, projectId: string): StorageClients {
  const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId };
  const writer = new managedwriter.WriterClient(opts as unknown as ConstructorParameters<typeof managedwriter.WriterClient>[0]);
  const write = new v1.BigQueryWriteClient(opts as unknown as ConstructorParameters<typeof v1.BigQueryWriteClient>[0]);
  const read = new v1.BigQueryReadClient(opts as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0]);
  return {
    writer,
    write,
    read,
    async close() {
      writer.close();
      await write.close();
      await read.close();
    },
  };
}
