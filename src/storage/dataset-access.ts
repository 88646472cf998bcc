// Dataset access entries (datasets.get `access[]`) <-> IAM role bindings.
// GRANT/REVOKE ON SCHEMA edit the access list; INFORMATION_SCHEMA.OBJECT_PRIVILEGES
// lists it back as (role, member) pairs, as the real service does.

/** One `access[]` entry; only the fields a role binding uses (view/routine/dataset entries have no role). */
export interface AccessEntry {
  role?: string;
  userByEmail?: string;
  groupByEmail?: string;
  domain?: string;
  specialGroup?: string;
  iamMember?: string;
  [k: string]: unknown;
}

/** The service stores these three predefined roles in their legacy form and returns only that form. */
const LEGACY: Record<string, string> = {
  'roles/bigquery.dataOwner': 'OWNER',
  'roles/bigquery.dataEditor': 'WRITER',
  'roles/bigquery.dataViewer': 'READER',
};
const PREDEFINED: Record<string, string> = Object.fromEntries(Object.entries(LEGACY).map(([k, v]) => [v, k]));

/** Project special groups as IAM members name them. */
const PROJECT_GROUP: Record<string, string> = { projectOwners: 'projectOwner', projectWriters: 'projectEditor', projectReaders: 'projectViewer' };

export function legacyRole(role: string): string {
  return LEGACY[role] ?? role;
}

export function iamRole(role: string): string {
  return PREDEFINED[role] ?? role;
}

/** The access entry's principal fields for an IAM member such as `user:a@b.com`. */
export function memberToAccess(member: string): Omit<AccessEntry, 'role'> {
  const i = member.indexOf(':');
  const kind = i < 0 ? member : member.slice(0, i);
  const v = i < 0 ? '' : member.slice(i + 1);
  switch (kind) {
    case 'user':
    case 'serviceAccount':
      return { userByEmail: v };
    case 'group':
      return { groupByEmail: v };
    case 'domain':
      return { domain: v };
    case 'specialGroup':
      return { specialGroup: v };
    case 'allAuthenticatedUsers':
      return { specialGroup: 'allAuthenticatedUsers' };
    default:
      // allUsers and other principal kinds have no dedicated field.
      return { iamMember: member };
  }
}

/** The IAM member an access entry grants to, or undefined for view/routine/dataset entries. */
export function accessMember(e: AccessEntry, projectId: string): string | undefined {
  if (e.userByEmail) return `${/\.gserviceaccount\.com$/i.test(e.userByEmail) ? 'serviceAccount' : 'user'}:${e.userByEmail}`;
  if (e.groupByEmail) return `group:${e.groupByEmail}`;
  if (e.domain) return `domain:${e.domain}`;
  if (e.specialGroup) return PROJECT_GROUP[e.specialGroup] ? `${PROJECT_GROUP[e.specialGroup]}:${projectId}` : e.specialGroup;
  if (e.iamMember) return e.iamMember;
  return undefined;
}

/** Whether entry `e` is the binding of `member` (as memberToAccess spells it) to `role` (legacy or IAM form). */
export function sameGrant(e: AccessEntry, role: string, principal: Omit<AccessEntry, 'role'>): boolean {
  if (!e.role || legacyRole(e.role) !== legacyRole(role)) return false;
  const keys = ['userByEmail', 'groupByEmail', 'domain', 'specialGroup', 'iamMember'] as const;
  return keys.every((k) => (e[k] ?? undefined) === (principal[k] ?? undefined));
}

/** Role bindings of an access list, in IAM form (roles/...), grouped by role in first-seen order. */
export function accessBindings(access: unknown, projectId: string): { role: string; members: string[] }[] {
  const out: { role: string; members: string[] }[] = [];
  if (!Array.isArray(access)) return out;
  for (const e of access as AccessEntry[]) {
    if (!e || typeof e.role !== 'string') continue;
    const m = accessMember(e, projectId);
    if (!m) continue;
    const role = iamRole(e.role);
    let b = out.find((x) => x.role === role);
    if (!b) out.push((b = { role, members: [] }));
    if (!b.members.includes(m)) b.members.push(m);
  }
  return out;
}
