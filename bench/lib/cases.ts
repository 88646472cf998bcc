// Loads the shared bench cases, the DuckDB overrides and the peer's published
// p50 table. Shared material is read at run time from ../shared (never copied
// into the repo).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { scaleGenerateArrays } from './quick-scale.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const sharedRoot = path.resolve(repoRoot, '..', 'shared');
export const casesDir = path.join(sharedRoot, 'bench', 'cases');
export const overridesFile = path.join(repoRoot, 'bench', 'duckdb-overrides.yaml');

export interface BenchCase {
  name: string;
  tags: string[];
  setup: string[];
  query: string;
  iterations: number;
  warmup: number;
  /** Per-request ceiling; the case's max_ms when it has one. */
  timeoutMs: number;
  file: string;
}

export interface DuckdbOverride {
  setup?: string[];
  query?: string;
}

function asRecord(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${what}: expected a mapping`);
  return v as Record<string, unknown>;
}

export function parseCase(text: string, file: string): BenchCase {
  const doc = asRecord(parseYaml(text), file);
  const name = doc['name'];
  const query = doc['query'];
  if (typeof name !== 'string' || typeof query !== 'string') throw new Error(`${file}: name and query are required`);
  const setupRaw = doc['setup'] ?? [];
  if (!Array.isArray(setupRaw)) throw new Error(`${file}: setup must be a list`);
  const setup = setupRaw.map((s, i) => {
    const sql = asRecord(s, `${file} setup[${i}]`)['sql'];
    if (typeof sql !== 'string') throw new Error(`${file} setup[${i}]: sql missing`);
    return sql;
  });
  const num = (k: string, dflt: number): number => (typeof doc[k] === 'number' ? (doc[k] as number) : dflt);
  const tags = Array.isArray(doc['tags']) ? doc['tags'].map(String) : [];
  return {
    name,
    tags,
    setup,
    query,
    iterations: num('iterations', 10),
    warmup: num('warmup', 1),
    timeoutMs: num('max_ms', 60_000),
    file,
  };
}

export function loadCases(filter?: string): BenchCase[] {
  if (!existsSync(casesDir)) throw new Error(`bench cases not found at ${casesDir} (the shared material must sit next to the repo)`);
  const files = readdirSync(casesDir).filter((f) => f.endsWith('.yaml')).sort();
  const cases = files.map((f) => parseCase(readFileSync(path.join(casesDir, f), 'utf8'), path.join(casesDir, f)));
  // Comma-separated substrings: a case runs if its name contains any of them.
  const parts = (filter ?? '').split(',').map((f) => f.trim()).filter(Boolean);
  return parts.length ? cases.filter((c) => parts.some((p) => c.name.includes(p))) : cases;
}

/** Quick mode: ≤ 2,000 rows per case, 1 warmup + 2 iterations. */
export function quickCase(c: BenchCase): BenchCase {
  return {
    ...c,
    setup: c.setup.map((s) => scaleGenerateArrays(s)),
    query: scaleGenerateArrays(c.query),
    iterations: 2,
    warmup: 1,
  };
}

export function loadOverrides(file: string = overridesFile): Record<string, DuckdbOverride> {
  if (!existsSync(file)) return {};
  const doc = parseYaml(readFileSync(file, 'utf8')) ?? {};
  const out: Record<string, DuckdbOverride> = {};
  for (const [name, v] of Object.entries(asRecord(doc, file))) {
    const o = asRecord(v, `${file}: ${name}`);
    out[name] = {
      setup: Array.isArray(o['setup']) ? o['setup'].map(String) : undefined,
      query: typeof o['query'] === 'string' ? o['query'] : undefined,
    };
  }
  return out;
}

export interface PeerNumbers {
  peer: number | null;
  goSqlite: number | null;
  realServiceExec: number | null;
}

/** Parses the "Published numbers" markdown table of the shared bench README. */
export function parsePeerTable(readme: string): Record<string, PeerNumbers> {
  const out: Record<string, PeerNumbers> = {};
  const num = (s: string | undefined): number | null => {
    const v = Number.parseFloat(s ?? '');
    return Number.isFinite(v) ? v : null;
  };
  for (const line of readme.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length < 4 || !/^[a-z0-9_]+$/.test(cells[0]!) || cells[0] === 'case') continue;
    out[cells[0]!] = { peer: num(cells[1]), goSqlite: num(cells[2]), realServiceExec: num(cells[3]) };
  }
  return out;
}

export function loadPeerTable(): Record<string, PeerNumbers> {
  const readme = path.join(sharedRoot, 'bench', 'README.md');
  return existsSync(readme) ? parsePeerTable(readFileSync(readme, 'utf8')) : {};
}
