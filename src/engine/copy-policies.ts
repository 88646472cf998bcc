// A copy job's row access policies (using-row-level-security-with-features.md, Copy jobs): every source needs the
// TRUE filter (the caller's read is not one its policies filter), and the destination takes the sources' policies,
// which replace its own (a source without policies leaves it with none) unless the copy appends. They are
// committed with the copied rows: whole-table copies in TableWrites.commit, partition-decorated ones (the gateway's
// DML script, gateway/jobs/partition-copy.ts) in their transaction's COMMIT record (copyPolicyChange).
import { requireAllRowsOf } from '../analyzer/row-access.js';
import { invalid } from '../storage/errors.js';
import type { Resource } from '../storage/resources.js';
import type { EntryChange, Storage } from '../storage/store.js';
import { SESSION_USER } from './query.js';

export interface TableId {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
}

/** A copy's sources, destination and write disposition, as its job names them (partition decorators left off). */
export interface CopyPolicies {
  readonly sources: readonly TableId[];
  readonly destination: TableId;
  readonly write: string;
}

/**
 * The destination's policies after a copy of `copied` (the sources' policies) with write disposition `write`. A name
 * taken twice fails the copy as invalid input, before anything is written.
 */
export function policiesAfterCopy(st: Storage, dest: { p: string; d: string; t: string }, write: string, copied: readonly Resource[]): Record<string, Resource> {
  const existing = st.getTable(dest.p, dest.d, dest.t);
  const out: Record<string, Resource> = write === 'WRITE_APPEND' && existing ? { ...existing.policies } : {};
  const now = String(Date.now());
  for (const pol of copied) {
    const id = String((pol.rowAccessPolicyReference as { policyId?: string } | undefined)?.policyId ?? '');
    if (out[id]) throw invalid(`Row access policy ${id} already exists on table ${dest.p}:${dest.d}.${dest.t}; the copy would take a second policy of that name`);
    out[id] = { ...pol, rowAccessPolicyReference: { projectId: dest.p, datasetId: dest.d, tableId: dest.t, policyId: id }, creationTime: now, lastModifiedTime: now };
  }
  return out;
}

/** The destination's policies after copy `c`, its sources checked (each must grant the TRUE filter). */
export function copiedPolicies(st: Storage, c: CopyPolicies): Record<string, Resource> {
  const copied: Resource[] = [];
  for (const s of c.sources) {
    const policies = Object.values(st.requireTable(s.projectId, s.datasetId, s.tableId).policies);
    requireAllRowsOf(policies, s, SESSION_USER);
    copied.push(...policies);
  }
  const { projectId: p, datasetId: d, tableId: t } = c.destination;
  return policiesAfterCopy(st, { p, d, t }, (c.write || 'WRITE_EMPTY').toUpperCase(), copied);
}

/** Copy `c`'s change of its destination's entry, made at the commit of its rows (Transaction.commit's entry). */
export function copyPolicyChange(st: Storage, c: CopyPolicies): EntryChange {
  const { projectId: p, datasetId: d, tableId: t } = c.destination;
  return { p, d, t, change: (e) => ({ ...e, policies: copiedPolicies(st, c) }) };
}
