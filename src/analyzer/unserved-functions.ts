// Functions of the service that the emulator does not serve. "Function not found" would claim the service lacks
// them, so each is refused with what it needs and the emulator does not have:
// - a connection (federated_query_functions.md EXTERNAL_QUERY, objectref_functions.md OBJ.MAKE_REF's authorizer):
//   the emulator has no Connection API, so every connection is one that does not exist, answered as the service
//   answers a missing connection (as LOAD DATA ... WITH CONNECTION is);
// - Cloud KMS (aead_encryption_functions.md's wrapped keysets and keyset chains, dlp_functions.md);
// - Cloud Storage object access (objectref_functions.md's ObjectRef readers).
import type * as A from '../../grammar/ast.js';
import { notFound, sqlError } from './errors.js';

/** The connection argument's position, per function. */
const CONNECTION_ARG = new Map([
  ['EXTERNAL_QUERY', 0],
  ['OBJ.MAKE_REF', 1],
]);

const NEEDS_KMS = new Set([
  'KEYS.KEYSET_CHAIN',
  'KEYS.NEW_WRAPPED_KEYSET',
  'KEYS.REWRAP_KEYSET',
  'KEYS.ROTATE_WRAPPED_KEYSET',
  'DLP_KEY_CHAIN',
  'DLP_DETERMINISTIC_ENCRYPT',
  'DLP_DETERMINISTIC_DECRYPT',
]);

const NEEDS_OBJECT_ACCESS = new Set(['OBJ.FETCH_METADATA', 'OBJ.GET_ACCESS_URL', 'OBJ.GET_READ_URL']);

/** Throws the refusal of a service function the emulator does not serve; returns when `name` is none of them. */
export function refuseUnservedFunction(name: readonly string[], args: readonly unknown[], loc: A.Loc | undefined): void {
  const fn = name.join('.').toUpperCase();
  const at = CONNECTION_ARG.get(fn);
  if (at !== undefined) {
    const c = args[at] as A.Expr | undefined;
    if (c?.kind === 'StringLiteral') throw notFound(`Not found: Connection ${c.value}`);
    throw sqlError(`${fn} needs a connection, and the emulator has no Connection API: every connection is one that does not exist`, loc);
  }
  if (NEEDS_KMS.has(fn)) throw sqlError(`${fn} is not supported by the emulator: it needs Cloud KMS, which the emulator cannot reach`, loc);
  if (NEEDS_OBJECT_ACCESS.has(fn)) throw sqlError(`${fn} is not supported by the emulator: it needs access to Cloud Storage objects, which the emulator does not have`, loc);
}
