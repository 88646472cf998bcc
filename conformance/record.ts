// Reference-oracle recorder: evaluates a project case (conformance/cases/*.yaml)
// with the GoogleSQL reference implementation and writes the expected answer
// into the case file.
//
//   npm install --no-save @fivetrandevelopers/zetasql   # dev-only, not a dependency
//   node --import tsx conformance/record.ts conformance/cases/<case>.yaml [...]
//
// Supported setup steps: `dataset`, `table` (with schema) and `rows`; query
// the tables by bare name with `default_dataset` set (the reference's catalog
// serves contents under bare names only). Default time zone: UTC.

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { connect, languageOptions, restField, typeProtoOfField, valueProto, wireOf, type Call, type Column, type EvalResponse, type ValueProto, type YamlField } from './lib/reference.js';
import { hasTopLevelOrderBy } from './sources/yamlcases.js';
import type { YamlParam } from './lib/params.js';

interface CaseDoc {
  name?: string;
  setup?: Array<Record<string, unknown>>;
  query?: string;
  query_parameters?: YamlParam[];
  default_dataset?: string;
}

async function recordOne(file: string, call: Call, lang: Record<string, unknown>, version: string): Promise<string> {
  const text = readFileSync(file, 'utf8');
  const doc = parseDocument(text);
  const c = doc.toJS() as CaseDoc;
  if (!c.query) throw new Error(`${file}: no query`);
  const tables = new Map<string, { dataset: string; id: string; cols: Column[]; rows: ValueProto[][] }>();
  for (const step of c.setup ?? []) {
    if ('dataset' in step) continue;
    if ('table' in step) {
      const t = step['table'] as { dataset: string; id: string; schema: YamlField[] };
      tables.set(`${t.dataset}.${t.id}`, { dataset: t.dataset, id: t.id, cols: t.schema.map((f) => ({ name: f.name, type: typeProtoOfField(f) })), rows: [] });
      continue;
    }
    if ('rows' in step) {
      const r = step['rows'] as { dataset: string; table: string; rows: Array<Record<string, unknown>> };
      const t = tables.get(`${r.dataset}.${r.table}`);
      if (!t) throw new Error(`${file}: rows for unknown table ${r.dataset}.${r.table}`);
      for (const row of r.rows) t.rows.push(t.cols.map((col) => valueProto(col.type, row[col.name])));
      continue;
    }
    throw new Error(`${file}: recorder supports setup steps dataset/table/rows only, not ${Object.keys(step)[0]}`);
  }
  // Tables are reachable as `t` (with default_dataset) and as `ds.t`.
  const simpleTable = (name: string, t: { cols: Column[] }) => ({ name, column: t.cols.map((col) => ({ name: col.name, type: col.type })) });
  const byDataset = new Map<string, Array<ReturnType<typeof simpleTable>>>();
  const top: Array<ReturnType<typeof simpleTable>> = [];
  const content: Record<string, unknown> = {};
  for (const t of tables.values()) {
    if (!byDataset.has(t.dataset)) byDataset.set(t.dataset, []);
    byDataset.get(t.dataset)!.push(simpleTable(t.id, t));
    if (!c.default_dataset || c.default_dataset === t.dataset) top.push(simpleTable(t.id, t));
    content[t.id] = { table_data: { row: t.rows.map((cells) => ({ cell: cells })) } };
  }
  const params = (c.query_parameters ?? []).map((p) => {
    const f: YamlField = p.type.toUpperCase() === 'ARRAY'
      ? { name: p.name ?? '', type: p.array_element_type ?? 'STRING', mode: 'REPEATED' }
      : p.type.toUpperCase() === 'STRUCT'
        ? { name: p.name ?? '', type: 'STRUCT', fields: (p.struct_fields ?? []).map((sf) => ({ name: sf.name, type: sf.type })) }
        : { name: p.name ?? '', type: p.type };
    const type = typeProtoOfField(f);
    const raw = p.type.toUpperCase() === 'ARRAY' ? p.array_values : p.type.toUpperCase() === 'STRUCT' ? p.struct_values : p.value;
    return { name: p.name ?? '', type, value: valueProto(type, raw) };
  });
  const req = {
    sql: c.query,
    options: {
      language_options: lang,
      default_timezone: 'UTC',
      query_parameters: params.map((p) => ({ name: p.name, type: p.type })),
    },
    simple_catalog: {
      name: 'catalog',
      table: top,
      catalog: [...byDataset.entries()].map(([name, ts]) => ({ name, table: ts })),
      builtin_function_options: { language_options: lang },
    },
    table_content: content,
    params: params.map((p) => ({ name: p.name, value: p.value })),
  };
  let expected: Record<string, unknown>;
  let summary: string;
  try {
    const res = await call<EvalResponse>('EvaluateQuery', req);
    const cols = res.prepared?.columns ?? [];
    const rows = (res.content?.table_data?.row ?? []).map((r) => {
      const o: Record<string, unknown> = {};
      cols.forEach((col, i) => { o[col.name] = wireOf(col.type, r.cell?.[i] ?? {}); });
      return o;
    });
    expected = {
      match: hasTopLevelOrderBy(c.query) ? 'ordered' : 'unordered',
      schema: cols.map((col, i) => restField(col.name || `f${i}_`, col.type)),
      rows,
    };
    summary = `${rows.length} row(s)`;
  } catch (e) {
    const msg = (e as { details?: string }).details ?? (e as Error).message;
    expected = { error: { reference_message: msg } };
    summary = `error: ${msg}`;
  }
  doc.set('expected', doc.createNode(expected));
  doc.set('recorded_with', `@fivetrandevelopers/zetasql ${version} (GoogleSQL reference implementation, default time zone UTC)`);
  writeFileSync(file, doc.toString({ lineWidth: 0 }));
  return summary;
}

async function main(): Promise<void> {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node --import tsx conformance/record.ts <case.yaml>...');
    process.exit(2);
  }
  const { call, stop, version } = await connect();
  let failed = 0;
  try {
    const lang = await languageOptions(call);
    for (const f of files) {
      try {
        console.log(`${f}: ${await recordOne(path.resolve(f), call, lang, version)}`);
      } catch (e) {
        failed++;
        console.error(`${f}: ${(e as Error).message}`);
      }
    }
  } finally {
    stop();
  }
  process.exit(failed ? 1 : 0);
}

void main();
