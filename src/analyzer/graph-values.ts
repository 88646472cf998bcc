// Graph values outside the graph query that made them (graph-data-types.md): an element is compiled to a STRUCT
// whose hidden fields come first (graph-query.ts, elementTable), its type tagged as an element (StructType
// graphElement, which no user STRUCT has: a user's STRUCT with fields named __id and __labels is an ordinary STRUCT);
// a path is a STRUCT<nodes ARRAY, edges ARRAY> of elements.
import type { SqlType } from '../types/types.js';

/** The STRUCT a graph element compiles to: tagged by the graph compiler (elementTable). */
export function isGraphElementType(t: SqlType): boolean {
  return t.kind === 'STRUCT' && t.graphElement === true;
}

/**
 * The graph type a result column's type holds, if any. graph-sql-queries.md: an element (or a path) cannot be output
 * by a query, only read (n.p, TO_JSON(n)); the analyzer refuses it where a statement returns its result.
 */
export function graphTypeIn(t: SqlType): 'GRAPH_ELEMENT' | 'GRAPH_PATH' | undefined {
  if (t.kind === 'ARRAY') return graphTypeIn(t.element);
  if (t.kind !== 'STRUCT') return undefined;
  if (isGraphElementType(t)) return 'GRAPH_ELEMENT';
  const [a, b] = t.fields;
  if (t.fields.length === 2 && a!.name === 'nodes' && b!.name === 'edges' && graphTypeIn(a!.type) && graphTypeIn(b!.type)) return 'GRAPH_PATH';
  for (const f of t.fields) {
    const inner = graphTypeIn(f.type);
    if (inner) return inner;
  }
  return undefined;
}
