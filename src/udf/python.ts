// Python UDFs (LANGUAGE python, OPTIONS(entry_point=..., runtime_version=...,
// packages=[...])): one long-lived `python3` process per function per query,
// fed whole batches as JSON lines (values in their REST wire forms) and
// answering one JSON line per batch. The engine thread waits for the answer
// through sync.ts, under the same per-batch time limit as JavaScript UDFs.
import { execFileSync } from 'node:child_process';
import { QueryError } from '../planner/api.js';
import type { SqlType } from '../types/types.js';
import { typeToSql } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../types/vector.js';
import { udfTimeoutMs, type UdfParam } from './js.js';
import { postAsync, runSync, SyncTimeout } from './sync.js';
import { fromWire, toWire } from './types.js';

// The driver: reads the spec line, checks packages, defines the code, then
// answers {"out": [...]} or {"error": "..."} per batch line.
const DRIVER = String.raw`
import sys, json, base64, decimal, datetime, importlib.util, traceback

def dec(t, v):
    if v is None: return None
    k = t['kind']
    if k == 'INT64': return int(v)
    if k == 'FLOAT64': return float(v)
    if k in ('NUMERIC', 'BIGNUMERIC'): return decimal.Decimal(v)
    if k == 'BYTES': return base64.b64decode(v)
    if k == 'DATE': return datetime.date.fromisoformat(v)
    if k == 'TIME': return datetime.time.fromisoformat(v)
    if k == 'DATETIME': return datetime.datetime.fromisoformat(v)
    if k == 'TIMESTAMP': return datetime.datetime.fromisoformat(v.replace('Z', '+00:00'))
    if k == 'ARRAY': return [dec(t['element'], x) for x in v]
    if k == 'STRUCT': return {f['name']: dec(f['type'], v.get(f['name'])) for f in t['fields']}
    return v

def enc(t, v):
    if v is None: return None
    k = t['kind']
    if k == 'INT64':
        if isinstance(v, float) and not v.is_integer(): raise ValueError('Cannot coerce %r to INT64' % v)
        return str(int(v))
    if k == 'FLOAT64':
        f = float(v)
        return f if f == f and f not in (float('inf'), float('-inf')) else str(f).replace('inf', 'Infinity').replace('nan', 'NaN')
    if k in ('NUMERIC', 'BIGNUMERIC'): return str(decimal.Decimal(v) if not isinstance(v, float) else decimal.Decimal(repr(v)))
    if k == 'BOOL': return bool(v)
    if k == 'STRING': return v if isinstance(v, str) else str(v)
    if k == 'BYTES': return base64.b64encode(v if isinstance(v, (bytes, bytearray)) else str(v).encode()).decode()
    if k in ('DATE', 'TIME', 'DATETIME'): return v.isoformat() if hasattr(v, 'isoformat') else str(v)
    if k == 'TIMESTAMP':
        if isinstance(v, datetime.datetime):
            if v.tzinfo is not None: v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            return v.isoformat() + 'Z'
        return str(v)
    if k == 'ARRAY': return [enc(t['element'], x) for x in v]
    if k == 'STRUCT':
        if isinstance(v, dict): return {f['name']: enc(f['type'], v.get(f['name'])) for f in t['fields']}
        return {f['name']: enc(f['type'], x) for f, x in zip(t['fields'], v)}
    return v

# The protocol owns the real stdout; the body's print() goes to stderr (like the service's logs).
PROTO = sys.stdout
sys.stdout = sys.stderr

def out(o):
    PROTO.write(json.dumps(o) + '\n')
    PROTO.flush()

def main():
    spec = json.loads(sys.stdin.readline())
    for p in spec['packages']:
        name = p
        for sep in ('==', '>=', '<=', '~=', '>', '<', '[', ' '):
            name = name.split(sep)[0]
        if importlib.util.find_spec(name.strip().replace('-', '_')) is None:
            out({'error': 'ModuleNotFoundError: No module named %r (OPTIONS packages=[%r]; install it for the emulator\'s python3)' % (name.strip(), p)})
            return
    g = {'__name__': '__udf__'}
    try:
        exec(compile(spec['code'], '<udf>', 'exec'), g)
    except BaseException as e:
        out({'error': '%s: %s' % (type(e).__name__, e)})
        return
    fn = g.get(spec['entry_point'])
    if not callable(fn):
        out({'error': 'entry_point %r is not a function defined by the code' % spec['entry_point']})
        return
    out({'ok': True})
    params, ret = spec['params'], spec['returns']
    for line in sys.stdin:
        rows = json.loads(line)
        res = []
        try:
            for r in rows:
                res.append(enc(ret, fn(*[dec(t, v) for t, v in zip(params, r)])))
        except BaseException as e:
            tb = traceback.extract_tb(e.__traceback__)
            at = [f for f in tb if f.filename == '<udf>']
            where = (' at line %d' % at[-1].lineno) if at else ''
            out({'error': '%s: %s%s' % (type(e).__name__, e, where)})
            continue
        out({'out': res})

main()
`;

let python: string | null | undefined;
/** The python3 executable, or null when the machine has none (checked once). */
export function pythonPath(): string | null {
  if (python !== undefined) return python;
  const cmd = process.env['WAREHOUSE_PYTHON'] || 'python3';
  try {
    execFileSync(cmd, ['-c', 'import sys; assert sys.version_info >= (3, 8)'], { stdio: 'ignore', timeout: 10_000 });
    python = cmd;
  } catch {
    python = null;
  }
  return python;
}

/** WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS (or BIGQUERY_...) is true. */
export function pythonUdfsEnvEnabled(): boolean {
  return /^(1|true|yes|on)$/i.test(process.env['WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS'] || process.env['BIGQUERY_EMULATOR_ENABLE_PYTHON_UDFS'] || '');
}

let enabled: boolean | undefined;
/** The engine's --enable-python-udfs; without a call, the environment variable decides (in-process use). */
export function enablePythonUdfs(on: boolean): void {
  enabled = on;
}

let nextId = 0;
const live = new FinalizationRegistry<number>((id) => postAsync({ op: 'py-stop', id }));

export class PythonUdf {
  private id = 0;
  private started = false;

  constructor(
    readonly name: string,
    readonly params: readonly UdfParam[],
    readonly returnType: SqlType,
    private readonly code: string,
    private readonly entryPoint: string,
    private readonly packages: readonly string[],
  ) {}

  private signature(): string {
    return `${this.name}(${this.params.map((p) => typeToSql(p.type)).join(', ')})`;
  }

  private fail(message: string): QueryError {
    return new QueryError(`Python UDF ${this.signature()} failed: ${message}`, 'invalidQuery', 400);
  }

  /** Starts the process on first call; it lives until the UDF object is collected (end of the query). */
  private start(): void {
    if (this.started) return;
    // The body is arbitrary code run by the host's python3 with the emulator's rights: only where the operator said so.
    if (!(enabled ?? pythonUdfsEnvEnabled())) {
      throw new QueryError(
        `Python UDF ${this.signature()} cannot run: Python UDFs are disabled in this emulator, because their code runs on its host with its rights. Start it with --enable-python-udfs (or WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS=true) to run them.`,
        'invalidQuery',
        400,
      );
    }
    const cmd = pythonPath();
    if (!cmd) throw new QueryError('Python UDFs need python3, which this emulator host does not have', 'invalidQuery', 400);
    this.id = ++nextId;
    const spec = {
      code: this.code,
      entry_point: this.entryPoint,
      packages: this.packages,
      params: this.params.map((p) => p.type),
      returns: this.returnType,
    };
    const answer = this.exchange({ op: 'py-start', id: this.id, cmd, args: ['-u', '-c', DRIVER], line: JSON.stringify(spec) }, Math.max(udfTimeoutMs(), 15_000));
    if (typeof answer['error'] === 'string') {
      postAsync({ op: 'py-stop', id: this.id });
      throw this.fail(answer['error']);
    }
    this.started = true;
    live.register(this, this.id);
  }

  private exchange(req: Parameters<typeof runSync>[0], timeoutMs: number): Record<string, unknown> {
    let text: string;
    try {
      text = runSync(req, timeoutMs);
    } catch (e) {
      postAsync({ op: 'py-stop', id: this.id });
      this.started = false;
      if (e instanceof SyncTimeout) throw new QueryError(`Resources exceeded during query execution: Python UDF ${this.signature()} exceeded the time limit (${timeoutMs} ms per batch).`, 'invalidQuery', 400);
      throw this.fail((e as Error).message);
    }
    return JSON.parse(text) as Record<string, unknown>;
  }

  call(args: readonly Vector[], n: number): Vector {
    this.start();
    const rows: unknown[][] = new Array(n);
    for (let i = 0; i < n; i++) rows[i] = args.map((a, k) => toWire(this.params[k]!.type, getValue(a, i)));
    const answer = this.exchange({ op: 'py-call', id: this.id, line: JSON.stringify(rows) }, udfTimeoutMs());
    if (typeof answer['error'] === 'string') throw this.fail(answer['error']);
    const out = answer['out'] as unknown[];
    const values = new Array<Value>(n);
    for (let i = 0; i < n; i++) {
      try {
        values[i] = fromWire(this.returnType, out[i]);
      } catch (e) {
        throw this.fail(`cannot convert the result ${JSON.stringify(out[i])} to ${typeToSql(this.returnType)}: ${(e as Error).message}`);
      }
    }
    return vectorFromValues(this.returnType, values);
  }
}
