// Values printed as text: FORMAT's %t (plain) and %T (SQL literal) forms.
import type { SqlType } from '../types/types.js';
import { Decimal, Interval, JsonValue, RangeValue, type Value } from '../types/values.js';
import { formatDate, formatDatetime, formatTime, formatTimestamp } from './civil.js';
import { formatDouble } from './format-number.js';
import { formatInterval } from './interval.js';
import { formatTimestampPicos } from './timestamp-picos.js';
import { formatDecimal } from './numeric.js';
import { jsonToString } from './json-core.js';

export function escapeString(s: string, quote = '"'): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote) out += '\\' + quote;
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out;
}

export function escapeBytes(b: Uint8Array, quote = '"'): string {
  let out = '';
  for (const c of b) {
    const ch = String.fromCharCode(c);
    if (ch === quote) out += '\\' + quote;
    else if (ch === '\\') out += '\\\\';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c < 0x20 || c >= 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out;
}

/** A quoted literal's quote: single only when the text holds a double quote and no single quote (as the reference prints literals). */
function quoteFor(text: string): string {
  return text.includes('"') && !text.includes("'") ? "'" : '"';
}

function stringLiteral(s: string): string {
  const q = quoteFor(s);
  return q + escapeString(s, q) + q;
}

/** %t (literal=false) and %T (literal=true) renderings. */
export function formatValueLiteral(v: Value, t: SqlType, literal: boolean, floatPoint = false): string {
  if (v === null) return 'NULL';
  switch (t.kind) {
    case 'STRING':
      return literal ? stringLiteral(v as string) : (v as string);
    case 'BYTES': {
      if (!literal) return escapeBytes(v as Uint8Array, '');
      const q = quoteFor(Buffer.from(v as Uint8Array).toString('latin1'));
      return `b${q}${escapeBytes(v as Uint8Array, q)}${q}`;
    }
    case 'INT64':
      return (v as bigint).toString();
    case 'BOOL':
      return v ? 'true' : 'false';
    case 'FLOAT64': {
      const x = v as number;
      if (literal) {
        if (Number.isNaN(x)) return 'CAST("nan" AS FLOAT64)';
        if (!Number.isFinite(x)) return `CAST("${x > 0 ? 'inf' : '-inf'}" AS FLOAT64)`;
        const s = formatDouble(x);
        return /[.e]/.test(s) ? s : s + '.0';
      }
      const s = formatDouble(x);
      // FORMAT's %t shows a whole float with a fraction (2.0), as %T does; CONTAINS_SUBSTR's text does not.
      return floatPoint && /^-?\d+$/.test(s) ? s + '.0' : s;
    }
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return literal ? `${t.kind} "${formatDecimal(v as Decimal)}"` : formatDecimal(v as Decimal);
    case 'DATE':
      return literal ? `DATE "${formatDate(v as number)}"` : formatDate(v as number);
    case 'TIME':
      return literal ? `TIME "${formatTime(v as number)}"` : formatTime(v as number);
    case 'DATETIME':
      return literal ? `DATETIME "${formatDatetime(v as bigint)}"` : formatDatetime(v as bigint);
    case 'TIMESTAMP': {
      const s = formatTimestamp(v as bigint, 'UTC');
      return literal ? `TIMESTAMP "${s}"` : s;
    }
    case 'TIMESTAMP_PICOS': {
      // %T: a literal that reads back as TIMESTAMP(12) (a TIMESTAMP literal holds six digits).
      const s = formatTimestampPicos(v as bigint, 'UTC');
      return literal ? `CAST("${s}" AS TIMESTAMP(12))` : s;
    }
    case 'INTERVAL':
      return literal ? `INTERVAL "${formatInterval(v as Interval)}" YEAR TO SECOND` : formatInterval(v as Interval);
    case 'JSON':
      return literal ? `JSON ${stringLiteral(jsonToString((v as JsonValue).node))}` : jsonToString((v as JsonValue).node);
    case 'ARRAY': {
      const inner = (v as Value[]).map((e) => formatValueLiteral(e, t.element, literal, floatPoint)).join(', ');
      return `[${inner}]`;
    }
    case 'STRUCT': {
      const inner = (v as Value[]).map((e, i) => formatValueLiteral(e, t.fields[i]!.type, literal, floatPoint)).join(', ');
      // As a literal, a struct of one field or none needs its keyword: (x) and () aren't structs.
      return t.fields.length <= 1 && literal ? `STRUCT(${inner})` : `(${inner})`;
    }
    case 'RANGE': {
      const r = v as RangeValue;
      const f = (x: Value) => (x === null ? 'UNBOUNDED' : formatValueLiteral(x, t.element, false));
      const s = `[${f(r.start)}, ${f(r.end)})`;
      return literal ? `RANGE<${t.element.kind}> "${s}"` : s;
    }
    case 'GEOGRAPHY':
      return String((v as { wkt?: string }).wkt ?? '');
  }
  return String(v);
}
