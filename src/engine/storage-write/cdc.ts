// Change data capture ingestion (change-data-capture.md): rows appended to a
// table's `_default` stream carrying the pseudocolumn `_CHANGE_TYPE` (UPSERT,
// DELETE) and optionally `_CHANGE_SEQUENCE_NUMBER` change the rows of their
// primary key instead of being appended. This module holds the rules that
// need no storage: which writer fields are the pseudocolumns, the checks of
// their values, the sequence numbers' order, which change of a key wins, and
// which tables are "active with CDC" (a connection streaming changes to them
// is open), which refuse mutating DML. RowService.applyChanges commits them.
import type { Column } from '../../types/schema.js';
import { T } from '../../types/types.js';

export const CHANGE_TYPE = '_CHANGE_TYPE';
export const CHANGE_SEQUENCE_NUMBER = '_CHANGE_SEQUENCE_NUMBER';

/** The pseudocolumns as the writer schema may name them (a row's JSON carries them under these names). */
export const PSEUDO_COLUMNS: readonly Column[] = [
  { name: CHANGE_TYPE, type: T.STRING, required: false },
  { name: CHANGE_SEQUENCE_NUMBER, type: T.STRING, required: false },
];

export const isPseudoColumn = (name: string): boolean => PSEUDO_COLUMNS.some((c) => c.name === name.toUpperCase());

/** One row's change: its kind and its sequence number's sections (null when the row has none). */
export interface Change {
  readonly kind: 'UPSERT' | 'DELETE';
  readonly seq: readonly bigint[] | null;
}

/** change-data-capture.md, Limitations: a row of another or no _CHANGE_TYPE among CDC rows. */
export const INVALID_CHANGE_TYPE = 'The given value is not a valid CHANGE_TYPE';

/**
 * _CHANGE_SEQUENCE_NUMBER format: hexadecimal sections split by '/', each 1 to 16 digits (upper or lower case), up
 * to four sections. The sections' values, or null when `text` is not of that form.
 */
export function parseSequence(text: string): bigint[] | null {
  const parts = text.split('/');
  if (parts.length > 4) return null;
  const out: bigint[] = [];
  for (const p of parts) {
    if (!/^[0-9A-Fa-f]{1,16}$/.test(p)) return null;
    out.push(BigInt(`0x${p}`));
  }
  return out;
}

/**
 * Sections compared in turn as unsigned numbers ('FFF/ABC' > 'FFF/B', 'ABC' > 'BA/FFFFFFFF'); where one runs out
 * first and all before were equal, the longer is the larger.
 */
export function compareSequence(a: readonly bigint[], b: readonly bigint[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i >= a.length) return -1;
    if (i >= b.length) return 1;
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return 0;
}

/**
 * Whether change `next`, ingested after `prev`, replaces it: the larger sequence number wins; without one on either
 * side, or with equal ones, the later ingestion does (Manage custom ordering).
 */
export function supersedes(next: readonly bigint[] | null, prev: readonly bigint[] | null): boolean {
  return next === null || prev === null || compareSequence(next, prev) >= 0;
}

/**
 * The change each row asks for, its pseudocolumns taken out of the row; or the row errors: a _CHANGE_TYPE other
 * than UPSERT or DELETE (or none), a malformed _CHANGE_SEQUENCE_NUMBER.
 */
export function takeChanges(rows: Record<string, unknown>[]): { changes: Change[]; errors: { index: number; message: string }[] } {
  const changes: Change[] = [];
  const errors: { index: number; message: string }[] = [];
  rows.forEach((row, index) => {
    const kind = row[CHANGE_TYPE];
    const seqText = row[CHANGE_SEQUENCE_NUMBER];
    delete row[CHANGE_TYPE];
    delete row[CHANGE_SEQUENCE_NUMBER];
    if (kind !== 'UPSERT' && kind !== 'DELETE') {
      errors.push({ index, message: `${INVALID_CHANGE_TYPE}: ${kind === undefined || kind === null ? 'none' : JSON.stringify(kind)} (expected UPSERT or DELETE)` });
      return;
    }
    let seq: bigint[] | null = null;
    if (seqText !== undefined && seqText !== null) {
      seq = typeof seqText === 'string' ? parseSequence(seqText) : null;
      if (!seq) {
        errors.push({ index, message: `Invalid _CHANGE_SEQUENCE_NUMBER ${JSON.stringify(seqText)}: expected up to four '/'-separated sections of 1 to 16 hexadecimal digits` });
        return;
      }
    }
    changes.push({ kind, seq });
  });
  return { changes, errors };
}

/** Sequence sections as stored text ('ff/1'), and back. */
export const sequenceText = (seq: readonly bigint[]): string => seq.map((s) => s.toString(16)).join('/');

/**
 * Tables "active with CDC" (Specify changes to existing records: "while the Storage Write API (gRPC) is streaming
 * row modifications to the table"): counted per open connection that has appended changes to them.
 */
class ActiveCdc {
  private readonly open = new Map<string, number>();

  static key(p: string, d: string, t: string): string {
    return `${p}\u0000${d}\u0000${t}`;
  }

  enter(key: string): void {
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
  }

  leave(key: string): void {
    const n = (this.open.get(key) ?? 0) - 1;
    if (n > 0) this.open.set(key, n);
    else this.open.delete(key);
  }

  isActive(p: string, d: string, t: string): boolean {
    return this.open.has(ActiveCdc.key(p, d, t));
  }
}

export const activeCdc = new ActiveCdc();
export const cdcKey = ActiveCdc.key;
