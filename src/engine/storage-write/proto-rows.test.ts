// Rows appended through the Storage Write API arrive as protocol buffer bytes; a STRING field's text is its
// code points, so a value that starts with U+FEFF keeps it (a default decoder drops it as a byte-order mark).
import { describe, expect, it } from 'vitest';
import { decodeRows, type MessageDescriptor } from './proto-rows.js';
import { T } from '../../types/types.js';

const desc: MessageDescriptor = {
  name: 'Row',
  field: [{ name: 's', number: 1, label: 'LABEL_OPTIONAL', type: 'TYPE_STRING', typeName: '' }],
  nestedType: [],
};

/** Field 1, wire type 2 (length-delimited): tag 0x0a, a one-byte length, the UTF-8 bytes. */
const row = (text: string): Uint8Array => {
  const b = Buffer.from(text, 'utf8');
  return Uint8Array.from([0x0a, b.length, ...b]);
};

describe('Storage Write rows: STRING fields', () => {
  it('keep a leading U+FEFF and refuse bytes that are not UTF-8', () => {
    const texts = ['\uFEFFabc', '\uFEFF', 'a\uFEFF'];
    const r = decodeRows([...texts.map(row), Uint8Array.from([0x0a, 1, 0xff])], desc, [{ name: 's', type: T.STRING, required: false }]);
    expect(r.rows.map((x) => x.s)).toEqual(texts);
    expect(r.errors).toEqual([{ index: 3, message: 'Field s: String field contains invalid UTF-8' }]);
  });
});
