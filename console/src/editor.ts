// The query editor: CodeMirror 6 with a GoogleSQL dialect, completion of
// keywords, the engine's functions (functions.json, built from the function
// registry) and the catalog's datasets, tables and columns, and errors marked
// at the service's [line:col].
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { sql, SQLDialect } from '@codemirror/lang-sql';
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { highlightSelectionMatches, searchKeymap } from '@codemirror/search';
import { EditorState, type Extension } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers, placeholder } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import type { Catalog } from './catalog.js';
import { errorPosition, referencedTables } from './sql-text.js';

export const KEYWORDS = (
  'all and any array as asc assert_rows_modified at between by case cast collate contains create cross cube current default define ' +
  'desc distinct else end enum escape except exclude exists extract false fetch following for from full group grouping groups hash having ' +
  'if ignore in inner intersect interval into is join lateral left like limit lookup merge natural new no not null nulls of on or order ' +
  'outer over partition preceding proto qualify range recursive respect right rollup rows select set some struct tablesample then to ' +
  'treat true unbounded union unnest using when where window with within ' +
  'insert update delete values replace truncate table view materialized function procedure schema temp temporary alter drop rename add column ' +
  'options declare begin call return returns language transaction commit rollback execute immediate loop while repeat until leave continue break ' +
  'exception raise elseif pivot unpivot offset ordinal safe_offset safe_ordinal matched target source clone snapshot external model if not exists ' +
  'cluster primary key foreign references enforced row access policy grant revoke'
);
const TYPES = 'int64 int integer smallint bigint tinyint byteint float64 numeric decimal bignumeric bigdecimal bool boolean string bytes date datetime time timestamp interval geography json range';

/** GoogleSQL's lexical shape: backtick identifiers, "…" and '…' strings with backslash escapes, #, -- and /* comments, @param and @@variables. */
export const GoogleSQL = SQLDialect.define({
  keywords: KEYWORDS,
  types: TYPES,
  backslashEscapes: true,
  doubleQuotedStrings: true,
  hashComments: true,
  identifierQuotes: '`',
  specialVar: '@',
  caseInsensitiveIdentifiers: true,
});

const highlight = HighlightStyle.define([
  { tag: t.keyword, color: 'var(--syn-keyword)', fontWeight: '600' },
  { tag: [t.typeName, t.bool, t.null], color: 'var(--syn-type)' },
  { tag: [t.string, t.special(t.string)], color: 'var(--syn-string)' },
  { tag: t.number, color: 'var(--syn-number)' },
  { tag: [t.lineComment, t.blockComment], color: 'var(--syn-comment)', fontStyle: 'italic' },
  { tag: [t.standard(t.name), t.function(t.variableName)], color: 'var(--syn-function)' },
  { tag: t.special(t.name), color: 'var(--syn-param)' },
  { tag: t.operator, color: 'var(--syn-operator)' },
]);

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '13px', color: 'var(--fg)', backgroundColor: 'var(--bg-editor)' },
  '.cm-content': { fontFamily: 'var(--mono)', caretColor: 'var(--fg)' },
  '.cm-gutters': { backgroundColor: 'var(--bg-panel)', color: 'var(--fg-muted)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'var(--bg-active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--bg-active-line)' },
  '&.cm-focused .cm-cursor': { borderLeftColor: 'var(--fg)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--bg-selection) !important' },
  '.cm-tooltip': { backgroundColor: 'var(--bg-panel)', color: 'var(--fg)', border: '1px solid var(--border)' },
  '.cm-tooltip-autocomplete > ul > li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--on-accent)' },
  '.cm-completionDetail': { color: 'inherit', opacity: '0.75' },
  '.cm-completionInfo': { fontFamily: 'var(--mono)', whiteSpace: 'pre-wrap', maxWidth: '520px' },
  '.cm-diagnostic-error': { borderLeftColor: 'var(--danger)' },
});

// ---------------------------------------------------------------- completion

export interface FunctionInfo { name: string; kind: 'scalar' | 'aggregate'; signatures: string[] }

let functionList: Promise<Completion[]> | undefined;

/** The engine's functions, fetched once (a static file of the build: /console/functions.json). */
function functionCompletions(): Promise<Completion[]> {
  functionList ??= fetch('/console/functions.json')
    .then((r) => (r.ok ? (r.json() as Promise<FunctionInfo[]>) : []))
    .then((fs) =>
      fs.map((f) => ({
        label: f.name,
        type: 'function',
        detail: f.signatures.length ? f.signatures[0]!.slice(f.name.length) + (f.signatures.length > 1 ? ` (+${f.signatures.length - 1})` : '') : f.kind === 'aggregate' ? 'aggregate' : '',
        info: f.signatures.length ? f.signatures.join('\n') : undefined,
        apply: f.name + '(',
        boost: -1,
      })),
    )
    .catch(() => []);
  return functionList;
}

const keywordCompletions: Completion[] = [
  ...KEYWORDS.split(' ').map((k) => ({ label: k.toUpperCase(), type: 'keyword', boost: -2 })),
  ...TYPES.split(' ').map((k) => ({ label: k.toUpperCase(), type: 'type', boost: -3 })),
];

function sqlCompletion(catalog: Catalog) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const token = ctx.matchBefore(/`?[\w-]*(?:\.[\w-]*)*$/);
    if (!token || (token.from === token.to && !ctx.explicit)) return null;
    const text = token.text.replace(/^`/, '');
    const parts = text.split('.');
    const from = token.to - parts[parts.length - 1]!.length;
    const refs = referencedTables(ctx.state.doc.toString());
    const columnsOf = async (path: string[]): Promise<Completion[]> =>
      (await catalog.columns(path)).map((c) => ({ label: c.name, type: 'property', detail: c.type + (c.mode === 'REPEATED' ? ' (array)' : '') }));
    let options: Completion[] = [];
    if (parts.length === 1) {
      const cols = (await Promise.all(refs.map((r) => columnsOf(r.path)))).flat();
      options = [
        ...keywordCompletions,
        ...(await functionCompletions()),
        ...(await catalog.datasets()).map((d) => ({ label: d, type: 'namespace', boost: -1 })),
        ...dedupe(cols),
        ...refs.flatMap((r) => (r.alias ? [{ label: r.alias, type: 'variable' }] : [])),
      ];
    } else {
      const head = parts.slice(0, -1);
      const byAlias = head.length === 1 ? refs.find((r) => r.alias?.toLowerCase() === head[0]!.toLowerCase() || r.path[r.path.length - 1] === head[0]) : undefined;
      if (byAlias) options = await columnsOf(byAlias.path);
      else if (head.length === 1) {
        // dataset. -> its tables; project. -> its datasets
        const tables = await catalog.tables([head[0]!]);
        options = tables.length ? tables.map((x) => ({ label: x.name, type: x.type === 'VIEW' ? 'interface' : 'class', detail: x.type.toLowerCase() })) : (await catalog.datasets(head[0]!)).map((d) => ({ label: d, type: 'namespace' }));
      } else {
        // dataset.table. or project.dataset. -> columns or tables
        const cols = head.length <= 3 ? await columnsOf(head) : [];
        options = cols.length ? cols : (await catalog.tables(head)).map((x) => ({ label: x.name, type: 'class', detail: x.type.toLowerCase() }));
      }
    }
    return { from, options, validFor: /^[\w-]*$/ };
  };
}

function dedupe(cs: Completion[]): Completion[] {
  const seen = new Set<string>();
  return cs.filter((c) => (seen.has(c.label) ? false : (seen.add(c.label), true)));
}

// ---------------------------------------------------------------- errors at [line:col]

/**
 * Marks an error of a query that began at document offset `base` (the
 * selection run, or 0): the service counts lines and columns in the text it
 * was sent. Returns false when the message names no position.
 */
export function markError(view: EditorView, message: string, base = 0): boolean {
  const pos = errorPosition(message);
  const doc = view.state.doc;
  if (!pos) {
    view.dispatch(setDiagnostics(view.state, []));
    return false;
  }
  const baseLine = doc.lineAt(base);
  const lineNo = Math.min(doc.lines, baseLine.number + pos.line - 1);
  const line = doc.line(lineNo);
  const colBase = pos.line === 1 ? base - line.from : 0;
  const from = Math.min(line.to, line.from + colBase + pos.col - 1);
  const word = /^[\w`'"@.]+/.exec(doc.sliceString(from, line.to));
  const to = Math.max(from + (word ? word[0].length : 1), from);
  view.dispatch(setDiagnostics(view.state, [{ from, to: Math.min(to, doc.length), severity: 'error', message }]));
  view.dispatch({ selection: { anchor: from }, scrollIntoView: true });
  return true;
}

export function clearErrors(view: EditorView): void {
  view.dispatch(setDiagnostics(view.state, []));
}

// ---------------------------------------------------------------- the editor

export interface EditorHooks {
  /** Ctrl/Cmd+Enter: run the selection when there is one, else the whole text. */
  run: () => void;
  /** Every change of the text. */
  change: (text: string) => void;
}

export function createEditor(parent: HTMLElement, doc: string, catalog: Catalog, hooks: EditorHooks): EditorView {
  const run = (): boolean => {
    hooks.run();
    return true;
  };
  const extensions: Extension[] = [
    lineNumbers(),
    highlightActiveLineGutter(),
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    closeBrackets(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    lintGutter(),
    sql({ dialect: GoogleSQL, upperCaseKeywords: true }),
    syntaxHighlighting(highlight),
    autocompletion({ override: [sqlCompletion(catalog)], icons: true }),
    keymap.of([{ key: 'Mod-Enter', run, preventDefault: true }, ...closeBracketsKeymap, ...completionKeymap, ...searchKeymap, ...historyKeymap, ...defaultKeymap]),
    placeholder('Write a GoogleSQL query. Ctrl+Enter runs it (the selection only, if any); Ctrl+Space completes.'),
    theme,
    EditorView.lineWrapping,
    EditorView.contentAttributes.of({ 'aria-label': 'Query editor' }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) hooks.change(u.state.doc.toString());
    }),
  ];
  return new EditorView({ parent, state: EditorState.create({ doc, extensions }) });
}

/** The text to run: the main selection when it is not empty, else everything; with its start offset. */
export function runnableText(view: EditorView): { text: string; base: number; selection: boolean } {
  const sel = view.state.selection.main;
  if (!sel.empty) return { text: view.state.sliceDoc(sel.from, sel.to), base: sel.from, selection: true };
  return { text: view.state.doc.toString(), base: 0, selection: false };
}
