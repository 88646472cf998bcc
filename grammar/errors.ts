// The syntax error type of the public API (shared by the lexer boundary and the parser).
export class SqlSyntaxError extends Error {
  constructor(
    /** Message without the position suffix, e.g. "Syntax error: Unexpected keyword FROM". */
    readonly detail: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${detail} at [${line}:${column}]`);
    this.name = 'SqlSyntaxError';
  }
}
