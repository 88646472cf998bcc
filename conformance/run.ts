// Conformance harness entry point.
//
//   node --import tsx conformance/run.ts [--url http://host:port]
//        [--source googlesql|recorded|fixtures|project]... [--filter S]
//        [--concurrency N] [--check-pinned] [--update-pinned] [--report PATH]
//
// Without --url it spawns `node dist/gateway.js` (it never builds) on free
// ports with a fresh data dir. See conformance/README.md.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, firstLine } from './lib/client.js';
import { ALL_SOURCES, type CaseResult, type Group, type Outcome, type RunContext, type SourceName } from './lib/model.js';
import { attach, spawnEmulator, type Emulator } from './lib/server.js';
import { FEATURES } from './features.js';
import { planGoogleSql } from './sources/googlesql.js';
import { loadFixtures, loadProjectCases, loadRecorded, planYamlCases } from './sources/yamlcases.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..');
export const sharedDir = path.resolve(repoRoot, '..', 'shared');
const pinnedFile = path.join(here, 'pinned.json');

interface Options {
  url: string | null;
  sources: SourceName[];
  filter: string | null;
  concurrency: number;
  checkPinned: boolean;
  updatePinned: boolean;
  report: string;
  timeoutMs: number;
  verbose: boolean;
}

function usage(msg?: string): never {
  if (msg) console.error(`conformance: ${msg}`);
  console.error(
    'usage: node --import tsx conformance/run.ts [--url URL] [--source googlesql|recorded|fixtures|project]... ' +
      '[--filter SUBSTRING] [--concurrency N] [--check-pinned] [--update-pinned] [--report PATH] [--timeout-ms N] [--verbose]',
  );
  process.exit(2);
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    url: null, sources: [], filter: null, concurrency: 4, checkPinned: false, updatePinned: false,
    report: path.join(here, 'report.json'), timeoutMs: 120_000, verbose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--url': o.url = val().replace(/\/$/, ''); break;
      case '--source': {
        const s = val();
        if (!(ALL_SOURCES as string[]).includes(s)) usage(`unknown source ${s}`);
        o.sources.push(s as SourceName);
        break;
      }
      case '--filter': o.filter = val(); break;
      case '--concurrency': o.concurrency = Math.max(1, parseInt(val(), 10) || 1); break;
      case '--check-pinned': o.checkPinned = true; break;
      case '--update-pinned': o.updatePinned = true; break;
      case '--report': o.report = path.resolve(val()); break;
      case '--timeout-ms': o.timeoutMs = Math.max(1000, parseInt(val(), 10) || 120_000); break;
      case '--verbose': case '-v': o.verbose = true; break;
      case '--help': case '-h': usage();
      // eslint-disable-next-line no-fallthrough
      default: usage(`unknown argument ${a}`);
    }
  }
  if (o.sources.length === 0) o.sources = [...ALL_SOURCES];
  return o;
}

/** A counting semaphore: at most n tasks run at once. */
function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    if (active >= n) return;
    const go = queue.shift();
    if (go) {
      active++;
      go();
    }
  };
  return <T>(fn: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push(() => {
        fn().then(resolve, reject).finally(() => {
          active--;
          next();
        });
      });
      next();
    });
}

export function plan(opts: Pick<Options, 'sources' | 'filter'>, nonce: string): Group[] {
  const filter = (id: string) => opts.filter === null || id.includes(opts.filter);
  const groups: Group[] = [];
  const conf = path.join(sharedDir, 'conformance');
  for (const s of opts.sources) {
    if (s === 'googlesql') groups.push(...planGoogleSql(path.join(conf, 'googlesql'), filter));
    if (s === 'recorded') groups.push(...planYamlCases(loadRecorded(path.join(conf, 'recorded')), filter, nonce));
    if (s === 'fixtures') groups.push(...planYamlCases(loadFixtures(path.join(conf, 'fixtures')), filter, nonce));
    if (s === 'project') groups.push(...planYamlCases(loadProjectCases(path.join(here, 'cases')), filter, nonce));
  }
  return groups;
}

async function runGroups(groups: Group[], ctx: RunContext, concurrency: number, onDone: (r: CaseResult) => void): Promise<CaseResult[]> {
  const limit = limiter(concurrency);
  const results: CaseResult[] = [];
  const record = (g: Group, id: string, o: Outcome, ms: number) => {
    const r: CaseResult = { id, source: g.source, file: g.file, ms, ...o };
    results.push(r);
    onDone(r);
  };
  const runOne = async (g: Group, c: Group['cases'][number]) => {
    const t0 = Date.now();
    let o: Outcome;
    try {
      o = await c.run(ctx);
    } catch (e) {
      o = { status: 'fail', cause: `harness error: ${firstLine((e as Error).message ?? String(e))}`, detail: (e as Error).stack ?? '' };
    }
    record(g, c.id, o, Date.now() - t0);
  };
  // Bigger groups first: their setup and long case lists dominate the run time.
  const ordered = [...groups].sort((a, b) => b.cases.length - a.cases.length);
  await Promise.all(
    ordered.map(async (g) => {
      const skipped = g.cases.filter((c) => c.skip);
      for (const c of skipped) record(g, c.id, { status: 'skip', skipFeature: c.skip!.feature, skipWhy: c.skip!.why }, 0);
      const live = g.cases.filter((c) => !c.skip);
      if (live.length === 0) return;
      if (ctx.unavailable) {
        for (const c of live) record(g, c.id, { status: 'fail', cause: `emulator unavailable: ${ctx.unavailable.split(';')[0]}`, detail: ctx.unavailable }, 0);
        return;
      }
      if (g.setup) {
        try {
          await limit(() => g.setup!(ctx));
        } catch (e) {
          const msg = firstLine((e as Error).message ?? String(e));
          for (const c of live) record(g, c.id, { status: 'fail', cause: `group setup failed: ${msg}` }, 0);
          return;
        }
      }
      if (g.parallel) await Promise.all(live.map((c) => limit(() => runOne(g, c))));
      else for (const c of live) await limit(() => runOne(g, c));
    }),
  );
  return results;
}

interface Tally { passed: number; failed: number; skipped: number }

function tally(rs: CaseResult[]): Tally {
  return {
    passed: rs.filter((r) => r.status === 'pass').length,
    failed: rs.filter((r) => r.status === 'fail').length,
    skipped: rs.filter((r) => r.status === 'skip').length,
  };
}

function line(t: Tally): string {
  return `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`;
}

function printReport(results: CaseResult[], groups: Group[], opts: Options): void {
  const bySource = new Map<SourceName, CaseResult[]>();
  for (const r of results) bySource.set(r.source, [...(bySource.get(r.source) ?? []), r]);
  const notes = new Map<string, string[]>();
  for (const g of groups) if (g.notes) notes.set(`${g.source}/${g.file}`, g.notes());
  for (const src of opts.sources) {
    const rs = bySource.get(src) ?? [];
    console.log(`\n== ${src}: ${line(tally(rs))}`);
    const byFile = new Map<string, CaseResult[]>();
    for (const r of rs) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
    for (const file of [...byFile.keys()].sort()) {
      const fr = byFile.get(file)!;
      console.log(`  ${file}: ${line(tally(fr))}`);
      const skipReasons = new Map<string, number>();
      for (const r of fr) if (r.status === 'skip') {
        const k = `${r.skipFeature}: ${r.skipWhy}`;
        skipReasons.set(k, (skipReasons.get(k) ?? 0) + 1);
      }
      for (const [k, n] of skipReasons) console.log(`      skip ×${n} — ${k}`);
      for (const n of notes.get(`${src}/${file}`) ?? []) console.log(`      note — ${n.slice(0, 240)}`);
      if (opts.verbose || fr.length === 1) {
        for (const r of fr) if (r.status === 'fail') console.log(`      FAIL ${r.id}: ${r.cause}${opts.verbose && r.detail ? `\n           ${r.detail.slice(0, 400)}` : ''}`);
      }
    }
  }
  // What to fix first: failures grouped by the first line of their cause.
  const causes = new Map<string, { n: number; example: string }>();
  for (const r of results) if (r.status === 'fail') {
    const key = (r.cause ?? 'unknown').split('\n')[0]!.slice(0, 200);
    const c = causes.get(key) ?? { n: 0, example: r.id };
    c.n++;
    causes.set(key, c);
  }
  const top = [...causes.entries()].sort((a, b) => b[1].n - a[1].n).slice(0, 25);
  if (top.length > 0) {
    console.log('\nTop failure causes:');
    for (const [k, c] of top) console.log(`  ${String(c.n).padStart(5)}  ${k}   (e.g. ${c.example})`);
  }
  const skipByFeature = new Map<string, number>();
  for (const r of results) if (r.status === 'skip') skipByFeature.set(r.skipFeature ?? '?', (skipByFeature.get(r.skipFeature ?? '?') ?? 0) + 1);
  if (skipByFeature.size > 0) {
    console.log('\nSkips by feature:');
    for (const [f, n] of [...skipByFeature.entries()].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  ${f}${FEATURES[f]?.link ? `  ${FEATURES[f]!.link}` : ''}`);
  }
  const errExp = results.filter((r) => r.status === 'pass' && r.errorExpected && r.errorMessageMatched !== undefined);
  if (errExp.length > 0) {
    console.log(`\nExpected-error cases passed: ${errExp.length}, of which the error message matched: ${errExp.filter((r) => r.errorMessageMatched).length}`);
  }
  const adjusted = results.filter((r) => r.adjusted);
  if (adjusted.length > 0) console.log(`BigQuery-adjusted expectations (reference result not returnable by BigQuery → error expected): ${adjusted.length}`);
  const nondet = results.filter((r) => r.nondeterministic);
  if (nondet.length > 0) {
    const by = (k: string) => nondet.filter((r) => r.nondeterministic === k).length;
    console.log(`Results the reference marks non-deterministic: ${nondet.length} passed; compared exactly: ${by('exact')}, ignoring row and array order: ${by('unordered')}, by shape only (schema, row count): ${by('shape')}`);
    const why = new Map<string, number>();
    for (const r of nondet) if (r.shapeWhy) why.set(r.shapeWhy, (why.get(r.shapeWhy) ?? 0) + 1);
    for (const [w, n] of [...why.entries()].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  shape only: ${w}`);
    // Each shape-only case: how many of its columns still matched, and which did not.
    for (const r of nondet) {
      const c = r.shapeColumns;
      if (c) console.log(`         ${r.id}: ${c.compared} of ${c.of} columns compared${c.differing.length ? `; varying: ${c.differing.join(', ')}` : ''}`);
    }
  }
  console.log('');
  for (const src of opts.sources) console.log(`conformance[${src}]: ${line(tally(bySource.get(src) ?? []))}`);
  console.log(`conformance: ${line(tally(results))}`);
}

/** How the results the reference marks non-deterministic were compared, and why those left to their shape are. */
function nondeterministicSummary(results: CaseResult[]) {
  const nondet = results.filter((r) => r.nondeterministic);
  const by = (k: string) => nondet.filter((r) => r.nondeterministic === k).length;
  return {
    exact: by('exact'),
    unordered: by('unordered'),
    shapeOnly: nondet.filter((r) => r.nondeterministic === 'shape').map((r) => ({ id: r.id, why: r.shapeWhy, ...r.shapeColumns })),
  };
}

function readPinned(): string[] {
  try {
    const v = JSON.parse(readFileSync(pinnedFile, 'utf8')) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  // A shared emulator keeps state between runs: suffix names with a run nonce.
  const nonce = opts.url ? `_r${Date.now().toString(36)}` : '';
  const groups = plan(opts, nonce);
  const total = groups.reduce((n, g) => n + g.cases.length, 0);
  console.log(`conformance: ${total} cases in ${groups.length} groups from ${opts.sources.join(', ')}${opts.filter ? ` (filter "${opts.filter}")` : ''}`);
  let emu: Emulator;
  if (opts.url) emu = await attach(opts.url);
  else emu = await spawnEmulator(repoRoot);
  if (emu.unavailable) console.log(`conformance: emulator unavailable: ${emu.unavailable}`);
  else console.log(`conformance: emulator at ${emu.url}${emu.logFile ? ` (log ${emu.logFile})` : ''}`);
  const ctx: RunContext = { client: new Client(emu.url || 'http://127.0.0.1:9', opts.timeoutMs), unavailable: emu.unavailable, nonce };
  let done = 0;
  const tty = process.stdout.isTTY;
  const stopSignals = () => {
    void emu.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopSignals);
  process.once('SIGTERM', stopSignals);
  let results: CaseResult[];
  try {
    results = await runGroups(groups, ctx, opts.concurrency, () => {
      done++;
      if (tty && (done % 50 === 0 || done === total)) process.stdout.write(`\r  ${done}/${total} cases`);
    });
  } finally {
    await emu.stop();
  }
  if (tty) process.stdout.write('\n');
  results.sort((a, b) => a.id.localeCompare(b.id));
  printReport(results, groups, opts);
  console.log(`conformance: finished in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  mkdirSync(path.dirname(opts.report), { recursive: true });
  writeFileSync(
    opts.report,
    JSON.stringify({ generatedAt: new Date().toISOString(), emulator: emu.url || null, unavailable: emu.unavailable, sources: opts.sources, filter: opts.filter, nondeterministic: nondeterministicSummary(results), results }, null, 1) + '\n',
  );
  console.log(`conformance: report written to ${path.relative(process.cwd(), opts.report) || opts.report}`);

  const passing = results.filter((r) => r.status === 'pass').map((r) => r.id).sort();
  // A pinned id belongs to this run's selection when its source was run and it matches the filter.
  const inSelection = (id: string) => (opts.sources as string[]).includes(id.split('/')[0]!) && (opts.filter === null || id.includes(opts.filter));
  let exitCode = 0;
  if (opts.updatePinned) {
    // Keep pins of cases outside this run's selection (sources/filter).
    const kept = readPinned().filter((id) => !inSelection(id));
    const next = [...new Set([...kept, ...passing])].sort();
    writeFileSync(pinnedFile, JSON.stringify(next, null, 1) + '\n');
    console.log(`conformance: pinned.json updated (${next.length} cases)`);
  }
  if (opts.checkPinned) {
    const pinned = readPinned();
    const byId = new Map(results.map((r) => [r.id, r]));
    // a pinned case outside this run's selection is not checked; one inside
    // it that no longer exists counts as broken
    const broken = pinned.filter((id) => inSelection(id) && byId.get(id)?.status !== 'pass');
    if (broken.length > 0) {
      console.log(`conformance: ${broken.length} pinned case(s) do not pass:`);
      for (const id of broken) {
        const r = byId.get(id);
        console.log(`  ${id}: ${r ? `${r.status}${r.cause ? ` — ${r.cause}` : ''}` : 'not found in this run'}`);
      }
      exitCode = 1;
    } else {
      console.log(`conformance: all ${pinned.length} pinned cases pass`);
    }
  }
  process.exitCode = exitCode;
}

const invoked = process.argv[1] ? path.resolve(process.argv[1]) : '';
if (invoked === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(`conformance: harness crashed: ${(e as Error).stack ?? String(e)}`);
    process.exit(3);
  });
}
