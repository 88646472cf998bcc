// What the editor's completion knows of the catalog: datasets, tables and
// their columns, fetched through the REST API on first need and cached until
// the explorer changes something (invalidate).
import { api, enc, type DatasetListItem, type FieldSchema, type Table, type TableListItem } from './api.js';

export interface TableEntry { name: string; type: string }

export class Catalog {
  private cache = new Map<string, Promise<unknown>>();

  constructor(public project: string) {}

  invalidate(): void {
    this.cache.clear();
  }

  private cached<T>(key: string, load: () => Promise<T>, empty: T): Promise<T> {
    let p = this.cache.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load().catch(() => empty);
      this.cache.set(key, p);
    }
    return p;
  }

  datasets(project = this.project): Promise<string[]> {
    return this.cached(`d:${project}`, async () => {
      const r = await api<{ datasets?: DatasetListItem[] }>('GET', `/projects/${enc(project)}/datasets`, { query: { maxResults: 1000 } });
      return (r.datasets ?? []).map((d) => d.datasetReference.datasetId);
    }, []);
  }

  /** [dataset] or [project, dataset]. */
  tables(path: string[]): Promise<TableEntry[]> {
    const [project, dataset] = path.length === 1 ? [this.project, path[0]!] : [path[0]!, path[1]!];
    return this.cached(`t:${project}.${dataset}`, async () => {
      const r = await api<{ tables?: TableListItem[] }>('GET', `/projects/${enc(project)}/datasets/${enc(dataset)}/tables`, { query: { maxResults: 1000 } });
      return (r.tables ?? []).map((x) => ({ name: x.tableReference.tableId, type: x.type ?? 'TABLE' }));
    }, []);
  }

  /** [dataset, table] or [project, dataset, table]: the top-level columns. */
  columns(path: string[]): Promise<FieldSchema[]> {
    if (path.length < 2) return Promise.resolve([]);
    const [project, dataset, table] = path.length === 2 ? [this.project, path[0]!, path[1]!] : [path[0]!, path[1]!, path[2]!];
    return this.cached(`c:${project}.${dataset}.${table}`, async () => {
      const t = await api<Table>('GET', `/projects/${enc(project)}/datasets/${enc(dataset)}/tables/${enc(table)}`);
      return t.schema?.fields ?? [];
    }, []);
  }
}
