// Checks a parsed script as GoogleSQL does before any of it runs (procedural-language
// page): DECLARE only at the start of the script or of a BEGIN block, no variable
// declared twice while the first is in scope (nor over a procedure argument),
// BREAK/CONTINUE only inside a loop, a bare RAISE only inside an exception handler.
import type * as A from './ast.js';
import { SqlSyntaxError } from './errors.js';

interface Walk {
  /** Variables in scope, lower-cased (GoogleSQL names are case-insensitive), shared by nested lists. */
  readonly vars: Set<string>;
  readonly args: ReadonlySet<string>;
  loops: number;
  handlers: number;
}

function fail(message: string, loc: A.Loc): never {
  throw new SqlSyntaxError(message, loc.line, loc.column);
}

export function checkScript(script: A.Script): A.Script {
  list(script.statements, true, { vars: new Set(), args: new Set(), loops: 0, handlers: 0 });
  return script;
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
      for (const n of s.names) {
        declare(n, w, s.loc);
        declared.push(n.toLowerCase());
      }
    } else {
      other = true;
      statement(s, w);
    }
  }
  for (const n of declared) w.vars.delete(n);
}

function loopBody(body: readonly A.Statement[], w: Walk): void {
  w.loops++;
  list(body, false, w);
  w.loops--;
}

function statement(s: A.Statement, w: Walk): void {
  switch (s.kind) {
    case 'Block':
      list(s.body, true, w);
      if (s.exceptionHandler) {
        w.handlers++;
        list(s.exceptionHandler, false, w);
        w.handlers--;
      }
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
      loopBody(s.body, w);
      return;
    case 'ForIn': {
      declare(s.variable, w, s.loc);
      loopBody(s.body, w);
      w.vars.delete(s.variable.toLowerCase());
      return;
    }
    case 'Break':
    case 'Continue':
      if (w.loops === 0 && !s.label) fail(`${s.keyword} without label is only allowed inside of a loop body`, s.loc);
      return;
    case 'Raise':
      if (!s.message && w.handlers === 0) fail('Cannot re-raise an existing exception outside of an exception handler', s.loc);
      return;
    case 'CreateProcedure':
      // A procedure body is a script of its own, its arguments in scope.
      list(s.body.body, true, { vars: new Set(), args: new Set(s.params.map((p) => p.name.toLowerCase())), loops: 0, handlers: 0 });
      if (s.body.exceptionHandler) list(s.body.exceptionHandler, false, { vars: new Set(), args: new Set(), loops: 0, handlers: 1 });
      return;
    default:
      return;
  }
}
