// In-memory job registry. The gateway drives job states (PENDING -> RUNNING ->
// DONE); the engine only runs ExecuteQuery. Bounded: the oldest finished jobs
// are evicted past MAX_JOBS so a long-lived emulator does not grow forever.
import { randomBytes } from 'node:crypto';
import type { QueryReply, QueryRequest } from '../engine-client.js';
import type { ErrorInfo } from '../errors.js';
import type { Json } from '../validate.js';

export type JobState = 'PENDING' | 'RUNNING' | 'DONE';

export interface JobRecord {
  readonly projectId: string;
  readonly jobId: string;
  readonly location: string;
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
  error?: ErrorInfo;
  /** Per-row errors of a failed load (status.errors); defaults to [errorResult]. */
  errors?: Json[];
  /** Statistics blocks of load/copy/extract jobs (`load`, `copy`, `extract`). */
  extraStatistics?: Json;
  /** Cancels the engine call; a finished job shares one never-used controller. */
  abort: AbortController;
  /** Resolves when the job reaches DONE (never rejects). */
  done: Promise<void>;
}

export const MAX_JOBS = 10_000;

const FINISHED_ABORT = new AbortController();
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

export function newJobId(): string {
  return 'job_' + randomBytes(18).toString('base64url').replace(/-/g, '_');
}

const key = (projectId: string, jobId: string): string => `${projectId}\u0000${jobId}`;

export class JobRegistry {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly requestIds = new Map<string, { key: string; at: number }>();

  get size(): number {
    return this.jobs.size;
  }

  get(projectId: string, jobId: string): JobRecord | undefined {
    return this.jobs.get(key(projectId, jobId));
  }

  has(projectId: string, jobId: string): boolean {
    return this.jobs.has(key(projectId, jobId));
  }

  add(job: JobRecord): void {
    this.jobs.set(key(job.projectId, job.jobId), job);
    if (this.jobs.size > MAX_JOBS) this.evict();
  }

  delete(projectId: string, jobId: string): boolean {
    return this.jobs.delete(key(projectId, jobId));
  }

  /** requestId idempotency: the job a recent identical requestId created. */
  byRequestId(projectId: string, requestId: string): JobRecord | undefined {
    const now = Date.now();
    const hit = this.requestIds.get(`${projectId}\u0000${requestId}`);
    if (!hit || now - hit.at > REQUEST_ID_TTL_MS) return undefined;
    return this.jobs.get(hit.key);
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

  /** Jobs of a project, newest first. */
  list(projectId: string): JobRecord[] {
    const out: JobRecord[] = [];
    for (const j of this.jobs.values()) if (j.projectId === projectId) out.push(j);
    return out.reverse();
  }

  private evict(): void {
    // Map order is insertion order: drop the oldest finished jobs first.
    for (const [k, j] of this.jobs) {
      if (this.jobs.size <= MAX_JOBS) return;
      if (j.state === 'DONE') this.jobs.delete(k);
    }
    for (const k of this.jobs.keys()) {
      if (this.jobs.size <= MAX_JOBS) return;
      this.jobs.delete(k);
    }
  }
}
