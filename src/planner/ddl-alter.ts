// ALTER TABLE / VIEW / SCHEMA / COLUMN and their checks, as the service makes them.
import type * as A from '../../grammar/ast.js';
import { coerce, literal } from '../analyzer/coercion.js';
import { tableIdOf, splitPath } from '../analyzer/names.js';
import { policiesOf } from '../analyzer/row-access.js';
import { checkMvOptions } from './mv-rules.js';
import { project } from '../analyzer/query.js';
import { colRef } from '../analyzer/scope.js';
import { typeFromNode } from '../analyzer/types.js';
import { searchIndexesOf, vectorIndexesOf } from '../analyzer/search-index.js';
import { pruneIndexes } from './search-index.js';
import { columnToRestField, hasTypeParams, tableRestField, type RestField } from '../types/schema.js';
import { typeToSql } from '../types/types.js';
import { QueryError, type QueryResult } from './api.js';
import type { Session } from './session.js';
import { sqlError } from '../analyzer/errors.js';
import { scanAll } from './dml.js';
import { fq, statementResult } from './statement-type.js';
import { already, checkFineGrainedTemp, optionsToResource, checkOptionNames, checkColumnOptions, clusterable, checkKindOptions, checkPartitionOptions, checkSchemaOptions, targetId, mvRefreshSettings } from './ddl-common.js';
import { RestTableConstraints, defaultCollated, tableConstraints, checkForeignKeyCount, checkKeyColumns, checkColumnName, checkFieldOptions, checkColumnCollate, checkCollationName, retypedCollation, unnamedPrimaryKey, primaryKeyDefault, exprText, hasNestedOptions, nestedFieldExtras, columnOptionFields, defaultRounding, checkDefault, checkDefaultValue, setDataTypeAllowed, retypedFields, typeWithParams, restParamsOf } from './ddl-columns.js';

const result = statementResult;

// ---------------------------------------------------------------- ALTER

/** ALTER MODEL SET OPTIONS takes these (data-definition-language: model_set_options_list). */
const MODEL_ALTER_OPTIONS = new Set(['description', 'expiration_timestamp', 'labels']);

/**
 * ALTER MODEL [IF EXISTS] name SET OPTIONS (...): the model resource's description, expirationTime and labels (set
 * ones replace the old ones whole, as ALTER TABLE's do; NULL clears). It read as ALTER TABLE and said "Not found: Table".
 */
async function alterModel(s: Session, st: A.AlterStmt): Promise<QueryResult> {
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  for (const a of st.actions) if (a.kind !== 'SetOptions') throw sqlError(`Syntax error: ALTER MODEL takes SET OPTIONS only`, a.loc);
  for (const a of st.actions) if (a.kind === 'SetOptions') checkOptionNames(a.options, MODEL_ALTER_OPTIONS, 'ALTER MODEL');
  const existing = cat.getDataset(id.projectId, id.datasetId) ? cat.getChild('models', id.projectId, id.datasetId, id.tableId) : undefined;
  if (!existing) {
    if (st.ifExists) return result('ALTER_MODEL', { ddlOperationPerformed: 'SKIP' });
    throw new QueryError(`Not found: Model ${id.projectId}:${id.datasetId}.${id.tableId}`, 'notFound', 404);
  }
  const model: Record<string, unknown> = { ...existing };
  for (const a of st.actions) {
    if (a.kind !== 'SetOptions') continue;
    const patch = await optionsToResource(s, a.options);
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined || v === null) delete model[k];
      else model[k] = v;
    }
  }
  model.lastModifiedTime = String(Date.now());
  await cat.putChild('models', id.projectId, id.datasetId, id.tableId, model);
  return result('ALTER_MODEL', { ddlOperationPerformed: 'ALTER' });
}

/**
 * A column of the table's PRIMARY KEY or of one of its FOREIGN KEYs is neither dropped, renamed nor retyped
 * (data-definition-language; information-schema-table-constraints: key fields "cannot be renamed, or have their type changed").
 */
function keyColumnStays(keys: RestTableConstraints, name: string, what: 'drop' | 'rename' | 'change the type of', loc: A.Loc): void {
  const l = name.toLowerCase();
  if (keys.primaryKey?.columns.some((c) => c.toLowerCase() === l)) throw sqlError(`Cannot ${what} column ${name}: it is a key column of the table's PRIMARY KEY`, loc);
  const fk = keys.foreignKeys?.find((k) => k.columnReferences.some((c) => c.referencingColumn.toLowerCase() === l));
  if (fk) throw sqlError(`Cannot ${what} column ${name}: it is a key column of the FOREIGN KEY${fk.name ? ` ${fk.name}` : ''}`, loc);
}

/**
 * data-definition-language.md, ALTER TABLE DROP COLUMN / RENAME COLUMN Details: after either, the table cannot be
 * queried as a wildcard table; renaming the columns back to their first names lifts that.
 */
export interface ColumnHistory {
  dropped?: boolean;
  renamed?: Record<string, string>;
}

export async function alter(s: Session, st: A.AlterStmt): Promise<QueryResult> {
  const cat = s.ctx.catalog;
  if (st.objectType === 'SCHEMA') {
    const parts = splitPath(st.name);
    const projectId = parts.length > 1 ? parts[0]! : s.env.projectId;
    const datasetId = parts[parts.length - 1]!;
    if (!cat.getDataset(projectId, datasetId)) {
      if (st.ifExists) return result('ALTER_SCHEMA', { ddlOperationPerformed: 'SKIP', statistics: { ddlTargetDataset: { projectId, datasetId } } });
      throw new QueryError(`Not found: Dataset ${projectId}:${datasetId}`, 'notFound', 404);
    }
    // ALTER SCHEMA takes SET OPTIONS and SET DEFAULT COLLATE (which patch the dataset resource, as datasets.patch
    // does) and ADD / DROP REPLICA, refused: the emulator keeps one copy of a dataset and does not replicate it.
    for (const a of st.actions) {
      if (a.kind === 'Replica') throw sqlError(`ALTER SCHEMA ${a.op} REPLICA ${a.name.join('.')} is not supported: the emulator does not replicate datasets`, a.loc);
      if (a.kind !== 'SetOptions' && a.kind !== 'SetDefaultCollate') throw sqlError(`ALTER SCHEMA does not support ${alterActionName(a)}`, a.loc);
    }
    for (const a of st.actions) if (a.kind === 'SetOptions') checkSchemaOptions(a.options, 'ALTER SCHEMA');
    for (const a of st.actions) {
      if (a.kind === 'SetOptions') {
        const patch = await optionsToResource(s, a.options);
        // labels set replace the old ones whole, as ALTER TABLE SET OPTIONS does (data-definition-language: SET OPTIONS).
        const old = (cat.getDataset(projectId, datasetId)?.resource.labels as Record<string, string> | undefined) ?? {};
        if (patch.labels) for (const k of Object.keys(old)) if (!(k in (patch.labels as object))) (patch.labels as Record<string, unknown>)[k] = null;
        await cat.patchDatasetResource(projectId, datasetId, patch);
      }
      else if (a.kind === 'SetDefaultCollate' && checkCollationName(a.collation, a.loc)) await cat.patchDatasetResource(projectId, datasetId, { defaultCollation: a.collation });
    }
    return result('ALTER_SCHEMA', { ddlOperationPerformed: 'ALTER', statistics: { ddlTargetDataset: { projectId, datasetId } } });
  }
  if (st.objectType === 'MODEL') return alterModel(s, st);
  const id = targetId(s, st.name, st.loc);
  const info = cat.getTable(id);
  const type = st.objectType === 'VIEW' ? 'ALTER_VIEW' : st.objectType === 'MATERIALIZED VIEW' ? 'ALTER_MATERIALIZED_VIEW' : 'ALTER_TABLE';
  if (!info) {
    if (st.ifExists) return result(type, { ddlOperationPerformed: 'SKIP', ddlTargetTable: id });
    throw new QueryError(`Not found: Table ${fq(id)}`, 'notFound', 404);
  }
  // ALTER VIEW / MATERIALIZED VIEW / TABLE each take only their own kind of object.
  const want = st.objectType === 'VIEW' ? 'VIEW' : st.objectType === 'MATERIALIZED VIEW' ? 'MATERIALIZED_VIEW' : 'TABLE';
  // ALTER TABLE RENAME TO renames a clone, snapshot or table (data-definition-language), and SET OPTIONS changes a
  // snapshot's metadata (table-snapshots-intro.md, Limitations: its description, expiration...); other actions take
  // tables only.
  const snapshotMeta = want === 'TABLE' && info.kind === 'SNAPSHOT' && st.actions.every((a) => a.kind === 'RenameTo' || a.kind === 'SetOptions');
  // data-definition-language.md, ALTER TABLE ADD / RENAME / DROP COLUMN, ALTER COLUMN and RENAME TO Details: not for
  // external tables (no other ALTER statement takes one either).
  if (info.kind === 'EXTERNAL') throw sqlError(`ALTER ${st.objectType} is not supported for external table ${fq(id)}`, st.loc);
  if (info.kind !== want && !snapshotMeta) throw sqlError(`${fq(id)} is not a ${st.objectType === 'TABLE' ? 'table' : st.objectType.toLowerCase()}; use ALTER ${info.kind === 'MATERIALIZED_VIEW' ? 'MATERIALIZED VIEW' : info.kind}`, st.loc);
  // ALTER VIEW takes SET OPTIONS and ALTER COLUMN ... SET OPTIONS, ALTER MATERIALIZED VIEW SET OPTIONS only
  // (data-definition-language): any other action is outside their grammar.
  for (const a of st.actions) {
    const ok = a.kind === 'SetOptions' || (st.objectType === 'VIEW' && a.kind === 'AlterColumn' && a.action.kind === 'SetOptions');
    if (a.kind === 'Replica') throw sqlError(`ALTER ${st.objectType} does not support ${alterActionName(a)}: replicas are a schema's`, a.loc);
    if (st.objectType !== 'TABLE' && !ok) throw sqlError(`Syntax error: ALTER ${st.objectType} takes SET OPTIONS${st.objectType === 'VIEW' ? ' and ALTER COLUMN ... SET OPTIONS' : ''} only`, a.loc);
  }
  // data-definition-language.md, ALTER TABLE RENAME COLUMN Details: RENAME COLUMN is not combined with other actions.
  const other = st.actions.find((a) => a.kind !== 'RenameColumn');
  if (other && st.actions.some((a) => a.kind === 'RenameColumn')) throw sqlError(`RENAME COLUMN cannot be combined with ${alterActionName(other)} in one ALTER TABLE statement`, other.loc);
  // ... nor RENAME COLUMN / DROP COLUMN (their Details) on a table with row access policies.
  const byPolicy = st.actions.find((a) => a.kind === 'RenameColumn' || a.kind === 'DropColumn');
  if (byPolicy && policiesOf(cat, id).length > 0) throw sqlError(`${alterActionName(byPolicy)} is not supported on table ${fq(id)}, which has row access policies`, byPolicy.loc);
  // A rewrite of the rows (SET DATA TYPE, DROP COLUMN, ...) waits for the mutations queued before it, as DML does.
  if (info.kind === 'TABLE') await cat.transactions?.lockForMutation(id);
  let cols = info.columns.slice();
  // Source column index of each new column (-1 = added), for data rewrites.
  let origin = cols.map((_, i) => i);
  let rewrite = false;
  // Column defaults set (text) or dropped (null) by the actions: kept in the schema's defaultValueExpression.
  const defaults = new Map<string, string | null>();
  // Descriptions of added columns (ADD COLUMN ... OPTIONS(description = ...)), kept in the schema as well.
  const descriptions = new Map<string, string>();
  // Columns whose type parameters SET DATA TYPE changed or ADD COLUMN gave (at any depth): the schema's maxLength / precision / scale to write.
  const typeParams = new Map<string, Pick<RestField, 'maxLength' | 'precision' | 'scale' | 'fields' | 'roundingMode' | 'policyTags'>>();
  // Key constraints after ADD/DROP PRIMARY KEY and ADD/DROP CONSTRAINT (undefined: untouched).
  let keys: RestTableConstraints | undefined;
  // SET DEFAULT COLLATE earlier in this statement (undefined: the table's own).
  let tableDefaultCollation: string | undefined;
  // The columns dropped or renamed so far (renamed: current name -> first name, lower case), kept hidden on the table.
  const history = structuredClone((info.resource.columnHistory as ColumnHistory | undefined) ?? {});
  let droppedColumn = false;
  const curKeys = (): RestTableConstraints => (keys ??= structuredClone((info.resource.tableConstraints as RestTableConstraints | undefined) ?? {}));
  for (const a of st.actions) {
    switch (a.kind) {
      case 'AddConstraint': {
        const k = curKeys();
        const c = a.constraint;
        if (c.enforced) throw sqlError(`ENFORCED ${c.kind === 'PrimaryKey' ? 'PRIMARY KEY' : 'FOREIGN KEY'} constraints are not supported; declare the key NOT ENFORCED`, a.loc);
        unnamedPrimaryKey([c], a.loc);
        for (const n of c.columns) {
          if (!cols.some((x) => x.name.toLowerCase() === n.toLowerCase())) throw sqlError(`Unsupported ${c.kind === 'PrimaryKey' ? 'primary' : 'foreign'} key column ${n} either does not exist or is a pseudocolumn`, a.loc);
        }
        if (c.name && a.ifNotExists && (k.foreignKeys ?? []).some((f) => f.name?.toLowerCase() === c.name!.toLowerCase())) break;
        if (c.name && (k.foreignKeys ?? []).some((f) => f.name?.toLowerCase() === c.name!.toLowerCase())) throw sqlError(`Constraint ${c.name} already exists in table ${fq(id)}`, a.loc);
        if (c.kind === 'PrimaryKey') {
          if (k.primaryKey?.columns.length) throw sqlError(`Table ${fq(id)} already has a primary key`, a.loc);
          checkKeyColumns(c.columns, cols, 'PRIMARY KEY', a.loc);
          // A primary key column has no default value (data-definition-language: ALTER COLUMN SET DEFAULT).
          const fields = (info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? [];
          for (const n of c.columns) {
            const l = n.toLowerCase();
            const dflt = defaults.has(l) ? defaults.get(l) : fields.find((f) => f.name.toLowerCase() === l)?.defaultValueExpression;
            if (dflt) throw primaryKeyDefault(n, a.loc);
          }
          k.primaryKey = { columns: c.columns.slice() };
        } else {
          const fk = tableConstraints(s, [], [c], a.loc, cols, id)!.foreignKeys![0]!;
          (k.foreignKeys ??= []).push(fk);
          checkForeignKeyCount(k.foreignKeys.length, a.loc);
        }
        break;
      }
      case 'DropConstraint': {
        const k = curKeys();
        if (a.primaryKey) {
          if (!k.primaryKey?.columns.length) {
            if (a.ifExists) break;
            throw sqlError(`Table ${fq(id)} does not have a primary key`, a.loc);
          }
          delete k.primaryKey;
        } else {
          const i = (k.foreignKeys ?? []).findIndex((f) => f.name?.toLowerCase() === a.name.toLowerCase());
          if (i < 0) {
            if (a.ifExists) break;
            throw sqlError(`Constraint ${a.name} not found in table ${fq(id)}`, a.loc);
          }
          k.foreignKeys!.splice(i, 1);
          if (!k.foreignKeys!.length) delete k.foreignKeys;
        }
        break;
      }
      case 'AddColumn': {
        if (cols.some((c) => c.name.toLowerCase() === a.column.name.toLowerCase())) {
          if (a.ifNotExists) break;
          throw sqlError(`Column already exists: ${a.column.name}`, a.loc);
        }
        if (a.column.notNull) throw sqlError(`Cannot add a REQUIRED column ${a.column.name} to an existing table`, a.loc);
        checkColumnName(a.column.name, a.loc);
        checkColumnOptions(a.column.options);
        checkFieldOptions(a.column.type);
        // A NOT NULL field inside the new STRUCT column is taken: data-definition-language.md, ALTER TABLE ADD COLUMN
        // Details (a nested REQUIRED column may come as part of a new RECORD field; the new column itself is NULLABLE).
        checkColumnCollate(a.column);
        // A STRING column without its own COLLATE takes the table's default collation (SET DEFAULT COLLATE / DEFAULT COLLATE).
        const tableCollation = tableDefaultCollation ?? (info.resource.defaultCollation as string | undefined);
        const addedType = typeFromNode(a.column.type);
        cols.push({ name: a.column.name, type: tableCollation ? defaultCollated(addedType, a.column, tableCollation) : addedType, required: false });
        origin.push(-1);
        const added = cols[cols.length - 1]!;
        // The REST field's parameters, nested fields' options and rounding modes (the column's, else the table's default).
        const rf = tableRestField(added.name, added.type);
        await nestedFieldExtras(s, a.column.type, rf);
        await columnOptionFields(s, a.column.options, rf);
        defaultRounding(rf, info.resource.defaultRoundingMode as string | undefined);
        if (hasTypeParams(added.type) || hasNestedOptions(a.column.type) || rf.roundingMode !== undefined || JSON.stringify(rf.fields ?? []).includes('roundingMode')) {
          const { maxLength, precision, scale, fields, roundingMode: rm } = rf;
          typeParams.set(added.name.toLowerCase(), { ...(maxLength !== undefined ? { maxLength } : {}), ...(precision !== undefined ? { precision } : {}), ...(scale !== undefined ? { scale } : {}), ...(fields ? { fields } : {}), ...(rm !== undefined ? { roundingMode: rm } : {}) });
        }
        // No new column with a default (default-values.md, Limitations: add it without one, then ALTER COLUMN SET
        // DEFAULT). The default is checked first, so a default that is wrong in itself is refused for that.
        if (a.column.default) {
          checkDefault(s, a.column.default, cols[cols.length - 1]!.type);
          await checkDefaultValue(s, a.column.default, added, rf);
          throw sqlError(`Cannot add column ${a.column.name} with a default value to an existing table; add it without a default value, then use ALTER COLUMN SET DEFAULT`, a.column.default.loc);
        }
        if (rf.description !== undefined) descriptions.set(a.column.name.toLowerCase(), rf.description);
        // The column uses CREATE TABLE's syntax (data-definition-language: ADD COLUMN), key constraints included: a
        // PRIMARY KEY or REFERENCES on it adds that key, with CREATE TABLE's checks. They were parsed and dropped.
        if (a.column.primaryKey || a.column.references || a.column.enforced) {
          const k = curKeys();
          const made = tableConstraints(s, [a.column], [], a.loc, cols, id)!;
          if (made.primaryKey) {
            if (k.primaryKey?.columns.length) throw sqlError(`Table ${fq(id)} already has a primary key`, a.loc);
            k.primaryKey = made.primaryKey;
          }
          if (made.foreignKeys) {
            (k.foreignKeys ??= []).push(...made.foreignKeys);
            checkForeignKeyCount(k.foreignKeys.length, a.loc);
          }
        }
        break;
      }
      case 'DropColumn': {
        const i = cols.findIndex((c) => c.name.toLowerCase() === a.name.toLowerCase());
        if (i < 0) {
          if (a.ifExists) break;
          throw sqlError(`Column not found: ${a.name}`, a.loc);
        }
        // Partitioning and clustering columns stay (data-definition-language: ALTER TABLE DROP COLUMN).
        const r = info.resource as { timePartitioning?: { field?: string }; rangePartitioning?: { field?: string }; clustering?: { fields?: string[] } };
        const lname = cols[i]!.name.toLowerCase();
        if ([r.timePartitioning?.field, r.rangePartitioning?.field].some((f) => f?.toLowerCase() === lname)) throw sqlError(`Cannot drop partitioning column ${cols[i]!.name}`, a.loc);
        if (r.clustering?.fields?.some((f) => f.toLowerCase() === lname)) throw sqlError(`Cannot drop clustering column ${cols[i]!.name}`, a.loc);
        keyColumnStays(curKeys(), cols[i]!.name, 'drop', a.loc);
        history.dropped = true;
        droppedColumn = true;
        cols = cols.filter((_, k) => k !== i);
        origin = origin.filter((_, k) => k !== i);
        rewrite = true;
        break;
      }
      case 'RenameColumn': {
        const i = cols.findIndex((c) => c.name.toLowerCase() === a.from.toLowerCase());
        if (i < 0) {
          if (a.ifExists) break;
          throw sqlError(`Column not found: ${a.from}`, a.loc);
        }
        if (cols.some((c, k) => k !== i && c.name.toLowerCase() === a.to.toLowerCase())) throw sqlError(`Column already exists: ${a.to}`, a.loc);
        // Partitioning, clustering and key columns keep their names (data-definition-language: RENAME COLUMN).
        const rr = info.resource as { timePartitioning?: { field?: string }; rangePartitioning?: { field?: string }; clustering?: { fields?: string[] } };
        const ln = cols[i]!.name.toLowerCase();
        if ([rr.timePartitioning?.field, rr.rangePartitioning?.field].some((f) => f?.toLowerCase() === ln)) throw sqlError(`Cannot rename partitioning column ${cols[i]!.name}`, a.loc);
        if (rr.clustering?.fields?.some((f) => f.toLowerCase() === ln)) throw sqlError(`Cannot rename clustering column ${cols[i]!.name}`, a.loc);
        keyColumnStays(curKeys(), cols[i]!.name, 'rename', a.loc);
        checkColumnName(a.to, a.loc);
        // The column keeps its description and default under the new name.
        const old = ((info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? []).find((f) => f.name.toLowerCase() === cols[i]!.name.toLowerCase());
        const desc = descriptions.get(cols[i]!.name.toLowerCase()) ?? old?.description;
        if (desc !== undefined) descriptions.set(a.to.toLowerCase(), desc);
        const dflt = defaults.has(cols[i]!.name.toLowerCase()) ? defaults.get(cols[i]!.name.toLowerCase()) : old?.defaultValueExpression;
        if (dflt !== undefined) defaults.set(a.to.toLowerCase(), dflt);
        // ... and its type parameters (STRING(20)), nested fields' options, rounding mode and policy tags, which the
        // rewritten schema would otherwise rebuild from the bare type.
        const kept = typeParams.get(ln) ?? (old && {
          ...restParamsOf(old), ...(old.fields ? { fields: old.fields } : {}),
          ...(old.roundingMode !== undefined ? { roundingMode: old.roundingMode } : {}), ...(old.policyTags !== undefined ? { policyTags: old.policyTags } : {}),
        });
        if (kept && Object.keys(kept).length) typeParams.set(a.to.toLowerCase(), kept);
        const renamed = (history.renamed ??= {});
        const first = renamed[ln] ?? ln;
        delete renamed[ln];
        if (first !== a.to.toLowerCase()) renamed[a.to.toLowerCase()] = first;
        cols[i] = { ...cols[i]!, name: a.to };
        // Storage keys data by column name: a rename rewrites the rows.
        rewrite = true;
        break;
      }
      case 'AlterColumn': {
        const i = cols.findIndex((c) => c.name.toLowerCase() === a.name.toLowerCase());
        if (i < 0) {
          if (a.ifExists) break;
          throw sqlError(`Column not found: ${a.name}`, a.loc);
        }
        if (a.action.kind === 'DropNotNull') {
          // data-definition-language (ALTER COLUMN DROP NOT NULL): a column without NOT NULL is an error.
          if (!cols[i]!.required) throw sqlError(`Column ${cols[i]!.name} is already NULLABLE; DROP NOT NULL needs a column with a NOT NULL constraint`, a.loc);
          cols[i] = { ...cols[i]!, required: false };
        } else if (a.action.kind === 'SetDefault') {
          if (curKeys().primaryKey?.columns.some((c) => c.toLowerCase() === cols[i]!.name.toLowerCase())) throw primaryKeyDefault(cols[i]!.name, a.loc);
          checkDefault(s, a.action.expr, cols[i]!.type);
          const field = ((info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? []).find((f) => f.name.toLowerCase() === cols[i]!.name.toLowerCase());
          await checkDefaultValue(s, a.action.expr, cols[i]!, field);
          defaults.set(cols[i]!.name.toLowerCase(), exprText(s.ctx.sql, a.action.expr.loc.offset));
        } else if (a.action.kind === 'DropDefault') defaults.set(cols[i]!.name.toLowerCase(), null);
        else if (a.action.kind === 'SetDataType') {
          const t = retypedCollation(cols[i]!.type, a.action.type, typeFromNode(a.action.type));
          if (!t) throw sqlError(`ALTER TABLE ALTER COLUMN SET DATA TYPE cannot change the collation of column ${cols[i]!.name}`, a.loc);
          keyColumnStays(curKeys(), cols[i]!.name, 'change the type of', a.loc);
          const oldField = ((info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? []).find((f) => f.name.toLowerCase() === cols[i]!.name.toLowerCase());
          const oldText = typeWithParams(cols[i]!.type, oldField);
          if (!setDataTypeAllowed(cols[i]!.type, oldField, t)) {
            throw sqlError(`ALTER TABLE ALTER COLUMN SET DATA TYPE requires that the existing column type (${oldText}) is assignable to the new type (${typeToSql(t)})`, a.loc);
          }
          // The table's partitioning and clustering stay valid: an integer-range partitioning column is an INTEGER
          // (partitioned-tables.md, Limitations) and a clustering column has a type that clusters (clustered-tables.md,
          // Cluster column types). A time-unit partitioning column (DATE, DATETIME, TIMESTAMP) has no conversion at all.
          const pr = info.resource as { rangePartitioning?: { field?: string }; clustering?: { fields?: string[] } };
          const lname = cols[i]!.name.toLowerCase();
          if (pr.rangePartitioning?.field?.toLowerCase() === lname && t.kind !== 'INT64') {
            throw sqlError(`Cannot change the type of column ${cols[i]!.name} to ${typeToSql(t)}: it is the integer-range partitioning column of the table, which must be INT64`, a.loc);
          }
          if (pr.clustering?.fields?.some((f) => f.toLowerCase() === lname) && !clusterable(t)) {
            throw sqlError(`Cannot change the type of column ${cols[i]!.name} to ${typeToSql(t)}: it is a clustering column of the table, and clustering is not supported on ${typeToSql(t)}`, a.loc);
          }
          cols[i] = { ...cols[i]!, type: t };
          // The schema's parameters at every depth from the new type; a STRUCT's fields keep their descriptions.
          const fresh = tableRestField(cols[i]!.name, t, cols[i]!.required);
          const lc = cols[i]!.name.toLowerCase();
          // The column keeps what does not depend on its type: description, default and policy tags (the rewritten
          // schema keeps a field's REST attributes only while its type is unchanged).
          if (oldField?.description !== undefined && !descriptions.has(lc)) descriptions.set(lc, oldField.description);
          if (oldField?.defaultValueExpression !== undefined && !defaults.has(lc)) defaults.set(lc, oldField.defaultValueExpression);
          typeParams.set(lc, {
            ...restParamsOf(fresh), ...(fresh.fields ? { fields: retypedFields(oldField?.fields, fresh.fields) } : {}),
            ...(oldField?.policyTags !== undefined ? { policyTags: oldField.policyTags } : {}),
          });
          rewrite = true;
        } else if (a.action.kind === 'SetOptions') {
          // A view column takes a description only (data-definition-language: view_column_set_options_list).
          if (info.kind === 'VIEW') for (const o of a.action.options) if (o.name.toLowerCase() !== 'description') throw sqlError(`Unknown option ${o.name} for a view column`, o.value.loc);
          checkColumnOptions(a.action.options);
          // description and rounding_mode onto the column's REST field (NULL removes one).
          const fields = await Promise.all(
            ((info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? []).map(async (f) => {
              if (f.name.toLowerCase() !== cols[i]!.name.toLowerCase()) return f;
              const g = { ...f };
              await columnOptionFields(s, a.action.kind === 'SetOptions' ? a.action.options : [], g);
              return g;
            }),
          );
          await cat.patchTableResource(id, { schema: { fields } });
        }
        break;
      }
      case 'SetOptions': {
        checkKindOptions(a.options, info.kind, type.replaceAll('_', ' '));
        if (info.kind === 'TABLE') checkPartitionOptions(a.options, info.resource);
        if (info.kind === 'MATERIALIZED_VIEW') await checkMvOptions(s, a.options, true, typeof info.resource.maxStaleness === 'string');
        const patch = await optionsToResource(s, a.options);
        checkFineGrainedTemp(patch, [...s.tempTables.values()].some((t) => t.projectId === id.projectId && t.datasetId === id.datasetId && t.tableId === id.tableId), a.loc);
        // An option set replaces its old value whole (data-definition-language: SET OPTIONS): labels too, which
        // the resource patch would otherwise merge key by key.
        if (patch.labels) for (const k of Object.keys((info.resource.labels as Record<string, string> | undefined) ?? {})) if (!(k in (patch.labels as object))) (patch.labels as Record<string, unknown>)[k] = null;
        if (info.kind === 'MATERIALIZED_VIEW') patch.materializedView = mvRefreshSettings(patch, info.resource.materializedView as Record<string, unknown> | undefined);
        // partition_expiration_days lives in timePartitioning.expirationMs, as CREATE TABLE puts it (tables.get, TABLE_OPTIONS).
        const days = (patch.options as Record<string, unknown> | undefined)?.['partition_expiration_days'];
        const tp = info.resource.timePartitioning as Record<string, unknown> | undefined;
        if (days !== undefined && tp) {
          const { expirationMs: _old, ...rest } = tp;
          patch.timePartitioning = days === null ? rest : { ...rest, expirationMs: String(Math.round(Number(days) * 86_400_000)) };
        }
        await cat.patchTableResource(id, patch);
        // An expiration time already passed deleted the table (managing-tables.md): nothing is left to alter.
        if (!cat.getTable(id)) return result(type, { ddlOperationPerformed: 'ALTER', ddlTargetTable: id });
        break;
      }
      case 'SetDefaultCollate': {
        // Applies to columns added later only (data-definition-language: ALTER TABLE SET DEFAULT COLLATE).
        checkCollationName(a.collation, a.loc);
        tableDefaultCollation = a.collation;
        await cat.patchTableResource(id, { defaultCollation: a.collation });
        break;
      }
      case 'RenameTo': {
        const to = tableIdOf(s.analyzer(), a.name.length === 1 ? [id.datasetId, a.name[0]!] : a.name, a.loc);
        // A table is renamed within its dataset (data-definition-language: ALTER TABLE RENAME TO).
        if (to.projectId !== id.projectId || to.datasetId !== id.datasetId) throw sqlError(`ALTER TABLE RENAME TO cannot move ${fq(id)} to another dataset (${to.projectId}:${to.datasetId})`, a.loc);
        if (cat.getTable(to)) throw already('Table', fq(to));
        // information-schema-table-constraints: "Tables with primary key constraints cannot be renamed".
        if (curKeys().primaryKey?.columns.length) throw sqlError(`Table ${fq(id)} has a primary key and cannot be renamed`, a.loc);
        // The table (rows, history, metadata) takes the new name in one commit.
        // ALTER TABLE RENAME TO (Details): the table's search and vector indexes are dropped with the rename.
        const indexed = searchIndexesOf(info.resource).length > 0 || vectorIndexesOf(info.resource).length > 0;
        await cat.renameTable(id, to);
        if (indexed) await cat.patchTableResource(to, { searchIndexes: null, vectorIndexes: null });
        // Job.md, JobStatistics2.ddlDestinationTable: the table after ALTER TABLE RENAME TO.
        return result(type, { ddlOperationPerformed: 'ALTER', ddlTargetTable: id, statistics: { ddlDestinationTable: { projectId: to.projectId, datasetId: to.datasetId, tableId: to.tableId } } });
      }
      default:
        break;
    }
  }
  // A table keeps at least one column.
  if (!cols.length) throw sqlError(`ALTER TABLE cannot drop every column of ${fq(id)}; a table needs at least one column`, st.loc);
  if (rewrite) {
    const an = s.analyzer();
    const scan = scanAll(s, info);
    const exprs = cols.map((c, k) => {
      const i = origin[k]!;
      return i < 0 ? literal(c.type, null) : coerce(colRef(scan.columns[i]!), c.type);
    });
    // Rows keep an ingestion-time partitioned table's partition time (the scan's last column).
    const kept = scan.columns.slice(info.columns.length);
    const rows = await s.run(project(an, scan, [...exprs, ...kept.map((c) => colRef(c))], [...cols.map((c) => c.name), ...kept.map((c) => c.name)]));
    await cat.replaceRows(id, rows, cols, { carried: true });
  } else if (cols.length !== info.columns.length || cols.some((c, i) => c !== info.columns[i])) {
    await cat.alterColumns(id, cols);
  }
  if (defaults.size || descriptions.size || typeParams.size) {
    const now = cat.getTable(id)!;
    const fields = ((now.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? now.columns.map((c) => columnToRestField(c.name, c.type, c.required))).map((f0) => {
      const desc = descriptions.get(f0.name.toLowerCase());
      const tp = typeParams.get(f0.name.toLowerCase());
      const { maxLength: _m, precision: _p, scale: _s, ...bare } = f0;
      const f1 = tp === undefined ? f0 : { ...bare, ...tp };
      const f = desc === undefined ? f1 : { ...f1, description: desc };
      const d = defaults.get(f.name.toLowerCase());
      if (d === undefined) return f;
      const { defaultValueExpression: _, ...rest } = f;
      return d === null ? rest : { ...rest, defaultValueExpression: d };
    });
    await cat.patchTableResource(id, { schema: { fields } });
  }
  if (JSON.stringify(history) !== JSON.stringify(info.resource.columnHistory ?? {})) await cat.patchTableResource(id, { columnHistory: history });
  // tables.patch: null removes the last key constraint.
  if (keys) await cat.patchTableResource(id, { tableConstraints: keys.primaryKey || keys.foreignKeys ? keys : null });
  if (droppedColumn) await pruneIndexes(s, id);
  return result(type, { ddlOperationPerformed: 'ALTER', ddlTargetTable: id });
}

/** An ALTER action's words, for the refusal of an action the statement's object does not take. */
function alterActionName(a: A.AlterAction): string {
  switch (a.kind) {
    case 'AddColumn': return 'ADD COLUMN';
    case 'DropColumn': return 'DROP COLUMN';
    case 'RenameColumn': return 'RENAME COLUMN';
    case 'RenameTo': return 'RENAME TO';
    case 'AlterColumn': return 'ALTER COLUMN';
    case 'AddConstraint': return 'ADD CONSTRAINT';
    case 'DropConstraint': return 'DROP CONSTRAINT';
    case 'Replica': return `${a.op} REPLICA`;
    case 'SetOptions': return 'SET OPTIONS';
    case 'SetDefaultCollate': return 'SET DEFAULT COLLATE';
  }
}
