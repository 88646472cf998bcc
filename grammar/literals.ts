// Helpers the analyzer uses to interpret literal text kept verbatim by the parser.

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * Value of an IntLiteral's text ("42", "-9223372036854775808", "0x1F", "-0x10")
 * as a bigint, or undefined when it does not fit INT64. GoogleSQL reports the
 * latter during analysis (`Invalid integer literal: ...`), not as a syntax error.
 */
export function int64LiteralValue(text: string): bigint | undefined {
  const neg = text.startsWith('-');
  const body = neg ? text.slice(1) : text;
  let v: bigint;
  try {
    v = BigInt(body); // accepts decimal and 0x-prefixed hex
  } catch {
    return undefined;
  }
  if (neg) v = -v;
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}
