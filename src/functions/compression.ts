// ZSTD_COMPRESS, ZSTD_DECOMPRESS_TO_BYTES, ZSTD_DECOMPRESS_TO_STRING over the
// reference zstd library compiled to wasm (@bokuweb/zstd-wasm ships the .wasm
// in the package; Node 20's zlib has no zstd).
//
// Kernels are synchronous, and the package's own `init()` is async, so the
// module is instantiated here synchronously (`new WebAssembly.Instance`,
// through the emscripten glue's documented `instantiateWasm` hook) on the
// first call; start-up does not pay for it (~7 ms, once).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { T } from '../types/types.js';
import { decodeUtf8, encodeUtf8 } from './conversion.js';
import { defineScalar, named, opt, sig } from './signature.js';
import { fail, rowKernel } from './vec.js';

// The WebAssembly JS API as far as used here (the project compiles without the DOM lib, and
// @types/node does not declare it).
interface WasmInstance {
  readonly exports: object;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => WasmInstance;
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The part of the emscripten module (zstd.js of the package) used here. */
interface ZstdModule {
  instantiateWasm?: (imports: object, receive: (instance: WasmInstance) => unknown) => object;
  init(): void;
  calledRun?: boolean;
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  _ZSTD_compressBound(srcSize: number): number;
  _ZSTD_compress(dst: number, dstCapacity: number, src: number, srcSize: number, level: number): number;
  _ZSTD_decompress(dst: number, dstCapacity: number, src: number, srcSize: number): number;
  _ZSTD_getFrameContentSize(src: number, srcSize: number): number;
  _ZSTD_isError(code: number): number;
}

let zstd: ZstdModule | undefined;

function zstdModule(): ZstdModule {
  if (zstd) return zstd;
  const require = createRequire(import.meta.url);
  // The package's exports map only exposes its async entry; its glue and wasm sit beside it.
  const dir = dirname(require.resolve('@bokuweb/zstd-wasm'));
  const m = (require(join(dir, 'zstd.js')) as { Module: ZstdModule }).Module;
  const wasm = new Wasm.Module(readFileSync(join(dir, 'zstd.wasm')));
  m.instantiateWasm = (imports, receive) => {
    const instance = new Wasm.Instance(wasm, imports);
    receive(instance);
    return instance.exports;
  };
  m.init();
  if (!m.calledRun) throw new Error('zstd wasm runtime did not initialize synchronously');
  zstd = m;
  return m;
}

// zstd error codes (zstd_errors.h) a decoder meets, with the library's own names.
const ZSTD_ERRORS: Record<number, string> = {
  1: 'Error (generic)',
  10: 'Unknown frame descriptor',
  12: 'Version not supported',
  14: 'Unsupported frame parameter',
  16: 'Frame requires too much memory for decoding',
  20: 'Data corruption detected',
  22: 'Restored data doesn\'t match checksum',
  32: 'Dictionary mismatch',
  64: 'Allocation error : not enough memory',
  72: 'Src size is incorrect',
};
const DST_TOO_SMALL = 70;

/** A size_t error result as wasm32 returns it (negated code, as a signed i32). */
function errorCode(r: number): number {
  return -(r | 0);
}

const MIN_LEVEL = -5;
const MAX_LEVEL = 22;
/** Default size_limit of the decompress functions (the documentation states none; 1 GiB). */
const DEFAULT_SIZE_LIMIT = 1 << 30;

export function zstdCompress(input: Uint8Array, level: number): Uint8Array {
  if (level < MIN_LEVEL || level > MAX_LEVEL) fail(`ZSTD compression level must be between ${MIN_LEVEL} and ${MAX_LEVEL}, but was ${level}`);
  const m = zstdModule();
  const src = m._malloc(Math.max(input.length, 1));
  const bound = m._ZSTD_compressBound(input.length);
  const dst = m._malloc(bound);
  try {
    m.HEAPU8.set(input, src);
    const n = m._ZSTD_compress(dst, bound, src, input.length, level);
    if (m._ZSTD_isError(n)) fail(`ZSTD compression failed: ${ZSTD_ERRORS[errorCode(n)] ?? `error ${errorCode(n)}`}`);
    return m.HEAPU8.slice(dst, dst + n);
  } finally {
    m._free(dst);
    m._free(src);
  }
}

/** Past the limit, a streamed output is decompressed this far to name its size in the error. */
const MEASURE_CAP = 64 << 20;

/**
 * Decompresses every frame of `input`; an output longer than `sizeLimit`
 * bytes is an error naming both sizes (the service's "ZSTD output is too
 * large: (5 bytes) > limit (1 bytes)"). The first frame's declared size sizes
 * the buffer; frames without one (streamed) grow it by doubling.
 */
export function zstdDecompress(input: Uint8Array, sizeLimit: number): Uint8Array {
  if (sizeLimit <= 0) fail(`ZSTD size limit must be positive, but was ${sizeLimit}`);
  const tooLarge = (size: string): never => fail(`ZSTD output is too large: (${size} bytes) > limit (${sizeLimit} bytes)`);
  const m = zstdModule();
  const src = m._malloc(Math.max(input.length, 1));
  let dst = 0;
  try {
    m.HEAPU8.set(input, src);
    const declared = m._ZSTD_getFrameContentSize(src, input.length);
    if (declared === -2) fail(`Invalid ZSTD input: ${input.length < 4 ? 'Src size is incorrect' : 'Unknown frame descriptor'}`);
    if (declared > sizeLimit) tooLarge(String(declared));
    // -1: size unknown; other negatives: a declared size past 2^31 (the i32 result wrapped).
    let capacity = declared >= 0 ? declared : Math.min(sizeLimit, Math.max(1 << 16, input.length * 4));
    const measureCap = Math.max(sizeLimit, MEASURE_CAP);
    for (;;) {
      dst = m._malloc(Math.max(capacity, 1));
      if (dst === 0) fail(`ZSTD output exceeds the available memory (${capacity} bytes)`);
      const r = m._ZSTD_decompress(dst, capacity, src, input.length);
      if (!m._ZSTD_isError(r)) {
        if (r > sizeLimit) tooLarge(String(r));
        return m.HEAPU8.slice(dst, dst + r);
      }
      m._free(dst);
      dst = 0;
      const code = errorCode(r);
      if (code !== DST_TOO_SMALL) fail(`Invalid ZSTD input: ${ZSTD_ERRORS[code] ?? `error ${code}`}`);
      if (capacity >= measureCap) tooLarge(`more than ${capacity}`);
      capacity = Math.min(measureCap, Math.max(capacity * 2, 1 << 16));
    }
  } finally {
    if (dst !== 0) m._free(dst);
    m._free(src);
  }
}

function sizeLimitOf(v: readonly unknown[]): number {
  if (v.length < 2) return DEFAULT_SIZE_LIMIT;
  const limit = v[1] as bigint;
  // Beyond what a wasm32 heap can hold anyway: the limit cannot be reached.
  return limit > 0x7fffffffn ? 0x7fffffff : Number(limit);
}

export function registerCompression(): void {
  const level = (v: readonly unknown[]): number => {
    if (v.length < 2) return 3;
    const l = v[1] as bigint;
    if (l < BigInt(MIN_LEVEL) || l > BigInt(MAX_LEVEL)) fail(`ZSTD compression level must be between ${MIN_LEVEL} and ${MAX_LEVEL}, but was ${l}`);
    return Number(l);
  };
  defineScalar('ZSTD_COMPRESS', [
    sig(['BYTES', opt('INT64', 'level')], 'BYTES', rowKernel(T.BYTES, (v) => zstdCompress(v[0] as Uint8Array, level(v)))),
    sig(['STRING', opt('INT64', 'level')], 'BYTES', rowKernel(T.BYTES, (v) => zstdCompress(encodeUtf8(v[0] as string), level(v)))),
  ]);
  defineScalar('ZSTD_DECOMPRESS_TO_BYTES', [
    sig(['BYTES', named('size_limit', 'INT64')], 'BYTES', rowKernel(T.BYTES, (v) => zstdDecompress(v[0] as Uint8Array, sizeLimitOf(v)))),
  ]);
  defineScalar('ZSTD_DECOMPRESS_TO_STRING', [
    sig(['BYTES', named('size_limit', 'INT64')], 'STRING', rowKernel(T.STRING, (v) => {
      const s = decodeUtf8(zstdDecompress(v[0] as Uint8Array, sizeLimitOf(v)));
      if (s === undefined) fail('ZSTD output is not valid UTF8 string');
      return s;
    })),
  ]);
}
