// CREATE PROPERTY GRAPH / DROP PROPERTY GRAPH (graph-schema-statements.md). A graph is kept in its dataset's
// propertyGraphs collection (the catalog's child resources, committed like routines) as its statement text; the
// definition is checked here and rebuilt from that text by each query (analyzer/graph-schema.ts).
import type * as A from '../../grammar/ast.js';
import { buildGraphDef } from '../analyzer/graph-schema.js';
import { tableNotFound } from '../analyzer/names.js';
import { QueryError, type QueryResult } from './api.js';
import { already, targetId } from './ddl-common.js';
import type { Session } from './session.js';
import { fq, statementResult } from './statement-type.js';

export async function createPropertyGraph(s: Session, st: A.CreatePropertyGraphStmt): Promise<QueryResult> {
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  // The name may not be that of a table or view (graph-schema-statements.md, property_graph_name).
  if (cat.getTable(id)) throw already('Table', fq(id));
  const existing = cat.getChild('propertyGraphs', id.projectId, id.datasetId, id.tableId);
  if (existing && st.ifNotExists) return statementResult('CREATE_PROPERTY_GRAPH', { ddlOperationPerformed: 'SKIP' });
  if (existing && !st.orReplace) throw already('Property graph', fq(id));
  // Element tables named by one part are in the graph's dataset, as a view's are.
  const saved = s.env;
  s.env = { ...saved, defaultDataset: { projectId: id.projectId, datasetId: id.datasetId } };
  try {
    buildGraphDef(s.analyzer(), st);
  } finally {
    s.env = saved;
  }
  await cat.putChild('propertyGraphs', id.projectId, id.datasetId, id.tableId, { ddl: s.ctx.sql.slice(st.start, st.end) });
  return statementResult('CREATE_PROPERTY_GRAPH', { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE' });
}

export async function dropPropertyGraph(s: Session, st: A.DropStmt): Promise<QueryResult> {
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  const exists = cat.getDataset(id.projectId, id.datasetId) && cat.getChild('propertyGraphs', id.projectId, id.datasetId, id.tableId);
  if (!exists) {
    if (st.ifExists) return statementResult('DROP_PROPERTY_GRAPH', { ddlOperationPerformed: 'SKIP' });
    throw new QueryError(`Not found: Property graph ${fq(id)}`, 'notFound', 404);
  }
  await cat.deleteChild('propertyGraphs', id.projectId, id.datasetId, id.tableId);
  return statementResult('DROP_PROPERTY_GRAPH', { ddlOperationPerformed: 'DROP' });
}
