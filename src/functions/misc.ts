// Hash, UUID, bit, NET.*, RANGE, ERROR, SESSION_USER, TYPEOF and other small families.
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import { createHash, randomUUID } from 'node:crypto';
import { fingerprint64 } from 'farmhash-modern';
import { T, arrayOf, rangeOf, typeToSql, type RangeType, type ScalarType } from '../types/types.js';
import { RangeValue, type Value } from '../types/values.js';
import { kllDecode, kllPoint, kllQuantiles, kllSort } from './aggregate-approx.js';
import { compareValues } from './compare.js';
import { checkRangeOrder, encodeUtf8 } from './conversion.js';
import { likeMatch } from './operators.js';
import { defineScalar, lambdaArg, operatorDisplay, opt, sig, sigf } from './signature.js';
import { constKernel, fail, perRowKernel, rowKernel } from './vec.js';
import type { ArgInfo } from './registry.js';
import { Interval } from '../types/values.js';
import { orRows, rangeIntersect, rangeRelation, rangeSide } from './interval-range-kernels.js';
import { datetimeAddInterval } from './interval.js';
import { formatDate, formatDatetime, formatTimestamp, joinMicros, splitMicros } from './civil.js';


function hash(alg: string) {
  return [
    sig(['STRING'], 'BYTES', rowKernel(T.BYTES, (v) => Uint8Array.from(createHash(alg).update(v[0] as string, 'utf8').digest()))),
    sig(['BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => Uint8Array.from(createHash(alg).update(v[0] as Uint8Array).digest()))),
  ];
}

// ---------------------------------------------------------------- NET

function parseIPv4(s: string): Uint8Array | undefined {
  // A part with a leading zero is refused, as inet_pton does (no octal reading).
  const m = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/.exec(s);
  if (!m) return undefined;
  const b = m.slice(1).map(Number);
  if (b.some((x) => x > 255)) return undefined;
  return Uint8Array.from(b);
}
function parseIPv6(s: string): Uint8Array | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  let tail: Uint8Array | undefined;
  let str = s;
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) {
    tail = parseIPv4(s.slice(lastColon + 1));
    if (!tail) return undefined;
    str = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = str.split('::');
  if (halves.length > 2) return undefined;
  const parse = (h: string): number[] | undefined => {
    if (h === '') return [];
    const parts = h.split(':');
    const out: number[] = [];
    for (const p of parts) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
      out.push(parseInt(p, 16));
    }
    return out;
  };
  const a = parse(halves[0]!);
  const b = halves.length === 2 ? parse(halves[1]!) : [];
  if (!a || !b) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    if (a.length + b.length > 7) return undefined;
    groups = [...a, ...new Array(8 - a.length - b.length).fill(0), ...b];
  } else {
    if (a.length !== 8) return undefined;
    groups = a;
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 255;
  });
  if (tail) out.set(tail, 12);
  return out;
}
function ipFromString(s: string): Uint8Array | undefined {
  return s.includes(':') ? parseIPv6(s) : parseIPv4(s);
}
function ipToString(b: Uint8Array): string {
  if (b.length === 4) return Array.from(b).join('.');
  if (b.length !== 16) fail(`NET.IP_TO_STRING() encountered an invalid IP address. Expected 4 (for IPv4) or 16 (for IPv6) bytes but got ${b.length}`);
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push((b[2 * i]! << 8) | b[2 * i + 1]!);
  // IPv4-mapped addresses print their dotted tail.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `::ffff:${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  let bestS = -1, bestL = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestL && j - i >= 2) {
      bestS = i;
      bestL = j - i;
    }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestS < 0) return hex.join(':');
  return hex.slice(0, bestS).join(':') + '::' + hex.slice(bestS + bestL).join(':');
}

/** The host of a URL as written (NET.HOST does no normalization); NULL when there is none. */
function hostOf(url: string): string | null {
  let s = url.trim();
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.exec(s);
  if (m) s = s.slice(m[0].length);
  else if (s.startsWith('//')) s = s.slice(2);
  s = s.replace(/^[^/?#@]*@/, '');
  const h = /^(\[[^\]]*\]|[^/?#:]*)/.exec(s)![0];
  // A host of dots alone has no label: no host.
  return /^\.*$/.test(h) ? null : h;
}

// The ICANN section of the Public Suffix List (private domains are not suffixes
// here), loaded on first use. A suffix only counts when its top-level label is
// listed: the list's '*' default rule (any unknown last label) does not make one.
interface Psl {
  getPublicSuffix(host: string, opts: { extractHostname: boolean; validateHostname: boolean }): string | null;
  /** top-level labels of the list (undefined if the packaged data has another layout) */
  tlds: ReadonlySet<string> | undefined;
}
let psl: Psl | undefined;
function loadPsl(): Psl {
  if (psl) return psl;
  const req = createRequire(import.meta.url);
  const lib = req('tldts-icann') as Pick<Psl, 'getPublicSuffix'>;
  let tlds: Set<string> | undefined;
  try {
    // the root edges of the packaged rule trie are the listed TLDs
    const d = req('tldts-icann/dist/cjs/src/data/trie.js') as { nodeFlags: ArrayLike<number>; edgeStart: ArrayLike<number>; edgeLength: ArrayLike<number>; labelText: string; rulesRoot: number };
    const offsets: number[] = [];
    let off = 0;
    for (let n = 0; n < d.nodeFlags.length; n++)
      for (let e = d.edgeStart[n]!; e < d.edgeStart[n + 1]!; e++) {
        offsets[e] = off;
        off += d.edgeLength[e]!;
      }
    tlds = new Set<string>();
    for (let e = d.edgeStart[d.rulesRoot]!; e < d.edgeStart[d.rulesRoot + 1]!; e++) tlds.add(d.labelText.slice(offsets[e], offsets[e]! + d.edgeLength[e]!));
    if (tlds.size === 0) tlds = undefined;
  } catch {
    tlds = undefined;
  }
  psl = { getPublicSuffix: lib.getPublicSuffix, tlds };
  return psl;
}

/** Number of trailing labels of `host` that form its public suffix, or 0 for none. */
function publicSuffixLabels(host: string): number {
  const h = host.replace(/^\.+|\.+$/g, '');
  if (h === '' || h.startsWith('[') || /^[\d.]+$/.test(h) || h.includes('..')) return 0;
  // matching is on lower-cased ASCII; the result is cut from the host as written
  const lower = h.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const { getPublicSuffix, tlds } = loadPsl();
  const ps = getPublicSuffix(lower, { extractHostname: false, validateHostname: false });
  if (!ps) return 0;
  const top = ps.slice(ps.lastIndexOf('.') + 1);
  if (tlds && !tlds.has(top) && !tlds.has(domainToASCII(top))) return 0;
  return ps.split('.').length;
}

/** A host's trailing dots (a fully qualified name) come back as one dot after the suffix or domain, as the reference keeps them. */
function trailingDot(host: string): string {
  return host.endsWith('.') ? '.' : '';
}

function publicSuffix(host: string): string | null {
  const n = publicSuffixLabels(host);
  return n === 0 ? null : host.replace(/^\.+|\.+$/g, '').split('.').slice(-n).join('.') + trailingDot(host);
}

function regDomain(host: string): string | null {
  const n = publicSuffixLabels(host);
  const labels = host.replace(/^\.+|\.+$/g, '').split('.');
  return n === 0 || labels.length <= n ? null : labels.slice(-(n + 1)).join('.') + trailingDot(host);
}

// ---------------------------------------------------------------- RANGE

function rangeContains(r: RangeValue, x: Value): boolean {
  return (r.start === null || compareValues(x, r.start) >= 0) && (r.end === null || compareValues(x, r.end) < 0);
}

/** RANGE()'s checks before any coercion, in the reference's words: both ends of one type, one of them typed. */
function rangeArgsError(args: readonly ArgInfo[]): string | undefined {
  if (args.length !== 2) return 'RANGE() must take exactly two arguments';
  if (args.every((a) => a.untypedNull)) return 'at least one of RANGE() arguments must be typed';
  if (!args.some((a) => a.untypedNull) && typeToSql(args[0]!.type) !== typeToSql(args[1]!.type)) return 'RANGE() arguments must be of the same type';
  const el = args.find((a) => !a.untypedNull)!.type;
  return ['DATE', 'DATETIME', 'TIMESTAMP'].includes(el.kind) ? undefined : `${typeToSql(el)} is not supported by RANGE()`;
}

export function registerMisc(): void {
  defineScalar('MD5', hash('md5'));
  defineScalar('SHA1', hash('sha1'));
  defineScalar('SHA256', hash('sha256'));
  defineScalar('SHA512', hash('sha512'));
  defineScalar('FARM_FINGERPRINT', [
    sig(['STRING'], 'INT64', rowKernel(T.INT64, (v) => BigInt.asIntN(64, fingerprint64(encodeUtf8(v[0] as string))))),
    sig(['BYTES'], 'INT64', rowKernel(T.INT64, (v) => BigInt.asIntN(64, fingerprint64(v[0] as Uint8Array)))),
  ]);
  defineScalar('GENERATE_UUID', [sig([], 'STRING', perRowKernel(T.STRING, () => randomUUID()))], { volatile: true, safeCallable: false });
  defineScalar('SESSION_USER', [sig([], 'STRING', constKernel(T.STRING, (ctx) => ctx.sessionUser))]);
  // Undocumented synonym the service accepts; dbt-bigquery's grants query (`... != current_user()`) relies on it.
  defineScalar('CURRENT_USER', [sig([], 'STRING', constKernel(T.STRING, (ctx) => ctx.sessionUser))]);
  defineScalar('ERROR', [
    sigf(['STRING'], 'INT64', () => rowKernel(T.INT64, (v) => fail(v[0] === null ? 'NULL' : (v[0] as string)), false)),
  ]);
  defineScalar('TYPEOF', [
    sigf(['ANY'], 'STRING', (c) => {
      const name = typeToSql(c.argTypes[0]!);
      return constKernel(T.STRING, () => name);
    }),
  ]);
  defineScalar('BIT_COUNT', [
    sig(['INT64'], 'INT64', rowKernel(T.INT64, (v) => {
      let x = BigInt.asUintN(64, v[0] as bigint);
      let c = 0n;
      while (x) {
        c += x & 1n;
        x >>= 1n;
      }
      return c;
    })),
    sig(['BYTES'], 'INT64', rowKernel(T.INT64, (v) => {
      let c = 0;
      for (let b of v[0] as Uint8Array) while (b) {
        c += b & 1;
        b >>= 1;
      }
      return BigInt(c);
    })),
  ]);
  const kllExtract = (t: 'INT64' | 'FLOAT64', point: boolean) =>
    sig(['BYTES', point ? 'FLOAT64' : 'INT64'], point ? t : `ARRAY<${t}>`, rowKernel(point ? T[t] : arrayOf(T[t]), (v) => {
      const sk = kllDecode(v[0] as Uint8Array, `KLL_QUANTILES.EXTRACT_${point ? 'POINT_' : ''}${t}`, t);
      const sorted = kllSort(sk.entries);
      if (sorted.length === 0) return null;
      if (point) return kllPoint(sorted, v[1] as number);
      return kllQuantiles(sorted, Number(v[1] as bigint));
    }));
  defineScalar('KLL_QUANTILES.EXTRACT_INT64', [kllExtract('INT64', false)]);
  defineScalar('KLL_QUANTILES.EXTRACT_FLOAT64', [kllExtract('FLOAT64', false)], { aliases: ['KLL_QUANTILES.EXTRACT_DOUBLE'] });
  defineScalar('KLL_QUANTILES.EXTRACT_POINT_INT64', [kllExtract('INT64', true)]);
  defineScalar('KLL_QUANTILES.EXTRACT_POINT_FLOAT64', [kllExtract('FLOAT64', true)], { aliases: ['KLL_QUANTILES.EXTRACT_POINT_DOUBLE'] });
  // APPLY(value, x -> expr): the lambda sees the value of each row.
  defineScalar('APPLY', [
    sigf(['ANY', lambdaArg('ANY')], (c) => c.argTypes[1]!, () => (args, n) => {
      const h = (args[1]!.data as unknown[])[0] as { invoke(p: readonly import('../types/vector.js').Vector[], rows: Int32Array): import('../types/vector.js').Vector };
      const rows = new Int32Array(n);
      for (let i = 0; i < n; i++) rows[i] = i;
      return h.invoke([args[0]!], rows);
    }),
  ]);

  // LIKE ANY/ALL UNNEST(array) and LIKE ANY/ALL (subquery), the subquery's rows as an array. Per pattern, NOT LIKE
  // applies before the quantifier; with no patterns the operators reference defines each answer (before a NULL search value).
  const likeArr = (all: boolean, negate: boolean, empty: boolean) =>
    rowKernel(T.BOOL, (v) => {
      const x = v[0]!;
      const pats = v[1] as Value[] | null;
      if (pats === null || pats.length === 0) return empty;
      if (x === null) return null;
      let sawNull = false;
      for (const p of pats) {
        if (p === null) {
          sawNull = true;
          continue;
        }
        let r = likeMatch(x, p, typeof x !== 'string') === true;
        if (negate) r = !r;
        if (r !== all) return !all;
      }
      return sawNull ? null : all;
    }, false);
  const quantifiedLike = (name: string, op: string, form: 'UNNEST' | 'subquery', all: boolean, negate: boolean, empty: boolean) =>
    defineScalar(name, [sig(['STRING', 'ARRAY<STRING>'], 'BOOL', likeArr(all, negate, empty)), sig(['BYTES', 'ARRAY<BYTES>'], 'BOOL', likeArr(all, negate, empty))], {
      display: operatorDisplay(op, 'custom', (a) => (form === 'UNNEST' ? `${a[0]} ${op} UNNEST(${a[1]})` : `${a[0]} ${op} (subquery)`)),
    });
  // An empty or NULL array: ANY is FALSE, ALL is TRUE, NOT or not (the reference implementation's answers; the
  // reference page's rules for an empty pattern_array say otherwise for LIKE ALL and NOT LIKE ANY).
  quantifiedLike('$like_any_array', 'LIKE ANY', 'UNNEST', false, false, false);
  quantifiedLike('$like_all_array', 'LIKE ALL', 'UNNEST', true, false, true);
  quantifiedLike('$not_like_any_array', 'NOT LIKE ANY', 'UNNEST', false, true, false);
  quantifiedLike('$not_like_all_array', 'NOT LIKE ALL', 'UNNEST', true, true, true);
  quantifiedLike('$like_any_subquery', 'LIKE ANY', 'subquery', false, false, false);
  quantifiedLike('$like_all_subquery', 'LIKE ALL', 'subquery', true, false, true);
  quantifiedLike('$not_like_any_subquery', 'NOT LIKE ANY', 'subquery', false, true, true);
  quantifiedLike('$not_like_all_subquery', 'NOT LIKE ALL', 'subquery', true, true, false);

  // NET.*
  defineScalar('NET.IP_FROM_STRING', [sig(['STRING'], 'BYTES', rowKernel(T.BYTES, (v) => {
    const r = ipFromString(v[0] as string);
    if (!r) fail(`NET.IP_FROM_STRING() encountered an unparseable IP-address: ${v[0] as string}`);
    return r;
  }))]);
  defineScalar('NET.SAFE_IP_FROM_STRING', [sig(['STRING'], 'BYTES', rowKernel(T.BYTES, (v) => ipFromString(v[0] as string) ?? null))]);
  defineScalar('NET.IP_TO_STRING', [sig(['BYTES'], 'STRING', rowKernel(T.STRING, (v) => ipToString(v[0] as Uint8Array)))]);
  defineScalar('NET.IP_NET_MASK', [sig(['INT64', 'INT64'], 'BYTES', rowKernel(T.BYTES, (v) => {
    const len = Number(v[0] as bigint);
    const bits = Number(v[1] as bigint);
    if (len !== 4 && len !== 16) fail(`The first argument of NET.IP_NET_MASK() must be either 4 (for IPv4) or 16 (for IPv6); got ${len}`);
    if (bits < 0 || bits > len * 8) fail(`The second argument of NET.IP_NET_MASK() must be between 0 and the first argument * 8; got ${bits}`);
    const out = new Uint8Array(len);
    for (let i = 0; i < bits; i++) out[i >> 3]! |= 0x80 >> (i & 7);
    return out;
  }))]);
  defineScalar('NET.IP_TRUNC', [sig(['BYTES', 'INT64'], 'BYTES', rowKernel(T.BYTES, (v) => {
    const b = v[0] as Uint8Array;
    const bits = Number(v[1] as bigint);
    if (b.length !== 4 && b.length !== 16) fail(`The first argument of NET.IP_TRUNC() must have length 4 (for IPv4) or 16 (for IPv6); got ${b.length}`);
    if (bits < 0 || bits > b.length * 8) fail(`The second argument of NET.IP_TRUNC() must be between 0 and 8 * LENGTH(first argument); got ${bits}`);
    const out = new Uint8Array(b.length);
    for (let i = 0; i < bits; i++) if (b[i >> 3]! & (0x80 >> (i & 7))) out[i >> 3]! |= 0x80 >> (i & 7);
    return out;
  }))]);
  defineScalar('NET.IPV4_FROM_INT64', [sig(['INT64'], 'BYTES', rowKernel(T.BYTES, (v) => {
    const x = v[0] as bigint;
    if (x < -0x80000000n || x > 0xffffffffn) fail(`NET.IPV4_FROM_INT64() encountered an invalid integer IP. Expected range: [-0x80000000, 0xFFFFFFFF]; got ${x}`);
    const u = Number(BigInt.asUintN(32, x));
    return Uint8Array.from([u >>> 24, (u >>> 16) & 255, (u >>> 8) & 255, u & 255]);
  }))]);
  defineScalar('NET.IPV4_TO_INT64', [sig(['BYTES'], 'INT64', rowKernel(T.INT64, (v) => {
    const b = v[0] as Uint8Array;
    if (b.length !== 4) fail(`NET.IPV4_TO_INT64() encountered a non-IPv4 address. Expected 4 bytes but got ${b.length}`);
    return BigInt(((b[0]! << 24) >>> 0) + (b[1]! << 16) + (b[2]! << 8) + b[3]!);
  }))]);
  defineScalar('NET.HOST', [sig(['STRING'], 'STRING', rowKernel(T.STRING, (v) => hostOf(v[0] as string)))]);
  defineScalar('NET.PUBLIC_SUFFIX', [sig(['STRING'], 'STRING', rowKernel(T.STRING, (v) => {
    const h = hostOf(v[0] as string);
    return h === null ? null : publicSuffix(h);
  }))]);
  defineScalar('NET.REG_DOMAIN', [sig(['STRING'], 'STRING', rowKernel(T.STRING, (v) => {
    const h = hostOf(v[0] as string);
    return h === null ? null : regDomain(h);
  }))]);

  // RANGE
  const rangeTypes = ['DATE', 'DATETIME', 'TIMESTAMP'];
  defineScalar('RANGE', rangeTypes.map((t) =>
    sig([t, t], `RANGE<${t}>`, rowKernel(rangeOf(T[t as 'DATE']), (v) => {
      checkRangeOrder(v[0]!, v[1]!);
      return new RangeValue(v[0]!, v[1]!);
    }, false)),
  ), { mismatch: rangeArgsError, validate: rangeArgsError });
  // A stored column's sides are used as they are (interval-range-kernels.ts); other ranges row by row.
  defineScalar('RANGE_START', [sigf(['RANGE<T1>'], 'T1', (c) => orRows((args) => rangeSide(args, 'start'), rowKernel(c.returnType, (v) => (v[0] as RangeValue).start)))]);
  defineScalar('RANGE_END', [sigf(['RANGE<T1>'], 'T1', (c) => orRows((args) => rangeSide(args, 'end'), rowKernel(c.returnType, (v) => (v[0] as RangeValue).end)))]);
  defineScalar('RANGE_CONTAINS', [
    sig(['RANGE<T1>', 'RANGE<T1>'], 'BOOL', orRows((args, n) => rangeRelation('contains', args, n), rowKernel(T.BOOL, (v) => {
      const a = v[0] as RangeValue;
      const b = v[1] as RangeValue;
      const startOk = a.start === null || (b.start !== null && compareValues(b.start, a.start) >= 0);
      const endOk = a.end === null || (b.end !== null && compareValues(b.end, a.end) <= 0);
      return startOk && endOk;
    }))),
    sig(['RANGE<T1>', 'T1'], 'BOOL', orRows((args, n) => rangeRelation('contains', args, n), rowKernel(T.BOOL, (v) => rangeContains(v[0] as RangeValue, v[1]!)))),
  ]);
  defineScalar('RANGE_OVERLAPS', [sig(['RANGE<T1>', 'RANGE<T1>'], 'BOOL', orRows((args, n) => rangeRelation('overlaps', args, n), rowKernel(T.BOOL, (v) => {
    const a = v[0] as RangeValue;
    const b = v[1] as RangeValue;
    const aBeforeB = a.end !== null && b.start !== null && compareValues(a.end, b.start) <= 0;
    const bBeforeA = b.end !== null && a.start !== null && compareValues(b.end, a.start) <= 0;
    return !aBeforeB && !bBeforeA;
  })))]);
  defineScalar('RANGE_INTERSECT', [sigf(['RANGE<T1>', 'RANGE<T1>'], 'RANGE<T1>', (c) => orRows((args, n) => rangeIntersect(args, n), rowKernel(c.returnType, (v) => {
    const a = v[0] as RangeValue;
    const b = v[1] as RangeValue;
    const start = a.start === null ? b.start : b.start === null ? a.start : compareValues(a.start, b.start) >= 0 ? a.start : b.start;
    const end = a.end === null ? b.end : b.end === null ? a.end : compareValues(a.end, b.end) <= 0 ? a.end : b.end;
    if (start !== null && end !== null && compareValues(start, end) >= 0) {
      const kind = (c.returnType as RangeType).element.kind;
      const bound = (x: Value): string => {
        const name = kind === 'DATE' ? 'Date' : kind === 'DATETIME' ? 'Datetime' : 'Timestamp';
        if (x === null) return `${name}(NULL)`;
        return `${name}(${kind === 'DATE' ? formatDate(x as number) : kind === 'DATETIME' ? formatDatetime(x as bigint) : formatTimestamp(x as bigint)})`;
      };
      const text = (r: RangeValue) => `[${bound(r.start)}, ${bound(r.end)})`;
      fail(`Provided RANGE inputs: ${text(a)} and ${text(b)} do not overlap. Please check RANGE_OVERLAPS before calling RANGE_INTERSECT`);
    }
    return new RangeValue(start, end);
  })))]);
  defineScalar('GENERATE_RANGE_ARRAY', [
    sigf(['RANGE<T1>', 'INTERVAL', opt('BOOL')], (c) => arrayOf(c.argTypes[0]!), (c) => {
      const el = (c.argTypes[0] as { element: ScalarType }).element;
      return rowKernel(c.returnType, (v) => {
        // any NULL argument (range, step or include_last_partial_range) gives NULL
        if (v.some((x) => x === null)) return null;
        const r = v[0] as RangeValue;
        const iv = v[1] as Interval;
        const lastPartial = v.length > 2 ? v[2] !== false : true;
        if (r.start === null || r.end === null) fail('GENERATE_RANGE_ARRAY does not support unbounded ranges');
        const toMicros = (x: Value): bigint => (el.kind === 'DATE' ? joinMicros(x as number, 0) : (x as bigint));
        const fromMicros = (x: bigint): Value => (el.kind === 'DATE' ? splitMicros(x)[0] : x);
        const end = toMicros(r.end);
        const out: Value[] = [];
        let cur = toMicros(r.start);
        if (iv.months === 0 && iv.days === 0 && iv.micros <= 0n) fail('GENERATE_RANGE_ARRAY requires a positive interval');
        while (cur < end) {
          const next = datetimeAddInterval(cur, iv);
          if (next > end && !lastPartial) break;
          out.push(new RangeValue(fromMicros(cur), fromMicros(next < end ? next : end)));
          cur = next;
          if (out.length > 1048576) fail('GENERATE_RANGE_ARRAY produces too many elements');
        }
        return out;
      }, false);
    }),
  ]);
  }
