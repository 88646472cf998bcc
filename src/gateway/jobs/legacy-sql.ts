// useLegacySql handling (spec §1.6.3) without parsing SQL: a lexical scan that
// skips string literals, quoted identifiers and comments, rewrites bracket
// table references to backtick paths and rejects the legacy constructs it can
// recognise by their words. The engine always runs standard SQL.
import { invalidQuery } from '../errors.js';

const LEGACY_FUNCTIONS = new Set([
  'TABLE_DATE_RANGE', 'TABLE_DATE_RANGE_STRICT', 'TABLE_QUERY', 'FLATTEN', 'NEST', 'INTEGER', 'NOW',
  'FORMAT_UTC_USEC', 'PARSE_UTC_USEC', 'UTC_USEC_TO_DAY', 'UTC_USEC_TO_HOUR', 'UTC_USEC_TO_MONTH', 'UTC_USEC_TO_WEEK',
  'UTC_USEC_TO_YEAR', 'SEC_TO_TIMESTAMP', 'TIMESTAMP_TO_SEC', 'MSEC_TO_TIMESTAMP', 'TIMESTAMP_TO_MSEC', 'USEC_TO_TIMESTAMP',
  'TIMESTAMP_TO_USEC', 'STRFTIME_UTC_USEC', 'REGEXP_MATCH', 'EXACT_COUNT_DISTINCT', 'GROUP_CONCAT', 'GROUP_CONCAT_UNQUOTED',
  'IS_EXPLICITLY_DEFINED', 'NTH', 'QUANTILES', 'TOP', 'DATEDIFF', 'HASH',
]);
/** Two-word legacy clauses: first word -> second word. */
const LEGACY_PAIRS: [string, string][] = [['GROUP', 'EACH'], ['JOIN', 'EACH'], ['WITHIN', 'RECORD'], ['OMIT', 'RECORD'], ['IGNORE', 'CASE']];
const FROM_LIST_ENDERS = new Set(['WHERE', 'GROUP', 'ORDER', 'HAVING', 'LIMIT', 'SELECT', 'UNION', 'ON', 'USING', 'WINDOW', 'QUALIFY', 'INTERSECT', 'EXCEPT']);
const TABLE_REF = /^(?:[A-Za-z0-9][\w.-]*(?::[\w-]+)*[:.])?[A-Za-z_][\w-]*\.[\p{L}\p{N}_\-$@*]+$/u;

function legacyError(construct: string): Error {
  return invalidQuery(
    `Legacy SQL construct ${construct} is not supported: the emulator runs standard SQL only. Rewrite the query in standard SQL and set useLegacySql to false.`,
  );
}

/** Leading `#legacySQL` / `#standardSQL` dialect comment, if any. */
export function dialectPrefix(sql: string): 'legacy' | 'standard' | undefined {
  const m = /^\s*#\s*(legacySQL|standardSQL)\b/i.exec(sql);
  if (!m) return undefined;
  return m[1]!.toLowerCase() === 'legacysql' ? 'legacy' : 'standard';
}

/**
 * Returns the query text the engine runs. `useLegacySql` is the request's
 * value; unset is standard SQL as false is (spec §1.6.3): only true rewrites
 * bracket references and rejects the legacy constructs.
 */
export function prepareQueryText(sql: string, useLegacySql: boolean | undefined): string {
  const prefix = dialectPrefix(sql);
  if (prefix === 'legacy' && useLegacySql === false) {
    throw invalidQuery('Query text specifies use_legacy_sql:true, while API options specify:false');
  }
  if (prefix === 'standard' && useLegacySql === true) {
    // The real service honours the prefix only when the option is unset.
    throw invalidQuery('Query text specifies use_legacy_sql:false, while API options specify:true');
  }
  if (prefix === 'legacy') throw legacyError('#legacySQL');
  const legacy = useLegacySql === true;
  return legacy ? rewriteLegacy(sql) : sql;
}

/** Bracket refs -> backticks; legacy-only words -> invalidQuery. Exported for tests. */
export function rewriteLegacy(sql: string): string {
  let out = '';
  let i = 0;
  const n = sql.length;
  let prevWord = '';
  let prevSig = ''; // last significant token (word upper-cased or punctuation)
  let inFromList = false;
  while (i < n) {
    const c = sql[i]!;
    const c2 = sql.slice(i, i + 2);
    // comments
    if (c2 === '--' || c === '#') {
      const end = sql.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      out += sql.slice(i, stop);
      i = stop;
      continue;
    }
    if (c2 === '/*') {
      const end = sql.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out += sql.slice(i, stop);
      i = stop;
      continue;
    }
    // string literals and quoted identifiers (triple-quoted too)
    if (c === "'" || c === '"' || c === '`') {
      const triple = c !== '`' && sql.slice(i, i + 3) === c.repeat(3);
      const q = triple ? c.repeat(3) : c;
      let j = i + q.length;
      while (j < n) {
        if (sql[j] === '\\') {
          j += 2;
          continue;
        }
        if (sql.startsWith(q, j)) {
          j += q.length;
          break;
        }
        j++;
      }
      out += sql.slice(i, j);
      i = j;
      prevSig = c === '`' ? 'IDENT' : 'LITERAL';
      continue;
    }
    if (c === '[') {
      const close = sql.indexOf(']', i + 1);
      const inner = close > 0 ? sql.slice(i + 1, close).trim() : '';
      const afterFrom = prevSig === 'FROM' || prevSig === 'JOIN' || (prevSig === ',' && inFromList);
      if (close > 0 && afterFrom && TABLE_REF.test(inner)) {
        const colon = inner.lastIndexOf(':');
        const path = colon >= 0 ? inner.slice(0, colon) + '.' + inner.slice(colon + 1) : inner;
        out += '`' + path + '`';
        i = close + 1;
        prevSig = 'IDENT';
        continue;
      }
      out += c;
      i++;
      prevSig = '[';
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /\w/.test(sql[j]!)) j++;
      const word = sql.slice(i, j);
      const upper = word.toUpperCase();
      for (const [a, b] of LEGACY_PAIRS) if (prevWord === a && upper === b) throw legacyError(`${a} ${b}`);
      if (LEGACY_FUNCTIONS.has(upper)) {
        let k = j;
        while (k < n && /\s/.test(sql[k]!)) k++;
        if (sql[k] === '(' && prevSig !== '.') throw legacyError(`${upper}()`);
      }
      if (upper === 'CONTAINS' && (prevSig === 'IDENT' || prevSig === 'WORD')) throw legacyError('CONTAINS');
      if (upper === 'FROM' || upper === 'JOIN') inFromList = true;
      else if (FROM_LIST_ENDERS.has(upper)) inFromList = false;
      out += word;
      i = j;
      prevWord = upper;
      prevSig = upper === 'FROM' || upper === 'JOIN' ? upper : 'WORD';
      continue;
    }
    if (!/\s/.test(c)) prevSig = c;
    out += c;
    i++;
  }
  return out;
}
