// The incremental CSV parser (src/io/csv.ts): RFC 4180 cases, the quoted-empty
// vs NULL distinction, and the same records whatever the chunking (loads feed
// it straight from the upload stream).
import { describe, expect, it } from 'vitest';
import { CsvParser, parseCsv, type CsvCell } from '../../src/io/csv.js';

function chunked(text: string, sizes: number[], delimiter = ',', quote = '"'): CsvCell[][] {
  const out: CsvCell[][] = [];
  const p = new CsvParser(delimiter, quote, (r) => out.push(r));
  let i = 0;
  for (let k = 0; i < text.length; k++) {
    const n = sizes[k % sizes.length]!;
    p.push(text.slice(i, i + n));
    i += n;
  }
  p.push('', true);
  return out;
}

describe('CSV parser', () => {
  it('reads quoted fields, escaped quotes, line breaks inside quotes, and empty vs quoted-empty', () => {
    expect(parseCsv('a,"b,c","say ""hi""",,""\n"multi\nline",x\n', ',', '"')).toEqual([
      ['a', 'b,c', 'say "hi"', null, ''],
      ['multi\nline', 'x'],
    ]);
  });

  it('takes \\n, \\r\\n and \\r as record ends, skips blank lines, keeps a last record without a line break', () => {
    expect(parseCsv('1,2\r\n3,4\r5,6\n\n\r\n7,8', ',', '"')).toEqual([['1', '2'], ['3', '4'], ['5', '6'], ['7', '8']]);
    expect(parseCsv('""\n', ',', '"')).toEqual([['']]);
  });

  it('a quote is text except at the start of a field; quoting can be turned off; multi-character delimiters', () => {
    expect(parseCsv('5" screen,ok\n', ',', '"')).toEqual([['5" screen', 'ok']]);
    expect(parseCsv('"a","b"\n', ',', '')).toEqual([['"a"', '"b"']]);
    expect(parseCsv('a||b||||c\n', '||', '"')).toEqual([['a', 'b', null, 'c']]);
    expect(parseCsv('\ufeffh1,h2\n', ',', '"')).toEqual([['h1', 'h2']]);
  });

  it('gives the same records for any chunking', () => {
    const text = 'id,"name, full",note\r\n1,"a ""quoted"" word","x\ny"\r\n2,,""\r\n\r\n3,plain,"z"\n4||x,"",\r';
    const whole = parseCsv(text, ',', '"');
    for (const sizes of [[1], [2], [3], [1, 2, 5], [7], [13, 1]]) expect(chunked(text, sizes)).toEqual(whole);
    const multi = 'a::b::"c::d"\n::e::\n';
    expect(chunked(multi, [1], '::')).toEqual(parseCsv(multi, '::', '"'));
    expect(chunked(multi, [2, 3], '::')).toEqual([['a', 'b', 'c::d'], [null, 'e', null]]);
  });
});
