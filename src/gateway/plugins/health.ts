// GET / and /healthz: answered by the gateway alone (no engine round trip), so
// they stay fast while the engine is busy. They say `ok` only while the engine
// serves (spec §1.1: never while none does); otherwise 503 with the engine's
// state. A browser's `GET /` (it asks for HTML) is sent to the web console when
// it is served.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EngineSupervisor } from '../supervisor.js';
import { CONSOLE_PATH, wantsConsole } from './console.js';

export const SERVICE_NAME = 'warehouse-emulator';

export function registerHealth(app: FastifyInstance, supervisor: EngineSupervisor | undefined, consoleServed = false): void {
  const handler = async (_req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    if (!supervisor || supervisor.state === 'serving') return { service: SERVICE_NAME, status: 'ok' };
    return reply.code(503).send({ service: SERVICE_NAME, status: supervisor.state, message: `The service is currently unavailable: ${supervisor.downReason}` });
  };
  app.get('/', consoleServed ? async (req, reply) => (wantsConsole(req) ? reply.redirect(CONSOLE_PATH) : handler(req, reply)) : handler);
  app.get('/healthz', handler);
}
