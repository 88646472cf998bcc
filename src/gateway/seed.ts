// Startup seeding (spec §1.3.1, §1.3.2): the initial-data template copy and
// YAML seed files, applied through the same engine RPCs the REST handlers use.
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayContext } from './context.js';
import { RestError } from './errors.js';
import { isObj, str, type Json } from './validate.js';

/** Copies the template into the data dir unless the data dir already holds a catalog. */
export function applyInitialDataDir(template: string | undefined, dataDir: string, log: (m: string) => void): void {
  if (!template) return;
  if (existsSync(join(dataDir, 'catalog.store'))) {
    log(`initial data dir ${template} skipped: ${dataDir} is already initialized (catalog.store exists)`);
    return;
  }
  if (!existsSync(template)) throw new Error(`--initial-data-dir ${template} does not exist`);
  cpSync(template, dataDir, { recursive: true, force: false, errorOnExist: false });
  log(`initial data dir ${template} copied into ${dataDir}`);
}

/** Old single-file databases are not loaded; say so instead of silently starting empty. */
export function strayDbWarning(dataDir: string): string | undefined {
  if (!existsSync(dataDir) || existsSync(join(dataDir, 'catalog.store'))) return undefined;
  const dbs = readdirSync(dataDir).filter((f) => f.endsWith('.db'));
  if (!dbs.length) return undefined;
  return `data dir ${dataDir} holds ${dbs.join(', ')} but no catalog.store: data in the old single-file format is not loaded`;
}

interface SeedField { name: string; type: string; mode?: string; fields?: SeedField[] }

function restSchema(fields: unknown, where: string): SeedField[] {
  if (!Array.isArray(fields)) throw new Error(`${where}: schema must be a list of fields`);
  return fields.map((f, i) => {
    if (!isObj(f) || !str(f['name']) || !str(f['type'])) throw new Error(`${where}: schema field #${i + 1} needs name and type`);
    const out: SeedField = { name: str(f['name'])!, type: str(f['type'])!.toUpperCase() };
    if (str(f['mode'])) out.mode = str(f['mode'])!.toUpperCase();
    if (f['fields'] !== undefined) out.fields = restSchema(f['fields'], `${where}.${out.name}`);
    return out;
  });
}

const isAlreadyExists = (e: unknown): boolean => e instanceof RestError && e.code === 409;

/** Applies every --seed-data-file in order; throws (startup failure) with a message naming the culprit. */
export async function applySeedFiles(ctx: GatewayContext): Promise<void> {
  for (const file of ctx.config.seedDataFiles) {
    let doc: unknown;
    try {
      doc = (await import('yaml')).parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new Error(`seed file ${file}: ${(e as Error).message}`);
    }
    if (!isObj(doc) || !Array.isArray(doc['datasets'])) throw new Error(`seed file ${file}: a top-level "datasets" list is required`);
    const fileProject = str(doc['project_id']) ?? '';
    const fileLocation = str(doc['location']) ?? '';
    for (const ds of doc['datasets'] as unknown[]) {
      if (!isObj(ds) || !str(ds['id'])) throw new Error(`seed file ${file}: every dataset needs an id`);
      const datasetId = str(ds['id'])!;
      const projectId = str(ds['project_id']) || fileProject || ctx.config.projectId;
      if (!projectId) {
        throw new Error(`seed file ${file}: dataset ${datasetId} has no project (set project_id on the dataset or the file, or pass --project-id)`);
      }
      const location = str(ds['location']) || fileLocation || ctx.config.defaultDatasetLocation;
      const dsBody: Json = { datasetReference: { projectId, datasetId } };
      if (location) dsBody['location'] = location;
      try {
        await ctx.call('InsertDataset', { project_id: projectId, dataset_id: datasetId, resource_json: JSON.stringify(dsBody) });
      } catch (e) {
        if (!isAlreadyExists(e)) throw new Error(`seed file ${file}: dataset ${projectId}:${datasetId}: ${(e as Error).message}`);
      }
      const tables = Array.isArray(ds['tables']) ? (ds['tables'] as unknown[]) : [];
      for (const t of tables) {
        if (!isObj(t) || !str(t['id'])) throw new Error(`seed file ${file}: dataset ${datasetId}: every table needs an id`);
        const tableId = str(t['id'])!;
        const where = `seed file ${file}: table ${projectId}:${datasetId}.${tableId}`;
        const rows = Array.isArray(t['rows']) ? (t['rows'] as unknown[]) : [];
        if (rows.length && t['schema'] === undefined) throw new Error(`${where}: a schema is required when the table has rows`);
        const tBody: Json = { tableReference: { projectId, datasetId, tableId } };
        if (t['schema'] !== undefined) tBody['schema'] = { fields: restSchema(t['schema'], where) };
        try {
          await ctx.call('InsertTable', { project_id: projectId, dataset_id: datasetId, table_id: tableId, resource_json: JSON.stringify(tBody) });
        } catch (e) {
          if (!isAlreadyExists(e)) throw new Error(`${where}: ${(e as Error).message}`);
        }
        if (!rows.length) continue;
        // Unknown keys are dropped like insertAll does (ignore_unknown_values).
        const reply = await ctx.call('InsertRows', {
          table: { project_id: projectId, dataset_id: datasetId, table_id: tableId },
          rows_json: JSON.stringify(rows.map((r) => ({ json: isObj(r) ? r : {} }))),
          skip_invalid_rows: false,
          ignore_unknown_values: true,
          template_suffix: '',
        }).catch((e: Error) => {
          throw new Error(`${where}: ${e.message}`);
        });
        if (reply.insert_errors_json && reply.insert_errors_json !== '[]') {
          throw new Error(`${where}: rows rejected: ${reply.insert_errors_json.slice(0, 500)}`);
        }
      }
    }
  }
}
