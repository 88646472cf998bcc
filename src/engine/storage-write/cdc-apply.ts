// One CDC append (change-data-capture.md) applied to its table as one commit:
// the rows of the keys it changes deleted and its winning UPSERTs added (a
// row-level change, as DML's), with the table entry's apply watermark and the
// table's kept sequence numbers, in one catalog record (Storage.commitRows).
// An acknowledged append is thus applied exactly once and survives kill -9;
// a reader or a DML statement sees all of it or none (the caller holds the
// table's mutation lock, as a DML statement does).
//
// Kept sequence numbers (`<stem>.cdc.json`): the last applied
// _CHANGE_SEQUENCE_NUMBER of each key that had one, so that a change of a
// later append with a smaller number loses (Manage custom ordering), and of
// deleted keys for two days (Deleted data considerations: the delete
// retention window for DELETEs arriving out of order). Keys changed without
// a number keep none: the later ingestion wins.
import * as fsp from 'node:fs/promises';
import { invalid } from '../../storage/errors.js';
import { ROW_POSITION } from '../../storage/api.js';
import type { CommitFile, Storage } from '../../storage/store.js';
import { TableConflictError, type TableData } from '../../storage/table-data.js';
import { scanState } from '../../storage/table-state.js';
import { getValue, takeVector, type Batch } from '../../types/vector.js';
import type { Value } from '../../types/values.js';
import { parseSequence, sequenceText, supersedes, type Change } from './cdc.js';

/** change-data-capture.md, Deleted data considerations: "a delete retention window of two days". */
const DELETE_RETENTION_MS = 2 * 86_400_000;

/** A key's last applied sequence number: its text, whether the change was a DELETE, when it was applied (ms). */
type Kept = readonly [seq: string, deleted: 0 | 1, ms: number];

/** Kept sequence numbers by table storage (a new incarnation is a new TableData); loaded from the file once. */
const keptByTable = new WeakMap<TableData, Map<string, Kept>>();

const stateFile = (td: TableData): string => td.sidecarFile.replace(/\.meta\.json$/, '.cdc.json');

async function keptOf(td: TableData): Promise<Map<string, Kept>> {
  let kept = keptByTable.get(td);
  if (kept) return kept;
  try {
    const parsed = JSON.parse(await fsp.readFile(stateFile(td), 'utf8')) as { keys: Record<string, Kept> };
    kept = new Map(Object.entries(parsed.keys));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    kept = new Map();
  }
  keptByTable.set(td, kept);
  return kept;
}

/** The table's primary key columns (their positions among its stored columns). */
export function primaryKeyNames(resource: Record<string, unknown>): string[] {
  const c = resource.tableConstraints as { primaryKey?: { columns?: string[] } } | undefined;
  return c?.primaryKey?.columns ?? [];
}

/** A key's identity: its values as text (equal values of a column's type give equal text). */
const keyText = (values: readonly Value[]): string => JSON.stringify(values, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));

export async function applyChangeBatch(st: Storage, td: TableData, id: { p: string; d: string; t: string }, batch: Batch, changes: readonly Change[]): Promise<void> {
  const { p, d, t } = id;
  const entry = st.requireTable(p, d, t);
  const columns = st.storedColumnsOf(entry);
  const keyCols = primaryKeyNames(entry.resource).map((n) => columns.findIndex((c) => c.name.toLowerCase() === n.toLowerCase()));
  if (keyCols.length === 0 || keyCols.some((i) => i < 0)) throw invalid(`Table ${p}:${d}.${t} has no primary key: change data capture needs one`);
  const keyAt = (b: Batch, r: number, first = 0): string => keyText(keyCols.map((_, k) => getValue(b.columns[first + k]!, r)));
  const ownKey = (r: number): string => keyText(keyCols.map((c) => getValue(batch.columns[c]!, r)));

  // The change of each key that wins within the append (rows in ingestion order), then against the kept numbers.
  const winner = new Map<string, number>();
  for (let r = 0; r < batch.length; r++) {
    const k = ownKey(r);
    const prev = winner.get(k);
    if (prev === undefined || supersedes(changes[r]!.seq, changes[prev]!.seq)) winner.set(k, r);
  }
  const now = Date.now();
  const kept = await keptOf(td);
  const next = new Map([...kept].filter(([, v]) => v[1] === 0 || now - v[2] < DELETE_RETENTION_MS));
  const applied = new Map<string, number>();
  for (const [k, r] of winner) {
    const before = next.get(k);
    const { kind, seq } = changes[r]!;
    if (before && !supersedes(seq, parseSequence(before[0]))) continue;
    applied.set(k, r);
    if (seq) next.set(k, [sequenceText(seq), kind === 'DELETE' ? 1 : 0, now]);
    else next.delete(k);
  }

  await td.load();
  const base = td.state();
  const positions: number[] = [];
  if (applied.size > 0) {
    for await (const b of scanState(base, [...keyCols, ROW_POSITION])) {
      const pos = b.columns[keyCols.length]!.data as ArrayLike<number>;
      for (let r = 0; r < b.length; r++) if (applied.has(keyAt(b, r))) positions.push(Number(pos[r]));
    }
  }
  const upserts = [...applied.values()].filter((r) => changes[r]!.kind === 'UPSERT').sort((a, b) => a - b);
  const added: Batch[] = upserts.length > 0 ? [{ length: upserts.length, columns: batch.columns.map((v) => takeVector(v, upserts)) }] : [];
  const prepared = await td.prepareChange(base, positions, added);
  const text = JSON.stringify({ keys: Object.fromEntries(next) });
  const file: CommitFile = { file: stateFile(td), text: () => text };
  let handed = false;
  try {
    await st.commitRowsWithEntry(p, d, t, (e) => ({ ...e, cdcWatermark: now }), async (current) => {
      if (current !== td) throw invalid(`Table ${p}:${d}.${t} was replaced while a change data capture append was applied to it`);
      handed = true;
      return prepared;
    }, [file]);
  } catch (e) {
    // Files no commit named (refused before, or a conflict) are no one's; after a failed write a restart decides.
    if (!handed || e instanceof TableConflictError) await td.discard(prepared);
    throw e;
  }
  keptByTable.set(td, next);
}
