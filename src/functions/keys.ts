// KEYS.*, AEAD.* and DETERMINISTIC_* functions over Tink binary keysets
// (protobuf google.crypto.tink.Keyset): AES-GCM (AEAD) and AES-SIV (deterministic).
import { createCipheriv, createDecipheriv, randomBytes, randomInt } from 'node:crypto';
import { T } from '../types/types.js';
import type { Value } from '../types/values.js';
import { decodeUtf8, encodeUtf8 } from './conversion.js';
import { defineScalar, sig } from './signature.js';
import { fail, rowKernel } from './vec.js';

const URL_GCM = 'type.googleapis.com/google.crypto.tink.AesGcmKey';
const URL_SIV = 'type.googleapis.com/google.crypto.tink.AesSivKey';
const URL_CBC = 'type.googleapis.com/google.crypto.tink.AesCbcPkcs7Key';
const URL_ECB = 'type.googleapis.com/google.crypto.tink.AesEcbPkcs7Key';

interface Key {
  typeUrl: string;
  /** The key proto's bytes (e.g. AesGcmKey{key_value}). */
  value: Uint8Array;
  materialType: number; // 1 = SYMMETRIC
  status: number; // 1 = ENABLED
  keyId: number;
  prefix: number; // 1 = TINK, 3 = RAW
  /** False for a key entry without key_data (a destroyed key's metadata, e.g. from KEYSET_FROM_JSON). */
  hasKeyData?: boolean;
}
interface Keyset {
  primary: number;
  keys: Key[];
}

// ---------------------------------------------------------------- protobuf (just what Keyset needs)

function varint(n: number): number[] {
  const out: number[] = [];
  let x = n >>> 0 === n ? n : n;
  do {
    let b = x % 128;
    x = Math.floor(x / 128);
    if (x > 0) b |= 0x80;
    out.push(b);
  } while (x > 0);
  return out;
}
function field(no: number, wire: number): number[] {
  return varint(no * 8 + wire);
}
function lenField(no: number, bytes: ArrayLike<number>): number[] {
  return [...field(no, 2), ...varint(bytes.length), ...Array.from(bytes)];
}
function intField(no: number, v: number): number[] {
  return v === 0 ? [] : [...field(no, 0), ...varint(v)];
}

function encodeKeyset(ks: Keyset): Uint8Array {
  const out: number[] = [...intField(1, ks.primary)];
  for (const k of ks.keys) {
    const kd = [...lenField(1, encodeUtf8(k.typeUrl)), ...lenField(2, k.value), ...intField(3, k.materialType)];
    const key = [...(k.hasKeyData === false ? [] : lenField(1, kd)), ...intField(2, k.status), ...intField(3, k.keyId), ...intField(4, k.prefix)];
    out.push(...lenField(2, key));
  }
  return Uint8Array.from(out);
}

class Reader {
  i = 0;
  constructor(readonly b: Uint8Array) {}
  varint(): number {
    let x = 0;
    let mul = 1;
    for (;;) {
      if (this.i >= this.b.length) throw new Error('truncated');
      const c = this.b[this.i++]!;
      x += (c & 0x7f) * mul;
      if (!(c & 0x80)) return x;
      mul *= 128;
    }
  }
  bytes(): Uint8Array {
    const n = this.varint();
    if (this.i + n > this.b.length) throw new Error('truncated');
    const r = this.b.subarray(this.i, this.i + n);
    this.i += n;
    return r;
  }
  fields(cb: (no: number, wire: number) => void): void {
    while (this.i < this.b.length) {
      const tag = this.varint();
      const no = Math.floor(tag / 8);
      const wire = tag % 8;
      cb(no, wire);
    }
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytes();
    else throw new Error('bad wire type');
  }
}

function decodeKeyset(b: Uint8Array, fn: string): Keyset {
  try {
    const r = new Reader(b);
    const ks: Keyset = { primary: 0, keys: [] };
    r.fields((no, wire) => {
      if (no === 1 && wire === 0) ks.primary = r.varint();
      else if (no === 2 && wire === 2) {
        const kr = new Reader(r.bytes());
        const k: Key = { typeUrl: '', value: new Uint8Array(0), materialType: 0, status: 0, keyId: 0, prefix: 0, hasKeyData: false };
        kr.fields((kno, kw) => {
          if (kno === 1 && kw === 2) {
            k.hasKeyData = true;
            const dr = new Reader(kr.bytes());
            dr.fields((dno, dw) => {
              if (dno === 1 && dw === 2) k.typeUrl = new TextDecoder().decode(dr.bytes());
              else if (dno === 2 && dw === 2) k.value = Uint8Array.from(dr.bytes());
              else if (dno === 3 && dw === 0) k.materialType = dr.varint();
              else dr.skip(dw);
            });
          } else if (kno === 2 && kw === 0) k.status = kr.varint();
          else if (kno === 3 && kw === 0) k.keyId = kr.varint();
          else if (kno === 4 && kw === 0) k.prefix = kr.varint();
          else kr.skip(kw);
        });
        ks.keys.push(k);
      } else r.skip(wire);
    });
    return ks;
  } catch {
    fail(`${fn} failed: Keyset deserialization failed: Error reading keyset data`);
  }
}

/** key_value of an AesGcmKey / AesSivKey / AesCbcPkcs7Key proto. */
function keyMaterial(k: Key): Uint8Array {
  const r = new Reader(k.value);
  let out: Uint8Array = new Uint8Array(0);
  r.fields((no, wire) => {
    if (wire === 2 && (no === 2 || no === 3)) out = Uint8Array.from(r.bytes());
    else r.skip(wire);
  });
  return out;
}

function newKeyId(ks: Keyset | null): number {
  for (;;) {
    const id = randomInt(1, 0x7fffffff) + (randomInt(0, 2) ? 0x80000000 : 0);
    if (!ks || !ks.keys.some((k) => k.keyId === id)) return id;
  }
}

function newKey(keyType: string, ks: Keyset | null, fn: string): Key {
  switch (keyType) {
    case 'AEAD_AES_GCM_256':
      return { typeUrl: URL_GCM, value: Uint8Array.from(lenField(3, randomBytes(32))), materialType: 1, status: 1, keyId: newKeyId(ks), prefix: 1 };
    case 'DETERMINISTIC_AEAD_AES_SIV_CMAC_256':
      return { typeUrl: URL_SIV, value: Uint8Array.from(lenField(2, randomBytes(64))), materialType: 1, status: 1, keyId: newKeyId(ks), prefix: 1 };
  }
  const which = fn === 'KEYS.NEW_KEYSET' ? 'First' : 'Second';
  fail(`${which} argument (key type) in function ${fn} must be one of 'AEAD_AES_GCM_256', 'DETERMINISTIC_AEAD_AES_SIV_CMAC_256', but is '${keyType}'`);
}

// ---------------------------------------------------------------- AES-GCM / AES-SIV

function prefixOf(k: Key): Uint8Array {
  if (k.prefix === 3) return new Uint8Array(0);
  const p = new Uint8Array(5);
  p[0] = k.prefix === 1 ? 1 : 0;
  new DataView(p.buffer).setUint32(1, k.keyId >>> 0);
  return p;
}

function gcmEncrypt(key: Uint8Array, pt: Uint8Array, aad: Uint8Array): Uint8Array {
  const iv = randomBytes(12);
  const c = createCipheriv(key.length === 16 ? 'aes-128-gcm' : 'aes-256-gcm', key, iv);
  c.setAAD(aad);
  const ct = Buffer.concat([c.update(pt), c.final()]);
  return Uint8Array.from(Buffer.concat([iv, ct, c.getAuthTag()]));
}
function gcmDecrypt(key: Uint8Array, data: Uint8Array, aad: Uint8Array): Uint8Array | undefined {
  if (data.length < 28) return undefined;
  try {
    const d = createDecipheriv(key.length === 16 ? 'aes-128-gcm' : 'aes-256-gcm', key, data.subarray(0, 12));
    d.setAAD(aad);
    d.setAuthTag(data.subarray(data.length - 16));
    return Uint8Array.from(Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]));
  } catch {
    return undefined;
  }
}

function aesBlock(key: Uint8Array, block: Uint8Array): Uint8Array {
  const c = createCipheriv(`aes-${key.length * 8}-ecb`, key, null);
  c.setAutoPadding(false);
  return Uint8Array.from(Buffer.concat([c.update(block), c.final()]));
}
function dbl(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(16);
  let carry = 0;
  for (let i = 15; i >= 0; i--) {
    out[i] = ((b[i]! << 1) | carry) & 0xff;
    carry = b[i]! >> 7;
  }
  if (b[0]! & 0x80) out[15]! ^= 0x87;
  return out;
}
function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}
function cmac(key: Uint8Array, msg: Uint8Array): Uint8Array {
  const l = aesBlock(key, new Uint8Array(16));
  const k1 = dbl(l);
  const k2 = dbl(k1);
  const n = Math.max(1, Math.ceil(msg.length / 16));
  const complete = msg.length > 0 && msg.length % 16 === 0;
  let x: Uint8Array = new Uint8Array(16);
  for (let i = 0; i < n - 1; i++) x = aesBlock(key, xor(x, msg.subarray(i * 16, i * 16 + 16)));
  let last: Uint8Array;
  if (complete) last = xor(msg.subarray((n - 1) * 16), k1);
  else {
    const p = new Uint8Array(16);
    const rest = msg.subarray((n - 1) * 16);
    p.set(rest);
    p[rest.length] = 0x80;
    last = xor(p, k2);
  }
  return aesBlock(key, xor(x, last));
}
function s2v(key: Uint8Array, ad: Uint8Array, pt: Uint8Array): Uint8Array {
  let d = cmac(key, new Uint8Array(16));
  d = xor(dbl(d), cmac(key, ad));
  let t: Uint8Array;
  if (pt.length >= 16) {
    t = Uint8Array.from(pt);
    const off = pt.length - 16;
    for (let i = 0; i < 16; i++) t[off + i]! ^= d[i]!;
  } else {
    const p = new Uint8Array(16);
    p.set(pt);
    p[pt.length] = 0x80;
    t = xor(dbl(d), p);
  }
  return cmac(key, t);
}
function sivCtr(key: Uint8Array, v: Uint8Array, data: Uint8Array): Uint8Array {
  const q = Uint8Array.from(v);
  q[8]! &= 0x7f;
  q[12]! &= 0x7f;
  const c = createCipheriv(`aes-${key.length * 8}-ctr`, key, q);
  return Uint8Array.from(Buffer.concat([c.update(data), c.final()]));
}
function sivEncrypt(key: Uint8Array, pt: Uint8Array, aad: Uint8Array): Uint8Array {
  const half = key.length / 2;
  const v = s2v(key.subarray(0, half), aad, pt);
  const ct = sivCtr(key.subarray(half), v, pt);
  const out = new Uint8Array(16 + ct.length);
  out.set(v);
  out.set(ct, 16);
  return out;
}
function sivDecrypt(key: Uint8Array, data: Uint8Array, aad: Uint8Array): Uint8Array | undefined {
  if (data.length < 16) return undefined;
  const half = key.length / 2;
  const v = data.subarray(0, 16);
  const pt = sivCtr(key.subarray(half), v, data.subarray(16));
  const check = s2v(key.subarray(0, half), aad, pt);
  for (let i = 0; i < 16; i++) if (check[i] !== v[i]) return undefined;
  return pt;
}

// ---------------------------------------------------------------- SQL functions

const toBytes = (v: Value): Uint8Array => (typeof v === 'string' ? encodeUtf8(v) : (v as Uint8Array));

function encrypt(fn: string, det: boolean) {
  return (v: Value[]): Value => {
    const ks = decodeKeyset(v[0] as Uint8Array, fn);
    if (ks.keys.length === 0) fail(`${fn} failed: Creation of ${det ? 'Deterministic AEAD' : 'AEAD'} primitive failed: A valid keyset must contain at least one key.`);
    const k = ks.keys.find((x) => x.keyId === ks.primary) ?? fail(`${fn} failed: keyset has no primary key`);
    // aead_encryption_functions.md: the primary key's algorithm must be AEAD_AES_GCM_256 for AEAD.ENCRYPT and
    // DETERMINISTIC_AEAD_AES_SIV_CMAC_256 for DETERMINISTIC_ENCRYPT.
    if (k.typeUrl !== (det ? URL_SIV : URL_GCM)) fail(`${fn} failed: the primary key of the keyset must be of type ${det ? 'DETERMINISTIC_AEAD_AES_SIV_CMAC_256' : 'AEAD_AES_GCM_256'}`);
    const mat = keyMaterial(k);
    const body = det ? sivEncrypt(mat, toBytes(v[1]!), toBytes(v[2]!)) : gcmEncrypt(mat, toBytes(v[1]!), toBytes(v[2]!));
    const p = prefixOf(k);
    const out = new Uint8Array(p.length + body.length);
    out.set(p);
    out.set(body, p.length);
    return out;
  };
}
function decrypt(fn: string, det: boolean, asString: boolean) {
  return (v: Value[]): Value => {
    const ks = decodeKeyset(v[0] as Uint8Array, fn);
    if (ks.keys.length === 0) fail(`${fn} failed: Creation of ${det ? 'Deterministic AEAD' : 'AEAD'} primitive failed: A valid keyset must contain at least one key.`);
    const data = v[1] as Uint8Array;
    const aad = toBytes(v[2]!);
    for (const k of ks.keys) {
      if (k.status !== 1) continue;
      const p = prefixOf(k);
      if (p.length > 0 && (data.length < p.length || p.some((b, i) => data[i] !== b))) continue;
      const mat = keyMaterial(k);
      const body = data.subarray(p.length);
      const pt = det ? sivDecrypt(mat, body, aad) : gcmDecrypt(mat, body, aad);
      if (pt === undefined) continue;
      if (!asString) return pt;
      const s = decodeUtf8(pt);
      if (s === undefined) fail(`${fn} failed: Decrypted plaintext is not a valid UTF-8 string. To decrypt to BYTES, use ${fn.replace('STRING', 'BYTES')}`);
      return s;
    }
    fail(`${fn} failed: decryption failed`);
  };
}

const RAW_TYPES: Record<string, { url: string; field: number; sizes: number[] }> = {
  AES_GCM: { url: URL_GCM, field: 3, sizes: [16, 32] },
  AES_CBC_PKCS: { url: URL_CBC, field: 2, sizes: [16, 24, 32] },
  AES_ECB_PKCS: { url: URL_ECB, field: 2, sizes: [16, 24, 32] },
};

function keysetToJson(ks: Keyset): string {
  const names = ['UNKNOWN_PREFIX', 'TINK', 'LEGACY', 'RAW', 'CRUNCHY'];
  const status = ['UNKNOWN_STATUS', 'ENABLED', 'DISABLED', 'DESTROYED'];
  const mat = ['UNKNOWN_KEYMATERIAL', 'SYMMETRIC', 'ASYMMETRIC_PRIVATE', 'ASYMMETRIC_PUBLIC', 'REMOTE'];
  const keys = ks.keys.map(
    (k) =>
      `{${k.hasKeyData === false ? '' : `"keyData":{"keyMaterialType":"${mat[k.materialType] ?? 'UNKNOWN_KEYMATERIAL'}","typeUrl":"${k.typeUrl}","value":"${Buffer.from(k.value).toString('base64')}"},`}"keyId":${k.keyId},"outputPrefixType":"${names[k.prefix] ?? 'UNKNOWN_PREFIX'}","status":"${status[k.status] ?? 'UNKNOWN_STATUS'}"}`,
  );
  return `{"key":[${keys.join(',')}],"primaryKeyId":${ks.primary}}`;
}
function keysetFromJson(s: string): Keyset {
  let o: { primaryKeyId?: number; key?: { keyData?: { keyMaterialType: string; typeUrl: string; value: string }; keyId: number; outputPrefixType: string; status: string }[] };
  try {
    o = JSON.parse(s);
  } catch {
    fail('Invalid keyset JSON');
  }
  const names = ['UNKNOWN_PREFIX', 'TINK', 'LEGACY', 'RAW', 'CRUNCHY'];
  const status = ['UNKNOWN_STATUS', 'ENABLED', 'DISABLED', 'DESTROYED'];
  const mat = ['UNKNOWN_KEYMATERIAL', 'SYMMETRIC', 'ASYMMETRIC_PRIVATE', 'ASYMMETRIC_PUBLIC', 'REMOTE'];
  return {
    primary: o.primaryKeyId ?? 0,
    keys: (o.key ?? []).map((k) => ({
      typeUrl: k.keyData?.typeUrl ?? '',
      value: Uint8Array.from(Buffer.from(k.keyData?.value ?? '', 'base64')),
      materialType: Math.max(0, mat.indexOf(k.keyData?.keyMaterialType ?? '')),
      hasKeyData: k.keyData !== undefined,
      status: Math.max(0, status.indexOf(k.status)),
      keyId: k.keyId,
      prefix: Math.max(0, names.indexOf(k.outputPrefixType)),
    })),
  };
}

export function registerKeys(): void {
  const keyTypeConst = { type: 'STRING', constant: true, datePart: false } as const;
  // aead_encryption_functions.md, KEYS.NEW_KEYSET: key_type can't be NULL, so a NULL constant (typed or not) is
  // refused; a NULL query parameter gives NULL, as the pinned GoogleSQL case keys_4 has it.
  const nullKeyType = 'First argument (key type) in function KEYS.NEW_KEYSET must be a string literal or query parameter';
  defineScalar('KEYS.NEW_KEYSET', [
    sig([keyTypeConst], 'BYTES', rowKernel(T.BYTES, (v) => {
      const k = newKey(v[0] as string, null, 'KEYS.NEW_KEYSET');
      return encodeKeyset({ primary: k.keyId, keys: [k] });
    })),
  ], {
    volatile: true,
    validate: (args) => (args[0]?.untypedNull || (args[0]?.constant?.value === null && !args[0].isParameter) ? nullKeyType : undefined),
  });
  defineScalar('KEYS.ROTATE_KEYSET', [
    sig(['BYTES', 'STRING'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const ks = decodeKeyset(v[0] as Uint8Array, 'KEYS.ROTATE_KEYSET');
      const k = newKey(v[1] as string, ks, 'KEYS.ROTATE_KEYSET');
      // aead_encryption_functions.md, KEYS.ROTATE_KEYSET: the new key type must match the keyset's existing keys.
      if (ks.keys.some((x) => x.typeUrl !== k.typeUrl)) fail(`KEYS.ROTATE_KEYSET failed: the key type ${v[1] as string} does not match the key type of the keys in the keyset`);
      return encodeKeyset({ primary: k.keyId, keys: [...ks.keys, k] });
    })),
  ], { volatile: true });
  defineScalar('KEYS.ADD_KEY_FROM_RAW_BYTES', [
    sig(['BYTES', 'STRING', 'BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const ks = decodeKeyset(v[0] as Uint8Array, 'KEYS.ADD_KEY_FROM_RAW_BYTES');
      const t = RAW_TYPES[v[1] as string];
      if (!t) fail(`Invalid key type provided to KEYS.ADD_KEY_FROM_RAW_BYTES: ${v[1] as string}`);
      const raw = v[2] as Uint8Array;
      if (!t.sizes.includes(raw.length))
        fail(`Failed to add a key from raw bytes: Unsupported key size: ${raw.length} bytes; expected ${t.sizes.length === 2 ? '16 or 32' : '16, 24, or 32'} bytes.`);
      const k: Key = { typeUrl: t.url, value: Uint8Array.from(lenField(t.field, raw)), materialType: 1, status: 1, keyId: newKeyId(ks), prefix: 3 };
      return encodeKeyset({ primary: ks.primary, keys: [...ks.keys, k] });
    })),
  ], { volatile: true });
  defineScalar('KEYS.KEYSET_LENGTH', [sig(['BYTES'], 'INT64', rowKernel(T.INT64, (v) => BigInt(decodeKeyset(v[0] as Uint8Array, 'KEYS.KEYSET_LENGTH').keys.length)))]);
  defineScalar('KEYS.KEYSET_TO_JSON', [sig(['BYTES'], 'STRING', rowKernel(T.STRING, (v) => keysetToJson(decodeKeyset(v[0] as Uint8Array, 'KEYS.KEYSET_TO_JSON'))))]);
  defineScalar('KEYS.KEYSET_FROM_JSON', [sig(['STRING'], 'BYTES', rowKernel(T.BYTES, (v) => encodeKeyset(keysetFromJson(v[0] as string))))]);
  const pt = ['STRING', 'BYTES'];
  defineScalar('AEAD.ENCRYPT', pt.map((t) => sig(['BYTES', t, t], 'BYTES', rowKernel(T.BYTES, encrypt('AEAD.ENCRYPT', false)))), { volatile: true });
  // The *_DECRYPT_BYTES functions take additional_data as STRING or BYTES, a STRING as its UTF-8 bytes.
  defineScalar('AEAD.DECRYPT_BYTES', ['BYTES', 'STRING'].map((t) => sig(['BYTES', 'BYTES', t], 'BYTES', rowKernel(T.BYTES, decrypt('AEAD.DECRYPT_BYTES', false, false)))));
  defineScalar('AEAD.DECRYPT_STRING', [sig(['BYTES', 'BYTES', 'STRING'], 'STRING', rowKernel(T.STRING, decrypt('AEAD.DECRYPT_STRING', false, true)))]);
  defineScalar('DETERMINISTIC_ENCRYPT', pt.map((t) => sig(['BYTES', t, t], 'BYTES', rowKernel(T.BYTES, encrypt('DETERMINISTIC_ENCRYPT', true)))));
  defineScalar('DETERMINISTIC_DECRYPT_BYTES', ['BYTES', 'STRING'].map((t) => sig(['BYTES', 'BYTES', t], 'BYTES', rowKernel(T.BYTES, decrypt('DETERMINISTIC_DECRYPT_BYTES', true, false)))));
  defineScalar('DETERMINISTIC_DECRYPT_STRING', [sig(['BYTES', 'BYTES', 'STRING'], 'STRING', rowKernel(T.STRING, decrypt('DETERMINISTIC_DECRYPT_STRING', true, true)))]);
}
