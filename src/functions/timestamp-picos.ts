// TIMESTAMP(12) in SQL (src/types/README.md "Picosecond TIMESTAMP"): its text
// as CAST reads and writes it, in a time zone. Every other conversion goes
// through the microsecond TIMESTAMP (conversion.ts): the extra six digits
// are kept only where the value stays TIMESTAMP(12).
import { formatOffset, formatTimestamp, offsetSecondsAt, parseTimestampString } from './civil.js';
import { PICOS_PER_MICRO, PICOS_PER_SECOND } from '../types/picos.js';

/** A fraction of the seconds, split around its sixth digit (the rest of the text is CAST's TIMESTAMP text). */
const FRACTION = /^(.*?\d{1,2}:\d{1,2}:\d{1,2})\.(\d+)(.*)$/;

/** TIMESTAMP(12) text with up to twelve fractional digits (zone suffix optional, else `defaultZone`) -> picoseconds. */
export function parseTimestampPicosString(s: string, defaultZone: string): bigint | undefined {
  const m = FRACTION.exec(s);
  if (!m) {
    const micros = parseTimestampString(s, defaultZone);
    return micros === undefined ? undefined : micros * PICOS_PER_MICRO;
  }
  const frac = m[2]!;
  if (frac.length > 12) return undefined;
  const micros = parseTimestampString(`${m[1]}.${frac.slice(0, 6)}${m[3]}`, defaultZone);
  return micros === undefined ? undefined : micros * PICOS_PER_MICRO + BigInt(frac.slice(6).padEnd(6, '0'));
}

/** CAST(TIMESTAMP(12) AS STRING): `YYYY-MM-DD HH:MM:SS[.ffffffffffff]+zz`, twelve digits when the fraction is not zero. */
export function formatTimestampPicos(p: bigint, zone = 'UTC'): string {
  let secs = p / PICOS_PER_SECOND;
  if (p % PICOS_PER_SECOND < 0n) secs -= 1n;
  const frac = p - secs * PICOS_PER_SECOND;
  const micros = secs * 1_000_000n;
  const whole = formatTimestamp(micros, zone);
  if (frac === 0n) return whole;
  const off = formatOffset(offsetSecondsAt(zone, micros));
  return `${whole.slice(0, whole.length - off.length)}.${frac.toString().padStart(12, '0')}${off}`;
}
