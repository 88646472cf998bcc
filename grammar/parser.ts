// The GoogleSQL parser's public entry points. The grammar lives in grammar/parser/,
// one file per statement family (grammar/parser/base.ts says how they fit).
import type * as A from './ast.js';
import { checkScript } from './script-checks.js';
import { SqlSyntaxError } from './errors.js';
import { GoogleSqlParser } from './parser/statements.js';

export { SqlSyntaxError };

// ---------------------------------------------------------------------------
// Public entry points: one parser instance, built lazily on first use (the
// grammar recording + lookahead precomputation runs once per process).
// ---------------------------------------------------------------------------

let shared: GoogleSqlParser | undefined;
function parser(): GoogleSqlParser {
  return (shared ??= new GoogleSqlParser());
}

/** Parse a script (one or more `;`-separated statements). */
export function parseScript(sql: string): A.Script {
  return checkScript(checkDepth(parser().parseScript(sql)));
}

/**
 * Deepest expression nesting the rest of the pipeline (analyzer, planner,
 * executor: recursive walks) handles on Node's default stack with a wide
 * margin: a 1,500-term `a + b + ...` chain still analyzes, 2,000 does not.
 * Long AND/OR chains are balanced by the parser and nested parentheses cost
 * nothing, so this only bites on thousands of chained non-associative operators.
 */
export const MAX_EXPRESSION_DEPTH = 1000;

/** Rejects, with a 400-worthy syntax error, an AST nested deeper than MAX_EXPRESSION_DEPTH (iterative walk). */
function checkDepth<T extends object>(root: T): T {
  const nodes: unknown[] = [root];
  const depths: number[] = [0];
  while (nodes.length) {
    const n = nodes.pop();
    let d = depths.pop()!;
    if (n === null || typeof n !== 'object') continue;
    if (Array.isArray(n)) {
      for (const x of n) if (x !== null && typeof x === 'object') (nodes.push(x), depths.push(d));
      continue;
    }
    if (n instanceof Uint8Array) continue;
    const kind = (n as { kind?: unknown }).kind;
    // Set operations chain without recursion downstream: they do not count.
    if (typeof kind === 'string' && kind !== 'SetOperation') d++;
    if (d > MAX_EXPRESSION_DEPTH) {
      const loc = (n as { loc?: A.Loc }).loc;
      throw new SqlSyntaxError(`Syntax error: Expression is nested more than ${MAX_EXPRESSION_DEPTH} levels deep, which this emulator does not support; simplify the query (for example, group long operator chains with parentheses or use IN)`, loc?.line ?? 1, loc?.column ?? 1);
    }
    for (const k in n) {
      if (k === 'loc') continue;
      const v = (n as Record<string, unknown>)[k];
      if (v !== null && typeof v === 'object') (nodes.push(v), depths.push(d));
    }
  }
  return root;
}

/** Parse exactly one statement (a trailing `;` is allowed). */
export function parseStatement(sql: string): A.Statement {
  return checkDepth(parser().parseStatement(sql));
}

/** Parse a standalone expression (e.g. a column DEFAULT or a view filter). */
export function parseExpression(sql: string): A.Expr {
  return checkDepth(parser().parseExpression(sql));
}

/** Parse a type name like `ARRAY<STRUCT<a INT64>>`. */
export function parseType(sql: string): A.TypeNode {
  return parser().parseType(sql);
}

