// Job locations (the service's regions and multi-regions): where a job runs,
// how a lookup names it, and where a load/copy/extract job runs. Queries are
// located by the engine (src/engine/location.ts), which knows what they read.
import type { GatewayContext } from '../context.js';
import type { TableRef } from '../engine-client.js';
import { RestError } from '../errors.js';
import { isObj, str, type Json } from '../validate.js';
import { refText } from './data-jobs.js';

/** Where a job runs when neither the client nor a dataset says. */
export const DEFAULT_LOCATION = 'US';

/** Location names compare case-insensitively (`us` = `US`). */
export function sameLocation(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * Whether a job in `jobLocation` is the one a lookup (jobs.get, cancel,
 * getQueryResults, delete) names with `?location=`: the same location, or,
 * without one, a job in the US or EU multi-region (the service requires the
 * location for every other one).
 */
export function jobInLocation(jobLocation: string, requested: string | undefined): boolean {
  if (!requested) return sameLocation(jobLocation, 'US') || sameLocation(jobLocation, 'EU');
  return sameLocation(jobLocation, requested);
}

/**
 * Where a load, copy or extract job runs: the location the client named,
 * else that of the first dataset it touches (sources, then the
 * destination). Every dataset it touches must be there: one elsewhere is not
 * found in the job's location (404 on the insert, as the service answers).
 */
export async function dataJobLocation(ctx: GatewayContext, projectId: string, which: 'load' | 'copy' | 'extract', cfg: Json, requested: string): Promise<string> {
  const refs: { ref: TableRef; whole: boolean }[] = [];
  const add = (v: unknown, whole: boolean): void => {
    if (isObj(v) && str(v['datasetId'])) refs.push({ ref: { project_id: str(v['projectId']) || projectId, dataset_id: str(v['datasetId'])!, table_id: str(v['tableId']) ?? '' }, whole });
  };
  if (which === 'copy') for (const s of Array.isArray(cfg['sourceTables']) ? cfg['sourceTables'] : [cfg['sourceTable']]) add(s, false);
  if (which === 'extract') add(cfg['sourceTable'] ?? cfg['sourceModel'], false);
  if (which !== 'extract') add(cfg['destinationTable'], true);
  let location = requested;
  for (const { ref, whole } of refs) {
    let resource: Json;
    try {
      resource = JSON.parse((await ctx.call('GetDataset', { project_id: ref.project_id, dataset_id: ref.dataset_id })).resource_json) as Json;
    } catch (e) {
      if (e instanceof RestError && e.code === 404) continue; // the job reports the missing dataset itself
      throw e;
    }
    const here = str(resource['location']) ?? DEFAULT_LOCATION;
    if (!location) location = here;
    else if (which === 'copy' && whole && !sameLocation(here, location) && (await crossRegionCopy(ctx, cfg, ref))) continue;
    else if (!sameLocation(here, location)) {
      const what = whole || !ref.table_id ? `Dataset ${ref.project_id}:${ref.dataset_id}` : `Table ${refText(ref)}`;
      throw new RestError(404, 'notFound', `Not found: ${what} was not found in location ${location}`);
    }
  }
  return location || DEFAULT_LOCATION;
}


/**
 * Whether a copy's destination may be in another region than its source (managing-tables.md, Copy tables across
 * regions): a plain copy (operationType COPY) of one whole table, not appended (WRITE_APPEND), and WRITE_EMPTY only
 * onto a table that does not exist. One that breaks those rules is refused; snapshots, clones and restores
 * (operationType) and partition decorators stay in one location (false: the caller's not-found error).
 */
async function crossRegionCopy(ctx: GatewayContext, cfg: Json, dest: TableRef): Promise<boolean> {
  const op = (str(cfg['operationType']) ?? 'COPY').toUpperCase();
  const sources = Array.isArray(cfg['sourceTables']) && cfg['sourceTables'].length ? (cfg['sourceTables'] as unknown[]) : [cfg['sourceTable']];
  const decorated = [...sources, cfg['destinationTable']].some((r) => isObj(r) && /[$@]/.test(str(r['tableId']) ?? ''));
  if (op !== 'COPY' || decorated) return false;
  if (sources.length > 1) throw new RestError(400, 'invalid', 'Cross-region copies cannot copy multiple source tables into a single destination table');
  const write = (str(cfg['writeDisposition']) ?? 'WRITE_EMPTY').toUpperCase();
  if (write === 'WRITE_APPEND') throw new RestError(400, 'invalid', 'Cross-region copies cannot append to the destination table (WRITE_APPEND)');
  if (write === 'WRITE_EMPTY') {
    const exists = await ctx.call('GetTable', { project_id: dest.project_id, dataset_id: dest.dataset_id, table_id: dest.table_id }).then(
      () => true,
      (e: unknown) => {
        if (e instanceof RestError && e.code === 404) return false;
        throw e;
      },
    );
    if (exists) throw new RestError(409, 'duplicate', `Already Exists: Table ${refText(dest)}: a cross-region copy with WRITE_EMPTY needs a destination that does not exist`);
  }
  return true;
}
