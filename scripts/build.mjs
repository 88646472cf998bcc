// Bundles the two process entry points into dist/ so that start-up does not pay
// for a TypeScript loader (start to healthy is a measured target).
//
// Packages stay external (loaded from node_modules), except chevrotain, the
// grammar's parser library: unbundled, its module graph (lodash-es: hundreds of
// small ESM files) costs ~300 ms to load; bundled it loads in a few tens of ms.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const BUNDLED = /^(chevrotain|@chevrotain\/.*|lodash-es)(\/|$)/;

/** `packages: 'external'`, except for chevrotain and what chevrotain itself imports. */
const externalPackagesExceptChevrotain = {
  name: 'external-packages-except-chevrotain',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      if (BUNDLED.test(args.path)) return undefined; // resolved and bundled by esbuild
      return { path: args.path, external: true };
    });
  },
};

/**
 * CommonJS builds of packages that only some SQL functions need are loaded on
 * first use instead of with the query pipeline: s2js (GEOGRAPHY; ~1 MB of
 * source, ~6 MB resident), re2js (REGEXP_*), farmhash-modern
 * (FARM_FINGERPRINT, a wasm module). A namespace or class export becomes a
 * proxy over the real one, a function export a forwarding function; the
 * package is required synchronously on the first access. Only for exports
 * that are read inside functions (one read while modules load just loses
 * the saving) and whose methods do not depend on `this`.
 */
const LAZY_CJS = {
  s2js: { proxies: ['geojson', 'r1', 'r2', 'r3', 's1', 's2'], functions: [] },
  re2js: { proxies: ['RE2JS'], functions: [] },
  'farmhash-modern': { proxies: [], functions: ['fingerprint64'] },
};
const lazyCjs = {
  name: 'lazy-cjs',
  setup(b) {
    const names = Object.keys(LAZY_CJS).map((n) => n.replace(/[-/]/g, '\\$&'));
    b.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => ({ path: args.path, namespace: 'lazy-cjs' }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-cjs' }, (args) => {
      const { proxies, functions } = LAZY_CJS[args.path];
      return {
        loader: 'js',
        contents: [
          `import { createRequire } from 'node:module';`,
          `let mod;`,
          `const load = () => (mod ??= createRequire(import.meta.url)(${JSON.stringify(args.path)}));`,
          `const lazy = (name) => new Proxy({}, {`,
          `  get: (_t, k) => load()[name][k],`,
          `  has: (_t, k) => k in load()[name],`,
          `  ownKeys: () => Reflect.ownKeys(load()[name]),`,
          `  getOwnPropertyDescriptor: (_t, k) => {`,
          `    const d = Reflect.getOwnPropertyDescriptor(load()[name], k);`,
          `    return d && { ...d, configurable: true };`,
          `  },`,
          `});`,
          ...proxies.map((n) => `export const ${n} = lazy(${JSON.stringify(n)});`),
          ...functions.map((n) => `export const ${n} = (...args) => load()[${JSON.stringify(n)}](...args);`),
        ].join('\n'),
      };
    });
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  plugins: [lazyCjs, externalPackagesExceptChevrotain],
  logLevel: 'warning',
};

const OUT = process.env.BUILD_OUTDIR || 'dist';

// Both entries are split into lazily loaded chunks. The gateway's entry (CLI,
// data dir, engine spawn) loads first and spawns the engine; gRPC, protobuf and
// Fastify come in dynamically imported chunks afterwards, so engine boot
// overlaps the gateway's module loading. In the engine, the SQL pipeline and
// the Storage Read/Write APIs are dynamic imports: with splitting their
// external packages (apache-arrow, s2js, re2js, ...) load only when used.
/**
 * esbuild escapes non-ASCII characters in strings, regexps and identifiers but
 * keeps them in comments; one such character makes V8 hold the whole chunk's
 * source as a two-byte string (~1 MB more per large chunk, for the process's
 * lifetime). What is left after esbuild is comment text: escape it.
 */
function asciiOnly(file) {
  const text = readFileSync(file, 'utf8');
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(text)) return;
  writeFileSync(file, text.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`));
}

/**
 * The web console (console/, served by src/gateway/plugins/console.ts): one
 * browser bundle (preact + CodeMirror, minified), its CSS and index.html in
 * dist/console/, each with a gzipped twin the gateway sends when accepted, and
 * functions.json: the function registry's names and signatures, read by
 * running scripts/console-functions.ts (the editor's completion lists exactly
 * what the engine implements).
 */
async function buildConsole() {
  const out = resolve(OUT, 'console');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: { app: 'console/src/main.tsx' },
    outdir: out,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync('console/src/index.html', resolve(out, 'index.html'));
  const lister = resolve(OUT, '.console-functions.mjs');
  await build({ ...common, sourcemap: false, entryPoints: ['scripts/console-functions.ts'], outfile: lister });
  try {
    writeFileSync(resolve(out, 'functions.json'), execFileSync(process.execPath, [lister], { maxBuffer: 64 * 1024 * 1024 }));
  } finally {
    rmSync(lister, { force: true });
  }
  for (const f of readdirSync(out)) writeFileSync(resolve(out, f + '.gz'), gzipSync(readFileSync(resolve(out, f)), { level: 9 }));
}

if (process.argv.includes('--console-only')) {
  await buildConsole();
  process.exit(0);
}

/**
 * Process entries (bundled with lazily loaded chunks) and the programmatic
 * entry (`import { startEmulator } from 'warehouse-emulator'`: node builtins
 * only, one file, declarations generated beside it). A new entry is one line here.
 */
const ENTRIES = [
  { name: 'gateway', entry: 'src/gateway/main.ts', split: true, bin: true },
  // The execution worker threads (src/executor/parallel/pool.ts) share the engine's chunks.
  { name: 'engine', entry: 'src/engine/main.ts', split: true, also: { 'exec-worker': 'src/executor/parallel/worker.ts' } },
  { name: 'index', entry: 'src/api/index.ts', split: false, declarations: true },
];

const written = new Set();
for (const { name, entry, split, bin, declarations, also } of ENTRIES) {
  const r = await build({
    ...common,
    entryPoints: { [name]: entry, ...also },
    outdir: OUT,
    ...(split ? { splitting: true, chunkNames: `${name}-[name]-[hash]` } : {}),
    ...(bin ? { banner: { js: '#!/usr/bin/env node' } } : {}),
    metafile: true,
  });
  for (const f of Object.keys(r.metafile.outputs)) {
    written.add(resolve(f));
    if (f.endsWith('.js')) asciiOnly(f);
  }
  if (bin) chmodSync(resolve(OUT, `${name}.js`), 0o755);
  if (declarations) writeDeclarations(entry, resolve(OUT, `${name}.d.ts`));
}
await buildConsole();

/** `.d.ts` of a self-contained entry (explicit types on its exports), without a type-checking pass. */
function writeDeclarations(entry, out) {
  const require = createRequire(import.meta.url);
  const ts = require('typescript');
  const r = ts.transpileDeclaration(readFileSync(entry, 'utf8'), { fileName: entry, compilerOptions: { module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2022 } });
  const errors = (r.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  if (errors.length) throw new Error(`declarations of ${entry}:\n${errors.join('\n')}`);
  writeFileSync(out, r.outputText);
}

// Chunks of earlier builds stay for a day: a running engine imports some of
// its chunks on first use (the query pipeline, the Storage APIs), and chunk
// names change with their content, so deleting them at once would break
// processes started before this build (several people share one dist/).
// `--clean` (npm pack) keeps only this build's files, so the package ships no stale chunk.
const CLEAN = process.argv.includes('--clean');
const DAY_MS = 24 * 3600 * 1000;
for (const f of readdirSync(OUT)) {
  const p = resolve(OUT, f);
  if (!/^(gateway|engine)-/.test(f) || written.has(p)) continue;
  if (CLEAN || Date.now() - statSync(p).mtimeMs > DAY_MS) rmSync(p);
}
