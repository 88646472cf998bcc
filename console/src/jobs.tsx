// Jobs: the project's jobs (jobs.list, projection=full) with filters, and a
// job's detail: configuration, statistics, child jobs of a script, errors,
// cancel. While something runs, both refresh every second (live progress).
import { useEffect, useState } from 'preact/hooks';
import { api, enc, type Job } from './api.js';
import { cancelJob, getJob } from './run.js';
import { announce, ErrorBox, Facts } from './ui.js';
import { formatBytes, formatDuration, formatMillis } from './values.js';

const POLL_MS = 1000;

export function jobType(j: Job): string {
  const c = j.configuration;
  return c.jobType ?? (c.query ? 'QUERY' : c.load ? 'LOAD' : c.copy ? 'COPY' : c.extract ? 'EXTRACT' : 'UNKNOWN');
}

function duration(j: Job, now: number): number | undefined {
  const s = j.statistics;
  const from = Number(s?.startTime ?? s?.creationTime ?? 0);
  if (!from) return undefined;
  const to = s?.endTime ? Number(s.endTime) : j.status.state === 'DONE' ? from : now;
  return Math.max(0, to - from);
}

function stateLabel(j: Job): string {
  if (j.status.state !== 'DONE') return j.status.state;
  if (j.status.errorResult) return j.status.errorResult.reason === 'stopped' ? 'CANCELLED' : 'FAILED';
  return 'SUCCEEDED';
}

export function JobsView(props: { project: string; selected?: { jobId: string; location?: string }; onSelect: (j: { jobId: string; location?: string } | undefined) => void; onOpenQuery: (sql: string) => void }) {
  const [jobs, setJobs] = useState<Job[]>([]);
  const [error, setError] = useState<string>();
  const [state, setState] = useState('');
  const [type, setType] = useState('');
  const [text, setText] = useState('');
  const [tick, setTick] = useState(0);
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    let stop = false;
    api<{ jobs?: Job[] }>('GET', `/projects/${enc(props.project)}/jobs`, { query: { projection: 'full', maxResults: 500, stateFilter: state ? state.toLowerCase() : undefined } })
      .then((r) => {
        if (stop) return;
        // Newest first, as the cloud console lists them.
        setJobs((r.jobs ?? []).slice().sort((a, b) => Number(b.statistics?.creationTime ?? 0) - Number(a.statistics?.creationTime ?? 0)));
        setError(undefined);
      })
      .catch((e: Error) => !stop && setError(e.message));
    return () => {
      stop = true;
    };
  }, [props.project, state, tick]);

  const running = jobs.some((j) => j.status.state !== 'DONE');
  useEffect(() => {
    if (!running) return;
    const t = window.setInterval(() => {
      setNow(Date.now());
      setTick((x) => x + 1);
    }, POLL_MS);
    return () => window.clearInterval(t);
  }, [running]);

  const q = text.trim().toLowerCase();
  const shown = jobs.filter((j) => (!type || jobType(j) === type) && (!q || j.jobReference.jobId.toLowerCase().includes(q) || (j.configuration.query?.query ?? '').toLowerCase().includes(q)));

  return (
    <div class="jobs-view">
      <section class="jobs-list" aria-label="Jobs">
        <div class="toolbar" role="group" aria-label="Job filters">
          <h2>Jobs</h2>
          <label>
            State{' '}
            <select value={state} onChange={(e) => setState((e.currentTarget as HTMLSelectElement).value)}>
              <option value="">All</option>
              <option value="RUNNING">Running</option>
              <option value="PENDING">Pending</option>
              <option value="DONE">Done</option>
            </select>
          </label>
          <label>
            Type{' '}
            <select value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}>
              <option value="">All</option>
              {['QUERY', 'LOAD', 'COPY', 'EXTRACT'].map((t) => <option key={t}>{t}</option>)}
            </select>
          </label>
          <input type="search" aria-label="Search jobs by id or query text" placeholder="Search id or query…" value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
          <button type="button" onClick={() => setTick((x) => x + 1)}>Refresh</button>
          <span class="muted">{shown.length} job{shown.length === 1 ? '' : 's'}{running ? ' · live' : ''}</span>
        </div>
        <ErrorBox error={error} />
        <div class="table-scroll">
          <table class="jobs-table">
            <thead>
              <tr>
                <th scope="col">State</th>
                <th scope="col">Job ID</th>
                <th scope="col">Type</th>
                <th scope="col">Statement</th>
                <th scope="col">Created (UTC)</th>
                <th scope="col">Duration</th>
                <th scope="col">Bytes processed</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((j) => {
                const sel = props.selected?.jobId === j.jobReference.jobId;
                const d = duration(j, now);
                return (
                  <tr key={j.jobReference.jobId} class={sel ? 'selected' : ''} aria-selected={sel}>
                    <td><span class={`state state-${stateLabel(j).toLowerCase()}`}>{stateLabel(j)}</span></td>
                    <td>
                      <button type="button" class="link mono" onClick={() => props.onSelect({ jobId: j.jobReference.jobId, location: j.jobReference.location })}>
                        {j.jobReference.jobId}
                      </button>
                    </td>
                    <td>{jobType(j)}</td>
                    <td>{j.statistics?.query?.statementType ?? ''}</td>
                    <td>{formatMillis(j.statistics?.creationTime).slice(5, 19)}</td>
                    <td class="num">{d === undefined ? '' : formatDuration(d)}</td>
                    <td class="num">{j.statistics?.query?.totalBytesProcessed !== undefined ? formatBytes(j.statistics.query.totalBytesProcessed) : ''}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {shown.length === 0 && <p class="empty">No jobs{q || type || state ? ' match the filters' : ' yet'}.</p>}
        </div>
      </section>
      {props.selected && (
        <JobDetail key={props.selected.jobId} project={props.project} jobId={props.selected.jobId} location={props.selected.location} onClose={() => props.onSelect(undefined)} onSelect={props.onSelect} onOpenQuery={props.onOpenQuery} onChanged={() => setTick((x) => x + 1)} />
      )}
    </div>
  );
}

function JobDetail(props: { project: string; jobId: string; location?: string; onClose: () => void; onSelect: (j: { jobId: string; location?: string }) => void; onOpenQuery: (sql: string) => void; onChanged: () => void }) {
  const [job, setJob] = useState<Job>();
  const [children, setChildren] = useState<Job[]>([]);
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    getJob(props.project, props.jobId, props.location).then(
      (j) => {
        setJob(j);
        setError(undefined);
        setNow(Date.now());
        const script = Number(j.statistics?.numChildJobs ?? 0) > 0 || j.statistics?.query?.statementType === 'SCRIPT';
        if (script) {
          api<{ jobs?: Job[] }>('GET', `/projects/${enc(props.project)}/jobs`, { query: { parentJobId: props.jobId, projection: 'full', maxResults: 1000 } }).then(
            (r) => setChildren(r.jobs ?? []),
            () => setChildren([]),
          );
        }
      },
      (e: Error) => setError(e.message),
    );
  }, [props.jobId, tick]);

  const runningNow = job !== undefined && job.status.state !== 'DONE';
  useEffect(() => {
    if (!runningNow) return;
    const t = window.setInterval(() => setTick((x) => x + 1), POLL_MS);
    const clock = window.setInterval(() => setNow(Date.now()), 200);
    return () => {
      window.clearInterval(t);
      window.clearInterval(clock);
    };
  }, [runningNow]);

  const cancel = async (): Promise<void> => {
    try {
      const r = await cancelJob(props.project, props.jobId, job?.jobReference.location);
      setJob(r.job);
      announce(`Cancel requested for ${props.jobId}`);
      props.onChanged();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const s = job?.statistics;
  const d = job ? duration(job, now) : undefined;
  const errors = job?.status.errors ?? (job?.status.errorResult ? [job.status.errorResult] : []);
  return (
    <section class="job-detail" aria-label={`Job ${props.jobId}`}>
      <header>
        <h2 class="mono">{props.jobId}</h2>
        {job && <span class={`state state-${stateLabel(job).toLowerCase()}`}>{stateLabel(job)}</span>}
        {runningNow && <button type="button" class="danger" onClick={() => void cancel()}>■ Cancel job</button>}
        {job?.configuration.query?.query && <button type="button" onClick={() => props.onOpenQuery(job.configuration.query!.query!)}>Open in editor</button>}
        <button type="button" class="icon" aria-label="Close the job details" onClick={props.onClose}>×</button>
      </header>
      <ErrorBox error={error} />
      {job && (
        <div class="job-body">
          {runningNow && (
            <div class="progress" role="progressbar" aria-label="Job running" aria-valuetext={`running for ${formatDuration(d ?? 0)}`}>
              <div class="progress-bar" />
              <span>Running for {formatDuration(d ?? 0)}{children.length ? ` · ${children.filter((c) => c.status.state === 'DONE').length} of ${children.length} statements done` : ''}</span>
            </div>
          )}
          <Facts
            items={[
              ['Job type', jobType(job)],
              ['Statement type', s?.query?.statementType],
              ['Location', job.jobReference.location],
              ['User', job.user_email],
              ['Created', formatMillis(s?.creationTime)],
              ['Started', formatMillis(s?.startTime)],
              ['Ended', formatMillis(s?.endTime)],
              ['Duration', d === undefined ? undefined : formatDuration(d)],
              ['Bytes processed', s?.query?.totalBytesProcessed !== undefined ? `${formatBytes(s.query.totalBytesProcessed)} (${Number(s.query.totalBytesProcessed).toLocaleString()})` : undefined],
              ['Bytes billed', s?.query?.totalBytesBilled !== undefined ? formatBytes(s.query.totalBytesBilled) : undefined],
              ['Rows affected', s?.query?.numDmlAffectedRows],
              ['Cache hit', s?.query?.cacheHit === undefined ? undefined : String(s.query.cacheHit)],
              ['Destination table', job.configuration.query?.destinationTable ? `${job.configuration.query.destinationTable.projectId}.${job.configuration.query.destinationTable.datasetId}.${job.configuration.query.destinationTable.tableId}` : undefined],
              ['Parent job', s?.parentJobId ? <button type="button" class="link mono" onClick={() => props.onSelect({ jobId: s.parentJobId! })}>{s.parentJobId}</button> : undefined],
            ]}
          />
          {errors.length > 0 && (
            <>
              <h3>Errors</h3>
              <ul class="errors">
                {errors.map((e, i) => (
                  <li key={i} class="error-box">
                    <strong>{e.reason}</strong>{e.location ? ` at ${e.location}` : ''}: {e.message}
                  </li>
                ))}
              </ul>
            </>
          )}
          {children.length > 0 && (
            <>
              <h3>Child jobs ({children.length})</h3>
              <ol class="children">
                {children.map((c) => (
                  <li key={c.jobReference.jobId}>
                    <button type="button" class="link mono" onClick={() => props.onSelect({ jobId: c.jobReference.jobId, location: c.jobReference.location })}>{c.jobReference.jobId}</button>{' '}
                    <span class={`state state-${stateLabel(c).toLowerCase()}`}>{stateLabel(c)}</span> {c.statistics?.query?.statementType ?? ''}
                  </li>
                ))}
              </ol>
            </>
          )}
          {job.configuration.query?.query && (
            <>
              <h3>Query</h3>
              <pre class="sql">{job.configuration.query.query}</pre>
            </>
          )}
          <details>
            <summary>Configuration</summary>
            <pre class="json-view">{JSON.stringify(job.configuration, null, 2)}</pre>
          </details>
          <details>
            <summary>Statistics</summary>
            <pre class="json-view">{JSON.stringify(job.statistics ?? {}, null, 2)}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
