// Label keys and values (labels page; jobs/query.md `labels`): at most 63 characters of lowercase letters, digits,
// underscores and dashes (international characters allowed); a key is not empty and starts with a lowercase or
// international letter. One rule for DDL OPTIONS(labels=...) and the REST labels of datasets, tables and jobs
// (labels-intro.md, Requirements for labels, which also allows at most 64 labels on a resource).
export const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
export const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;
export const MAX_LABELS = 64;

/** Why a label is refused, in the words both callers use; undefined when it is fine. */
export function labelError(key: string, value: string): string | undefined {
  if (!LABEL_KEY.test(key)) return `Invalid label key "${key}": a key starts with a lowercase letter and holds at most 63 lowercase letters, digits, underscores and dashes`;
  if (!LABEL_VALUE.test(value)) return `Invalid label value "${value}" of key "${key}": a value holds at most 63 lowercase letters, digits, underscores and dashes`;
  return undefined;
}

export function tooManyLabels(n: number): string | undefined {
  return n > MAX_LABELS ? `Too many labels: ${n}; a resource has at most ${MAX_LABELS} labels` : undefined;
}

/** What is wrong with a resource's labels map (REST `labels`), or undefined. */
export function labelsProblem(labels: unknown): string | undefined {
  if (labels === undefined || labels === null || typeof labels !== 'object') return undefined;
  const entries = Object.entries(labels as Record<string, unknown>);
  return tooManyLabels(entries.length) ?? entries.map(([k, v]) => labelError(k, typeof v === 'string' ? v : String(v ?? ''))).find((p) => p !== undefined);
}
