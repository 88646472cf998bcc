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

/** One table of a seed file, whichever format it came in. */
interface SeedTable {
  id: string;
  schema?: SeedField[];
  rows: unknown[];
  /** Further REST table fields (goccy's `metadata`, `view`). */
  resource: Json;
  /** goccy's loader creates or replaces its tables at every start; spec seed files keep an existing table (rows are appended). */
  replace: boolean;
}

interface SeedDataset {
  projectId: string;
  datasetId: string;
  location: string;
  tables: SeedTable[];
}

/** Type names goccy/bigquery-emulator accepts beyond the REST ones (GoogleSQL aliases). */
const TYPE_ALIASES: Record<string, string> = {
  INT: 'INTEGER', SMALLINT: 'INTEGER', BIGINT: 'INTEGER', TINYINT: 'INTEGER', BYTEINT: 'INTEGER',
  DECIMAL: 'NUMERIC', BIGDECIMAL: 'BIGNUMERIC', DOUBLE: 'FLOAT',
};

function restSchema(fields: unknown, where: string): SeedField[] {
  if (!Array.isArray(fields)) throw new Error(`${where}: schema must be a list of fields`);
  return fields.map((f, i) => {
    if (!isObj(f) || !str(f['name']) || !str(f['type'])) throw new Error(`${where}: schema field #${i + 1} needs name and type`);
    const type = str(f['type'])!.toUpperCase();
    const out: SeedField = { name: str(f['name'])!, type: TYPE_ALIASES[type] ?? type };
    if (str(f['mode'])) out.mode = str(f['mode'])!.toUpperCase();
    if (f['fields'] !== undefined) out.fields = restSchema(f['fields'], `${where}.${out.name}`);
    return out;
  });
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The spec's format (§1.3.1): `datasets:` at the top, project and location with precedence dataset > file > flag. */
function specDatasets(doc: Json, file: string, config: GatewayContext['config']): SeedDataset[] {
  const fileProject = str(doc['project_id']) ?? '';
  const fileLocation = str(doc['location']) ?? '';
  return list(doc['datasets']).map((ds) => {
    if (!isObj(ds) || !str(ds['id'])) throw new Error(`seed file ${file}: every dataset needs an id`);
    const datasetId = str(ds['id'])!;
    const projectId = str(ds['project_id']) || fileProject || config.projectId;
    if (!projectId) {
      throw new Error(`seed file ${file}: dataset ${datasetId} has no project (set project_id on the dataset or the file, or pass --project-id)`);
    }
    const tables = list(ds['tables']).map((t): SeedTable => {
      if (!isObj(t) || !str(t['id'])) throw new Error(`seed file ${file}: dataset ${datasetId}: every table needs an id`);
      const where = `seed file ${file}: table ${projectId}:${datasetId}.${str(t['id'])}`;
      return { id: str(t['id'])!, rows: list(t['rows']), resource: {}, replace: false, ...(t['schema'] !== undefined ? { schema: restSchema(t['schema'], where) } : {}) };
    });
    return { projectId, datasetId, location: str(ds['location']) || fileLocation || config.defaultDatasetLocation, tables };
  });
}

/**
 * goccy/bigquery-emulator's format (`--data-from-yaml`): `projects:` at the
 * top, each with `datasets`, tables with `columns` (its type aliases, modes
 * in any case), `data` rows, an optional `view: {query, useLegacySql}` and
 * `metadata` (REST table fields). Its loader replaces each table at start-up,
 * and so does this one for such files. Models, routines and jobs are skipped
 * with a warning.
 */
function goccyDatasets(doc: Json, file: string, config: GatewayContext['config'], log: (m: string) => void): SeedDataset[] {
  const out: SeedDataset[] = [];
  for (const p of list(doc['projects'])) {
    if (!isObj(p) || !str(p['id'])) throw new Error(`seed file ${file}: every project needs an id`);
    const projectId = str(p['id'])!;
    if (list(p['jobs']).length) log(`warning: seed file ${file}: project ${projectId}: jobs are not loaded (job history is not seeded)`);
    for (const ds of list(p['datasets'])) {
      if (!isObj(ds) || !str(ds['id'])) throw new Error(`seed file ${file}: project ${projectId}: every dataset needs an id`);
      const datasetId = str(ds['id'])!;
      for (const k of ['models', 'routines']) {
        if (list(ds[k]).length) log(`warning: seed file ${file}: dataset ${projectId}:${datasetId}: ${k} are not loaded (create them with DDL after start-up)`);
      }
      const tables = list(ds['tables']).map((t): SeedTable => {
        if (!isObj(t) || !str(t['id'])) throw new Error(`seed file ${file}: dataset ${projectId}:${datasetId}: every table needs an id`);
        const where = `seed file ${file}: table ${projectId}:${datasetId}.${str(t['id'])}`;
        const resource: Json = isObj(t['metadata']) ? { ...t['metadata'] } : {};
        const view = t['view'];
        if (isObj(view) && str(view['query'])) resource['view'] = { query: str(view['query']), useLegacySql: view['useLegacySql'] === true };
        const columns = t['columns'] ?? (isObj(resource['schema']) ? resource['schema']['fields'] : undefined);
        delete resource['schema'];
        return { id: str(t['id'])!, rows: list(t['data']), resource, replace: true, ...(columns !== undefined ? { schema: restSchema(columns, where) } : {}) };
      });
      out.push({ projectId, datasetId, location: config.defaultDatasetLocation, tables });
    }
  }
  return out;
}

const isAlreadyExists = (e: unknown): boolean => e instanceof RestError && e.code === 409;
const isNotFound = (e: unknown): boolean => e instanceof RestError && e.code === 404;

/** Applies every --seed-data-file in order; throws (startup failure) with a message naming the culprit. */
export async function applySeedFiles(ctx: GatewayContext): Promise<void> {
  for (const file of ctx.config.seedDataFiles) {
    let doc: unknown;
    try {
      doc = (await import('yaml')).parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new Error(`seed file ${file}: ${(e as Error).message}`);
    }
    let datasets: SeedDataset[];
    if (isObj(doc) && Array.isArray(doc['projects'])) datasets = goccyDatasets(doc, file, ctx.config, ctx.log);
    else if (isObj(doc) && Array.isArray(doc['datasets'])) datasets = specDatasets(doc, file, ctx.config);
    else throw new Error(`seed file ${file}: a top-level "datasets" list (or goccy/bigquery-emulator's "projects" list) is required`);
    for (const ds of datasets) await applyDataset(ctx, file, ds);
  }
}

async function applyDataset(ctx: GatewayContext, file: string, ds: SeedDataset): Promise<void> {
  const { projectId, datasetId } = ds;
  const dsBody: Json = { datasetReference: { projectId, datasetId } };
  if (ds.location) dsBody['location'] = ds.location;
  try {
    await ctx.call('InsertDataset', { project_id: projectId, dataset_id: datasetId, resource_json: JSON.stringify(dsBody) });
  } catch (e) {
    if (!isAlreadyExists(e)) throw new Error(`seed file ${file}: dataset ${projectId}:${datasetId}: ${(e as Error).message}`);
  }
  for (const t of ds.tables) {
    const tableId = t.id;
    const where = `seed file ${file}: table ${projectId}:${datasetId}.${tableId}`;
    const ref = { project_id: projectId, dataset_id: datasetId, table_id: tableId };
    if (t.rows.length && t.schema === undefined) throw new Error(`${where}: a schema is required when the table has rows`);
    const tBody: Json = { ...t.resource, tableReference: { projectId, datasetId, tableId } };
    if (t.schema !== undefined) tBody['schema'] = { fields: t.schema };
    try {
      if (t.replace) await ctx.call('DeleteTable', ref).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
      await ctx.call('InsertTable', { ...ref, resource_json: JSON.stringify(tBody) });
    } catch (e) {
      if (!isAlreadyExists(e)) throw new Error(`${where}: ${(e as Error).message}`);
    }
    if (!t.rows.length) continue;
    // Unknown keys are dropped like insertAll does (ignore_unknown_values).
    const reply = await ctx.call('InsertRows', {
      table: ref,
      rows_json: JSON.stringify(t.rows.map((r) => ({ json: isObj(r) ? r : {} }))),
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
