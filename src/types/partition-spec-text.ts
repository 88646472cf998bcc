// A table's partitioning and clustering as the service spells them in its errors (the planner's replace check, the
// gateway's copy jobs).

/**
 * A table's partitioning as the service spells it in the replace error
 * (`interval(type:day,field:d)`, `range(type:integer,field:x,start:0,end:10,interval:1)`,
 * `none`, then ` clustering(a,b)`); `key` compares the partitioning alone.
 */
export function partitionSpecText(r: Record<string, unknown>): { key: string; text: string } {
  const tp = r.timePartitioning as { type?: string; field?: string } | undefined;
  const rp = r.rangePartitioning as { field?: string; range?: { start?: string; end?: string; interval?: string } } | undefined;
  let key = 'none';
  if (tp) key = `interval(type:${(tp.type ?? 'DAY').toLowerCase()}${tp.field ? `,field:${tp.field}` : ''})`;
  else if (rp) key = `range(type:integer,field:${rp.field ?? ''},start:${rp.range?.start ?? ''},end:${rp.range?.end ?? ''},interval:${rp.range?.interval ?? ''})`;
  const fields = (r.clustering as { fields?: string[] } | undefined)?.fields;
  return { key, text: fields?.length ? `${key} clustering(${fields.join(',')})` : key };
}
