// Public API of the GoogleSQL front end.
export { parseScript, parseStatement, parseExpression, parseType, SqlSyntaxError } from './parser.js';
export { RESERVED, NON_RESERVED_KEYWORDS, tokenize, decodeStringToken } from './lexer.js';
export type * from './ast.js';
export { int64LiteralValue } from './literals.js';
