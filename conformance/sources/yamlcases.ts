// Sources built from YAML case files: `recorded` (corpus + the real service's
// answers), `fixtures` (a peer emulator's end-to-end fixtures) and `project`
// (this project's own cases in conformance/cases/, answers recorded with the
// reference implementation by record.ts). Each case runs in a project of its
// own: its REST setup steps, then one query, then a comparison.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { errorSummary, firstLine, RestError, type QueryParameter, type QueryResult } from '../lib/client.js';
import { compareRows } from '../lib/compare.js';
import { fail, type Group, type Outcome, type PlannedCase, type RunContext, type SourceName } from '../lib/model.js';
import { yamlParamToRest, type YamlParam } from '../lib/params.js';
import { normalizeRestType } from '../lib/sqltype.js';
import type { Val } from '../lib/value.js';
import { decodeCell, decodeRows, type RestField, type RestRow } from '../lib/wire.js';

export interface YamlField {
  name: string;
  type: string;
  mode?: string;
  fields?: YamlField[];
}

export type ExpectSpec =
  | { kind: 'rows'; rows: Array<Record<string, unknown>> | null; schema: YamlField[] | null; match: 'ordered' | 'unordered' | 'schema_only' }
  | { kind: 'oracle'; fields: RestField[]; rows: RestRow[]; ordered: boolean }
  | { kind: 'error'; code: number | null; messageContains: string | null; messageRequired: boolean };

export interface YamlCaseSpec {
  source: SourceName;
  id: string;
  file: string;
  projectId: string | null;
  setup: Array<Record<string, unknown>>;
  query: string;
  params: YamlParam[];
  defaultDataset: string | null;
  expect: ExpectSpec;
  skip?: { feature: string; why: string };
}

function listYaml(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = path.join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

type Doc = Record<string, unknown>;

function asString(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** `expected:` block of fixtures and project cases. */
export function expectationOf(doc: Doc): ExpectSpec {
  const e = (doc['expected'] ?? {}) as Doc;
  const err = e['error'] as Doc | undefined;
  if (err) {
    // `reference_message` (written by record.ts) is the reference
    // implementation's wording: matched as a secondary statistic only.
    const contains = asString(err['message_contains']);
    return {
      kind: 'error',
      code: typeof err['code'] === 'number' ? err['code'] : null,
      messageContains: contains ?? asString(err['reference_message']),
      messageRequired: contains !== null,
    };
  }
  const m = asString(e['match']) ?? 'ordered';
  const match = m === 'unordered' || m === 'schema_only' ? m : 'ordered';
  return {
    kind: 'rows',
    rows: Array.isArray(e['rows']) ? (e['rows'] as Array<Record<string, unknown>>) : null,
    schema: Array.isArray(e['schema']) ? (e['schema'] as YamlField[]) : null,
    match,
  };
}

/** Is a Python module importable on this machine (fixtures' optional_dependencies)? */
const depCache = new Map<string, boolean>();
function pythonHas(mod: string): boolean {
  if (!depCache.has(mod)) {
    let ok = false;
    try {
      execFileSync('python3', ['-c', `import ${mod}`], { stdio: 'ignore', timeout: 10_000 });
      ok = true;
    } catch {
      ok = false;
    }
    depCache.set(mod, ok);
  }
  return depCache.get(mod)!;
}

export function loadFixtures(dir: string): YamlCaseSpec[] {
  return listYaml(dir).map((file) => {
    const rel = path.relative(dir, file).split(path.sep).join('/');
    const doc = (parseYaml(readFileSync(file, 'utf8')) ?? {}) as Doc;
    const spec: YamlCaseSpec = {
      source: 'fixtures',
      id: `fixtures/${rel}`,
      file: rel,
      projectId: asString(doc['project_id']),
      setup: (doc['setup'] as Array<Record<string, unknown>>) ?? [],
      query: asString(doc['query']) ?? '',
      params: (doc['query_parameters'] as YamlParam[]) ?? [],
      defaultDataset: asString(doc['default_dataset']),
      expect: expectationOf(doc),
    };
    for (const dep of (doc['optional_dependencies'] as string[] | undefined) ?? []) {
      if (!pythonHas(dep)) spec.skip = { feature: `optional dependency ${dep}`, why: `python module ${dep} is not installed on this machine (fixture's optional_dependencies)` };
    }
    return spec;
  });
}

/** Top-level ORDER BY (not inside parentheses, e.g. of a window) makes row order significant. */
export function hasTopLevelOrderBy(sql: string): boolean {
  let depth = 0;
  let last = -1;
  const s = sql.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''");
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth--;
    else if (depth === 0 && /^ORDER\s+BY\b/i.test(s.slice(i, i + 12)) && !/[A-Za-z0-9_]/.test(s[i - 1] ?? ' ')) last = i;
  }
  return last >= 0;
}

export function loadRecorded(dir: string): YamlCaseSpec[] {
  const corpus = path.join(dir, 'corpus');
  const oracleDir = path.join(dir, 'oracle');
  return listYaml(corpus).map((file) => {
    const doc = (parseYaml(readFileSync(file, 'utf8')) ?? {}) as Doc;
    const name = asString(doc['name']) ?? path.basename(file).replace(/\.ya?ml$/, '');
    const ref = asString(doc['oracle_ref']) ?? `${name}.json`;
    const oracle = JSON.parse(readFileSync(path.join(oracleDir, ref), 'utf8')) as Doc;
    const query = asString(doc['query']) ?? '';
    let expect: ExpectSpec;
    if (oracle['success'] === false) {
      const err = (oracle['error'] ?? {}) as Doc;
      expect = { kind: 'error', code: typeof err['code'] === 'number' ? err['code'] : null, messageContains: asString(err['message']), messageRequired: false };
    } else {
      expect = {
        kind: 'oracle',
        fields: ((oracle['schema'] as Doc | undefined)?.['fields'] as RestField[]) ?? [],
        rows: (oracle['rows'] as RestRow[]) ?? [],
        ordered: hasTopLevelOrderBy(query),
      };
    }
    return {
      source: 'recorded',
      id: `recorded/${name}`,
      file: path.basename(file),
      projectId: asString(doc['project_id']),
      setup: (doc['setup'] as Array<Record<string, unknown>>) ?? [],
      query,
      params: (doc['query_parameters'] as YamlParam[]) ?? [],
      defaultDataset: asString(doc['default_dataset']),
      expect,
    };
  });
}

export function loadProjectCases(dir: string): YamlCaseSpec[] {
  return listYaml(dir).map((file) => {
    const rel = path.relative(dir, file).split(path.sep).join('/');
    const doc = (parseYaml(readFileSync(file, 'utf8')) ?? {}) as Doc;
    const name = asString(doc['name']) ?? rel.replace(/\.ya?ml$/, '');
    return {
      source: 'project',
      id: `project/${name}`,
      file: rel,
      projectId: asString(doc['project_id']),
      setup: (doc['setup'] as Array<Record<string, unknown>>) ?? [],
      query: asString(doc['query']) ?? '',
      params: (doc['query_parameters'] as YamlParam[]) ?? [],
      defaultDataset: asString(doc['default_dataset']),
      expect: expectationOf(doc),
    };
  });
}

/**
 * Gives every case a project of its own. Several fixtures share one
 * project_id (and dataset names), so those get a suffix, substituted in their
 * SQL too; against a shared emulator (--url) every project gets the run nonce.
 */
export function assignProjects(specs: YamlCaseSpec[], nonce: string): Map<YamlCaseSpec, string> {
  const count = new Map<string, number>();
  for (const s of specs) if (s.projectId) count.set(s.projectId, (count.get(s.projectId) ?? 0) + 1);
  const seen = new Map<string, number>();
  const out = new Map<YamlCaseSpec, string>();
  specs.forEach((s, i) => {
    let p = s.projectId ?? `conf-${s.source}-${i}`;
    if (s.projectId && (count.get(s.projectId) ?? 0) > 1) {
      const k = (seen.get(s.projectId) ?? 0) + 1;
      seen.set(s.projectId, k);
      p = `${s.projectId}-c${k}`;
    }
    out.set(s, p + nonce.replace(/_/g, '-'));
  });
  return out;
}

function substituteProject(text: string, from: string | null, to: string): string {
  if (!from || from === to) return text;
  return text.split(from).join(to);
}

/** The same substitution inside expected values (a case's data may name its project). */
function substituteDeep<T>(v: T, from: string | null, to: string): T {
  if (!from || from === to) return v;
  if (typeof v === 'string') return substituteProject(v, from, to) as T;
  if (Array.isArray(v)) return v.map((x) => substituteDeep(x, from, to)) as T;
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = substituteDeep(x, from, to);
    return o as T;
  }
  return v;
}

const CAMEL = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function camelize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(camelize);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[CAMEL(k)] = camelize(x);
    return o;
  }
  return v;
}

function restFieldsOf(fields: YamlField[]): RestField[] {
  return fields.map((f) => ({
    name: f.name,
    type: f.type,
    mode: f.mode ?? 'NULLABLE',
    ...(f.fields ? { fields: restFieldsOf(f.fields) } : {}),
  }));
}

/** Runs the setup steps; every step kind the case files use is handled here. */
async function runSetup(ctx: RunContext, spec: YamlCaseSpec, project: string): Promise<void> {
  const sub = (t: string) => substituteProject(t, spec.projectId, project);
  const dd = spec.defaultDataset ? { projectId: project, datasetId: spec.defaultDataset } : undefined;
  for (const [n, step] of spec.setup.entries()) {
    const keys = Object.keys(step);
    const what = keys[0] ?? '?';
    try {
      if ('dataset' in step) {
        await ctx.client.ensureDataset(project, String(step['dataset']));
      } else if ('table' in step) {
        const t = step['table'] as Record<string, unknown>;
        const ds = String(t['dataset']);
        const body: Record<string, unknown> = { tableReference: { projectId: project, datasetId: ds, tableId: String(t['id']) } };
        if (Array.isArray(t['schema'])) body['schema'] = { fields: restFieldsOf(t['schema'] as YamlField[]) };
        const view = t['view'] as Record<string, unknown> | string | undefined;
        if (view) {
          const q = typeof view === 'string' ? view : String(view['query'] ?? '');
          body['view'] = { query: sub(q), useLegacySql: false };
        }
        if (t['external']) body['externalDataConfiguration'] = camelize(t['external']);
        await ctx.client.createTable(project, ds, body);
      } else if ('rows' in step) {
        const r = step['rows'] as Record<string, unknown>;
        await ctx.client.insertAll(project, String(r['dataset']), String(r['table']), (r['rows'] as Array<Record<string, unknown>>) ?? []);
      } else if ('sql' in step) {
        await ctx.client.query(project, { query: sub(String(step['sql'])), ...(dd ? { defaultDataset: dd } : {}) });
      } else if ('row_access_policy' in step) {
        const p = step['row_access_policy'] as Record<string, unknown>;
        const ds = String(p['dataset']);
        const table = String(p['table']);
        await ctx.client.request('POST', `/bigquery/v2/projects/${encodeURIComponent(project)}/datasets/${encodeURIComponent(ds)}/tables/${encodeURIComponent(table)}/rowAccessPolicies`, {
          rowAccessPolicyReference: { projectId: project, datasetId: ds, tableId: table, policyId: String(p['policy_id'] ?? 'policy') },
          filterPredicate: String(p['filter_predicate'] ?? 'TRUE'),
          // the policy must apply to whoever queries the emulator
          grantees: (p['grantees'] as string[] | undefined) ?? ['allAuthenticatedUsers'],
        });
      } else {
        throw new Error(`unknown setup step kind '${what}'`);
      }
    } catch (e) {
      throw new SetupError(`setup step ${n + 1} (${what}): ${errorSummary(e)}`);
    }
  }
}

class SetupError extends Error {}

function compareYamlSchema(exp: YamlField[], act: RestField[], where = ''): string | null {
  if (exp.length !== act.length) return `schema${where}: expected ${exp.length} columns (${exp.map((f) => f.name).join(', ')}), got ${act.length} (${act.map((f) => f.name).join(', ')})`;
  for (let i = 0; i < exp.length; i++) {
    const e = exp[i]!;
    const a = act[i]!;
    if (e.name !== a.name) return `schema${where}: column ${i} expected name ${e.name}, got ${a.name}`;
    if (normalizeRestType(e.type) !== normalizeRestType(a.type)) return `schema${where}: column ${e.name} expected type ${normalizeRestType(e.type)}, got ${normalizeRestType(a.type)}`;
    if (e.mode && e.mode.toUpperCase() !== (a.mode ?? 'NULLABLE').toUpperCase()) return `schema${where}: column ${e.name} expected mode ${e.mode}, got ${a.mode ?? 'NULLABLE'}`;
    if (e.fields) {
      const d = compareYamlSchema(e.fields, a.fields ?? [], `${where}.${e.name}`);
      if (d) return d;
    }
  }
  return null;
}

function schemaCause(d: string): string {
  const m = /expected (name|type|mode|\d+ columns)/.exec(d);
  return m ? `schema mismatch (${m[1]!.replace(/^\d+ /, '')})` : 'schema mismatch';
}

function valueCause(d: string): string {
  if (d.startsWith('row count')) return 'row count mismatch';
  if (d.startsWith('rows (any order)')) return 'row set mismatch (unordered)';
  if (d.startsWith('kind')) return 'value type mismatch';
  return 'value mismatch';
}

/** Compares a result with wire-form expected rows (column → value maps). */
export function compareWireRows(expRows: Array<Record<string, unknown>>, fields: RestField[], rows: RestRow[], ordered: boolean): Outcome {
  const names = fields.map((f) => f.name);
  for (const [i, r] of expRows.entries()) {
    const keys = Object.keys(r ?? {});
    const missing = keys.filter((k) => !names.includes(k));
    if (missing.length > 0) return fail('column set mismatch', `expected row ${i} has columns ${missing.join(', ')} the result lacks (result: ${names.join(', ')})`);
    const extra = names.filter((n) => !keys.includes(n));
    if (extra.length > 0) return fail('column set mismatch', `result has columns ${extra.join(', ')} that expected row ${i} lacks`);
  }
  let exp: Val[][];
  let act: Val[][];
  try {
    exp = expRows.map((r) => fields.map((f) => decodeCell(f, (r ?? {})[f.name])));
  } catch (e) {
    return fail(`expected value does not fit the result's column type: ${firstLine((e as Error).message)}`);
  }
  try {
    act = decodeRows(fields, rows);
  } catch (e) {
    return fail(`undecodable result cell: ${firstLine((e as Error).message)}`);
  }
  const d = compareRows(exp, act, ordered);
  return d ? fail(valueCause(d), d) : { status: 'pass' };
}

/** Compares with a recorded answer of the real service (schema + f/v rows). */
export function compareOracle(exp: { fields: RestField[]; rows: RestRow[]; ordered: boolean }, res: QueryResult): Outcome {
  const toYaml = (fs: RestField[]): YamlField[] => fs.map((f) => ({ name: f.name, type: f.type, mode: f.mode ?? 'NULLABLE', ...(f.fields ? { fields: toYaml(f.fields) } : {}) }));
  const sd = compareYamlSchema(toYaml(exp.fields), res.fields);
  if (sd) return fail(schemaCause(sd), sd);
  let e: Val[][];
  let a: Val[][];
  try {
    e = decodeRows(exp.fields, exp.rows);
  } catch (err) {
    return fail(`harness: cannot decode the recorded answer: ${(err as Error).message}`);
  }
  try {
    a = decodeRows(res.fields, res.rows);
  } catch (err) {
    return fail(`undecodable result cell: ${firstLine((err as Error).message)}`);
  }
  const d = compareRows(e, a, exp.ordered);
  return d ? fail(valueCause(d), d) : { status: 'pass' };
}

async function runYamlCase(ctx: RunContext, spec: YamlCaseSpec, project: string): Promise<Outcome> {
  try {
    await runSetup(ctx, spec, project);
  } catch (e) {
    return fail(e instanceof SetupError ? firstLine(e.message).replace(/^setup step \d+ /, 'setup step ') : errorSummary(e), (e as Error).message);
  }
  let params: QueryParameter[];
  try {
    params = spec.params.map(yamlParamToRest);
  } catch (e) {
    return fail(`harness: bad query_parameters: ${(e as Error).message}`);
  }
  const query = substituteProject(spec.query, spec.projectId, project);
  const dd = spec.defaultDataset ? { projectId: project, datasetId: spec.defaultDataset } : undefined;
  let res: QueryResult;
  try {
    res = await ctx.client.query(project, { query, queryParameters: params, ...(dd ? { defaultDataset: dd } : {}) });
  } catch (e) {
    const ex = spec.expect;
    if (ex.kind !== 'error') return fail(`query error: ${errorSummary(e)}`, e instanceof Error ? e.message : String(e));
    const status = e instanceof RestError ? e.status : null;
    const msg = e instanceof Error ? e.message : String(e);
    const want = ex.messageContains ? [ex.messageContains, substituteProject(ex.messageContains, spec.projectId, project)] : [];
    const matched = want.length === 0 ? true : want.some((w) => msg.toLowerCase().includes(w.toLowerCase()));
    if (ex.code !== null && status !== ex.code) {
      return fail(`error code mismatch: expected ${ex.code}, got ${status ?? 'no HTTP status'}`, msg, { errorExpected: true, errorMessageMatched: matched });
    }
    if (ex.messageRequired && !matched) return fail('error message mismatch', `expected to contain ${JSON.stringify(ex.messageContains)}, got ${JSON.stringify(msg)}`, { errorExpected: true, errorMessageMatched: false });
    return { status: 'pass', errorExpected: true, errorMessageMatched: matched };
  }
  const ex = spec.expect;
  switch (ex.kind) {
    case 'error':
      return fail('expected an error, got success', `expected ${ex.code ?? ''} ${ex.messageContains ?? ''}; got ${res.rows.length} row(s)`, { errorExpected: true });
    case 'oracle':
      return compareOracle({ ...ex, rows: substituteDeep(ex.rows, spec.projectId, project) }, res);
    case 'rows': {
      if (ex.schema) {
        const sd = compareYamlSchema(ex.schema, res.fields);
        if (sd) return fail(schemaCause(sd), sd);
      }
      if (ex.match === 'schema_only' || ex.rows === null) return { status: 'pass' };
      return compareWireRows(substituteDeep(ex.rows, spec.projectId, project), res.fields, res.rows, ex.match === 'ordered');
    }
  }
}

export function planYamlCases(specs: YamlCaseSpec[], filter: (id: string) => boolean, nonce: string): Group[] {
  const selected = specs.filter((s) => filter(s.id));
  const projects = assignProjects(selected, nonce);
  return selected.map((spec): Group => {
    const project = projects.get(spec)!;
    const pc: PlannedCase = spec.skip
      ? { id: spec.id, skip: spec.skip, run: async () => ({ status: 'skip', skipFeature: spec.skip!.feature, skipWhy: spec.skip!.why }) }
      : { id: spec.id, run: (ctx) => runYamlCase(ctx, spec, project) };
    return { source: spec.source, file: spec.file, cases: [pc], parallel: false };
  });
}
