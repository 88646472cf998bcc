// Snappy decompression (the raw block format of github.com/google/snappy's
// format_description.txt), for Avro files written with the `snappy` codec:
// each Avro block is a snappy block followed by the big-endian CRC-32 of the
// uncompressed bytes. Decoding only: the emulator never writes snappy.
export class SnappyError extends Error {}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE), as Avro's snappy codec checks it (zlib.crc32 needs Node 20.15). */
function crc32(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The uncompressed bytes of one raw snappy block. */
export function snappyDecompress(src: Uint8Array): Buffer {
  let pos = 0;
  // Preamble: the uncompressed length as a little-endian base-128 varint.
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= src.length || shift > 28) throw new SnappyError('bad snappy length');
    const b = src[pos++]!;
    length += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  const out = Buffer.allocUnsafe(length);
  let o = 0;
  const le = (n: number): number => {
    if (pos + n > src.length) throw new SnappyError('truncated snappy block');
    let v = 0;
    for (let i = 0; i < n; i++) v += src[pos++]! * 2 ** (8 * i);
    return v;
  };
  while (pos < src.length) {
    const tag = src[pos++]!;
    let len: number;
    let offset: number;
    switch (tag & 3) {
      case 0: {
        // Literal: length-1 in the tag's upper 6 bits, or in the 1-4 bytes that follow (60..63).
        const n = tag >> 2;
        len = (n < 60 ? n : le(n - 59)) + 1;
        if (pos + len > src.length || o + len > length) throw new SnappyError('snappy literal out of bounds');
        out.set(src.subarray(pos, pos + len), o);
        pos += len;
        o += len;
        continue;
      }
      case 1:
        len = ((tag >> 2) & 7) + 4;
        offset = ((tag >> 5) << 8) | le(1);
        break;
      case 2:
        len = (tag >> 2) + 1;
        offset = le(2);
        break;
      default:
        len = (tag >> 2) + 1;
        offset = le(4);
    }
    if (offset === 0 || offset > o || o + len > length) throw new SnappyError('snappy copy out of bounds');
    // Copies may overlap their own output (a run): byte by byte.
    for (let i = 0; i < len; i++, o++) out[o] = out[o - offset]!;
  }
  if (o !== length) throw new SnappyError('snappy block shorter than its length');
  return out;
}

/** One Avro `snappy` block: the snappy data, then the CRC-32 of what it decompresses to. */
export function avroSnappyBlock(block: Uint8Array): Buffer {
  if (block.length < 4) throw new SnappyError('Avro snappy block without its checksum');
  const data = snappyDecompress(block.subarray(0, block.length - 4));
  const want = Buffer.from(block.buffer, block.byteOffset + block.length - 4, 4).readUInt32BE(0);
  if (crc32(data) !== want) throw new SnappyError('Avro snappy block checksum mismatch');
  return data;
}
