// Writes a draft .sqltest of scalar-function calls for a differential sweep
// against the GoogleSQL reference implementation (dev-only):
//
//   node --import tsx conformance/sweep.ts <family> > /tmp/draft.sqltest
//   node --import tsx conformance/sqltest-ref.ts --emu /tmp/draft.sqltest
//
// For each signature, a base call with ordinary values, then one argument at a
// time replaced by each edge value of its type (NULL included). Each call is
// written three ways: literal arguments, the same values as columns of a
// subquery (catches checks made at analysis instead of per row), and with the
// SAFE. prefix. Families: string, bytes, regexp, encoding, hash, bit, math,
// numeric, cast, net.

type T = 'STRING' | 'BYTES' | 'INT64' | 'FLOAT64' | 'NUMERIC' | 'BIGNUMERIC' | 'BOOL' | 'DATE' | 'DATETIME' | 'TIME' | 'TIMESTAMP' | 'ARRAY<INT64>' | 'INTERVAL';

const LONG = 'x'.repeat(300);
const EDGES: Record<T, string[]> = {
  STRING: ["''", "'abc'", "'héllo Wörld'", "'e\u0301a'", "'🙂x'", `'${LONG}'`, "' a b '", "'ABC'", "'-1'", "'1.5'", "'NaN'", "'a.b.c'"],
  BYTES: ["b''", "b'abc'", "b'\\xc3\\x28'", "b'\\xff\\xfe\\x00'", "b'\\x00'", "b'\\x01\\x02\\x03\\x04'", `b'${LONG}'`],
  INT64: ['0', '1', '-1', '2', '-3', '9223372036854775807', '-9223372036854775808', '1000000'],
  FLOAT64: ['0.0', "CAST('-0' AS FLOAT64)", '1.5', '-2.5', "CAST('nan' AS FLOAT64)", "CAST('inf' AS FLOAT64)", "CAST('-inf' AS FLOAT64)", '1e308', '5e-324'],
  NUMERIC: ["NUMERIC '0'", "NUMERIC '1.5'", "NUMERIC '-2.5'", "NUMERIC '99999999999999999999999999999.999999999'", "NUMERIC '-99999999999999999999999999999.999999999'", "NUMERIC '0.000000001'"],
  BIGNUMERIC: ["BIGNUMERIC '0'", "BIGNUMERIC '1.5'", "BIGNUMERIC '-2.5'", "BIGNUMERIC '578960446186580977117854925043439539266.34992332820282019728792003956564819967'", "BIGNUMERIC '-578960446186580977117854925043439539266.34992332820282019728792003956564819968'", "BIGNUMERIC '1e-38'"],
  BOOL: ['TRUE', 'FALSE'],
  DATE: ["DATE '2024-02-29'", "DATE '0001-01-01'", "DATE '9999-12-31'"],
  DATETIME: ["DATETIME '2024-02-29 12:34:56.789012'", "DATETIME '0001-01-01 00:00:00'"],
  TIME: ["TIME '23:59:59.999999'", "TIME '00:00:00'"],
  TIMESTAMP: ["TIMESTAMP '2024-02-29 12:34:56.789012+00'", "TIMESTAMP '0001-01-01 00:00:00+00'"],
  'ARRAY<INT64>': ['[65, 0x1F642]', '[]', '[-1]', '[1114112]', '[0]', '[NULL]'],
  INTERVAL: ["INTERVAL 1 DAY", "MAKE_INTERVAL(1, 2, 3, 4, 5, 6)"],
};
const BASE: Record<T, string> = {
  STRING: "'abc'", BYTES: "b'abc'", INT64: '2', FLOAT64: '1.5', NUMERIC: "NUMERIC '1.5'", BIGNUMERIC: "BIGNUMERIC '1.5'",
  BOOL: 'TRUE', DATE: "DATE '2024-02-29'", DATETIME: "DATETIME '2024-02-29 12:34:56.789012'", TIME: "TIME '12:00:00'",
  TIMESTAMP: "TIMESTAMP '2024-02-29 12:34:56.789012+00'", 'ARRAY<INT64>': '[65, 66]', INTERVAL: 'INTERVAL 1 DAY',
};

/** A signature: name, argument types, optional base values overriding BASE, optional edge lists per position. */
interface Sig { fn: string; args: T[]; base?: string[]; edges?: (string[] | undefined)[]; op?: 'infix' | 'prefix'; grid?: boolean }

const s = (fn: string, args: T[], extra: Partial<Sig> = {}): Sig => ({ fn, args, ...extra });
const NUMS: T[] = ['INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC'];
const each = (ts: T[], f: (t: T) => Sig[]) => ts.flatMap(f);

const FAMILIES: Record<string, Sig[]> = {
  string: [
    ...['ASCII', 'CHAR_LENGTH', 'INITCAP', 'LENGTH', 'LOWER', 'LTRIM', 'NORMALIZE', 'NORMALIZE_AND_CASEFOLD', 'OCTET_LENGTH', 'REVERSE', 'RTRIM', 'SOUNDEX', 'TO_CODE_POINTS', 'TRIM', 'UNICODE', 'UPPER', 'SPLIT'].map((f) => s(f, ['STRING'])),
    ...['CONCAT', 'CONTAINS_SUBSTR', 'EDIT_DISTANCE', 'ENDS_WITH', 'STARTS_WITH', 'STRPOS', 'INITCAP', 'LTRIM', 'RTRIM', 'TRIM', 'SPLIT'].map((f) => s(f, ['STRING', 'STRING'], { base: ["'abcab'", "'b'"] })),
    s('CHR', ['INT64'], { base: ['65'], edges: [['0', '65', '0x1F642', '1114111', '1114112', '0xD800', '-1', '9223372036854775807']] }),
    s('INSTR', ['STRING', 'STRING', 'INT64', 'INT64'], { base: ["'abcabc'", "'bc'", '1', '1'] }),
    s('LEFT', ['STRING', 'INT64'], { base: ["'héllo'", '2'] }),
    s('RIGHT', ['STRING', 'INT64'], { base: ["'héllo'", '2'] }),
    s('LPAD', ['STRING', 'INT64'], { base: ["'abc'", '5'] }),
    s('RPAD', ['STRING', 'INT64'], { base: ["'abc'", '5'] }),
    s('LPAD', ['STRING', 'INT64', 'STRING'], { base: ["'abc'", '5', "'xy'"] }),
    s('RPAD', ['STRING', 'INT64', 'STRING'], { base: ["'abc'", '5', "'xy'"] }),
    s('REPEAT', ['STRING', 'INT64'], { base: ["'ab'", '3'] }),
    s('REPLACE', ['STRING', 'STRING', 'STRING'], { base: ["'abcab'", "'ab'", "'X'"] }),
    s('TRANSLATE', ['STRING', 'STRING', 'STRING'], { base: ["'abcab'", "'ab'", "'X'"] }),
    s('SUBSTR', ['STRING', 'INT64'], { base: ["'héllo'", '2'] }),
    s('SUBSTR', ['STRING', 'INT64', 'INT64'], { base: ["'héllo'", '2', '3'] }),
    s('EDIT_DISTANCE', ['STRING', 'STRING', 'INT64'], { base: ["'abc'", "'xbcd'", '1'] }),
    s('INITCAP', ['STRING', 'STRING']),
  ],
  bytes: [
    ...['LENGTH', 'BYTE_LENGTH', 'LTRIM', 'RTRIM', 'TRIM', 'REVERSE', 'SPLIT', 'TO_CODE_POINTS'].map((f) => s(f, ['BYTES'])),
    ...['CONCAT', 'ENDS_WITH', 'STARTS_WITH', 'STRPOS', 'LTRIM', 'RTRIM', 'TRIM', 'SPLIT'].map((f) => s(f, ['BYTES', 'BYTES'], { base: ["b'abcab'", "b'b'"] })),
    s('INSTR', ['BYTES', 'BYTES', 'INT64', 'INT64'], { base: ["b'abcabc'", "b'bc'", '1', '1'] }),
    s('LEFT', ['BYTES', 'INT64'], { base: ["b'hello'", '2'] }),
    s('RIGHT', ['BYTES', 'INT64'], { base: ["b'hello'", '2'] }),
    s('LPAD', ['BYTES', 'INT64', 'BYTES'], { base: ["b'abc'", '5', "b'xy'"] }),
    s('RPAD', ['BYTES', 'INT64', 'BYTES'], { base: ["b'abc'", '5', "b'xy'"] }),
    s('REPEAT', ['BYTES', 'INT64'], { base: ["b'ab'", '3'] }),
    s('REPLACE', ['BYTES', 'BYTES', 'BYTES'], { base: ["b'abcab'", "b'ab'", "b'X'"] }),
    s('TRANSLATE', ['BYTES', 'BYTES', 'BYTES'], { base: ["b'abcab'", "b'ab'", "b'X'"] }),
    s('SUBSTR', ['BYTES', 'INT64', 'INT64'], { base: ["b'hello'", '2', '3'] }),
    s('LOWER', ['BYTES']), s('UPPER', ['BYTES']),
  ],
  regexp: [
    s('REGEXP_CONTAINS', ['STRING', 'STRING'], { base: ["'abc123'", "r'\\d+'"], edges: [undefined, ["''", "'('", "'(a)(b)'", "r'\\p{L}+'", "'(?i)ABC'", "'.'", "r'\\C'"]] }),
    s('REGEXP_EXTRACT', ['STRING', 'STRING'], { base: ["'abc123'", "r'\\d+'"], edges: [undefined, ["''", "'('", "'(a)(b)'", "'(b)'", "r'(\\d)?x'", "'.'"]] }),
    s('REGEXP_EXTRACT', ['STRING', 'STRING', 'INT64', 'INT64'], { base: ["'abc123abc'", "'b'", '1', '1'] }),
    s('REGEXP_EXTRACT_ALL', ['STRING', 'STRING'], { base: ["'a1b22c'", "r'\\d+'"], edges: [undefined, ["''", "'('", "'(a)(b)'", "'(\\\\d)'", "'x*'", "'.'"]] }),
    s('REGEXP_INSTR', ['STRING', 'STRING', 'INT64', 'INT64', 'INT64'], { base: ["'abcabc'", "'b(c)'", '1', '1', '0'] }),
    s('REGEXP_REPLACE', ['STRING', 'STRING', 'STRING'], { base: ["'abcabc'", "'b(c)'", "r'<\\1>'"], edges: [undefined, ["''", "'('", "'x*'", "'.'"], ["''", "r'\\2'", "r'\\\\'", "r'\\0'", "'$1'", "r'\\'"]] }),
    s('REGEXP_SUBSTR', ['STRING', 'STRING', 'INT64', 'INT64'], { base: ["'abcabc'", "'b'", '1', '1'] }),
    s('REGEXP_CONTAINS', ['BYTES', 'BYTES'], { base: ["b'abc'", "b'b'"] }),
    s('REGEXP_EXTRACT', ['BYTES', 'BYTES'], { base: ["b'abc'", "b'b'"] }),
    s('REGEXP_REPLACE', ['BYTES', 'BYTES', 'BYTES'], { base: ["b'abc'", "b'b'", "b'X'"] }),
    s('REGEXP_EXTRACT_ALL', ['BYTES', 'BYTES'], { base: ["b'abcb'", "b'b'"] }),
  ],
  encoding: [
    ...['TO_BASE32', 'TO_BASE64', 'TO_HEX', 'SAFE_CONVERT_BYTES_TO_STRING'].map((f) => s(f, ['BYTES'])),
    s('FROM_BASE32', ['STRING'], { base: ["'MFRGG==='"], edges: [["''", "'MFRGG==='", "'MFRGG'", "'mfrgg==='", "'MFRG'", "'!!'", "'MFRGG===x'"]] }),
    s('FROM_BASE64', ['STRING'], { base: ["'YWJj'"], edges: [["''", "'YWJj'", "'YWI='", "'YWI'", "'YW=='", "'Y'", "'-_-_'", "'YW Jj'", "'!!'"]] }),
    s('FROM_HEX', ['STRING'], { base: ["'616263'"], edges: [["''", "'616263'", "'6'", "'0AbC'", "'zz'", "'0x61'", "' 61'"]] }),
    s('CODE_POINTS_TO_BYTES', ['ARRAY<INT64>'], { base: ['[65, 66]'], edges: [['[65, 255]', '[]', '[-1]', '[256]', '[0]', '[NULL]']] }),
    s('CODE_POINTS_TO_STRING', ['ARRAY<INT64>'], { base: ['[65, 66]'], edges: [['[65, 0x1F642]', '[]', '[-1]', '[1114112]', '[0xD800]', '[0]', '[NULL]']] }),
    s('TO_CODE_POINTS', ['STRING']), s('TO_CODE_POINTS', ['BYTES']),
    s('NORMALIZE', ['STRING']), s('NORMALIZE_AND_CASEFOLD', ['STRING']),
    ...['NFC', 'NFKC', 'NFD', 'NFKD'].flatMap((m) => [s(`NORMALIZE#${m}`, ['STRING'], { base: ["'ﬁ e\u0301'"] }), s(`NORMALIZE_AND_CASEFOLD#${m}`, ['STRING'], { base: ["'ﬁ E\u0301'"] })]),
  ],
  hash: ['FARM_FINGERPRINT', 'MD5', 'SHA1', 'SHA256', 'SHA512'].flatMap((f) => [s(f, ['STRING']), s(f, ['BYTES'])]),
  bit: [
    s('BIT_COUNT', ['INT64']), s('BIT_COUNT', ['BYTES']),
    ...['&', '|', '^'].flatMap((o) => [s(o, ['INT64', 'INT64'], { op: 'infix', base: ['12', '10'] }), s(o, ['BYTES', 'BYTES'], { op: 'infix', base: ["b'\\x0c\\x0a'", "b'\\x0a\\x0c'"], edges: [["b''", "b'\\x01\\x02'", "b'\\x01'"], ["b''", "b'\\x01\\x02'", "b'\\x01'"]] })]),
    ...['<<', '>>'].flatMap((o) => [s(o, ['INT64', 'INT64'], { op: 'infix', base: ['12', '2'], edges: [undefined, ['0', '1', '63', '64', '65', '-1', '9223372036854775807']] }), s(o, ['BYTES', 'INT64'], { op: 'infix', base: ["b'\\x0c\\x0a'", '3'], edges: [undefined, ['0', '1', '8', '16', '17', '-1', '64']] })]),
    s('~', ['INT64'], { op: 'prefix' }), s('~', ['BYTES'], { op: 'prefix' }),
  ],
  math: [
    ...each(NUMS, (t) => ['ABS', 'SIGN', 'CEIL', 'FLOOR', 'ROUND', 'TRUNC', 'SQRT', 'CBRT', 'EXP', 'LN', 'LOG10', 'SAFE_NEGATE'].map((f) => s(f, [t]))),
    ...['ACOS', 'ACOSH', 'ASIN', 'ASINH', 'ATAN', 'ATANH', 'COS', 'COSH', 'COT', 'COTH', 'CSC', 'CSCH', 'SEC', 'SECH', 'SIN', 'SINH', 'TAN', 'TANH', 'IS_INF', 'IS_NAN'].map((f) => s(f, ['FLOAT64'])),
    s('ATAN2', ['FLOAT64', 'FLOAT64']),
    ...each(NUMS, (t) => ['DIV', 'MOD', 'POW', 'LOG', 'IEEE_DIVIDE', 'SAFE_ADD', 'SAFE_SUBTRACT', 'SAFE_MULTIPLY', 'SAFE_DIVIDE', 'GREATEST', 'LEAST', 'ROUND', 'TRUNC'].map((f) => s(f, [t, f === 'ROUND' || f === 'TRUNC' ? 'INT64' : t]))).filter((g) => !(g.fn === 'DIV' && g.args[0] === 'FLOAT64') && !(g.fn === 'MOD' && g.args[0] === 'FLOAT64')),
    ...each(NUMS, (t) => ['+', '-', '*', '/'].map((o) => s(o, [t, t], { op: 'infix' }))),
    ...each(NUMS, (t) => [s('-', [t], { op: 'prefix' })]),
    ...(['NUMERIC', 'BIGNUMERIC', 'FLOAT64'] as T[]).map((t) => s('ROUND', [t, 'INT64', 'STRING'], { base: [BASE[t], '0', "'ROUND_HALF_EVEN'"], edges: [undefined, undefined, ["'ROUND_HALF_AWAY_FROM_ZERO'", "'ROUND_HALF_EVEN'", "'round_half_even'", "'BAD'"]] })),
    s('RANGE_BUCKET', ['INT64', 'ARRAY<INT64>'], { base: ['5', '[0, 5, 10]'], edges: [undefined, ['[]', '[10, 5]', '[0, NULL]', '[5, 5]']] }),
  ],
  cast: [
    // every pair of scalar types, each source value through CAST, SAFE_CAST written in the SAFE column
    ...(['BOOL', 'INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC', 'STRING', 'BYTES', 'DATE', 'DATETIME', 'TIME', 'TIMESTAMP', 'INTERVAL'] as T[]).flatMap((from) =>
      (['BOOL', 'INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC', 'STRING', 'BYTES', 'DATE', 'DATETIME', 'TIME', 'TIMESTAMP', 'INTERVAL'] as T[]).map((to) =>
        s(`CAST#${to}`, [from], from === 'STRING' ? { edges: [castStrings(to)] } : {}))),
    s('PARSE_NUMERIC', ['STRING'], { base: ["'1.5'"], edges: [numStrings()] }),
    s('PARSE_BIGNUMERIC', ['STRING'], { base: ["'1.5'"], edges: [numStrings()] }),
    ...(['INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC'] as T[]).map((t) => s('CAST#STRING FORMAT', [t, 'STRING'], { base: [BASE[t], "'999.99'"], edges: [undefined, ["'999.99'", "'S9,999'", "'0000'", "'$99.9MI'", "'9.99EEEE'", "'X'", "'XXXX'", "'FM999'", "'TM'", "'B999'", "'9V99'", "'bad'", "''"]] })),
    s('CAST#STRING FORMAT', ['BYTES', 'STRING'], { base: ["b'abc'", "'BASE64'"], edges: [undefined, ["'HEX'", "'BASE64'", "'BASE64M'", "'BASE2'", "'BASE8'", "'ASCII'", "'UTF-8'", "'UTF8'", "'hex'", "'bad'"]] }),
    s('CAST#BYTES FORMAT', ['STRING', 'STRING'], { base: ["'616263'", "'HEX'"], edges: [["''", "'616263'", "'YWJj'", "'01100001'", "'zz'", "'abc'"], ["'HEX'", "'BASE64'", "'BASE2'", "'BASE8'", "'ASCII'", "'UTF-8'", "'bad'"]] }),
  ],
  // pairs of different numeric types (the supertype rules), a few values each
  mixed: each(NUMS, (a) => NUMS.filter((b) => b !== a).flatMap((b) => [
    ...['+', '-', '*', '/'].map((o) => s(o, [a, b], { op: 'infix', base: [BASE[a], BASE[b]], edges: [EDGES[a].slice(0, 4), EDGES[b].slice(0, 4)] })),
    ...['DIV', 'MOD', 'POW', 'LOG', 'IEEE_DIVIDE', 'SAFE_DIVIDE', 'SAFE_ADD', 'GREATEST', 'ATAN2', 'RANGE_BUCKET'].map((f) => s(f, [a, b], { edges: [EDGES[a].slice(0, 3), EDGES[b].slice(0, 3)] })),
  ])),
  // every value of each numeric type through every number format element (a grid, not one at a time)
  numformat: (['INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC'] as T[]).map((t) => s('CAST#STRING FORMAT', [t, 'STRING'], {
    grid: true, base: [BASE[t], "'999.99'"],
    edges: [[...EDGES[t], ...(t === 'INT64' ? ['123456', '-42'] : t === 'FLOAT64' ? ['0.005', '-123.456', '1e20'] : [`${t} '0.005'`, `${t} '-123.456'`])],
      ["'999.99'", "'S9,999'", "'0000'", "'$99.9MI'", "'9.99EEEE'", "'X'", "'XXXX'", "'FM999.9'", "'TM'", "'TM9'", "'TME'", "'B999'", "'9V99'", "'99PR'", "'9G999D99'", "'L999'", "'C999'", "'RN'", "'0.9'", "'.99'", "'9.'", "'S'", "'999S'"]],
  })),
  // small grids over the position and length arithmetic of the string functions
  strgrid: (() => {
    const str = ["''", "'a'", "'aba'", "'éé'", "'e\u0301'"];
    const pos = ['-4', '-1', '0', '1', '2', '4'];
    const g = (fn: string, args: T[], edges: string[][]) => s(fn, args, { grid: true, edges });
    return [
      ...['STRPOS', 'STARTS_WITH', 'ENDS_WITH', 'SPLIT', 'LTRIM', 'RTRIM', 'TRIM', 'CONTAINS_SUBSTR', 'EDIT_DISTANCE'].map((f) => g(f, ['STRING', 'STRING'], [str, str])),
      g('REPLACE', ['STRING', 'STRING', 'STRING'], [str, str, ["''", "'xy'"]]),
      g('TRANSLATE', ['STRING', 'STRING', 'STRING'], [str, str, ["''", "'xy'"]]),
      g('INSTR', ['STRING', 'STRING', 'INT64', 'INT64'], [["'abab'", "'éaéa'"], ["'a'", "''", "'ab'"], pos, ['1', '2', '0', '-1']]),
      g('SUBSTR', ['STRING', 'INT64', 'INT64'], [["'héllo'", "''"], pos, ['0', '1', '3', '-1', '9223372036854775807']]),
      g('SUBSTR', ['BYTES', 'INT64', 'INT64'], [["b'hello'", "b''"], pos, ['0', '1', '3', '-1']]),
      g('LEFT', ['STRING', 'INT64'], [str, pos]), g('RIGHT', ['STRING', 'INT64'], [str, pos]),
      g('LPAD', ['STRING', 'INT64', 'STRING'], [["'ab'", "'é'"], ['0', '1', '3', '-1'], ["''", "'xy'", "'é'"]]),
      g('RPAD', ['STRING', 'INT64', 'STRING'], [["'ab'", "'é'"], ['0', '1', '3', '-1'], ["''", "'xy'", "'é'"]]),
      g('REGEXP_INSTR', ['STRING', 'STRING', 'INT64', 'INT64', 'INT64'], [["'abab'"], ["'b'", "'(a)b'", "''"], ['1', '2', '5', '0'], ['1', '2', '3'], ['0', '1']]),
      g('REGEXP_EXTRACT', ['STRING', 'STRING', 'INT64', 'INT64'], [["'abab'", "''"], ["'b'", "'(a)b'", "''", "'x*'"], ['1', '2', '5', '0'], ['1', '2', '3']]),
      g('REGEXP_REPLACE', ['STRING', 'STRING', 'STRING'], [["'abab'", "''", "'éé'"], ["'b'", "'(a)b'", "''", "'x*'", "'^'", "'$'"], ["'-'", "r'<\\0>'"]]),
      g('REGEXP_EXTRACT_ALL', ['STRING', 'STRING'], [["'abab'", "''", "'éé'"], ["'b'", "'(a)b'", "''", "'x*'", "'^'", "'$'", "'.'"]]),
    ];
  })(),
  // malformed UTF-8 (overlong forms, encoded surrogates, truncated and stray continuation bytes, past U+10FFFF)
  utf8: (() => {
    const bad = ["b'\\xc0\\x80'", "b'\\xe0\\x80\\xaf'", "b'\\xed\\xa0\\x80'", "b'\\xf4\\x90\\x80\\x80'", "b'\\xf0\\x9f\\x99'", "b'a\\x80b'", "b'\\xe2\\x82'", "b'\\xff'", "b'\\xf0\\x9f\\x99\\x82\\x80'", "b'\\xc2\\xa9'", "b'\\xef\\xbb\\xbfx'"];
    const e = { edges: [bad] };
    return [
      s('SAFE_CONVERT_BYTES_TO_STRING', ['BYTES'], e), s('CAST#STRING', ['BYTES'], e), s('CAST#STRING FORMAT', ['BYTES', 'STRING'], { base: ["b'abc'", "'UTF-8'"], edges: [bad, ["'UTF-8'", "'ASCII'"]] }),
      s('TO_CODE_POINTS', ['BYTES'], e), s('LENGTH', ['BYTES'], e), s('TO_HEX', ['BYTES'], e), s('REVERSE', ['BYTES'], e),
      s('NET.IP_TO_STRING', ['BYTES'], e), s('FORMAT#%T', ['BYTES'], e),
      s('REGEXP_CONTAINS', ['BYTES', 'BYTES'], { base: ["b'abc'", "b'.'"], edges: [bad, ["b'.'", "b'^.$'", "b'\\x80'"]] }),
      s('REGEXP_EXTRACT_ALL', ['BYTES', 'BYTES'], { base: ["b'abc'", "b'.'"], edges: [bad, ["b'.'"]] }),
    ];
  })(),
  net: [
    s('NET.HOST', ['STRING'], { base: ["'https://www.Example.co.uk:80/a?b'"], edges: [netUrls()] }),
    s('NET.PUBLIC_SUFFIX', ['STRING'], { base: ["'https://www.Example.co.uk:80/a?b'"], edges: [netUrls()] }),
    s('NET.REG_DOMAIN', ['STRING'], { base: ["'https://www.Example.co.uk:80/a?b'"], edges: [netUrls()] }),
    s('NET.IP_FROM_STRING', ['STRING'], { base: ["'10.1.2.3'"], edges: [ipStrings()] }),
    s('NET.SAFE_IP_FROM_STRING', ['STRING'], { base: ["'10.1.2.3'"], edges: [ipStrings()] }),
    s('NET.IPV4_FROM_INT64', ['INT64'], { base: ['167772161'], edges: [['0', '-1', '4294967295', '4294967296', '-2147483648', '-2147483649', '9223372036854775807']] }),
    s('NET.IPV4_TO_INT64', ['BYTES'], { base: ["b'\\x0a\\x00\\x00\\x01'"], edges: [["b''", "b'\\x0a\\x00\\x00\\x01'", "b'\\xff\\xff\\xff\\xff'", "b'\\x01\\x02\\x03'", "FROM_HEX('00000000000000000000000000000001')"]] }),
    s('NET.IP_TO_STRING', ['BYTES'], { base: ["b'\\x0a\\x00\\x00\\x01'"], edges: [["b''", "b'\\x0a\\x00\\x00\\x01'", "b'\\x01\\x02\\x03'", "FROM_HEX('00000000000000000000000000000001')", "FROM_HEX('00000000000000000000ffff0a000001')", "FROM_HEX('20010db8000000000000000000000001')"]] }),
    s('NET.IP_NET_MASK', ['INT64', 'INT64'], { base: ['4', '20'], edges: [['4', '16', '0', '6', '-1'], ['0', '1', '32', '33', '128', '129', '-1']] }),
    s('NET.IP_TRUNC', ['BYTES', 'INT64'], { base: ["b'\\x0a\\x01\\x02\\x03'", '20'], edges: [["b''", "b'\\x0a\\x01\\x02\\x03'", "b'\\x01\\x02\\x03'", "FROM_HEX('20010db8000000000000000000000001')"], ['0', '1', '32', '33', '128', '129', '-1']] }),
  ],
};

function castStrings(to: T): string[] {
  const common = ["''", "' 1 '", "'abc'"];
  const by: Partial<Record<T, string[]>> = {
    BOOL: ["'true'", "'TRUE'", "'t'", "'1'", "'false'"],
    INT64: ["'1'", "'-9223372036854775808'", "'9223372036854775808'", "'0x1F'", "'-0x1F'", "'1.0'", "'1e2'", "'+5'", "'00012'"],
    FLOAT64: ["'1.5'", "'nan'", "'-inf'", "'Infinity'", "'1e400'", "'0x1p3'", "'.5'", "'5.'", "'-0'"],
    NUMERIC: ["'1.5'", "'1e-10'", "'0.0000000015'", "'99999999999999999999999999999.9999999995'", "'1e29'", "'nan'", "'+.5'"],
    BIGNUMERIC: ["'1.5'", "'1e-39'", "'1e38'", "'1e39'", "'nan'", "'0x10'"],
    BYTES: ["'héllo'"],
    DATE: ["'2024-02-29'", "'2023-02-29'", "'2024-2-9'", "'10000-01-01'", "'2024-02-29T00:00:00'"],
    DATETIME: ["'2024-02-29 12:34:56'", "'2024-02-29T12:34:56.1234567'", "'2024-02-29'", "'2024-02-29 24:00:00'"],
    TIME: ["'12:34:56'", "'1:2:3'", "'24:00:00'", "'12:34:56.1234567'", "'12:34'"],
    TIMESTAMP: ["'2024-02-29 12:34:56+05:30'", "'2024-02-29T12:34:56Z'", "'2024-02-29 12:34:56 America/New_York'", "'2024-02-29'", "'2024-02-29 12:34:56.123456789'"],
    INTERVAL: ["'1-2 3 4:5:6'", "'P1Y2M3DT4H5M6S'", "'-1'", "'1 2'", "'PT0.5S'"],
    STRING: ["'héllo'"],
  };
  return [...common, ...(by[to] ?? [])];
}
function numStrings(): string[] {
  return ["''", "'1.5'", "' 1.5 '", "'-1.5e3'", "'1,234.5'", "'1.2.3'", "'+0.0000000001'", "'99999999999999999999999999999.9999999995'", "'1e38'", "'1e77'", "'nan'", "'.5'", "'5.'", "'- 1'", "'1 -'", "'$1'"];
}
function netUrls(): string[] {
  return ["''", "'www.google.com'", "'http://[::1]:8080/x'", "'  foo.com  '", "'https://user:pw@sub.example.com/'", "'http://192.168.1.1/'", "'com'", "'http://a.b.github.io'", "'//x.co.jp'", "'http://例え.jp/'", "'mailto:a@b.com'", "'http://foo.bar.'", "'http://.'"];
}
function ipStrings(): string[] {
  return ["''", "'10.1.2.3'", "'::1'", "'::ffff:10.1.2.3'", "'2001:db8::1'", "'256.1.1.1'", "'1.2.3'", "' 10.1.2.3'", "'10.1.2.3/8'", "'01.2.3.4'", "'::'", "'1:2:3:4:5:6:7:8:9'"];
}

function call(g: Sig, a: string[], safe: boolean): string {
  const [fn, variant] = g.fn.split('#');
  if (g.op === 'infix') return `${a[0]} ${fn} ${a[1]}`;
  if (g.op === 'prefix') return `${fn}(${a[0]})`;
  if (fn === 'CAST') {
    const [to, fmt] = variant!.split(' FORMAT');
    return `${safe ? 'SAFE_CAST' : 'CAST'}(${a[0]} AS ${to}${fmt !== undefined ? ` FORMAT ${a[1]}` : ''})`;
  }
  // NORMALIZE#NFC: the mode goes last; FORMAT#%T: the pattern goes first, as a literal
  const args = !variant ? a : fn === 'FORMAT' ? [`'${variant}'`, ...a] : [...a, variant];
  return `${safe ? 'SAFE.' : ''}${fn}(${args.join(', ')})`;
}

function typedNull(t: T): string { return `CAST(NULL AS ${t})`; }

function* calls(g: Sig): Generator<string[]> {
  const base = g.args.map((t, i) => g.base?.[i] ?? BASE[t]);
  if (g.grid) {
    // every combination of the positions' values (NULL included)
    let rows: string[][] = [[]];
    for (const [i, t] of g.args.entries()) rows = rows.flatMap((r) => ['NULL', ...(g.edges?.[i] ?? EDGES[t])].map((v) => [...r, v]));
    yield* rows;
    return;
  }
  yield base;
  for (const [i, t] of g.args.entries()) {
    yield base.map((v, j) => (j === i ? 'NULL' : v));
    for (const e of g.edges?.[i] ?? EDGES[t]) if (e !== base[i]) yield base.map((v, j) => (j === i ? e : v));
  }
}

function main(): void {
  const fam = process.argv[2];
  const sigs = fam && FAMILIES[fam];
  if (!sigs) throw new Error(`family one of ${Object.keys(FAMILIES).join(', ')}`);
  const out: string[] = [`# Draft: differential sweep, family ${fam} (conformance/sweep.ts)`];
  let n = 0;
  const seen = new Set<string>();
  for (const g of sigs) {
    for (const a of calls(g)) {
      const lit = call(g, a, false);
      if (seen.has(lit)) continue;
      seen.add(lit);
      n++;
      out.push(`\n=== ${n} lit\n--- query\nSELECT ${lit} AS r`);
      // As columns: NULLs typed, so the subquery's column has the argument's type.
      const cols = a.map((v, i) => `${v === 'NULL' ? typedNull(g.args[i]!) : v} AS a${i}`).join(', ');
      out.push(`\n=== ${n} col\n--- query\nSELECT ${call(g, a.map((_, i) => `a${i}`), false)} AS r FROM (SELECT ${cols})`);
      if (!g.op) out.push(`\n=== ${n} safe\n--- query\nSELECT ${call(g, a, true)} AS r`);
    }
  }
  process.stdout.write(out.join('\n') + '\n');
  process.stderr.write(`${n} calls\n`);
}

main();
