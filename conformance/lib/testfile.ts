// Parser of the GoogleSQL compliance `.test` format (file_based_test_driver):
// cases separated by `==`, sections by `--`, options `[key=value]` at the top
// of a case, `#` comments, `[default ...]` file-wide options, `[prepare_database]`
// setup blocks, and one or more expected sections per case.

export interface TestOptions {
  /** raw key → value ('' for flag options such as `[prepare_database]`) */
  [key: string]: string;
}

export interface ExpectedSection {
  /** `WITH FEATURES:` / `ALTERNATION GROUP:` labels, verbatim (empty when unlabelled) */
  labels: string[];
  /** features named by a `WITH FEATURES:` label (empty: the default feature set) */
  withFeatures: string[];
  kind: 'result' | 'error' | 'other';
  /** result: the typed literal text; error: the whole `ERROR: ...` text */
  text: string;
  /** error code word of `ERROR: generic::<code>: message` */
  errorCode?: string;
  errorMessage?: string;
  nondeterministic: boolean;
}

export interface PrepareBlock {
  sql: string;
  /** the printed table contents for CREATE TABLE blocks (typed literal) */
  contents: string | null;
  requiredFeatures: string[];
  line: number;
}

export interface TestCase {
  name: string;
  file: string;
  line: number;
  options: TestOptions;
  /** required_features of the case plus the file default */
  requiredFeatures: string[];
  forbiddenFeatures: string[];
  query: string;
  parameters: string | null;
  expected: ExpectedSection[];
}

export interface TestFile {
  file: string;
  defaults: TestOptions;
  /** file-wide required features (`[default required_features=...]`) */
  defaultRequiredFeatures: string[];
  prepare: PrepareBlock[];
  cases: TestCase[];
  /** non-fatal oddities found while parsing (for the parser's own tests) */
  warnings: string[];
}

/** Splits the text into options + body of one section's head. */
function takeOptions(lines: string[]): { options: Array<[string, string]>; body: string[] } {
  const options: Array<[string, string]> = [];
  let i = 0;
  const body: string[] = [];
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (!trimmed.startsWith('[')) break;
    // An option may span lines: collect until its brackets balance.
    let text = trimmed;
    while (!bracketsBalanced(text) && i + 1 < lines.length) {
      i++;
      text += '\n' + lines[i]!;
    }
    const inner = text.slice(1, text.lastIndexOf(']'));
    const eq = inner.indexOf('=');
    if (eq < 0) options.push([inner.trim(), '']);
    else options.push([inner.slice(0, eq).trim(), inner.slice(eq + 1).trim()]);
  }
  for (; i < lines.length; i++) body.push(lines[i]!);
  return { options, body };
}

function bracketsBalanced(s: string): boolean {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (s.startsWith(quote, i)) { i += quote.length - 1; quote = null; }
      continue;
    }
    if (s.startsWith("'''", i) || s.startsWith('"""', i)) { quote = s.slice(i, i + 3); i += 2; continue; }
    if (c === '"' || c === "'") { quote = c; continue; }
    if (c === '[') depth++;
    else if (c === ']') depth--;
  }
  return depth <= 0;
}

/** Drops whole-line `#` comments (SQL in these files never starts a line with `#`). */
function stripComments(lines: string[]): string[] {
  return lines.filter((l) => !l.trimStart().startsWith('#'));
}

function splitList(v: string | undefined): string[] {
  if (!v) return [];
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

const LABEL_RE = /^(WITH FEATURES|ALTERNATION GROUPS?|FEATURES):\s*(.*)$/;

function parseExpected(raw: string): ExpectedSection | null {
  const lines = raw.split('\n');
  const labels: string[] = [];
  const withFeatures: string[] = [];
  let nondeterministic = false;
  const body: string[] = [];
  for (const line of lines) {
    const t = line.trim();
    if (t === '' && body.length === 0) continue;
    const lm = LABEL_RE.exec(t);
    if (lm && body.length === 0) {
      labels.push(t);
      if (lm[1] === 'WITH FEATURES' || lm[1] === 'FEATURES') {
        for (const f of splitList(lm[2])) if (f !== '<none>') withFeatures.push(f);
      }
      continue;
    }
    if (t.startsWith('NOTE:')) {
      if (/non-?determinism/i.test(t)) nondeterministic = true;
      continue;
    }
    // whole-line comments may sit anywhere in an expected section
    if (t.startsWith('#')) continue;
    body.push(line);
  }
  const text = body.join('\n').trim();
  if (text === '' && labels.length === 0) return null;
  if (text.startsWith('ERROR:')) {
    const m = /^ERROR:\s*(?:generic::)?([a-z_]+):\s*([\s\S]*)$/.exec(text);
    return {
      labels, withFeatures, kind: 'error', text, nondeterministic,
      errorCode: m?.[1] ?? 'unknown', errorMessage: (m?.[2] ?? text.slice(6)).trim(),
    };
  }
  const kind = /^(ARRAY|STRUCT)</.test(text) || text === '' ? 'result' : 'other';
  return { labels, withFeatures, kind, text, nondeterministic };
}

export function parseTestFile(file: string, content: string): TestFile {
  const tf: TestFile = { file, defaults: {}, defaultRequiredFeatures: [], prepare: [], cases: [], warnings: [] };
  const rawCases = content.replace(/\r\n/g, '\n').split(/^==$/m);
  let lineNo = 1;
  const usedNames = new Map<string, number>();
  for (const raw of rawCases) {
    const startLine = lineNo;
    lineNo += raw.split('\n').length - 1;
    // A line that starts with `--` or `==` inside a section is escaped as `\--` / `\==`
    // (the sections split on bare `--` / `==` lines); the reference driver unescapes it.
    const sections = raw.split(/^--$/m).map((sec) => sec.replace(/^\\(--|==)/gm, '$1'));
    const head = takeOptions(sections[0]!.split('\n'));
    const opts: TestOptions = {};
    let isPrepare = false;
    for (const [k, v] of head.options) {
      if (k.startsWith('default ')) {
        const dk = k.slice('default '.length).trim();
        tf.defaults[dk] = v;
        if (dk === 'required_features') tf.defaultRequiredFeatures = splitList(v);
        continue;
      }
      if (k === 'default_time_zone') { tf.defaults[k] = v; continue; }
      if (k === 'prepare_database') { isPrepare = true; continue; }
      opts[k] = v;
    }
    let queryLines = stripComments(head.body);
    let rest = sections.slice(1);
    // A case whose option block is followed directly by `--` carries its query
    // in the next section (seen in struct_queries.test).
    if (queryLines.join('').trim() === '' && rest.length >= 2 && !isPrepare) {
      queryLines = stripComments(rest[0]!.split('\n'));
      rest = rest.slice(1);
    }
    const query = queryLines.join('\n').trim();
    if (query === '') {
      if (head.options.length === 0 && raw.trim() !== '' && stripComments(raw.split('\n')).join('').trim() !== '') {
        tf.warnings.push(`${file}:${startLine}: section without query`);
      }
      continue; // defaults-only or comment-only section
    }
    const caseLine = startLine + (raw.split('\n').findIndex((l) => l.trim() !== '' && !l.trim().startsWith('#') && !l.trim().startsWith('[')) + 0);
    if (isPrepare) {
      const contents = rest.length > 0 ? stripComments(rest[0]!.split('\n')).join('\n').trim() : '';
      tf.prepare.push({
        sql: query.replace(/;\s*$/, ''),
        contents: contents === '' ? null : contents,
        requiredFeatures: splitList(opts['required_features']),
        line: caseLine,
      });
      continue;
    }
    const expected: ExpectedSection[] = [];
    let pendingLabels: ExpectedSection | null = null;
    for (const sec of rest) {
      const e = parseExpected(sec);
      if (!e) continue;
      if (e.text === '' && e.labels.length > 0) {
        // label-only section: its result follows in the next section
        pendingLabels = e;
        continue;
      }
      if (pendingLabels) {
        e.labels.unshift(...pendingLabels.labels);
        e.withFeatures.unshift(...pendingLabels.withFeatures);
        pendingLabels = null;
      }
      expected.push(e);
    }
    let name = opts['name'] ?? `line${caseLine}`;
    const seen = usedNames.get(name) ?? 0;
    usedNames.set(name, seen + 1);
    if (seen > 0) name = `${name}#${seen + 1}`;
    const required = [...new Set([...tf.defaultRequiredFeatures, ...splitList(opts['required_features'])])];
    tf.cases.push({
      name,
      file,
      line: caseLine,
      options: { ...tf.defaults, ...opts },
      requiredFeatures: required,
      forbiddenFeatures: splitList(opts['forbidden_features']),
      query: query.replace(/;\s*$/, ''),
      parameters: opts['parameters'] ?? null,
      expected,
    });
  }
  return tf;
}

/**
 * Splits `[parameters=...]` into `{name, expr}` pairs: a comma-separated list
 * of `<expr> [AS] <name>`.
 */
export function parseParameterList(text: string): Array<{ name: string; expr: string }> {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      cur += c;
      if (c === '\\') { cur += text[++i] ?? ''; continue; }
      if (text.startsWith(quote, i)) {
        cur += quote.slice(1);
        i += quote.length - 1;
        quote = null;
      }
      continue;
    }
    if (text.startsWith("'''", i) || text.startsWith('"""', i)) { quote = text.slice(i, i + 3); cur += quote; i += 2; continue; }
    if (c === '"' || c === "'" || c === '`') { quote = c; cur += c; continue; }
    if (c === '(' || c === '[' || c === '<') depth++;
    if (c === ')' || c === ']' || c === '>') depth--;
    if (c === ',' && depth === 0) { parts.push(cur); cur = ''; continue; }
    cur += c;
  }
  if (cur.trim()) parts.push(cur);
  return parts.map((p) => {
    const m = /^([\s\S]*?)\s+(?:as\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*$/i.exec(p.trim());
    if (!m) return { name: '', expr: p.trim() };
    return { name: m[2]!, expr: m[1]!.replace(/\s+as\s*$/i, '').trim() };
  });
}
