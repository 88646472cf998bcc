// The console's shell: header (views, project, theme), the workspace
// (explorer + tabs of queries and resources + history) and the jobs view.
// Tabs, history and the theme live in the browser's localStorage.
import './styles.css';
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, enc } from './api.js';
import { Catalog } from './catalog.js';
import { Explorer, resourceKey, type Resource } from './explorer.js';
import { JobsView } from './jobs.js';
import { QueryTab, type HistoryEntry } from './query.js';
import { fullName, ResourceTab } from './resource.js';
import { announce, Dialog, ErrorBox, StatusLine } from './ui.js';
import { formatDuration } from './values.js';

type Tab = { id: string; kind: 'query'; title: string; text: string } | { id: string; kind: 'resource'; title: string; resource: Resource };

const store = {
  get<T>(key: string, fallback: T): T {
    try {
      const v = localStorage.getItem('warehouse-console.' + key);
      return v === null ? fallback : (JSON.parse(v) as T);
    } catch {
      return fallback;
    }
  },
  set(key: string, value: unknown): void {
    try {
      localStorage.setItem('warehouse-console.' + key, JSON.stringify(value));
    } catch {
      // storage full or disabled: the console still works, it just forgets
    }
  },
};

const HISTORY_MAX = 200;
let nextTab = Date.now();
const newQueryTab = (n: number, text = ''): Tab => ({ id: `q${nextTab++}`, kind: 'query', title: `Query ${n}`, text });

function applyTheme(theme: string): void {
  const dark = theme === 'dark' || (theme === 'system' && matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset['theme'] = dark ? 'dark' : 'light';
}

function App() {
  const [theme, setTheme] = useState<string>(store.get('theme', 'system'));
  const [projects, setProjects] = useState<string[]>([]);
  const [project, setProject] = useState<string>(store.get('project', ''));
  const [view, setView] = useState<'workspace' | 'jobs'>(location.hash.startsWith('#jobs') ? 'jobs' : 'workspace');
  const [selectedJob, setSelectedJob] = useState<{ jobId: string; location?: string } | undefined>(() => {
    const m = /^#jobs\/(.+)$/.exec(location.hash);
    return m ? { jobId: decodeURIComponent(m[1]!) } : undefined;
  });
  const [tabs, setTabs] = useState<Tab[]>(() => {
    const saved = store.get<{ title: string; text: string }[]>('tabs', []);
    return saved.length ? saved.map((t, i) => ({ ...newQueryTab(i + 1, t.text), title: t.title })) : [newQueryTab(1)];
  });
  const [active, setActive] = useState<string>(() => tabs[0]!.id);
  const [history, setHistory] = useState<HistoryEntry[]>(store.get('history', []));
  const [showHistory, setShowHistory] = useState(false);
  const [createOpen, setCreateOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const [explorerVersion, setExplorerVersion] = useState(0);
  const catalog = useMemo(() => new Catalog(project), [project]);
  const tabsRef = useRef(tabs);
  tabsRef.current = tabs;

  useEffect(() => {
    applyTheme(theme);
    store.set('theme', theme);
    if (theme !== 'system') return;
    const mq = matchMedia('(prefers-color-scheme: dark)');
    const on = (): void => applyTheme('system');
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, [theme]);

  useEffect(() => {
    api<{ projects?: { id: string }[] }>('GET', '/projects')
      .then((r) => (r.projects ?? []).map((p) => p.id))
      .catch(() => [] as string[])
      .then((ids) => {
        setProjects(ids);
        setProject((p) => p || ids[0] || 'my-project');
        document.body.dataset['ready'] = '1';
        performance.mark('console-ready');
      });
  }, []);
  useEffect(() => {
    if (project) store.set('project', project);
  }, [project]);
  useEffect(() => {
    store.set('tabs', tabs.filter((t) => t.kind === 'query').map((t) => ({ title: t.title, text: (t as { text: string }).text })));
  }, [tabs]);
  useEffect(() => {
    const hash = view === 'jobs' ? (selectedJob ? `#jobs/${encodeURIComponent(selectedJob.jobId)}` : '#jobs') : '';
    if (location.hash !== hash) history_replace(hash);
  }, [view, selectedJob]);

  const addHistory = (h: HistoryEntry): void =>
    setHistory((old) => {
      const next = [h, ...old].slice(0, HISTORY_MAX);
      store.set('history', next);
      return next;
    });

  const openQuery = (text: string): void => {
    const t = newQueryTab(tabsRef.current.filter((x) => x.kind === 'query').length + 1, text);
    setTabs((ts) => [...ts, t]);
    setActive(t.id);
    setView('workspace');
  };
  const openResource = (r: Resource): void => {
    const key = resourceKey(r);
    const existing = tabsRef.current.find((t) => t.kind === 'resource' && resourceKey(t.resource) === key);
    if (existing) {
      setActive(existing.id);
      return;
    }
    const t: Tab = { id: `r${nextTab++}`, kind: 'resource', title: r.kind === 'dataset' ? r.datasetId : r.id, resource: r };
    setTabs((ts) => [...ts, t]);
    setActive(t.id);
  };
  const closeTab = (id: string): void => {
    const ts = tabsRef.current;
    const i = ts.findIndex((t) => t.id === id);
    let rest = ts.filter((t) => t.id !== id);
    if (rest.length === 0) rest = [newQueryTab(1)];
    setTabs(rest);
    if (id === active) setActive(rest[Math.min(i, rest.length - 1)]!.id);
  };

  // Keyboard: Alt+N new query, Alt+W close tab, Alt+1..9 a tab, Alt+J jobs, Alt+Q workspace, Alt+E explorer, Alt+H history, ? help.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      const typing = e.target instanceof HTMLElement && (e.target.closest('.cm-editor') || ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.target.tagName));
      if (e.key === '?' && !typing && !e.altKey && !e.ctrlKey && !e.metaKey) {
        setHelpOpen(true);
        e.preventDefault();
        return;
      }
      if (!e.altKey || e.ctrlKey || e.metaKey) return;
      const k = e.code;
      if (k === 'KeyN') openQuery('');
      else if (k === 'KeyW') closeTab(active);
      else if (k === 'KeyJ') setView('jobs');
      else if (k === 'KeyQ') setView('workspace');
      else if (k === 'KeyH') setShowHistory((s) => !s);
      else if (k === 'KeyE') {
        setView('workspace');
        requestAnimationFrame(() => (document.querySelector('.tree [tabindex="0"]') as HTMLElement | null)?.focus());
      } else if (/^Digit[1-9]$/.test(k)) {
        const t = tabsRef.current[Number(k.slice(5)) - 1];
        if (t) {
          setView('workspace');
          setActive(t.id);
        }
      } else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [active]);

  /** The tab list's keys: arrows move between tabs, Home/End to the ends, Delete closes. */
  const onTabKey = (e: KeyboardEvent, i: number): void => {
    const ts = tabsRef.current;
    let j: number | undefined;
    if (e.key === 'ArrowRight') j = (i + 1) % ts.length;
    else if (e.key === 'ArrowLeft') j = (i - 1 + ts.length) % ts.length;
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = ts.length - 1;
    else if (e.key === 'Delete') closeTab(ts[i]!.id);
    else return;
    e.preventDefault();
    if (j !== undefined) {
      const id = ts[j]!.id;
      setActive(id);
      requestAnimationFrame(() => document.getElementById(`tab-${id}`)?.focus());
    }
  };

  const activeTab = tabs.find((t) => t.id === active);
  return (
    <>
      <a class="skip-link" href="#main">Skip to the workspace</a>
      <header class="app-header">
        <h1>
          <span aria-hidden="true">▦</span> warehouse-emulator <span class="muted">console</span>
        </h1>
        <nav aria-label="Views" class="views">
          <button type="button" aria-current={view === 'workspace' ? 'page' : undefined} onClick={() => setView('workspace')} aria-keyshortcuts="Alt+Q">SQL workspace</button>
          <button type="button" aria-current={view === 'jobs' ? 'page' : undefined} onClick={() => setView('jobs')} aria-keyshortcuts="Alt+J">Jobs</button>
        </nav>
        <label class="project">
          Project{' '}
          <input list="projects" value={project} size={16} onChange={(e) => setProject((e.currentTarget as HTMLInputElement).value.trim() || project)} />
          <datalist id="projects">{projects.map((p) => <option key={p} value={p} />)}</datalist>
        </label>
        <label>
          Theme{' '}
          <select value={theme} onChange={(e) => setTheme((e.currentTarget as HTMLSelectElement).value)}>
            <option value="system">System</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>
        <button type="button" class="icon" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={() => setHelpOpen(true)}>?</button>
      </header>
      <main id="main" class={`app-main view-${view}`}>
        {project && (
          <Explorer project={project} hidden={view !== 'workspace'} version={explorerVersion} onOpen={openResource} onCreateDataset={() => setCreateOpen(true)} selected={activeTab?.kind === 'resource' ? resourceKey(activeTab.resource) : undefined} />
        )}
        <div class="workspace" hidden={view !== 'workspace'}>
          <div class="tabstrip">
            <div role="tablist" aria-label="Open tabs" class="tabs">
              {tabs.map((t, i) => (
                <div key={t.id} role="presentation" class={`tab${t.id === active ? ' active' : ''}`}>
                  <button
                    type="button"
                    role="tab"
                    aria-selected={t.id === active}
                    id={`tab-${t.id}`}
                    aria-controls={`panel-${t.id}`}
                    tabIndex={t.id === active ? 0 : -1}
                    onClick={() => setActive(t.id)}
                    onKeyDown={(e) => onTabKey(e, i)}
                    title={`${t.kind === 'resource' ? fullName(t.resource) : t.title} (Alt+${i + 1}; Delete closes)`}
                  >
                    <span aria-hidden="true">{t.kind === 'query' ? '✎ ' : '▦ '}</span>
                    {t.title}
                  </button>
                  {/* For the mouse; the keyboard closes a tab with Delete or Alt+W (a button here would break the tab list's structure). */}
                  <span class="tab-close" aria-hidden="true" title={`Close ${t.title}`} onClick={() => closeTab(t.id)}>×</span>
                </div>
              ))}
            </div>
            <button type="button" onClick={() => openQuery('')} aria-keyshortcuts="Alt+N" title="New query (Alt+N)">+ Query</button>
            <button type="button" aria-pressed={showHistory} onClick={() => setShowHistory(!showHistory)} aria-keyshortcuts="Alt+H">History</button>
          </div>
          <div class="tab-panels">
            {/* Keyed by project too: a query tab's editor, completion and checks belong to one project. */}
            {project &&
              tabs.map((t) => (
                <div key={`${t.id}@${project}`} role="tabpanel" id={`panel-${t.id}`} aria-labelledby={`tab-${t.id}`} class="tab-panel" hidden={t.id !== active}>
                  {t.kind === 'query' ? (
                    <QueryTab
                      project={project}
                      catalog={catalog}
                      text={t.text}
                      active={t.id === active && view === 'workspace'}
                      onText={(text) => setTabs((ts) => ts.map((x) => (x.id === t.id ? { ...x, text } : x)))}
                      onHistory={addHistory}
                      onOpenJob={(jobId, loc) => {
                        setSelectedJob({ jobId, location: loc });
                        setView('jobs');
                      }}
                    />
                  ) : (
                    <ResourceTab
                      resource={t.resource}
                      active={t.id === active}
                      onQuery={openQuery}
                      onDeleted={() => {
                        announce(`Deleted ${fullName(t.resource)}`);
                        closeTab(t.id);
                        catalog.invalidate();
                        setExplorerVersion((v) => v + 1);
                      }}
                    />
                  )}
                </div>
              ))}
            {showHistory && <HistoryPanel history={history} onOpen={openQuery} onClear={() => { setHistory([]); store.set('history', []); }} />}
          </div>
        </div>
        {view === 'jobs' && project && (
          <JobsView project={project} selected={selectedJob} onSelect={setSelectedJob} onOpenQuery={openQuery} />
        )}
      </main>
      <footer class="app-footer">
        <StatusLine />
        <span class="muted">Ctrl+Enter run · Ctrl+Space complete · ? shortcuts</span>
      </footer>
      <CreateDatasetDialog
        open={createOpen}
        project={project}
        onClose={() => setCreateOpen(false)}
        onCreated={(id) => {
          setCreateOpen(false);
          announce(`Created dataset ${project}.${id}`);
          catalog.invalidate();
          setExplorerVersion((v) => v + 1);
        }}
      />
      <Dialog title="Keyboard shortcuts" open={helpOpen} onClose={() => setHelpOpen(false)}>
        <table class="shortcuts">
          <tbody>
            {[
              ['Ctrl/Cmd+Enter', 'Run the query (the selection only, when text is selected)'],
              ['Ctrl+Space', 'Complete keywords, functions, tables and columns'],
              ['Ctrl/Cmd+F', 'Find in the editor'],
              ['Alt+N / Alt+W', 'New query tab / close the tab'],
              ['Alt+1…9', 'Go to tab 1…9'],
              ['Alt+E', 'Focus the explorer (arrows move, → expands, Enter opens)'],
              ['Alt+Q / Alt+J', 'SQL workspace / Jobs'],
              ['Alt+H', 'Show or hide the query history'],
              ['Arrows, PgUp/PgDn, Enter', 'Move in a result grid, open a cell value'],
              ['Escape', 'Close a dialog or the cell value'],
            ].map(([k, v]) => (
              <tr key={k}>
                <th scope="row"><kbd>{k}</kbd></th>
                <td>{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="dialog-actions">
          <button type="button" onClick={() => setHelpOpen(false)}>Close</button>
        </div>
      </Dialog>
    </>
  );
}

function history_replace(hash: string): void {
  window.history.replaceState(null, '', hash || location.pathname + location.search);
}

function HistoryPanel(props: { history: HistoryEntry[]; onOpen: (text: string) => void; onClear: () => void }) {
  return (
    <aside class="history" aria-label="Query history">
      <header>
        <h2>History</h2>
        <button type="button" onClick={props.onClear} disabled={props.history.length === 0}>Clear</button>
      </header>
      {props.history.length === 0 && <p class="empty">Queries you run are kept here, in this browser.</p>}
      <ol>
        {props.history.map((h) => (
          <li key={h.jobId}>
            <button type="button" class="history-item" onClick={() => props.onOpen(h.text)} title="Open in a new tab">
              <span class={`state state-${h.state === 'done' ? 'succeeded' : h.state === 'cancelled' ? 'cancelled' : 'failed'}`}>{h.state}</span>
              <span class="muted"> {new Date(h.at).toLocaleTimeString()} · {formatDuration(h.ms)}</span>
              <code>{h.text.length > 160 ? h.text.slice(0, 159) + '…' : h.text}</code>
            </button>
          </li>
        ))}
      </ol>
    </aside>
  );
}

function CreateDatasetDialog(props: { open: boolean; project: string; onClose: () => void; onCreated: (id: string) => void }) {
  const [id, setId] = useState('');
  const [loc, setLoc] = useState('US');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (props.open) {
      setId('');
      setError(undefined);
    }
  }, [props.open]);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    try {
      await api('POST', `/projects/${enc(props.project)}/datasets`, {
        body: { datasetReference: { projectId: props.project, datasetId: id.trim() }, location: loc.trim() || undefined, ...(description ? { description } : {}) },
      });
      props.onCreated(id.trim());
    } catch (err) {
      setError((err as Error).message);
    }
    setBusy(false);
  };
  return (
    <Dialog title="Create dataset" open={props.open} onClose={props.onClose}>
      <form onSubmit={(e) => void submit(e)} class="form">
        <label>
          Project
          <input value={props.project} disabled />
        </label>
        <label>
          Dataset ID
          <input name="datasetId" required pattern="[A-Za-z0-9_]{1,1024}" title="Letters, digits and underscores" value={id} onInput={(e) => setId((e.currentTarget as HTMLInputElement).value)} autoFocus />
        </label>
        <label>
          Location
          <input name="location" value={loc} onInput={(e) => setLoc((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Description
          <input name="description" value={description} onInput={(e) => setDescription((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <ErrorBox error={error} />
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>Cancel</button>
          <button type="submit" class="primary" disabled={busy}>Create dataset</button>
        </div>
      </form>
    </Dialog>
  );
}

render(<App />, document.getElementById('app')!);
