// The explorer: project -> datasets -> tables, views, routines and models, as
// an ARIA tree (arrow keys move and expand, Enter opens, one tab stop).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, enc, type DatasetListItem, type ModelListItem, type RoutineListItem, type TableListItem } from './api.js';

export type Resource =
  | { kind: 'dataset'; projectId: string; datasetId: string }
  | { kind: 'table'; projectId: string; datasetId: string; id: string; type: string }
  | { kind: 'routine'; projectId: string; datasetId: string; id: string; type: string }
  | { kind: 'model'; projectId: string; datasetId: string; id: string; type: string };

interface Node { key: string; label: string; level: number; icon: string; expandable: boolean; resource?: Resource; detail?: string }

const ICONS: Record<string, string> = { project: '◆', dataset: '▤', TABLE: '▦', VIEW: '◫', MATERIALIZED_VIEW: '◫', EXTERNAL: '⇲', SNAPSHOT: '◷', CLONE: '▦', routine: 'ƒ', model: '◎' };

export function resourceKey(r: Resource): string {
  return r.kind === 'dataset' ? `${r.kind}:${r.projectId}.${r.datasetId}` : `${r.kind}:${r.projectId}.${r.datasetId}.${r.id}`;
}

async function datasetChildren(projectId: string, datasetId: string): Promise<Node[]> {
  const base = `/projects/${enc(projectId)}/datasets/${enc(datasetId)}`;
  const soft = <T,>(p: Promise<T>, empty: T): Promise<T> => p.catch(() => empty);
  const [tables, routines, models] = await Promise.all([
    api<{ tables?: TableListItem[] }>('GET', `${base}/tables`, { query: { maxResults: 1000 } }),
    soft(api<{ routines?: RoutineListItem[] }>('GET', `${base}/routines`, { query: { maxResults: 1000 } }), {}),
    soft(api<{ models?: ModelListItem[] }>('GET', `${base}/models`, { query: { maxResults: 1000 } }), {}),
  ]);
  const level = 3;
  return [
    ...(tables.tables ?? []).map((t) => {
      const type = t.type ?? 'TABLE';
      return { key: `t:${projectId}.${datasetId}.${t.tableReference.tableId}`, label: t.tableReference.tableId, level, icon: ICONS[type] ?? '▦', expandable: false, detail: type === 'TABLE' ? undefined : type.toLowerCase().replace('_', ' '), resource: { kind: 'table', projectId, datasetId, id: t.tableReference.tableId, type } as Resource };
    }),
    ...(routines.routines ?? []).map((r) => ({ key: `r:${projectId}.${datasetId}.${r.routineReference.routineId}`, label: r.routineReference.routineId, level, icon: ICONS['routine']!, expandable: false, detail: (r.routineType ?? 'routine').toLowerCase().replace(/_/g, ' '), resource: { kind: 'routine', projectId, datasetId, id: r.routineReference.routineId, type: r.routineType ?? '' } as Resource })),
    ...(models.models ?? []).map((m) => ({ key: `m:${projectId}.${datasetId}.${m.modelReference.modelId}`, label: m.modelReference.modelId, level, icon: ICONS['model']!, expandable: false, detail: 'model', resource: { kind: 'model', projectId, datasetId, id: m.modelReference.modelId, type: m.modelType ?? '' } as Resource })),
  ];
}

async function projectChildren(projectId: string): Promise<Node[]> {
  const r = await api<{ datasets?: DatasetListItem[] }>('GET', `/projects/${enc(projectId)}/datasets`, { query: { maxResults: 1000 } });
  return (r.datasets ?? []).map((d) => ({
    key: `d:${projectId}.${d.datasetReference.datasetId}`,
    label: d.datasetReference.datasetId,
    level: 2,
    icon: ICONS['dataset']!,
    expandable: true,
    resource: { kind: 'dataset', projectId, datasetId: d.datasetReference.datasetId },
  }));
}

export function Explorer(props: { project: string; hidden: boolean; version: number; onOpen: (r: Resource) => void; onCreateDataset: () => void; selected?: string }) {
  const root: Node = { key: `p:${props.project}`, label: props.project, level: 1, icon: ICONS['project']!, expandable: true };
  const [expanded, setExpanded] = useState<Set<string>>(new Set([root.key]));
  const [children, setChildren] = useState<Map<string, Node[] | 'loading' | string>>(new Map());
  const [focus, setFocus] = useState(root.key);
  const [filter, setFilter] = useState('');
  const treeRef = useRef<HTMLUListElement>(null);

  const load = async (n: Node): Promise<void> => {
    setChildren((m) => new Map(m).set(n.key, 'loading'));
    try {
      const kids = n.level === 1 ? await projectChildren(props.project) : await datasetChildren(props.project, n.label);
      setChildren((m) => new Map(m).set(n.key, kids));
    } catch (e) {
      setChildren((m) => new Map(m).set(n.key, e instanceof Error ? e.message : String(e)));
    }
  };

  // A new project or a change made elsewhere (create, delete, DDL): reload what is open.
  useEffect(() => {
    setChildren(new Map());
    setFocus(root.key);
    void load(root);
  }, [props.project]);
  useEffect(() => {
    if (props.version === 0) return;
    void load(root);
    for (const key of expanded) if (key.startsWith('d:')) void load({ key, label: key.slice(key.indexOf('.') + 1), level: 2, icon: '', expandable: true });
  }, [props.version]);

  // The visible rows, in order: what the arrow keys walk.
  const visible: { node: Node; parent?: string }[] = [];
  const f = filter.trim().toLowerCase();
  const walk = (n: Node, parent?: string): void => {
    const kids = children.get(n.key);
    const matches = !f || n.level < 3 || n.label.toLowerCase().includes(f);
    if (!matches) return;
    visible.push({ node: n, parent });
    if (expanded.has(n.key) && Array.isArray(kids)) for (const k of kids) walk(k, n.key);
  };
  walk(root);
  // The focused node may have gone (deleted, filtered out): the tree's one tab stop falls back to the project.
  const focusKey = visible.some((v) => v.node.key === focus) ? focus : root.key;

  const toggle = (n: Node, open?: boolean): void => {
    const willOpen = open ?? !expanded.has(n.key);
    setExpanded((s) => {
      const c = new Set(s);
      if (willOpen) c.add(n.key);
      else c.delete(n.key);
      return c;
    });
    if (willOpen && !Array.isArray(children.get(n.key))) void load(n);
  };

  const activate = (n: Node): void => {
    setFocus(n.key);
    if (n.resource) props.onOpen(n.resource);
    if (n.expandable) toggle(n, true);
  };

  const onKey = (e: KeyboardEvent): void => {
    const i = visible.findIndex((v) => v.node.key === focusKey);
    if (i < 0) return;
    const { node, parent } = visible[i]!;
    let next: string | undefined;
    switch (e.key) {
      case 'ArrowDown':
        next = visible[Math.min(visible.length - 1, i + 1)]!.node.key;
        break;
      case 'ArrowUp':
        next = visible[Math.max(0, i - 1)]!.node.key;
        break;
      case 'Home':
        next = visible[0]!.node.key;
        break;
      case 'End':
        next = visible[visible.length - 1]!.node.key;
        break;
      case 'ArrowRight':
        if (node.expandable && !expanded.has(node.key)) toggle(node, true);
        else if (node.expandable) next = visible[i + 1]?.node.key;
        break;
      case 'ArrowLeft':
        if (node.expandable && expanded.has(node.key)) toggle(node, false);
        else next = parent;
        break;
      case 'Enter':
        activate(node);
        break;
      default:
        return;
    }
    e.preventDefault();
    if (next) {
      setFocus(next);
      requestAnimationFrame(() => (treeRef.current?.querySelector(`[data-key="${CSS.escape(next!)}"]`) as HTMLElement | null)?.focus());
    }
  };

  return (
    <nav class="explorer" aria-label="Explorer" hidden={props.hidden}>
      <div class="explorer-head">
        <h2>Explorer</h2>
        <button type="button" onClick={props.onCreateDataset} title="Create dataset">+ Dataset</button>
        <button type="button" class="icon" aria-label="Refresh the explorer" title="Refresh" onClick={() => { void load(root); for (const k of expanded) if (k.startsWith('d:')) void load({ key: k, label: k.slice(k.indexOf('.') + 1), level: 2, icon: '', expandable: true }); }}>⟳</button>
      </div>
      <input class="explorer-filter" type="search" placeholder="Filter tables…" aria-label="Filter tables" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
      <ul role="tree" aria-label="Projects, datasets and tables" ref={treeRef} onKeyDown={onKey} class="tree">
        {visible.map(({ node }) => {
          const kids = children.get(node.key);
          const selected = node.resource ? resourceKey(node.resource) === props.selected : false;
          return (
            <li
              key={node.key}
              role="treeitem"
              data-key={node.key}
              aria-level={node.level}
              aria-expanded={node.expandable ? expanded.has(node.key) : undefined}
              aria-selected={selected}
              tabIndex={node.key === focusKey ? 0 : -1}
              class={`tree-item level-${node.level}${selected ? ' selected' : ''}`}
              onClick={(e) => {
                e.stopPropagation();
                activate(node);
              }}
            >
              <span class="twisty" aria-hidden="true" onClick={(e) => { e.stopPropagation(); toggle(node); }}>
                {node.expandable ? (expanded.has(node.key) ? '▾' : '▸') : ''}
              </span>
              <span class="icon" aria-hidden="true">{node.icon}</span>
              <span class="label">{node.label}</span>
              {node.detail && <span class="detail">{node.detail}</span>}
              {kids === 'loading' && <span class="detail">loading…</span>}
              {typeof kids === 'string' && kids !== 'loading' && <span class="detail error" title={kids}>error</span>}
              {Array.isArray(kids) && kids.length === 0 && expanded.has(node.key) && <span class="detail">{node.level === 1 ? 'no datasets' : 'empty'}</span>}
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
