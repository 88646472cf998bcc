// Data transfer stubs (spec §4.11), project- and location-scoped: no data sources
// and no transfer configs exist, so reads are empty lists or 404s and the calls
// that would start one (create, the credential check bq makes first, manual runs)
// answer 501.
import type { FastifyInstance } from 'fastify';
import { notFound, notImplemented } from '../errors.js';

const UNSUPPORTED = 'Creating transfer configs is not supported by the emulator';

export function registerTransfer(app: FastifyInstance): void {
  for (const scope of ['/v1/projects/:projectId', '/v1/projects/:projectId/locations/:location']) {
    app.get(`${scope}/dataSources`, async () => ({ dataSources: [] }));
    app.get<{ Params: { dataSourceId: string } }>(`${scope}/dataSources/:dataSourceId`, async (req) => {
      throw notFound(`Not found: Data source ${req.params.dataSourceId}`);
    });
    // `{dataSourceId}:checkValidCreds`: bq mk --transfer_config asks before it creates.
    app.post(`${scope}/dataSources/:dataSourceId`, async () => {
      throw notImplemented(UNSUPPORTED);
    });
    app.get(`${scope}/transferConfigs`, async () => ({ transferConfigs: [] }));
    app.post(`${scope}/transferConfigs`, async () => {
      throw notImplemented(UNSUPPORTED);
    });
    // A config and everything under it (runs, logs, patch, delete, `:startManualRuns`): none exists.
    app.all<{ Params: { configId: string } }>(`${scope}/transferConfigs/:configId`, async (req) => {
      throw notFound(`Not found: Transfer config ${req.params.configId.split(':')[0]}`);
    });
    app.all<{ Params: { configId: string } }>(`${scope}/transferConfigs/:configId/*`, async (req) => {
      throw notFound(`Not found: Transfer config ${req.params.configId}`);
    });
  }
}
