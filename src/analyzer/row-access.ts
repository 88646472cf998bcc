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
  const ps = policiesOf(catalog, id);
  return ps.length === 0 || ps.some((p) => policyApplies(p, user) && isTrueFilter(p));
}

/** Refuses `what` (a DML statement, a copy) on a table whose policies hide rows from the user. */
export function requireFullRowAccess(catalog: QueryCatalog, id: TableId, user: string, loc?: Loc): void {
  if (hasFullRowAccess(catalog, id, user)) return;
  const name = `${id.projectId}:${id.datasetId}.${id.tableId}`;
  throw new QueryError(`Access Denied: Table ${name}: User does not have full access to table ${name} due to row access policies; this needs a row access policy with the TRUE filter granted to the user${at(loc)}`, 'accessDenied', 403);
}
