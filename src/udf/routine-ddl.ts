// CREATE FUNCTION / CREATE PROCEDURE text for a routine resource that came
// through the REST API (routines.insert / update) rather than DDL: the analyzer
// resolves every routine, and CALL every procedure, from its DDL, so one is
// written from the resource's fields. INFORMATION_SCHEMA.ROUTINES shows it as
// the routine's `ddl` ("the DDL statement that can be used to create the routine").

interface RestType {
  typeKind?: string;
  arrayElementType?: RestType;
  structType?: { fields?: { name?: string; type?: RestType }[] };
  rangeElementType?: RestType;
}

interface RestTableType {
  columns?: { name?: string; type?: RestType }[];
}

interface RestArgument {
  name?: string;
  argumentKind?: string;
  mode?: string;
  dataType?: RestType;
  tableType?: RestTableType;
  isAggregate?: boolean;
}

/** StandardSqlTableType as TABLE<name type, ...> (a FIXED_TABLE argument, a returnTableType). */
function tableText(t: RestTableType | undefined): string | undefined {
  const cols = (t?.columns ?? []).map((c) => {
    const ct = typeText(c.type);
    return c.name && ct ? `${quoteIdent(c.name)} ${ct}` : undefined;
  });
  return cols.length && cols.every((c) => c) ? `TABLE<${cols.join(', ')}>` : undefined;
}

const quoteIdent = (s: string): string => '`' + s.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
const quoteString = (s: string): string => "'" + s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n') + "'";

function typeText(t: RestType | undefined): string | undefined {
  if (!t?.typeKind) return undefined;
  switch (t.typeKind) {
    case 'ARRAY': {
      const e = typeText(t.arrayElementType);
      return e && `ARRAY<${e}>`;
    }
    case 'STRUCT': {
      const fields = (t.structType?.fields ?? []).map((f) => {
        const ft = typeText(f.type);
        return ft && (f.name ? `${quoteIdent(f.name)} ${ft}` : ft);
      });
      return fields.every((f) => f) ? `STRUCT<${fields.join(', ')}>` : undefined;
    }
    case 'RANGE': {
      const e = typeText(t.rangeElementType);
      return e && `RANGE<${e}>`;
    }
    default:
      return /^[A-Z0-9_]+$/.test(t.typeKind) ? t.typeKind : undefined;
  }
}

/** A body as a raw string literal that no character of it can end. */
function rawString(body: string): string {
  if (!body.includes('"""') && !body.endsWith('"')) return `r"""${body}"""`;
  if (!body.includes("'''") && !body.endsWith("'")) return `r'''${body}'''`;
  return quoteString(body);
}

/**
 * A SQL procedure's DDL. definitionBody is the procedure's statements (routines.md: "the body of the routine"); a
 * procedure made by CREATE PROCEDURE shows its BEGIN ... END block there, which runs the same as a block inside
 * another. The last statement may lack its semicolon; one on a line of its own ends it after a trailing comment too.
 */
function procedureDdl(name: string, args: readonly RestArgument[], body: string): string | undefined {
  const params: string[] = [];
  for (const a of args) {
    const t = a.argumentKind === undefined || a.argumentKind === 'FIXED_TYPE' || a.argumentKind === 'ARGUMENT_KIND_UNSPECIFIED' ? typeText(a.dataType) : undefined;
    if (!a.name || !t) return undefined;
    // Mode: IN unless the resource says OUT or INOUT (CREATE PROCEDURE's default).
    const mode = a.mode === 'OUT' || a.mode === 'INOUT' ? a.mode : 'IN';
    params.push(`${mode} ${quoteIdent(a.name)} ${t}`);
  }
  const ended = /;\s*$/.test(body) ? '' : '\n;';
  return `CREATE PROCEDURE ${name}(${params.join(', ')})\nBEGIN\n${body}${ended}\nEND`;
}

/** The DDL of a REST-made scalar, aggregate or table function or SQL procedure, or undefined when the resource is not one. */
export function routineDdl(r: Record<string, unknown>): string | undefined {
  const ref = r['routineReference'] as { projectId?: string; datasetId?: string; routineId?: string } | undefined;
  const body = r['definitionBody'];
  if (!ref?.routineId || typeof body !== 'string') return undefined;
  const kind = String(r['routineType'] ?? 'SCALAR_FUNCTION');
  const language = String(r['language'] ?? 'SQL').toUpperCase();
  const qualified = quoteIdent([ref.projectId, ref.datasetId, ref.routineId].filter((x) => x).join('.'));
  if (kind === 'PROCEDURE') return language === 'SQL' ? procedureDdl(qualified, (r['arguments'] as RestArgument[] | undefined) ?? [], body) : undefined;
  const args: string[] = [];
  for (const a of (r['arguments'] as RestArgument[] | undefined) ?? []) {
    if (!a.name) return undefined;
    const t =
      a.argumentKind === 'ANY_TYPE' ? 'ANY TYPE'
      : a.argumentKind === 'ANY_TABLE' ? 'ANY TABLE'
      : a.argumentKind === 'FIXED_TABLE' ? tableText(a.tableType)
      : a.dataType?.typeKind === 'TABLE' ? undefined
      : typeText(a.dataType);
    if (!t) return undefined;
    args.push(`${quoteIdent(a.name)} ${t}${kind === 'AGGREGATE_FUNCTION' && a.isAggregate === false ? ' NOT AGGREGATE' : ''}`);
  }
  const head = `CREATE ${kind === 'AGGREGATE_FUNCTION' ? 'AGGREGATE ' : kind === 'TABLE_VALUED_FUNCTION' ? 'TABLE ' : ''}FUNCTION ${qualified}(${args.join(', ')})`;
  const returns = typeText(r['returnType'] as RestType | undefined);
  const determinism = r['determinismLevel'] === 'DETERMINISTIC' ? ' DETERMINISTIC' : r['determinismLevel'] === 'NOT_DETERMINISTIC' ? ' NOT DETERMINISTIC' : '';
  if (language === 'SQL') {
    // returnTableType: the body's columns are cast to it at query time (routines.md, returnTableType).
    const table = tableText(r['returnTableType'] as RestTableType | undefined);
    if (kind === 'TABLE_VALUED_FUNCTION') return `${head}${table ? ` RETURNS ${table}` : ''} AS ${body}`;
    return `${head}${returns ? ` RETURNS ${returns}` : ''} AS (${body})`;
  }
  const options: string[] = [];
  if (language === 'JAVASCRIPT') {
    const libs = (r['importedLibraries'] as string[] | undefined) ?? [];
    if (libs.length) options.push(`library = [${libs.map(quoteString).join(', ')}]`);
  } else if (language === 'PYTHON') {
    const py = (r['pythonOptions'] as { entryPoint?: string; packages?: string[] } | undefined) ?? {};
    if (py.entryPoint) options.push(`entry_point = ${quoteString(py.entryPoint)}`);
    // The resource has no runtime_version field; the one runtime the emulator runs is the machine's python3.
    options.push(`runtime_version = 'python-3.11'`);
    if (py.packages?.length) options.push(`packages = [${py.packages.map(quoteString).join(', ')}]`);
  } else return undefined;
  const lang = language === 'JAVASCRIPT' ? 'js' : 'python';
  return `${head}${returns ? ` RETURNS ${returns}` : ''}${determinism} LANGUAGE ${lang}${options.length ? ` OPTIONS (${options.join(', ')})` : ''} AS ${rawString(body)}`;
}

/** A stored routine's DDL: the CREATE statement that made it, or for a REST-made one the statement its fields give. */
export function ddlOfRoutine(r: Record<string, unknown> | undefined): string | undefined {
  if (!r) return undefined;
  const made = r['ddl'];
  return typeof made === 'string' && made ? made : routineDdl(r);
}
