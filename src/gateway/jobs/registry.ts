// Job registry. The gateway drives job states (PENDING -> RUNNING -> DONE);
// the engine only runs ExecuteQuery. The newest jobs (and every unfinished
// one) are objects in memory; older finished jobs are written to a spill file
// and kept in memory only as a small index entry (~250 bytes instead of
// ~1.2 KB for a SELECT 1 job), read back when asked for. Bounded: past
// MAX_JOBS the oldest finished jobs are forgotten.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CancelSignal, QueryReply, QueryRequest, TableRef } from '../engine-client.js';
import type { ErrorInfo } from '../errors.js';
import type { Json } from '../validate.js';

export type JobState = 'PENDING' | 'RUNNING' | 'DONE';

export interface JobRecord {
  readonly projectId: string;
  readonly jobId: string;
  /**
   * Where the job runs: as the client named it, else the location of its
   * datasets once the engine has inferred it, else US. An answer that showed
   * the job while its location was still open sets `locationShown`: clients
   * poll with the location they were given, so it no longer changes.
   */
  location: string;
  locationShown?: boolean;
  readonly jobType: 'QUERY' | 'LOAD' | 'COPY' | 'EXTRACT';
  state: JobState;
  readonly createdMs: number;
  startMs?: number;
  endMs?: number;
  /** The REST `configuration` block as the client sent it (echoed back). */
  readonly configuration: Json;
  readonly userEmail: string;
  readonly parentJobId?: string;
  /** The query the engine runs (after legacy rewriting). */
  readonly request?: QueryRequest;
  reply?: QueryReply;
  /** A SELECT job's anonymous destination, named once the insert's analysis knows the statement. */
  resultTable?: TableRef;
  error?: ErrorInfo;
  /** Per-row errors of a failed load (status.errors); defaults to [errorResult]. */
  errors?: Json[];
  /** Statistics blocks of load/copy/extract jobs (`load`, `copy`, `extract`). */
  extraStatistics?: Json;
  /** Cancels the engine call; a finished job shares one never-used switch. */
  abort: JobCancel;
  /** Resolves when the job reaches DONE (never rejects). */
  done: Promise<void>;
}

export const MAX_JOBS = 100_000;
/** Jobs kept as objects: the newest, whose results are usually still being read. */
export const IN_MEMORY_JOBS = 1_000;
/** Finished jobs move to the spill file this many at a time (one write). */
const SPILL_BATCH = 200;

/**
 * A job's cancel switch: what engine calls read of an AbortSignal (`aborted`,
 * one-shot 'abort' listeners) without an AbortController per job. Node's
 * EventTarget cost ~10-30 us per job in the first few hundred queries (a
 * controller, a listener added and removed), a few percent of the gateway's
 * CPU per SELECT 1. `signal` is the switch itself, so call sites read as with
 * a controller.
 */
export class JobCancel implements CancelSignal {
  aborted = false;
  private listeners: (() => void)[] | undefined;

  get signal(): JobCancel {
    return this;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    // Listeners run once, as `{ once: true }` ones of an AbortSignal.
    const ls = this.listeners;
    this.listeners = undefined;
    if (ls) for (const f of ls) f();
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }
}

const FINISHED_ABORT = new JobCancel();
const SETTLED: Promise<void> = Promise.resolve();

/**
 * Slims a job that reached DONE: the registry holds up to MAX_JOBS of them, so
 * what stays per job is what rendering and paging read. The engine request
 * keeps only the fields read after completion (the query text is in
 * `configuration`), and the cancel controller and completion promise become
 * shared constants (cancel is a no-op on a finished job; waitDone checks the state).
 */
export function slimFinishedJob(job: JobRecord): void {
  const r = job.request;
  if (r) {
    (job as { request?: QueryRequest }).request = {
      session_id: r.session_id,
      dry_run: r.dry_run,
      max_results: r.max_results,
      timestamp_format: r.timestamp_format,
      string_scalars: r.string_scalars,
    } as QueryRequest;
  }
  job.abort = FINISHED_ABORT;
  job.done = SETTLED;
}
const REQUEST_ID_TTL_MS = 15 * 60 * 1000;

const ID_BYTES = 18;
/** Random bytes for job ids, drawn 256 ids at a time (one CSPRNG call instead of one per query). */
let idPool = Buffer.alloc(0);
let idPos = 0;

export function newJobId(): string {
  if (idPos + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 256);
    idPos = 0;
  }
  idPos += ID_BYTES;
  return 'job_' + idPool.toString('base64url', idPos - ID_BYTES, idPos).replace(/-/g, '_');
}

const key = (projectId: string, jobId: string): string => `${projectId}\u0000${jobId}`;

/** What the registry keeps in memory of a spilled job: where it is, and what listing filters on. */
interface Spilled {
  readonly pos: number;
  readonly len: number;
  readonly projectId: string;
  readonly createdMs: number;
  readonly parentJobId: string | undefined;
}

/** A job as listing sees it: the fields filters read, and the whole record on demand. */
export interface JobEntry {
  readonly jobId: string;
  readonly state: JobState;
  readonly createdMs: number;
  readonly parentJobId: string | undefined;
  load(): JobRecord;
}

/** The persisted form of a finished job: everything but its (constant) cancel controller and promise. */
type StoredJob = Omit<JobRecord, 'abort' | 'done'>;

function toStored(j: JobRecord): StoredJob {
  const { abort: _abort, done: _done, ...rest } = j;
  // A first page the engine sent as bytes is stored as its text (a Buffer would be JSON'd as an array of numbers).
  const r = rest.reply;
  if (r?.rows_utf8 && r.rows_utf8.length > 0) rest.reply = { ...r, rows_json: r.rows_utf8.toString('utf8'), rows_utf8: undefined };
  return rest;
}

function fromStored(s: StoredJob): JobRecord {
  return { ...s, abort: FINISHED_ABORT, done: SETTLED };
}

/**
 * Append-only store of spilled jobs (JSON texts): a file in `dir`, unlinked as
 * soon as it is open (nothing to clean up after a crash; the registry lives as
 * long as the process); without a dir, or if the file cannot be made, the
 * texts stay in memory (still ~2x smaller than the objects).
 */
class SpillStore {
  private fd: number | undefined;
  private size = 0;
  private readonly texts: string[] = [];

  constructor(dir: string | undefined) {
    if (!dir) return;
    const file = join(dir, `.gateway-jobs-${process.pid}-${Date.now()}.spill`);
    try {
      this.fd = openSync(file, 'w+');
      unlinkSync(file);
    } catch {
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
    }
  }

  /** Appends the texts; returns [position, length] of each. */
  append(texts: readonly string[]): [number, number][] {
    const out: [number, number][] = [];
    if (this.fd === undefined) {
      for (const t of texts) {
        out.push([this.texts.length, 0]);
        this.texts.push(t);
      }
      return out;
    }
    const bufs = texts.map((t) => Buffer.from(t, 'utf8'));
    const all = Buffer.concat(bufs);
    let pos = this.size;
    let off = 0;
    while (off < all.length) off += writeSync(this.fd, all, off, all.length - off, this.size + off);
    this.size += all.length;
    for (const b of bufs) {
      out.push([pos, b.length]);
      pos += b.length;
    }
    return out;
  }

  read(pos: number, len: number): string {
    if (this.fd === undefined) return this.texts[pos]!;
    const buf = Buffer.allocUnsafe(len);
    let off = 0;
    while (off < len) {
      const n = readSync(this.fd, buf, off, len - off, pos + off);
      if (n === 0) break;
      off += n;
    }
    return buf.toString('utf8', 0, off);
  }

  /** Forgets a text kept in memory (a file region is simply left behind). */
  drop(pos: number): void {
    if (this.fd === undefined) this.texts[pos] = '';
  }
}

export class JobRegistry {
  /** Every job, oldest first: the record itself, or where its spilled copy is. */
  private readonly jobs = new Map<string, JobRecord | Spilled>();
  /** Keys of the jobs held as objects, oldest first. */
  private readonly inMemory = new Set<string>();
  private readonly requestIds = new Map<string, { key: string; at: number }>();
  private readonly spill: SpillStore;

  /** `spillDir`: where finished jobs past the newest IN_MEMORY_JOBS are written (the data dir). */
  constructor(spillDir?: string) {
    this.spill = new SpillStore(spillDir);
  }

  get size(): number {
    return this.jobs.size;
  }

  get(projectId: string, jobId: string): JobRecord | undefined {
    return this.resolve(this.jobs.get(key(projectId, jobId)));
  }

  has(projectId: string, jobId: string): boolean {
    return this.jobs.has(key(projectId, jobId));
  }

  add(job: JobRecord): void {
    const k = key(job.projectId, job.jobId);
    this.jobs.set(k, job);
    this.inMemory.add(k);
    if (this.inMemory.size >= IN_MEMORY_JOBS + SPILL_BATCH) this.spillOldest();
    if (this.jobs.size > MAX_JOBS) this.evict();
  }

  delete(projectId: string, jobId: string): boolean {
    const k = key(projectId, jobId);
    const v = this.jobs.get(k);
    if (v && !isRecord(v)) this.spill.drop(v.pos);
    this.inMemory.delete(k);
    return this.jobs.delete(k);
  }

  /** requestId idempotency: the job a recent identical requestId created. */
  byRequestId(projectId: string, requestId: string): JobRecord | undefined {
    const now = Date.now();
    const hit = this.requestIds.get(`${projectId}\u0000${requestId}`);
    if (!hit || now - hit.at > REQUEST_ID_TTL_MS) return undefined;
    return this.resolve(this.jobs.get(hit.key));
  }

  rememberRequestId(projectId: string, requestId: string, job: JobRecord): void {
    const now = Date.now();
    this.requestIds.set(`${projectId}\u0000${requestId}`, { key: key(job.projectId, job.jobId), at: now });
    if (this.requestIds.size > MAX_JOBS) {
      for (const [k, v] of this.requestIds) {
        if (now - v.at > REQUEST_ID_TTL_MS || this.requestIds.size > MAX_JOBS) this.requestIds.delete(k);
        else break;
      }
    }
  }

  /** Jobs of a project, newest first, as entries: a spilled job is read only when loaded. */
  entries(projectId: string): JobEntry[] {
    const out: JobEntry[] = [];
    for (const [k, v] of this.jobs) {
      if (v.projectId !== projectId) continue;
      if (isRecord(v)) {
        out.push({ jobId: v.jobId, state: v.state, createdMs: v.createdMs, parentJobId: v.parentJobId, load: () => v });
      } else {
        const jobId = k.slice(projectId.length + 1);
        out.push({ jobId, state: 'DONE', createdMs: v.createdMs, parentJobId: v.parentJobId, load: () => this.load(v) });
      }
    }
    return out.reverse();
  }

  /** Jobs of a project, newest first (every spilled one read back). */
  list(projectId: string): JobRecord[] {
    return this.entries(projectId).map((e) => e.load());
  }

  private resolve(v: JobRecord | Spilled | undefined): JobRecord | undefined {
    return v === undefined || isRecord(v) ? v : this.load(v);
  }

  private load(s: Spilled): JobRecord {
    return fromStored(JSON.parse(this.spill.read(s.pos, s.len)) as StoredJob);
  }

  /** Writes the oldest finished in-memory jobs to the spill file (unfinished ones stay). */
  private spillOldest(): void {
    const batch: [string, JobRecord][] = [];
    for (const k of this.inMemory) {
      if (this.inMemory.size - batch.length <= IN_MEMORY_JOBS) break;
      const j = this.jobs.get(k);
      if (j && isRecord(j) && j.state === 'DONE') batch.push([k, j]);
    }
    if (batch.length === 0) return;
    let places: [number, number][];
    try {
      places = this.spill.append(batch.map(([, j]) => JSON.stringify(toStored(j))));
    } catch {
      return; // the disk refused: keep them as objects (bounded by MAX_JOBS all the same)
    }
    batch.forEach(([k, j], i) => {
      const [pos, len] = places[i]!;
      this.jobs.set(k, { pos, len, projectId: j.projectId, createdMs: j.createdMs, parentJobId: j.parentJobId });
      this.inMemory.delete(k);
    });
  }

  private evict(): void {
    // Map order is insertion order: drop the oldest finished jobs first.
    for (const [k, j] of this.jobs) {
      if (this.jobs.size <= MAX_JOBS) return;
      if (!isRecord(j) || j.state === 'DONE') this.forget(k, j);
    }
    for (const [k, j] of this.jobs) {
      if (this.jobs.size <= MAX_JOBS) return;
      this.forget(k, j);
    }
  }

  private forget(k: string, v: JobRecord | Spilled): void {
    if (!isRecord(v)) this.spill.drop(v.pos);
    this.inMemory.delete(k);
    this.jobs.delete(k);
  }
}

function isRecord(v: JobRecord | Spilled): v is JobRecord {
  return 'jobId' in v;
}
