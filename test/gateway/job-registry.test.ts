// The job registry keeps the newest jobs as objects and spills older finished
// ones to a file (or to compact texts without a dir); every read path must see
// a spilled job exactly as it was.
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IN_MEMORY_JOBS, JobCancel, JobRegistry, slimFinishedJob, type JobRecord } from '../../src/gateway/jobs/registry.js';
import type { QueryReply } from '../../src/gateway/engine-client.js';

function job(projectId: string, n: number, state: JobRecord['state'] = 'DONE', parentJobId?: string): JobRecord {
  const reply: QueryReply = {
    schema_json: '{"fields":[{"name":"x","type":"INTEGER","mode":"NULLABLE"}]}',
    total_rows: n,
    result_table: { project_id: projectId, dataset_id: '_anon', table_id: `anon_${n}` },
    rows_json: `[{"f":[{"v":"${n}"}]}]`,
    next_index: -1,
    statement_type: 'SELECT',
    num_dml_affected_rows: -1,
    ddl_operation_performed: '',
    ddl_target_table: null,
    ddl_target_routine_json: '',
    total_bytes_processed: 8 * n,
    statistics_json: '',
  };
  const j: JobRecord = {
    projectId,
    jobId: `job_${n}`,
    location: 'US',
    jobType: 'QUERY',
    state,
    createdMs: 1_700_000_000_000 + n,
    startMs: 1_700_000_000_000 + n,
    ...(state === 'DONE' ? { endMs: 1_700_000_000_001 + n } : {}),
    configuration: { query: { query: `SELECT ${n} AS x`, useLegacySql: false } },
    userEmail: 'emulator@warehouse-emulator.local',
    ...(parentJobId ? { parentJobId } : {}),
    ...(n % 7 === 0 ? { error: { code: 400, status: 'invalid', reason: 'invalidQuery', message: `bad ${n}` } } : {}),
    request: { session_id: '', dry_run: false, max_results: 100, timestamp_format: 'TIMESTAMP_INT64_MICROS', string_scalars: true } as JobRecord['request'],
    reply,
    abort: new JobCancel(),
    done: Promise.resolve(),
  };
  if (state === 'DONE') slimFinishedJob(j);
  return j;
}

/** The fields a job is rendered from (the cancel controller and promise are per-process machinery). */
const view = (j: JobRecord | undefined): unknown => {
  if (!j) return j;
  const { abort: _a, done: _d, ...rest } = j;
  return rest;
};

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each([
  ['a spill file in the data dir', true],
  ['compact texts in memory (no dir)', false],
])('job registry spilling to %s', (_name, withDir) => {
  const dir = withDir ? mkdtempSync(join(tmpdir(), 'jobreg-')) : undefined;
  if (dir) dirs.push(dir);
  const reg = new JobRegistry(dir);
  const total = IN_MEMORY_JOBS * 3;
  const originals = new Map<string, JobRecord>();
  // One job stays RUNNING from the start: unfinished jobs are never spilled.
  const running = job('p', 0, 'RUNNING');
  reg.add(running);
  for (let n = 1; n <= total; n++) {
    const j = job(n % 10 === 0 ? 'q' : 'p', n, 'DONE', n % 50 === 0 ? 'job_1' : undefined);
    originals.set(j.jobId, structuredClone(view(j)) as JobRecord);
    reg.add(j);
  }
  reg.rememberRequestId('p', 'req-1', reg.get('p', 'job_3')!);

  it('gets every job back as it was, old or new', () => {
    expect(reg.size).toBe(total + 1);
    expect(reg.get('p', 'job_0')).toBe(running);
    for (const n of [1, 2, 3, 49, 50, 500, total - 1]) {
      const p = n % 10 === 0 ? 'q' : 'p';
      expect(view(reg.get(p, `job_${n}`))).toEqual(originals.get(`job_${n}`));
      expect(reg.has(p, `job_${n}`)).toBe(true);
    }
    // A spilled job reads as finished: a shared, never-aborted controller and a settled promise.
    const old = reg.get('p', 'job_1')!;
    expect(old.abort.signal.aborted).toBe(false);
    expect(old.state).toBe('DONE');
    expect(view(reg.byRequestId('p', 'req-1'))).toEqual(originals.get('job_3'));
  });

  it('lists newest first with entries that load the same jobs', () => {
    const entries = reg.entries('q');
    expect(entries.map((e) => e.jobId)).toEqual(
      [...originals.keys()].filter((k) => Number(k.slice(4)) % 10 === 0).reverse(),
    );
    const children = reg.entries('p').filter((e) => e.parentJobId === 'job_1');
    expect(children.length).toBe(reg.list('p').filter((j) => j.parentJobId === 'job_1').length);
    for (const e of entries.slice(-3)) expect(view(e.load())).toEqual(originals.get(e.jobId));
    expect(reg.list('p')[reg.list('p').length - 1]).toBe(running);
  });

  it('deletes spilled and in-memory jobs alike', () => {
    expect(reg.delete('p', 'job_2')).toBe(true);
    expect(reg.get('p', 'job_2')).toBeUndefined();
    expect(reg.has('p', 'job_2')).toBe(false);
    expect(reg.delete('p', `job_${total - 1}`)).toBe(true);
    expect(reg.entries('p').some((e) => e.jobId === `job_${total - 1}` || e.jobId === 'job_2')).toBe(false);
    expect(view(reg.get('p', 'job_3'))).toEqual(originals.get('job_3'));
  });
});

it('spills to an unlinked file in the data dir: nothing left behind, held open by the process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobreg-'));
  dirs.push(dir);
  const reg = new JobRegistry(dir);
  for (let n = 1; n <= IN_MEMORY_JOBS * 2; n++) reg.add(job('p', n));
  expect(readdirSync(dir)).toEqual([]);
  const open = readdirSync('/proc/self/fd').map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return '';
    }
  });
  expect(open.some((l) => l.startsWith(join(dir, '.gateway-jobs-')) && l.endsWith('(deleted)'))).toBe(true);
  expect(reg.get('p', 'job_1')?.configuration).toEqual({ query: { query: 'SELECT 1 AS x', useLegacySql: false } });
});

it('spills a first page the engine sent as bytes as its text', () => {
  const reg = new JobRegistry(undefined);
  const text = '[{"f":[{"v":"ü 😀 \\"q\\""}]}]';
  const first = job('p', 1);
  first.reply = { ...first.reply!, rows_json: '', rows_utf8: Buffer.from(text) };
  reg.add(first);
  for (let n = 2; n <= IN_MEMORY_JOBS * 2; n++) reg.add(job('p', n));
  const back = reg.get('p', 'job_1')!;
  expect(back).not.toBe(first);
  expect(back.reply!.rows_json).toBe(text);
  expect(back.reply!.rows_utf8).toBeUndefined();
  // The job in memory was left as it was.
  expect(first.reply!.rows_utf8!.toString()).toBe(text);
});
