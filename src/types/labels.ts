// Label keys and values (labels page; jobs/query.md `labels`): at most 63 characters of lowercase letters, digits,
// underscores and dashes (international characters allowed); a key is not empty and starts with a lowercase or
// international letter. One rule for DDL OPTIONS(labels=...) and the REST job labels.
export const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
export const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;

/** Why a label is refused, in the words both callers use; undefined when it is fine. */
export function labelError(key: string, value: string): string | undefined {
  if (!LABEL_KEY.test(key)) return `Invalid label key "${key}": a key starts with a lowercase letter and holds at most 63 lowercase letters, digits, underscores and dashes`;
  if (!LABEL_VALUE.test(value)) return `Invalid label value "${value}" of key "${key}": a value holds at most 63 lowercase letters, digits, underscores and dashes`;
  return undefined;
}
