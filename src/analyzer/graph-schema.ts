// A property graph's definition, from its CREATE PROPERTY GRAPH statement and the tables it names, checked as
// graph-schema-statements.md states: element aliases unique, keys (KEY or the table's primary key) naming existing
// columns once, edge endpoints referencing node tables, labels unique per element, a property once per label, a
// property name one type in the whole graph, a label name the same property set wherever it appears.
// The catalog keeps the statement text; queries rebuild this from it (graph-query.ts).
import type * as A from '../../grammar/ast.js';
import { parseStatement } from '../../grammar/index.js';
import type { TableId } from '../storage/api.js';
import type { SqlType } from '../types/types.js';
import { typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { tableIdOf, tableNotFound } from './names.js';
import { resolveQuery } from './query.js';

export interface GraphProperty {
  name: string;
  type: SqlType;
  /** The value over the element table's columns. */
  expr: A.Expr;
}

export interface GraphEndpoint {
  /** Alias of the referenced node table. */
  ref: string;
  /** Edge columns, in the order of the node's key columns. */
  columns: string[];
}

export interface GraphElement {
  kind: 'node' | 'edge';
  alias: string;
  table: TableId;
  key: string[];
  labels: string[];
  /** The union of the properties of its labels, in definition order. */
  properties: GraphProperty[];
  source?: GraphEndpoint;
  destination?: GraphEndpoint;
}

export interface GraphDef {
  name: string;
  elements: GraphElement[];
  /** Every property name (lower case) of the graph, with its one type. */
  propertyTypes: Map<string, GraphProperty>;
}

const lower = (s: string) => s.toLowerCase();

function dupIn(names: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(lower(n))) return n;
    seen.add(lower(n));
  }
  return undefined;
}

/** Builds and checks a graph's definition; `graphDataset` resolves one-part table names. */
export function buildGraphDef(an: Analyzer, st: A.CreatePropertyGraphStmt): GraphDef {
  const elements: GraphElement[] = [];
  const byAlias = new Map<string, GraphElement>();
  const propertyTypes = new Map<string, GraphProperty>();
  const labelProps = new Map<string, { name: string; props: string[] }>();
  const defs: [A.GraphElementDef, 'node' | 'edge'][] = [...st.nodeTables.map((d): [A.GraphElementDef, 'node'] => [d, 'node']), ...st.edgeTables.map((d): [A.GraphElementDef, 'edge'] => [d, 'edge'])];
  for (const [d, kind] of defs) {
    const id = tableIdOf(an, d.table, d.loc);
    const info = an.getTable(id);
    if (!info) throw tableNotFound(an, id);
    const alias = d.alias ?? d.table[d.table.length - 1]!.split('.').pop()!;
    // graph-schema-statements.md: an alias is required when one table backs more than one element.
    if (byAlias.has(lower(alias))) throw sqlError(`Duplicate element table name ${alias} in property graph; use AS to give each element definition its own alias`, d.loc);
    const colNames = info.columns.map((c) => c.name);
    const hasCol = (c: string) => colNames.some((n) => lower(n) === lower(c));
    const colName = (c: string) => colNames.find((n) => lower(n) === lower(c))!;
    const checkCols = (cols: readonly string[], what: string, loc: A.Loc) => {
      const dup = dupIn(cols);
      if (dup) throw sqlError(`Duplicate column ${dup} in the ${what} of element table ${alias}`, loc);
      for (const c of cols) if (!hasCol(c)) throw sqlError(`Column ${c} in the ${what} of element table ${alias} does not exist in table ${info.id.tableId}`, loc);
    };
    let key = d.key;
    if (key) checkCols(key, 'KEY', d.loc);
    else {
      const pk = (info.resource.tableConstraints as { primaryKey?: { columns?: string[] } } | undefined)?.primaryKey?.columns;
      if (!pk?.length) throw sqlError(`Element table ${alias} has no KEY clause and its table ${info.id.tableId} has no primary key; an element needs a key`, d.loc);
      key = pk;
    }
    key = key.map(colName);
    const el: GraphElement = { kind, alias, table: info.id, key, labels: [], properties: [] };
    // Labels: none written means the default label exposing all columns.
    const labels = d.labels.length ? d.labels : [{ loc: d.loc, properties: { kind: 'all' } } as A.GraphLabelDef];
    for (const l of labels) {
      const name = l.name ?? alias;
      if (el.labels.some((x) => lower(x) === lower(name))) throw sqlError(`Duplicate label ${name} in the definition of element table ${alias}`, l.loc);
      el.labels.push(name);
      const props: GraphProperty[] = [];
      const p = l.properties;
      if (p.kind === 'all') {
        if (p.except) checkCols(p.except, 'EXCEPT list', l.loc);
        for (const c of info.columns) {
          if (p.except?.some((x) => lower(x) === lower(c.name))) continue;
          props.push({ name: c.name, type: c.type, expr: { kind: 'PathExpr', loc: l.loc, parts: [c.name] } });
        }
      } else if (p.kind === 'list') {
        // A derived property is typed over the element table: SELECT expr FROM table.
        const query: A.Query = {
          kind: 'Query',
          loc: l.loc,
          body: { kind: 'Select', loc: l.loc, distinct: false, items: p.items.map((it, i): A.SelectItem => ({ kind: 'SelectExpr', loc: it.loc, expr: it.expr, alias: `p${i}` })), from: { kind: 'TableRef', loc: d.loc, path: [info.id.projectId, info.id.datasetId, info.id.tableId] } as A.FromItem },
          pipes: [],
        };
        for (const it of p.items) {
          if (!it.alias && it.expr.kind !== 'PathExpr') throw sqlError('A derived property that is not a column reference needs AS property_name', it.loc);
          if (it.expr.kind === 'PathExpr' && !it.alias && (it.expr.parts.length !== 1 || !hasCol(it.expr.parts[0]!))) throw sqlError(`Column ${it.expr.parts.join('.')} does not exist in table ${info.id.tableId}`, it.loc);
          if (it.expr.kind === 'ScalarSubquery' || it.expr.kind === 'ArraySubquery' || it.expr.kind === 'ExistsExpr') throw sqlError('A property definition cannot contain a subquery', it.loc);
          // graph-schema-statements.md: MEASURE(...) properties serve GRAPH_EXPAND, which this emulator does not have.
          if (it.expr.kind === 'FunctionCall' && it.expr.name.length === 1 && it.expr.name[0]!.toUpperCase() === 'MEASURE') throw sqlError('Measure properties (MEASURE(...)) are not supported by this emulator', it.loc);
        }
        const out = resolveQuery(an, query, undefined);
        p.items.forEach((it, i) => {
          const pname = it.alias ?? (it.expr as A.PathExpr).parts[0]!;
          props.push({ name: it.alias ?? colName(pname), type: out.rel.columns[i]!.type, expr: it.expr });
        });
      }
      const dup = dupIn(props.map((x) => x.name));
      if (dup) throw sqlError(`Duplicate property name ${dup} in label ${name} of element table ${alias}`, l.loc);
      // A label name exposes one property set in the whole graph.
      const set = props.map((x) => lower(x.name)).sort();
      const seen = labelProps.get(lower(name));
      if (seen && seen.props.join(',') !== set.join(',')) throw sqlError(`The label ${name} is defined with different property declarations; a label must expose the same set of properties in every element table`, l.loc);
      labelProps.set(lower(name), { name, props: set });
      for (const x of props) {
        const t = propertyTypes.get(lower(x.name));
        if (t && typeToSql(t.type) !== typeToSql(x.type)) throw sqlError(`The property declaration of ${x.name} has type conflicts: ${typeToSql(t.type)} and ${typeToSql(x.type)}; a property has one type in the whole graph`, l.loc);
        if (!t) propertyTypes.set(lower(x.name), x);
        const had = el.properties.find((y) => lower(y.name) === lower(x.name));
        if (!had) el.properties.push(x);
      }
    }
    if (kind === 'edge') {
      const endpoint = (e: A.GraphEndpointDef): GraphEndpoint => {
        const node = byAlias.get(lower(e.ref));
        if (!node || node.kind !== 'node') throw sqlError(`The referenced node table ${e.ref} is not defined in the property graph`, e.loc);
        checkCols(e.columns, 'SOURCE/DESTINATION KEY', e.loc);
        const nodeCols = e.refColumns ?? node.key;
        if (e.refColumns) {
          const dup = dupIn(e.refColumns);
          if (dup) throw sqlError(`Duplicate column ${dup} in the referenced columns of node table ${node.alias}`, e.loc);
        }
        if (nodeCols.length !== e.columns.length) throw sqlError(`The number of edge key columns (${e.columns.length}) does not match the number of referenced node columns (${nodeCols.length}) of node table ${node.alias}`, e.loc);
        // Edges join nodes on the node's key: the referenced columns must be those key columns, in any order.
        const cols: string[] = [];
        for (const k of node.key) {
          const i = nodeCols.findIndex((c) => lower(c) === lower(k));
          if (i < 0) throw sqlError(`Edge ${alias} references columns of node table ${node.alias} that are not its key; this emulator joins edges to nodes on the node key only`, e.loc);
          cols.push(colName(e.columns[i]!));
        }
        return { ref: node.alias, columns: cols };
      };
      el.source = endpoint(d.source!);
      el.destination = endpoint(d.destination!);
    }
    elements.push(el);
    byAlias.set(lower(alias), el);
  }
  return { name: st.name.join('.'), elements, propertyTypes };
}

/** A stored graph's definition: its CREATE statement parsed again, element tables resolved in the graph's dataset. */
export function loadGraphDef(an: Analyzer, id: TableId, resource: Record<string, unknown>): GraphDef {
  const st = parseStatement(String(resource.ddl));
  if (st.kind !== 'CreatePropertyGraph') throw sqlError(`Property graph ${id.datasetId}.${id.tableId} has no definition`);
  const env = an.env as { defaultDataset?: { projectId: string; datasetId: string } };
  const saved = env.defaultDataset;
  env.defaultDataset = { projectId: id.projectId, datasetId: id.datasetId };
  try {
    return buildGraphDef(an, st);
  } finally {
    env.defaultDataset = saved;
  }
}

/** INFORMATION_SCHEMA.PROPERTY_GRAPHS.property_graph_metadata_json: tables, keys, labels and property declarations. */
export function graphMetadata(an: Analyzer, id: TableId, resource: Record<string, unknown>): Record<string, unknown> {
  const times = { creationTime: new Date(Number(resource.creationTime ?? 0)).toISOString(), lastModifiedTime: new Date(Number(resource.lastModifiedTime ?? 0)).toISOString() };
  let g: GraphDef;
  try {
    g = loadGraphDef(an, id, resource);
  } catch {
    return times; // an element table is gone: the definition no longer resolves
  }
  const table = (e: GraphElement) => ({
    name: e.alias,
    dataSourceTable: { projectId: e.table.projectId, datasetId: e.table.datasetId, tableId: e.table.tableId },
    keyColumns: e.key,
    labelNames: e.labels,
    propertyDefinitions: e.properties.map((p) => ({ propertyDeclarationName: p.name })),
    ...(e.source ? { sourceNodeTable: { nodeTableName: e.source.ref, edgeTableColumns: e.source.columns } } : {}),
    ...(e.destination ? { destinationNodeTable: { nodeTableName: e.destination.ref, edgeTableColumns: e.destination.columns } } : {}),
  });
  return {
    ...times,
    nodeTables: g.elements.filter((e) => e.kind === 'node').map(table),
    edgeTables: g.elements.filter((e) => e.kind === 'edge').map(table),
    propertyDeclarations: [...g.propertyTypes.values()].map((p) => ({ name: p.name, type: typeToSql(p.type) })),
  };
}
