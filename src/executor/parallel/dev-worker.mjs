// Starts the execution worker from TypeScript sources (tests, `node --import tsx`):
// the built engine starts dist/exec-worker.js instead (see pool.ts).
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
