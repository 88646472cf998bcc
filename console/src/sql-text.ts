// Plain-text readings of SQL and of the service's messages, without the editor
// (tested in node: test/console/values.test.ts).

/** The service's error position, "… at [3:14]" (the last such mark): 1-based line and column. */
export function errorPosition(message: string): { line: number; col: number } | undefined {
  const m = [...message.matchAll(/\[(\d+):(\d+)\]/g)].pop();
  return m ? { line: Number(m[1]), col: Number(m[2]) } : undefined;
}

/** Tables named after FROM/JOIN in the query, with their aliases: their columns are offered. */
export function referencedTables(text: string): { path: string[]; alias?: string }[] {
  const out: { path: string[]; alias?: string }[] = [];
  const re = /\b(?:from|join)\s+`?([\w-]+(?:\.[\w-]+){1,2})`?(?:\s+(?:as\s+)?(\w+))?/gi;
  const notAlias = /^(where|on|using|join|inner|left|right|full|cross|group|order|limit|window|qualify|having|union|except|intersect|as|select|for|tablesample|pivot|unpivot)$/i;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const alias = m[2] && !notAlias.test(m[2]) ? m[2] : undefined;
    out.push({ path: m[1]!.split('.'), ...(alias ? { alias } : {}) });
  }
  return out;
}
