// Where a query job runs (spec §4.5, the real service's locations): a job
// reads and writes only datasets of its own location. One named by the job
// (`jobReference.location`, `?location=`) is fixed; otherwise the first
// dataset the statement touches decides it (as the service infers it) and
// every later one must match. A dataset of another location is not found,
// exactly as a missing one, in the job's location's words.
import type { QueryCatalog, TableId } from '../storage/api.js';
import { notFound } from '../storage/errors.js';

/** The location of a dataset's REST resource (datasets made before locations were kept: the default). */
export function datasetLocation(resource: Record<string, unknown> | undefined, fallback: string): string {
  const l = resource?.['location'];
  return typeof l === 'string' && l ? l : fallback;
}

/** Location names compare case-insensitively (`us` = `US`, `asia-northeast1` = `ASIA-NORTHEAST1`). */
export function sameLocation(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Where a job runs when neither the client nor a dataset says (the service's default). */
export const DEFAULT_JOB_LOCATION = 'US';

/** A catalog as one job sees it (locatedCatalog bound to the job's location). */
export type CatalogView = <C extends QueryCatalog>(cat: C) => C;

export class JobLocation {
  private fixed: boolean;

  /** `requested`: the job's location as the client named it, empty when it did not. */
  constructor(readonly requested: string, fallback: string) {
    this.fixed = requested !== '';
    this.value = requested || fallback;
  }

  /** The job's location: the requested one, the inferred one, or the default when nothing decided it. */
  value: string;

  /** The location the client named or a dataset decided; empty while nothing has (the job then runs in `value`, the default). */
  get resolved(): string {
    return this.fixed ? this.value : '';
  }

  /** Whether the job may touch a dataset in `location` (the first one fixes an inferred job's location). */
  admits(location: string): boolean {
    if (!this.fixed) {
      this.fixed = true;
      this.value = location;
      return true;
    }
    return sameLocation(location, this.value);
  }
}

/**
 * Datasets the engine makes for its own use (`_anon…` results, `_bq_external_temp`,
 * `_bqemu_jobs`, session temp tables) live in every location.
 */
function internal(datasetId: string): boolean {
  return datasetId.startsWith('_');
}


/**
 * The catalog as a job in `loc` sees it: datasets (and their tables) of other
 * locations are absent. Every other member is the catalog's own, bound to it.
 */
export function locatedCatalog<C extends QueryCatalog>(cat: C, loc: JobLocation, fallback: string): C {
  const visible = (projectId: string, datasetId: string): boolean => {
    if (internal(datasetId)) return true;
    const ds = cat.getDataset(projectId, datasetId);
    return !ds || loc.admits(datasetLocation(ds.resource, fallback));
  };
  const overrides: Partial<QueryCatalog> = {
    getDataset: (p, d) => (visible(p, d) ? cat.getDataset(p, d) : undefined),
    listDatasets: (p) => cat.listDatasets(p).filter((d) => internal(d) || sameLocation(datasetLocation(cat.getDataset(p, d)?.resource, fallback), loc.value)),
    getTable: (id: TableId) => (visible(id.projectId, id.datasetId) ? cat.getTable(id) : undefined),
    listTables: (p, d) => (visible(p, d) ? cat.listTables(p, d) : []),
    createTable: (id, columns, opts) => {
      if (!visible(id.projectId, id.datasetId)) throw notFound(`Dataset ${id.projectId}:${id.datasetId} was not found in location ${loc.value}`);
      return cat.createTable(id, columns, opts);
    },
  };
  return new Proxy(cat, {
    get(target, key) {
      const own = (overrides as Record<PropertyKey, unknown>)[key];
      if (own !== undefined) return own;
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
