// Checks a parsed script as GoogleSQL does before any of it runs (procedural-language
// page): DECLARE only at the start of the script or of a BEGIN block, no variable
// declared twice while the first is in scope (nor over a procedure argument),
// BREAK/CONTINUE only inside a loop or naming an enclosing label (CONTINUE: a loop's),
// no label reused inside its own statement, a bare RAISE only inside an exception handler, an ASSERT's
// description a STRING literal, procedural statements nested at most 50 deep.
import type * as A from './ast.js';
import { SqlSyntaxError } from './errors.js';

interface Walk {
  /** Variables in scope, lower-cased (GoogleSQL names are case-insensitive), shared by nested lists. */
  readonly vars: Set<string>;
  readonly args: ReadonlySet<string>;
  loops: number;
  handlers: number;
  /** Procedural statements enclosing (and including) the one being checked. */
  depth: number;
  /** Labels of the enclosing loops and blocks, lower-cased. */
  readonly labels: Map<string, 'loop' | 'block'>;
}

function fail(message: string, loc: A.Loc): never {
  throw new SqlSyntaxError(message, loc.line, loc.column);
}

export function checkScript(script: A.Script): A.Script {
  list(script.statements, true, { vars: new Set(), args: new Set(), loops: 0, handlers: 0, depth: 0, labels: new Map() });
  return script;
}

/**
 * procedural-language.md (BEGIN...END, IF, WHILE): a maximum nesting level of 50 for blocks and conditional
 * statements. Counted as the reference implementation counts it (parsed_script.cc): every procedural statement is a
 * level, a loop, block, IF or CASE and the DECLARE / SET / BREAK / RAISE / RETURN inside them alike; SQL statements
 * (queries, DML, DDL, CALL, EXECUTE IMMEDIATE, ASSERT) are not.
 */
const MAX_NESTING = 50;
const PROCEDURAL = new Set<A.Statement['kind']>(['Block', 'If', 'CaseStmt', 'Loop', 'While', 'Repeat', 'ForIn', 'Declare', 'Set', 'Break', 'Continue', 'Return', 'Raise']);

function nested(s: A.Statement, w: Walk, inner: () => void): void {
  const counts = PROCEDURAL.has(s.kind) && !(s.kind === 'Set' && s.targets.some((t) => t.system));
  if (counts && ++w.depth > MAX_NESTING) fail(`Script statement nesting level exceeds maximum supported limit of ${MAX_NESTING}`, s.loc);
  try {
    inner();
  } finally {
    if (counts) w.depth--;
  }
}

function declare(name: string, w: Walk, loc: A.Loc): void {
  const k = name.toLowerCase();
  if (w.vars.has(k)) fail(`Variable '${name}' redeclaration`, loc);
  if (w.args.has(k)) fail(`Variable '${name}' previously declared as an argument`, loc);
  w.vars.add(k);
}

function list(stmts: readonly A.Statement[], declarationsAllowed: boolean, w: Walk): void {
  const declared: string[] = [];
  let other = false;
  for (const s of stmts) {
    if (s.kind === 'Declare') {
      if (other || !declarationsAllowed) fail('Variable declarations are allowed only at the start of a block or script', s.loc);
      nested(s, w, () => {
        for (const n of s.names) {
          declare(n, w, s.loc);
          declared.push(n.toLowerCase());
        }
      });
    } else {
      other = true;
      nested(s, w, () => statement(s, w));
    }
  }
  for (const n of declared) w.vars.delete(n);
}

/** Runs `inner` with `label` (if any) naming an enclosing statement of `kind`. */
function labeled(label: string | undefined, kind: 'loop' | 'block', loc: A.Loc, w: Walk, inner: () => void): void {
  const k = label?.toLowerCase();
  if (k !== undefined) {
    if (w.labels.has(k)) fail(`Label ${label} already exists`, loc);
    w.labels.set(k, kind);
  }
  inner();
  if (k !== undefined) w.labels.delete(k);
}

function loopBody(s: A.LoopStmt | A.WhileStmt | A.RepeatStmt | A.ForInStmt, w: Walk): void {
  labeled(s.label, 'loop', s.loc, w, () => {
    w.loops++;
    list(s.body, false, w);
    w.loops--;
  });
}

function statement(s: A.Statement, w: Walk): void {
  switch (s.kind) {
    case 'Block':
      labeled(s.label, 'block', s.loc, w, () => {
        list(s.body, true, w);
        if (s.exceptionHandler) {
          w.handlers++;
          list(s.exceptionHandler, false, w);
          w.handlers--;
        }
      });
      return;
    case 'If':
      for (const b of s.branches) list(b.body, false, w);
      if (s.else) list(s.else, false, w);
      return;
    case 'CaseStmt':
      for (const b of s.whens) list(b.body, false, w);
      if (s.else) list(s.else, false, w);
      return;
    case 'Loop':
    case 'While':
    case 'Repeat':
      loopBody(s, w);
      return;
    case 'ForIn': {
      declare(s.variable, w, s.loc);
      loopBody(s, w);
      w.vars.delete(s.variable.toLowerCase());
      return;
    }
    case 'Break':
    case 'Continue':
      if (s.label) {
        const target = w.labels.get(s.label.toLowerCase());
        if (!target) fail(`Label ${s.label} does not exist or is out of scope`, s.loc);
        if (s.kind === 'Continue' && target === 'block') fail(`${s.keyword} with label must refer to a loop`, s.loc);
      } else if (w.loops === 0) fail(`${s.keyword} without label is only allowed inside of a loop body`, s.loc);
      return;
    case 'Assert':
      // debugging-statements: the description is a STRING literal (the grammar's, so a syntax error before any runs).
      if (s.description && s.description.kind !== 'StringLiteral') {
        const d = s.description;
        const got = d.kind === 'PathExpr' && d.parts.length === 1 ? `identifier "${d.parts[0]}"` : 'an expression';
        fail(`Syntax error: Expected string literal but got ${got}`, d.loc);
      }
      return;
    case 'Raise':
      if (!s.message && w.handlers === 0) fail('Cannot re-raise an existing exception outside of an exception handler', s.loc);
      return;
    case 'CreateProcedure':
      // A procedure body is a script of its own, its arguments in scope.
      // Its body is a BEGIN ... END block: one level for the statements in it.
      list(s.body.body, true, { vars: new Set(), args: new Set(s.params.map((p) => p.name.toLowerCase())), loops: 0, handlers: 0, depth: 1, labels: new Map() });
      if (s.body.exceptionHandler) list(s.body.exceptionHandler, false, { vars: new Set(), args: new Set(), loops: 0, handlers: 1, depth: 1, labels: new Map() });
      return;
    default:
      return;
  }
}
