// CREATE ROW ACCESS POLICY and GRANT / REVOKE: who may read what, kept on the
// table and dataset resources.
import type * as A from '../../grammar/ast.js';
import { parseStatement } from '../../grammar/index.js';
import { someNode } from '../../grammar/ast-walk.js';
import { tableNotFound, splitPath } from '../analyzer/names.js';
import { QueryError, type QueryResult } from './api.js';
import type { Session } from './session.js';
import { sqlError } from '../analyzer/errors.js';
import { writeTarget } from './dml.js';
import { statementResult } from './statement-type.js';
import { legacyRole, memberToAccess, sameGrant, type AccessEntry } from '../storage/dataset-access.js';
import { already, targetId } from './ddl-common.js';

const result = statementResult;

export async function createRowAccessPolicy(s: Session, st: A.CreateRowAccessPolicyStmt): Promise<QueryResult> {
  const info = writeTarget(s, st.table, st.loc);
  const cat = s.ctx.catalog;
  const { projectId, datasetId, tableId } = info.id;
  // data-definition-language.md, CREATE ROW ACCESS POLICY: letters, digits and underscores, starting with a letter.
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(st.name)) throw sqlError(`Invalid row access policy name ${st.name}: it must start with a letter and hold only letters, numbers and underscores`, st.loc);
  // row-level-security-intro.md, Limitations: no row access policies on temporary tables.
  if ([...s.tempTables.values()].some((t) => t.projectId === projectId && t.datasetId === datasetId && t.tableId === tableId)) {
    throw sqlError(`Row access policies cannot be applied to the temporary table ${tableId}`, st.loc);
  }
  const existing = cat.getChild('rowAccessPolicies', projectId, datasetId, st.name, tableId);
  // Job.md, JobStatistics2.ddlTargetRowAccessPolicy: present for CREATE/DROP ROW ACCESS POLICY.
  const statistics = { ddlTargetRowAccessPolicy: { projectId, datasetId, tableId, policyId: st.name } };
  if (existing && st.ifNotExists) return result('CREATE_ROW_ACCESS_POLICY', { ddlOperationPerformed: 'SKIP', ddlTargetTable: info.id, statistics });
  if (existing && !st.orReplace) throw already('Row access policy', st.name);
  const grantees: string[] = [];
  for (const g of st.grantTo) {
    const v = (await s.evalScalar(g)).value;
    // Each grantee is a principal with its type (user:, group:, serviceAccount:, domain:) or allUsers / allAuthenticatedUsers.
    if (typeof v !== 'string' || !GRANTEE.test(v)) throw sqlError(`Invalid grantee ${JSON.stringify(v)}: expected user:, group:, serviceAccount: or domain: followed by the principal, allUsers or allAuthenticatedUsers`, g.loc);
    grantees.push(v);
  }
  // row-level-security-intro.md, Limitations: row access policies cannot be applied on JSON columns.
  const json = new Set(info.columns.filter((c) => c.type.kind === 'JSON').map((c) => c.name.toLowerCase()));
  const named = json.size ? namesIn(st.filter).find((n) => json.has(n.toLowerCase())) : undefined;
  if (named) throw sqlError(`Row access policies cannot be applied on JSON columns: the filter reads ${named}`, st.filter.loc);
  // The filter's source text, without the closing parenthesis of FILTER USING ( ... ).
  // (The filter's node may start inside its own parentheses, `((TRUE))`: closing ones without an opening one go too.)
  let filterPredicate = s.ctx.sql.slice(st.filter.loc.offset, st.end).trim();
  const count = (c: string): number => filterPredicate.split(c).length - 1;
  while (filterPredicate.endsWith(')') && count(')') > count('(')) filterPredicate = filterPredicate.slice(0, -1).trimEnd();
  // The filter is analyzed now over the table's columns (an unknown name or a non-BOOL filter is refused at CREATE).
  const probe = parseStatement(`SELECT 1 FROM \`${projectId}.${datasetId}.${tableId}\` WHERE ${filterPredicate}`);
  if (probe.kind === 'QueryStatement') {
    try {
      s.analyze(probe.query);
    } catch (e) {
      if (e instanceof QueryError) throw sqlError(e.message.replace(/ at \[\d+:\d+\]$/, ''), st.filter.loc);
      throw e;
    }
  }
  const now = String(Date.now());
  await cat.putChild('rowAccessPolicies', projectId, datasetId, st.name, {
    rowAccessPolicyReference: { projectId, datasetId, tableId, policyId: st.name },
    filterPredicate,
    ...(grantees.length ? { grantees } : {}),
    // OR REPLACE keeps when the policy was made; only its modification time moves.
    creationTime: typeof existing?.creationTime === 'string' ? existing.creationTime : now,
    lastModifiedTime: now,
  }, tableId);
  return result('CREATE_ROW_ACCESS_POLICY', { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetTable: info.id, statistics });
}

/** The first part of every name path in a syntax tree (the columns, tables and fields a filter names). */
function namesIn(node: unknown): string[] {
  const out: string[] = [];
  someNode(node, (n) => {
    const parts = (n as { parts?: unknown }).parts;
    if (n.kind === 'PathExpr' && Array.isArray(parts) && typeof parts[0] === 'string') out.push(parts[0]);
    return false;
  });
  return out;
}

// ---------------------------------------------------------------- GRANT / REVOKE

/** IAM bindings GRANT/REVOKE keep on a table or view (hidden `iamPolicy` of its resource; INFORMATION_SCHEMA.OBJECT_PRIVILEGES reads them). */
export interface IamBinding {
  role: string;
  members: string[];
}

// data-control-language.md, user_list: user:, group:, serviceAccount:, domain:, specialGroup: and connection:.
const GRANTEE = /^(user|group|serviceAccount|domain|connection):.+$|^(allUsers|allAuthenticatedUsers)$|^specialGroup:.+$/;
/** data-control-language.md: the resource types GRANT and REVOKE take. */
const RESOURCE_TYPES = new Set(['SCHEMA', 'TABLE', 'VIEW', 'EXTERNAL TABLE', 'PROJECT']);

export async function grant(s: Session, st: A.GrantStmt): Promise<QueryResult> {
  const type = st.revoke ? 'REVOKE' : 'GRANT';
  const members: string[] = [];
  for (const g of st.grantees) {
    const v = (await s.evalScalar(g)).value;
    if (typeof v !== 'string' || !GRANTEE.test(v)) throw sqlError(`Invalid grantee ${JSON.stringify(v)}: expected user:, group:, serviceAccount:, domain:, specialGroup: or connection: followed by the principal`, g.loc);
    members.push(v);
  }
  const resourceType = st.resourceType.toUpperCase();
  if (!RESOURCE_TYPES.has(resourceType)) throw sqlError(`${type} does not support resource type ${st.resourceType}; use SCHEMA, TABLE, VIEW, EXTERNAL TABLE or PROJECT`, st.loc);
  // A project's IAM policy lives in Resource Manager, which the emulator does not have: the statement is accepted
  // and changes nothing the emulator can show.
  if (resourceType === 'PROJECT') return result(type, {});
  if (resourceType === 'SCHEMA') {
    // Dataset grants live in the dataset's access list (datasets.get `access[]`), as in the real service.
    const parts = splitPath(st.resource);
    const projectId = parts.length > 1 ? parts[0]! : s.env.projectId;
    const datasetId = parts[parts.length - 1]!;
    const ds = s.ctx.catalog.getDataset(projectId, datasetId);
    if (!ds) throw new QueryError(`Not found: Dataset ${projectId}:${datasetId}`, 'notFound', 404);
    let access = (Array.isArray(ds.resource.access) ? ds.resource.access : []) as AccessEntry[];
    for (const role of st.roles) {
      for (const m of members) {
        const principal = memberToAccess(m);
        const has = access.some((e) => sameGrant(e, role, principal));
        if (st.revoke) access = access.filter((e) => !sameGrant(e, role, principal));
        else if (!has) access = [...access, { role: legacyRole(role), ...principal }];
      }
    }
    await s.ctx.catalog.patchDatasetResource(projectId, datasetId, { access });
    return result(type, {});
  }
  const id = targetId(s, st.resource, st.loc);
  const info = s.ctx.catalog.getTable(id);
  if (!info) throw tableNotFound(s.analyzer(), id);
  const bindings = (((info.resource.iamPolicy as { bindings?: IamBinding[] } | undefined)?.bindings) ?? []).map((b) => ({ role: b.role, members: b.members.slice() }));
  for (const role of st.roles) {
    let b = bindings.find((x) => x.role === role);
    if (!b) bindings.push((b = { role, members: [] }));
    for (const m of members) {
      if (st.revoke) b.members = b.members.filter((x) => x !== m);
      else if (!b.members.includes(m)) b.members.push(m);
    }
  }
  await s.ctx.catalog.patchTableResource(id, { iamPolicy: { bindings: bindings.filter((b) => b.members.length) } });
  return result(type, {});
}
