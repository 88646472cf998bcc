// Small helpers shared by the RPC families.
import { invalid } from '../storage/errors.js';
import type { Resource } from '../storage/resources.js';

export function parseResource(json: string | undefined): Resource {
  if (!json) return {};
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw invalid('Invalid JSON payload received.');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid('Invalid JSON payload received. Expected an object.');
  return v as Resource;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function obj(v: unknown): Resource | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Resource) : undefined;
}

/** Drops keys whose value is null (the bq CLI sends explicit nulls). */
export function dropNulls(r: Resource): Resource {
  const out: Resource = {};
  for (const [k, v] of Object.entries(r)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/** PATCH semantics: top-level fields replace, null deletes, `labels` merge key by key. */
export function mergePatch(base: Resource, patch: Resource): Resource {
  const out: Resource = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (k === 'labels' && obj(v) && obj(base.labels)) {
      const labels: Resource = { ...(base.labels as Resource) };
      for (const [lk, lv] of Object.entries(v as Resource)) {
        if (lv === null) delete labels[lk];
        else labels[lk] = lv;
      }
      // A map emptied of its last label is left out, as the service does.
      if (Object.keys(labels).length) out.labels = labels;
      else delete out.labels;
    } else out[k] = v;
  }
  return out;
}

export interface Page<T> {
  readonly items: T[];
  readonly next: string;
  readonly total: number;
}

/** Offset pagination: the page token is the decimal index of the next item; any other token is refused. */
export function paginate<T>(all: readonly T[], pageToken: string | undefined, maxResults: number | undefined, def = 50): Page<T> {
  if (pageToken && !/^\d{1,15}$/.test(pageToken)) throw invalid(`Invalid page token: ${pageToken}`);
  const start = pageToken ? parseInt(pageToken, 10) : 0;
  const size = maxResults && maxResults > 0 ? maxResults : def;
  const items = all.slice(start, start + size);
  const next = start + size < all.length ? String(start + size) : '';
  return { items, next, total: all.length };
}
