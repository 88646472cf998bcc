// Parse-rate corpus over the shared conformance data (read in place, never copied):
// GoogleSQL compliance .test files, recorded corpus YAML and peer fixtures.
// Run directly for a report: `npx tsx grammar/corpus.ts [--failures]`.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { parseScript, SqlSyntaxError } from './index.js';

export interface CorpusCase {
  source: 'googlesql' | 'recorded' | 'fixtures';
  /** file[:case name] */
  id: string;
  sql: string;
  /** The recorded/expected answer is a syntax error: failing to parse is correct. */
  expectSyntaxError: boolean;
}

export function sharedDir(): string {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  return path.resolve(repoRoot, '..', 'shared');
}

/** Split a GoogleSQL .test file into its statement texts. */
export function googlesqlCases(file: string, text: string): CorpusCase[] {
  const out: CorpusCase[] = [];
  const blocks = text.split(/^==\s*$/m);
  for (const block of blocks) {
    const lines = block.split('\n');
    let i = 0;
    let name = '';
    let prepare = false;
    // Header lines: `[...]`, possibly spanning lines; blank lines and comment-only lines before SQL are skipped.
    while (i < lines.length) {
      const l = lines[i]!.trim();
      if (l === '') {
        i++;
        continue;
      }
      if (l.startsWith('[')) {
        let header = l;
        while (!header.trimEnd().endsWith(']') && i + 1 < lines.length) header += '\n' + lines[++i]!;
        const m = /^\[name=([^\]]+)\]/.exec(header);
        if (m) name = m[1]!.trim();
        if (header.startsWith('[prepare_database')) prepare = header.startsWith('[prepare_database]');
        i++;
        continue;
      }
      break;
    }
    const sqlLines: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '--') sqlLines.push(lines[i++]!);
    const expected = lines.slice(i + 1).join('\n');
    // The .test format escapes statement lines starting with `--` as `\--`.
    const sql = sqlLines.map((l) => (l.startsWith('\\--') ? l.slice(1) : l)).join('\n').trim();
    // Comment-only blocks (file preambles) have no statement.
    if (!sql || sql.split('\n').every((l) => l.trim() === '' || l.trim().startsWith('#'))) continue;
    if (!name && !prepare) continue;
    out.push({
      source: 'googlesql',
      id: `${file}:${name || 'prepare_database'}`,
      sql,
      expectSyntaxError: /ERROR:.*Syntax error/.test(expected),
    });
  }
  return out;
}

function walk(dir: string, ext: string, acc: string[] = []): string[] {
  for (const e of readdirSync(dir).sort()) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) walk(p, ext, acc);
    else if (e.endsWith(ext)) acc.push(p);
  }
  return acc;
}

interface YamlCase {
  query?: unknown;
  setup?: unknown;
  expected?: { error?: { message_contains?: unknown } };
}

function yamlCases(source: 'recorded' | 'fixtures', root: string, oracleDir?: string): CorpusCase[] {
  const out: CorpusCase[] = [];
  for (const f of walk(root, '.yaml')) {
    const rel = path.relative(root, f);
    let doc: YamlCase;
    try {
      doc = YAML.parse(readFileSync(f, 'utf8')) as YamlCase;
    } catch {
      continue;
    }
    if (!doc || typeof doc !== 'object') continue;
    if (Array.isArray(doc.setup)) {
      doc.setup.forEach((step: unknown, idx: number) => {
        if (!step || typeof step !== 'object') return;
        const st = step as { sql?: unknown; table?: { view?: { query?: unknown } }; row_access_policy?: { filter_predicate?: unknown } };
        if (typeof st.sql === 'string') out.push({ source, id: `${rel}:setup${idx}`, sql: st.sql, expectSyntaxError: false });
        // tables.insert view definitions are queries too.
        const vq = st.table?.view?.query;
        if (typeof vq === 'string') out.push({ source, id: `${rel}:setup${idx}:view`, sql: vq, expectSyntaxError: false });
        // Row access policy filters are expressions: parse them as a query over no table.
        const fp = st.row_access_policy?.filter_predicate;
        if (typeof fp === 'string') out.push({ source, id: `${rel}:setup${idx}:filter`, sql: `SELECT 1 WHERE ${fp}`, expectSyntaxError: false });
      });
    }
    if (typeof doc.query === 'string') {
      let expectSyntaxError = String(doc.expected?.error?.message_contains ?? '').includes('Syntax error');
      if (oracleDir) {
        const oracle = path.join(oracleDir, path.basename(f, '.yaml') + '.json');
        if (existsSync(oracle)) expectSyntaxError ||= readFileSync(oracle, 'utf8').includes('Syntax error');
      }
      out.push({ source, id: `${rel}:query`, sql: doc.query, expectSyntaxError });
    }
  }
  return out;
}

export function collectCorpus(shared = sharedDir()): CorpusCase[] {
  const out: CorpusCase[] = [];
  const gdir = path.join(shared, 'conformance', 'googlesql');
  for (const f of readdirSync(gdir).sort()) {
    if (!f.endsWith('.test')) continue;
    out.push(...googlesqlCases(f, readFileSync(path.join(gdir, f), 'utf8')));
  }
  out.push(...yamlCases('recorded', path.join(shared, 'conformance', 'recorded', 'corpus'), path.join(shared, 'conformance', 'recorded', 'oracle')));
  out.push(...yamlCases('fixtures', path.join(shared, 'conformance', 'fixtures')));
  return out;
}

export interface CorpusResult {
  total: number;
  /** Cases whose expected answer is not a syntax error. */
  nonError: number;
  nonErrorParsed: number;
  errorCases: number;
  errorCasesFailed: number;
  /** nonErrorParsed / nonError */
  rate: number;
  failures: { id: string; message: string; sql: string }[];
  /** Failure messages (positions stripped) by count, most common first. */
  topReasons: [string, number][];
}

export function runCorpus(cases = collectCorpus()): CorpusResult {
  let nonError = 0;
  let nonErrorParsed = 0;
  let errorCases = 0;
  let errorCasesFailed = 0;
  const failures: CorpusResult['failures'] = [];
  const reasons = new Map<string, number>();
  for (const c of cases) {
    let message: string | undefined;
    try {
      parseScript(c.sql);
    } catch (e) {
      if (!(e instanceof SqlSyntaxError)) throw e;
      message = e.message;
    }
    if (c.expectSyntaxError) {
      errorCases++;
      if (message !== undefined) errorCasesFailed++;
      continue;
    }
    nonError++;
    if (message === undefined) nonErrorParsed++;
    else {
      failures.push({ id: c.id, message, sql: c.sql });
      const r = message.replace(/ at \[\d+:\d+\]$/, '').replace(/"[^"]*"$/, '"…"');
      reasons.set(r, (reasons.get(r) ?? 0) + 1);
    }
  }
  const topReasons = [...reasons.entries()].sort((a, b) => b[1] - a[1]);
  return { total: cases.length, nonError, nonErrorParsed, errorCases, errorCasesFailed, rate: nonError ? nonErrorParsed / nonError : 1, failures, topReasons };
}

export function formatReport(r: CorpusResult, topN = 15): string {
  const lines = [
    `corpus: ${r.total} statements; non-error ${r.nonErrorParsed}/${r.nonError} parsed (${(r.rate * 100).toFixed(2)}%); ` +
      `syntax-error cases rejected ${r.errorCasesFailed}/${r.errorCases}`,
    'top failure reasons:',
    ...r.topReasons.slice(0, topN).map(([m, n]) => `  ${String(n).padStart(4)}  ${m}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = runCorpus();
  console.log(formatReport(r, 40));
  if (process.argv.includes('--failures')) {
    for (const f of r.failures) console.log(`\n### ${f.id}\n${f.message}\n${f.sql}`);
  }
}
