// Synchronous access to asynchronous work (HTTP reads of gs:// libraries, a
// Python subprocess) for the function kernels, which are synchronous: a helper
// thread does the work and the engine thread waits on a shared flag with
// Atomics.wait, with a deadline, then takes the answer off a MessagePort.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

// CommonJS source of the helper thread (eval'd: the bundle needs no extra file).
const WORKER_SOURCE = String.raw`
const { workerData } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const { port, flag } = workerData;
const procs = new Map();

function reply(seq, body) {
  port.postMessage({ seq, ...body });
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

function startPython(id, cmd, args, input) {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      reject(e);
      return;
    }
    const p = { child, buf: '', err: '', waiting: [], dead: null, timer: undefined };
    procs.set(id, p);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      p.buf += d;
      let nl;
      while ((nl = p.buf.indexOf('\n')) >= 0) {
        const line = p.buf.slice(0, nl);
        p.buf = p.buf.slice(nl + 1);
        const w = p.waiting.shift();
        if (w) w.resolve(line);
      }
    });
    child.stderr.on('data', (d) => { if (p.err.length < 8192) p.err += d; });
    const fail = (why) => {
      p.dead = why;
      procs.delete(id);
      for (const w of p.waiting.splice(0)) w.reject(new Error(why));
    };
    child.on('error', (e) => fail(String(e.message)));
    child.on('exit', (code, sig) => fail('python3 exited (' + (sig || code) + ')' + (p.err ? ': ' + p.err.trim().split('\n').slice(-3).join(' | ') : '')));
    child.stdin.on('error', () => {});
    resolve(send(id, input));
  });
}

// A process unused for a while belongs to a finished query: stop it (the
// engine side also stops it when the UDF object is collected).
const IDLE_MS = 30000;

function send(id, line) {
  const p = procs.get(id);
  if (!p) return Promise.reject(new Error('python3 is not running'));
  clearTimeout(p.timer);
  p.timer = setTimeout(() => { procs.delete(id); p.child.kill('SIGKILL'); }, IDLE_MS);
  p.timer.unref();
  return new Promise((resolve, reject) => {
    p.waiting.push({ resolve, reject });
    p.child.stdin.write(line + '\n');
  });
}

async function handle(m) {
  switch (m.op) {
    case 'fetch': {
      const r = await fetch(m.url);
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return await r.text();
    }
    case 'py-start':
      return await startPython(m.id, m.cmd, m.args, m.line);
    case 'py-call':
      return await send(m.id, m.line);
    case 'py-stop': {
      const p = procs.get(m.id);
      procs.delete(m.id);
      if (p) p.child.kill('SIGKILL');
      return '';
    }
  }
  throw new Error('unknown op ' + m.op);
}

port.on('message', (m) => {
  handle(m).then((value) => reply(m.seq, { ok: true, value }), (e) => reply(m.seq, { ok: false, error: String((e && e.message) || e) }));
});
`;

export type SyncRequest =
  | { op: 'fetch'; url: string }
  | { op: 'py-start'; id: number; cmd: string; args: string[]; line: string }
  | { op: 'py-call'; id: number; line: string }
  | { op: 'py-stop'; id: number };

interface Reply {
  seq: number;
  ok: boolean;
  value?: string;
  error?: string;
}

export class SyncTimeout extends Error {}

let helper: { port: MessagePort; flag: Int32Array } | undefined;
let seq = 0;

function getHelper(): { port: MessagePort; flag: Int32Array } {
  if (helper) return helper;
  const { port1, port2 } = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { port: port2, flag }, transferList: [port2] });
  // Neither the thread nor its port keeps the engine alive.
  w.unref();
  port1.unref();
  helper = { port: port1, flag };
  return helper;
}

/** Runs `req` on the helper thread and blocks until its answer (or `timeoutMs`). Throws the helper's error text. */
export function runSync(req: SyncRequest, timeoutMs: number): string {
  const h = getHelper();
  const my = ++seq;
  Atomics.store(h.flag, 0, 0);
  h.port.postMessage({ ...req, seq: my });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const msg = receiveMessageOnPort(h.port);
    if (msg) {
      const r = msg.message as Reply;
      if (r.seq !== my) continue; // a late answer to a request that timed out
      if (!r.ok) throw new Error(r.error ?? 'failed');
      return r.value ?? '';
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new SyncTimeout(`timed out after ${timeoutMs} ms`);
    Atomics.wait(h.flag, 0, 0, left);
    Atomics.store(h.flag, 0, 0);
  }
}

/** Fire-and-forget request (stopping a process): the answer is dropped. */
export function postAsync(req: SyncRequest): void {
  if (!helper) return;
  helper.port.postMessage({ ...req, seq: ++seq });
}
