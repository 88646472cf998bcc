// GET / and /healthz: answered by the gateway alone (no engine round trip), so
// they stay fast while the engine is busy or restarting.
import type { FastifyInstance } from 'fastify';

export const SERVICE_NAME = 'warehouse-emulator';

export function registerHealth(app: FastifyInstance): void {
  const handler = async (): Promise<{ service: string; status: string }> => ({ service: SERVICE_NAME, status: 'ok' });
  app.get('/', handler);
  app.get('/healthz', handler);
}
