// Command line of the gateway (spec §1.1, §1.2). Every flag has a hyphen and
// an underscore form plus aliases; argv is normalised to the canonical hyphen
// name before commander sees it, so commander's own unknown-option error
// stays the single parse-error path.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { envDirs, splitDirs } from '../io/local-access.js';
import { packageRoot } from './paths.js';

export interface GatewayConfig {
  listenHost: string;
  httpPort: number;
  grpcPort: number;
  /** undefined = the project's own dist/engine.js; '' = spawn nothing. */
  engineBinary: string | undefined;
  dataDir: string;
  /** Why dataDir has its value (for the startup log). */
  dataDirSource: 'flag' | 'env' | 'database' | 'default';
  database: string | undefined;
  initialDataDir: string | undefined;
  copyEngineStdout: boolean;
  copyEngineStderr: boolean;
  logRequests: boolean;
  debug: boolean;
  projectId: string;
  dataset: string;
  defaultDatasetLocation: string;
  enableSeedApi: boolean;
  seedApiAllowRemote: boolean;
  seedApiSeedToken: string;
  seedDataFiles: string[];
  /** Engine acknowledges inserts only after their WAL fdatasync (default: after the write, synced within ~50 ms). */
  syncWrites: boolean;
  /** Serve the web console at /console (and at / to browsers). */
  console: boolean;
  /** Engine runs LANGUAGE python UDFs (their code runs on this host; off by default). */
  enablePythonUdfs: boolean;
  /** --memory-limit as given ('' = the engine's default). */
  memoryLimit: string;
  /** --local-files directories (or the environment's); undefined: none given (io/local-access.ts decides by listenHost). */
  localFiles: string[] | undefined;
  warnings: string[];
}

/** Thrown instead of exiting so tests and main() decide what to do. */
export class CliExit extends Error {
  constructor(readonly exitCode: number, readonly output: string, readonly toStderr: boolean) {
    super(output);
  }
}

interface FlagSpec {
  name: string;
  aliases: string[];
  kind: 'string' | 'int' | 'bool' | 'list';
  description: string;
  defaultText?: string;
}

// Canonical names are the spec's hyphen forms; underscore forms are derived.
const FLAGS: FlagSpec[] = [
  { name: 'listen-host', aliases: ['hostname'], kind: 'string', description: 'Host the gateway binds to', defaultText: 'localhost' },
  { name: 'http-port', aliases: ['port'], kind: 'int', description: 'REST listener port', defaultText: '9050' },
  { name: 'grpc-port', aliases: [], kind: 'int', description: 'Internal engine gRPC port', defaultText: '9060' },
  { name: 'engine-binary', aliases: [], kind: 'string', description: 'Engine executable (.js/.mjs runs under node); "" spawns nothing and uses an engine already serving on --grpc-port', defaultText: '<package>/dist/engine.js' },
  { name: 'data-dir', aliases: [], kind: 'string', description: 'Persistent storage root (env WAREHOUSE_EMULATOR_DATA_DIR / BIGQUERY_EMULATOR_DATA_DIR)', defaultText: './data' },
  { name: 'database', aliases: [], kind: 'string', description: 'Deprecated: uses the parent directory of FILE as --data-dir' },
  { name: 'initial-data-dir', aliases: [], kind: 'string', description: 'Template directory copied into the data dir on first boot (env WAREHOUSE_EMULATOR_INITIAL_DATA_DIR / BIGQUERY_EMULATOR_INITIAL_DATA_DIR / EMULATOR_INITIAL_DATA_DIR)' },
  { name: 'copy-engine-stdout', aliases: [], kind: 'bool', description: 'Forward engine stdout', defaultText: 'false' },
  { name: 'copy-engine-stderr', aliases: [], kind: 'bool', description: 'Forward engine stderr', defaultText: 'true' },
  { name: 'log-requests', aliases: [], kind: 'bool', description: 'Log every request and response', defaultText: 'false' },
  { name: 'debug', aliases: [], kind: 'bool', description: 'Verbose lifecycle logging', defaultText: 'false' },
  { name: 'project-id', aliases: ['project'], kind: 'string', description: 'Default project for seeding and the YAML loader fallback' },
  { name: 'dataset', aliases: ['dataset-id'], kind: 'string', description: 'Server-level default dataset for unqualified table names' },
  { name: 'default-dataset-location', aliases: [], kind: 'string', description: 'Location stamped on datasets created without one', defaultText: 'US' },
  { name: 'enable-seed-api', aliases: [], kind: 'bool', description: 'Register the production seed endpoints', defaultText: 'false' },
  { name: 'seed-api-allow-remote', aliases: [], kind: 'bool', description: 'Remove the loopback-only gate of the seed API', defaultText: 'false' },
  { name: 'seed-api-seed-token', aliases: [], kind: 'string', description: 'Required X-Warehouse-Emulator-Seed-Token (or X-BigQuery-Emulator-Seed-Token) header value (env WAREHOUSE_EMULATOR_SEED_TOKEN / BIGQUERY_EMULATOR_SEED_TOKEN)' },
  { name: 'sync-writes', aliases: [], kind: 'bool', description: 'Acknowledge inserts only after fdatasync (survive power loss; default: after the write, synced within ~50 ms) (env WAREHOUSE_EMULATOR_SYNC_WRITES / BIGQUERY_EMULATOR_SYNC_WRITES)', defaultText: 'false' },
  { name: 'console', aliases: ['enable-console'], kind: 'bool', description: 'Serve the web console at /console (and at / to a browser); --no-console turns it off', defaultText: 'true' },
  { name: 'enable-python-udfs', aliases: [], kind: 'bool', description: 'Run LANGUAGE python UDFs: their code runs in python3 on this host with the emulator\'s rights; off, calls fail (CREATE still works) (env WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS / BIGQUERY_EMULATOR_ENABLE_PYTHON_UDFS)', defaultText: 'false' },
  { name: 'memory-limit', aliases: [], kind: 'string', description: 'Memory the emulator may keep resident (bytes, or with KB/MB/GB): decoded table data and query state share it, less a fixed overhead for the processes; tables larger than it are read from disk a row group at a time, large query state spills to disk (env WAREHOUSE_EMULATOR_MEMORY_LIMIT / BIGQUERY_EMULATOR_MEMORY_LIMIT)', defaultText: 'a quarter of the machine\'s memory, at least 256MB' },
  { name: 'seed-data-file', aliases: ['seed-yaml', 'data-from-yaml'], kind: 'list', description: 'YAML seed file; repeatable' },
  { name: 'local-files', aliases: [], kind: 'list', description: 'Directories (comma-separated; repeatable) that load/extract jobs, LOAD DATA, EXPORT DATA, external tables and JavaScript UDF libraries may read and write as file:// or absolute paths; paths are resolved with realpath, so symlinks and .. cannot leave them (env WAREHOUSE_EMULATOR_LOCAL_FILES / BIGQUERY_EMULATOR_LOCAL_FILES)', defaultText: 'any path when listening on loopback only, none otherwise' },
];

/** Every accepted spelling (without --) -> canonical name. */
function spellingMap(): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of FLAGS) {
    for (const n of [f.name, ...f.aliases]) {
      m.set(n, f.name);
      m.set(n.replace(/-/g, '_'), f.name);
    }
  }
  return m;
}

/** Rewrites --http_port=1 / --port 1 / --no-debug into commander's canonical forms. */
export function normalizeArgv(args: readonly string[]): string[] {
  const spell = spellingMap();
  const out: string[] = [];
  for (const a of args) {
    if (a === '--') {
      out.push(a);
      continue;
    }
    const m = /^--([^=]+)(=.*)?$/.exec(a);
    if (!m) {
      out.push(a);
      continue;
    }
    const name = m[1]!;
    const rest = m[2] ?? '';
    const canon = spell.get(name);
    if (canon) {
      out.push('--' + canon + rest);
      continue;
    }
    const neg = /^no[-_](.+)$/.exec(name);
    const negCanon = neg ? spell.get(neg[1]!) : undefined;
    if (negCanon && !rest && FLAGS.find((f) => f.name === negCanon)?.kind === 'bool') {
      out.push('--' + negCanon + '=false');
      continue;
    }
    out.push(a);
  }
  return out;
}

function parseBool(name: string) {
  return (v: string | undefined): boolean => {
    if (v === undefined) return true;
    const s = v.toLowerCase();
    if (['true', '1', 'yes', 'on', ''].includes(s)) return true;
    if (['false', '0', 'no', 'off'].includes(s)) return false;
    throw new CommanderError(2, 'commander.invalidArgument', `error: option '--${name}' expects true or false, got '${v}'`);
  };
}

function parsePort(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      throw new CommanderError(2, 'commander.invalidArgument', `error: option '--${name}' expects a port number, got '${v}'`);
    }
    return n;
  };
}

export function versionInfo(): { name: string; version: string; node: string; commit?: string } {
  const root = packageRoot();
  let name = 'warehouse-emulator';
  let version = '0.0.0';
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: string; version?: string };
    name = pkg.name ?? name;
    version = pkg.version ?? version;
  } catch {
    // keep defaults
  }
  let commit: string | undefined;
  if (existsSync(join(root, '.git'))) {
    try {
      commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch {
      commit = undefined;
    }
  }
  return { name, version, node: process.version, ...(commit ? { commit } : {}) };
}

function buildCommand(): Command {
  const cmd = new Command('warehouse-emulator')
    .description('Local emulator of the BigQuery v2 REST API (gateway; spawns the SQL engine)')
    .helpOption('--help', 'Print the flag surface')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  for (const f of FLAGS) {
    const spellings = [f.name, ...f.aliases].flatMap((n) => (n.includes('-') ? [n, n.replace(/-/g, '_')] : [n]));
    const extra = spellings.filter((s) => s !== f.name).map((s) => '--' + s);
    const desc = f.description + (extra.length ? ` (also ${extra.join(', ')})` : '') + (f.defaultText ? ` [default: ${f.defaultText}]` : '');
    let opt: Option;
    switch (f.kind) {
      case 'bool':
        opt = new Option(`--${f.name} [bool]`, desc).argParser(parseBool(f.name));
        break;
      case 'int':
        opt = new Option(`--${f.name} <port>`, desc).argParser(parsePort(f.name));
        break;
      case 'list':
        opt = new Option(`--${f.name} <${f.name === 'local-files' ? 'dirs' : 'file'}>`, desc).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
        break;
      default:
        opt = new Option(`--${f.name} <value>`, desc);
    }
    cmd.addOption(opt);
  }
  cmd.addOption(new Option('--version', 'Print version metadata and exit'));
  return cmd;
}

export function helpText(): string {
  return buildCommand().helpInformation();
}

/** Parses argv (without node and script) and the environment into a config; throws CliExit for --help/--version/errors. */
export function parseCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const cmd = buildCommand();
  try {
    cmd.parse(normalizeArgv(args), { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help') throw new CliExit(0, cmd.helpInformation(), false);
      throw new CliExit(2, `${e.message}\n(run with --help for the flag surface)\n`, true);
    }
    throw e;
  }
  const o = cmd.opts<Record<string, unknown>>();
  if (o['version']) {
    const v = versionInfo();
    const lines = [`${v.name} ${v.version}`, `node ${v.node}`];
    if (v.commit) lines.push(`commit ${v.commit}`);
    throw new CliExit(0, lines.join('\n') + '\n', false);
  }
  const str = (k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  const bool = (k: string, d: boolean): boolean => (typeof o[k] === 'boolean' ? (o[k] as boolean) : d);
  const firstEnv = (...names: string[]): string | undefined => {
    for (const n of names) {
      const v = env[n];
      if (v) return v;
    }
    return undefined;
  };
  const warnings: string[] = [];

  let dataDir = str('dataDir') || undefined;
  let dataDirSource: GatewayConfig['dataDirSource'] = 'flag';
  const database = str('database');
  if (!dataDir && database) {
    dataDir = dirnameOf(database);
    dataDirSource = 'database';
    warnings.push(`--database is deprecated: using its parent directory ${dataDir} as --data-dir; data in the old single-file format is not loaded`);
  } else if (dataDir && database) {
    warnings.push('--database is deprecated and ignored because --data-dir is set');
  }
  if (!dataDir) {
    dataDir = firstEnv('WAREHOUSE_EMULATOR_DATA_DIR', 'BIGQUERY_EMULATOR_DATA_DIR');
    dataDirSource = 'env';
  }
  if (!dataDir) {
    dataDir = './data';
    dataDirSource = 'default';
  }

  return {
    listenHost: str('listenHost') || 'localhost',
    httpPort: typeof o['httpPort'] === 'number' ? (o['httpPort'] as number) : 9050,
    grpcPort: typeof o['grpcPort'] === 'number' ? (o['grpcPort'] as number) : 9060,
    engineBinary: str('engineBinary'),
    dataDir,
    dataDirSource,
    database,
    initialDataDir: str('initialDataDir') || firstEnv('WAREHOUSE_EMULATOR_INITIAL_DATA_DIR', 'BIGQUERY_EMULATOR_INITIAL_DATA_DIR', 'EMULATOR_INITIAL_DATA_DIR'),
    copyEngineStdout: bool('copyEngineStdout', false),
    copyEngineStderr: bool('copyEngineStderr', true),
    logRequests: bool('logRequests', false),
    debug: bool('debug', false),
    projectId: str('projectId') ?? '',
    dataset: str('dataset') ?? '',
    defaultDatasetLocation: str('defaultDatasetLocation') || 'US',
    enableSeedApi: bool('enableSeedApi', false),
    seedApiAllowRemote: bool('seedApiAllowRemote', false),
    seedApiSeedToken: str('seedApiSeedToken') || firstEnv('WAREHOUSE_EMULATOR_SEED_TOKEN', 'BIGQUERY_EMULATOR_SEED_TOKEN') || '',
    seedDataFiles: Array.isArray(o['seedDataFile']) ? (o['seedDataFile'] as string[]) : [],
    syncWrites: bool('syncWrites', /^(1|true|yes|on)$/i.test(firstEnv('WAREHOUSE_EMULATOR_SYNC_WRITES', 'BIGQUERY_EMULATOR_SYNC_WRITES') ?? '')),
    console: bool('console', true),
    enablePythonUdfs: bool('enablePythonUdfs', /^(1|true|yes|on)$/i.test(firstEnv('WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS', 'BIGQUERY_EMULATOR_ENABLE_PYTHON_UDFS') ?? '')),
    memoryLimit: memoryLimitOf(str('memoryLimit') || firstEnv('WAREHOUSE_EMULATOR_MEMORY_LIMIT', 'BIGQUERY_EMULATOR_MEMORY_LIMIT') || ''),
    localFiles: localFilesOf(o['localFiles'], env),
    warnings,
  };
}

/** --local-files values split at commas, else the environment's; undefined when neither names a directory. */
function localFilesOf(flag: unknown, env: NodeJS.ProcessEnv): string[] | undefined {
  const dirs = Array.isArray(flag) ? splitDirs(flag as string[]) : envDirs(env);
  return dirs?.length ? dirs : undefined;
}

/** A memory size as the engine takes it: bytes, or a number with KB/MB/GB (powers of 1024); '' stays the default. */
function memoryLimitOf(v: string): string {
  if (v === '') return '';
  if (!/^\d+(\.\d+)?\s*([kmg]i?b?)?$/i.test(v.trim())) throw new CliExit(2, `error: invalid --memory-limit ${v} (bytes, or a number with KB, MB or GB)\n`, true);
  return v.trim();
}

function dirnameOf(file: string): string {
  const i = file.replace(/\/+$/, '').lastIndexOf('/');
  if (i < 0) return '.';
  if (i === 0) return '/';
  return file.slice(0, i);
}
