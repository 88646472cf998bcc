// Data transfer stubs (spec §4.11), project- and location-scoped.
import type { FastifyInstance } from 'fastify';
import { notFound, notImplemented } from '../errors.js';

export function registerTransfer(app: FastifyInstance): void {
  for (const scope of ['/v1/projects/:projectId', '/v1/projects/:projectId/locations/:location']) {
    app.get(`${scope}/dataSources`, async () => ({ dataSources: [] }));
    app.get<{ Params: { dataSourceId: string } }>(`${scope}/dataSources/:dataSourceId`, async (req) => {
      throw notFound(`Not found: Data source ${req.params.dataSourceId}`);
    });
    app.get(`${scope}/transferConfigs`, async () => ({ transferConfigs: [] }));
    app.get<{ Params: { configId: string } }>(`${scope}/transferConfigs/:configId`, async (req) => {
      throw notFound(`Not found: Transfer config ${req.params.configId}`);
    });
    app.post(`${scope}/transferConfigs`, async () => {
      throw notImplemented('Creating transfer configs is not supported by the emulator');
    });
  }
}
