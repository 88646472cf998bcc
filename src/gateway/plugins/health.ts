// GET / and /healthz: answered by the gateway alone (no engine round trip), so
// they stay fast while the engine is busy or restarting. A browser's `GET /`
// (it asks for HTML) is sent to the web console when it is served.
import type { FastifyInstance } from 'fastify';
import { CONSOLE_PATH, wantsConsole } from './console.js';

export const SERVICE_NAME = 'warehouse-emulator';

export function registerHealth(app: FastifyInstance, consoleServed = false): void {
  const handler = async (): Promise<{ service: string; status: string }> => ({ service: SERVICE_NAME, status: 'ok' });
  app.get('/', consoleServed ? async (req, reply) => (wantsConsole(req) ? reply.redirect(CONSOLE_PATH) : handler()) : handler);
  app.get('/healthz', handler);
}
