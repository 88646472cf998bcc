// Row-level security: which of a table's row access policies apply to the session user, and whether the user has
// the "TRUE filter" (a policy granted to them whose filter is TRUE), which using-row-level-security-with-features.md
// requires of everything that needs the whole table: DML on it, copies, clones and snapshots of it.
import type { Loc } from '../../grammar/ast.js';
import type { QueryCatalog, TableId } from '../storage/api.js';
import { QueryError } from '../types/errors.js';
import { at } from './errors.js';

export type Policy = Record<string, unknown>;

export function policiesOf(catalog: QueryCatalog, id: TableId): readonly Policy[] {
  return catalog.listChildren('rowAccessPolicies', id.projectId, id.datasetId, id.tableId);
}

/**
 * rowAccessPolicies (REST): grantees are the initial members of the policy's IAM policy, the principals given
 * bigquery.filteredDataViewer; a policy made without GRANT TO has none, so it admits no one's rows.
 */
export function policyApplies(p: Policy, user: string): boolean {
  const g = p.grantees as string[] | undefined;
  if (!g || g.length === 0) return false;
  return g.some((x) => x === 'allUsers' || x === 'allAuthenticatedUsers' || x === `user:${user}` || (x.startsWith('domain:') && user.endsWith('@' + x.slice(7))));
}

/** `FILTER USING (TRUE)`: the filter text is the literal TRUE (in any case, in any parentheses). */
function isTrueFilter(p: Policy): boolean {
  return typeof p.filterPredicate === 'string' && /^[\s(]*TRUE[\s)]*$/i.test(p.filterPredicate);
}

/** No policies, or one granted to the user with the TRUE filter: the user may act on every row. */
export function hasFullRowAccess(catalog: QueryCatalog, id: TableId, user: string): boolean {
  return policiesAllowAll(policiesOf(catalog, id), user);
}

function policiesAllowAll(ps: readonly Policy[], user: string): boolean {
  return ps.length === 0 || ps.some((p) => policyApplies(p, user) && isTrueFilter(p));
}

/** Refuses `what` (a DML statement, a copy) on a table whose policies hide rows from the user. */
export function requireFullRowAccess(catalog: QueryCatalog, id: TableId, user: string, loc?: Loc): void {
  requireAllRowsOf(policiesOf(catalog, id), id, user, loc);
}

/**
 * The same rule over a table's policies as the engine's row services hold them: copy jobs, tabledata.list and
 * the Storage Read API need the TRUE filter (using-row-level-security-with-features.md, The TRUE filter).
 */
export function requireAllRowsOf(policies: readonly Policy[], id: TableId, user: string, loc?: Loc): void {
  if (policiesAllowAll(policies, user)) return;
  const name = `${id.projectId}:${id.datasetId}.${id.tableId}`;
  throw new QueryError(`Access Denied: Table ${name}: User does not have full access to table ${name} due to row access policies; this needs a row access policy with the TRUE filter granted to the user${at(loc)}`, 'accessDenied', 403);
}

/**
 * Refuses a drop that would leave the table without policies, which widens access rather than narrowing it:
 * DROP ROW ACCESS POLICY never takes the last one (managing-row-level-security.md, Delete: DROP ALL ROW ACCESS
 * POLICIES does), nor do rowAccessPolicies.delete / batchDelete without `force` (their REST reference pages).
 */
export function refuseLastPolicyDrop(policies: readonly Policy[], dropping: readonly string[], id: TableId, via: 'sql' | 'rest', loc?: Loc): void {
  const ids = policies.map((p) => (p.rowAccessPolicyReference as { policyId?: string } | undefined)?.policyId ?? '');
  if (ids.length === 0 || ids.some((x) => !dropping.includes(x))) return;
  const what = dropping.length === 1 ? `the last row access policy ${dropping[0]}` : 'every row access policy';
  const remedy = via === 'sql' ? 'use DROP ALL ROW ACCESS POLICIES' : 'set force to true';
  throw new QueryError(`Cannot delete ${what} on table ${id.projectId}:${id.datasetId}.${id.tableId}: it would give every user access to all rows; ${remedy}${at(loc)}`, via === 'sql' ? 'invalidQuery' : 'invalid', 400);
}
