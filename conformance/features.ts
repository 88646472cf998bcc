// Which GoogleSQL language features the BigQuery dialect has. Every
// `required_features` name that occurs in the compliance files is listed; a
// case (or file default, or prepare block) requiring a feature marked
// unsupported is skipped with that feature named as the reason. A unit test
// checks that the table covers every name in the files.
//
// `forbidden_features=X` means "run only when X is off": BigQuery enables none
// of the DISALLOW_*/DISABLE_* switches, so such cases run.
//
// Pseudo-features (lower-case prefix) cover requirements the files express
// other than through required_features: a case whose expected result has a
// PROTO/ENUM/UUID column, or an option such as primary_key_mode.

export interface FeatureInfo {
  supported: boolean;
  why: string;
  /** For a feature BigQuery lacks: the BigQuery reference page of that area (where it would be documented). */
  link?: string;
}

export const FEATURES: Record<string, FeatureInfo> = {
  // ---- supported by BigQuery ----
  ADDITIONAL_STRING_FUNCTIONS: { supported: true, why: 'INSTR, SOUNDEX, TRANSLATE, INITCAP ... are BigQuery string functions' },
  ALLOW_CONSECUTIVE_ON: { supported: true, why: 'BigQuery accepts consecutive ON clauses (a JOIN b JOIN c ON .. ON ..)' },
  ANALYTIC_FUNCTIONS: { supported: true, why: 'window functions' },
  ANNOTATION_FRAMEWORK: { supported: true, why: 'carrier of collation annotations, which BigQuery has' },
  BIGNUMERIC_TYPE: { supported: true, why: 'BIGNUMERIC type' },
  BY_NAME: { supported: true, why: 'UNION ALL BY NAME set operations' },
  CHAINED_FUNCTION_CALLS: { supported: true, why: 'chained function-call syntax (expr).FUNC()' },
  CIVIL_TIME: { supported: true, why: 'DATETIME and TIME types' },
  COLLATION_SUPPORT: { supported: true, why: "COLLATE('...', 'und:ci') and collated columns" },
  CORRESPONDING: { supported: true, why: 'set operations with CORRESPONDING' },
  CORRESPONDING_FULL: { supported: true, why: 'FULL/LEFT OUTER set operations with CORRESPONDING / BY NAME' },
  CREATE_TABLE_FUNCTION: { supported: true, why: 'CREATE TABLE FUNCTION' },
  DATE_TIME_CONSTRUCTORS: { supported: true, why: 'DATE(y,m,d), TIME(h,m,s), DATETIME(...) constructors' },
  DML_UPDATE_WITH_JOIN: { supported: true, why: 'UPDATE ... FROM' },
  ENCRYPTION: { supported: true, why: 'AEAD.* and KEYS.* functions' },
  ENFORCE_MICROS_MODE_IN_INTERVAL_TYPE: { supported: true, why: 'BigQuery INTERVAL has microsecond precision' },
  FORMAT_IN_CAST: { supported: true, why: 'CAST(... FORMAT ...)' },
  GROUPING_BUILTIN: { supported: true, why: 'GROUPING() function' },
  GROUPING_SETS: { supported: true, why: 'GROUP BY GROUPING SETS / CUBE' },
  GROUP_BY_ALL: { supported: true, why: 'GROUP BY ALL' },
  GROUP_BY_ARRAY: { supported: true, why: 'ARRAY is a groupable type in BigQuery' },
  GROUP_BY_ROLLUP: { supported: true, why: 'GROUP BY ROLLUP' },
  GROUP_BY_STRUCT: { supported: true, why: 'STRUCT is a groupable type in BigQuery' },
  HAVING_IN_AGGREGATE: { supported: true, why: 'ANY_VALUE(x HAVING MAX y)' },
  INTERVAL_TYPE: { supported: true, why: 'INTERVAL type' },
  IS_DISTINCT: { supported: true, why: 'IS [NOT] DISTINCT FROM' },
  JSON_ARRAY_FUNCTIONS: { supported: true, why: 'JSON_QUERY_ARRAY / JSON_VALUE_ARRAY' },
  JSON_CONSTRUCTOR_FUNCTIONS: { supported: true, why: 'JSON_ARRAY / JSON_OBJECT' },
  JSON_KEYS_FUNCTION: { supported: true, why: 'JSON_KEYS' },
  JSON_MUTATOR_FUNCTIONS: { supported: true, why: 'JSON_SET / JSON_REMOVE / JSON_ARRAY_APPEND ...' },
  JSON_FLATTEN_FUNCTION: { supported: true, why: 'JSON_FLATTEN (a Preview function in BigQuery\'s JSON functions reference)' },
  JSON_QUERY_LAX: { supported: true, why: "JSONPath 'lax' mode in JSON_QUERY" },
  JSON_STRICT_NUMBER_PARSING: { supported: true, why: 'BigQuery refuses lossy number conversion to JSON unless asked (stringify_wide_numbers)' },
  JSON_TYPE: { supported: true, why: 'JSON type' },
  JSON_VALUE_EXTRACTION_FUNCTIONS: { supported: true, why: 'INT64(json), BOOL(json), STRING(json), LAX_* ...' },
  LIKE_ANY_SOME_ALL: { supported: true, why: 'quantified LIKE ANY/SOME/ALL (pattern list)' },
  LIKE_ANY_SOME_ALL_ARRAY: { supported: true, why: 'quantified LIKE ... UNNEST(array)' },
  LIKE_ANY_SOME_ALL_SUBQUERY: { supported: true, why: 'quantified LIKE ... (subquery): pattern_subquery of the operators reference (quantified LIKE operator)' },
  LIMIT_IN_AGGREGATE: { supported: true, why: 'ARRAY_AGG(x LIMIT n)' },
  LIMIT_OFFSET_EXPRESSIONS: { supported: true, why: 'LIMIT/OFFSET with query parameters and constant expressions' },
  MATCH_RECOGNIZE: { supported: true, why: 'MATCH_RECOGNIZE clause (BigQuery preview)' },
  MULTIWAY_UNNEST: { supported: true, why: 'UNNEST of several arrays (peer fixture array_struct/multi_array_unnest_pad relies on it)' },
  NAMED_ARGUMENTS: { supported: true, why: 'named arguments (name => value) of built-in functions and TVFs' },
  NULLS_FIRST_LAST_IN_ORDER_BY: { supported: true, why: 'ORDER BY ... NULLS FIRST/LAST' },
  NULL_HANDLING_MODIFIER_IN_AGGREGATE: { supported: true, why: 'ARRAY_AGG(x IGNORE NULLS)' },
  NULL_HANDLING_MODIFIER_IN_ANALYTIC: { supported: true, why: 'FIRST_VALUE(x IGNORE NULLS) OVER ...' },
  NUMERIC_TYPE: { supported: true, why: 'NUMERIC type' },
  ORDER_BY_COLLATE: { supported: true, why: 'ORDER BY expr COLLATE ...' },
  ORDER_BY_IN_AGGREGATE: { supported: true, why: 'ARRAY_AGG / STRING_AGG with ORDER BY' },
  PARAMETERIZED_TYPES: { supported: true, why: 'STRING(L), BYTES(L), NUMERIC(P,S)' },
  PIPES: { supported: true, why: 'pipe query syntax |>' },
  PIPE_WITH: { supported: true, why: 'pipe WITH operator' },
  PIVOT: { supported: true, why: 'PIVOT' },
  QUALIFY: { supported: true, why: 'QUALIFY' },
  RANGE_TYPE: { supported: true, why: 'RANGE<DATE|DATETIME|TIMESTAMP>' },
  RELAXED_WITH_RECURSIVE: { supported: true, why: 'WITH RECURSIVE may contain non-recursive CTEs' },
  SAFE_FUNCTION_CALL: { supported: true, why: 'SAFE. prefix' },
  SELECT_STAR_EXCEPT_REPLACE: { supported: true, why: 'SELECT * EXCEPT / REPLACE' },
  TABLE_VALUED_FUNCTIONS: { supported: true, why: 'table functions' },
  TEMPLATE_FUNCTIONS: { supported: true, why: 'SQL UDF arguments of ANY TYPE' },
  TIME_BUCKET_FUNCTIONS: { supported: true, why: 'DATE_BUCKET / DATETIME_BUCKET / TIMESTAMP_BUCKET' },
  UNPIVOT: { supported: true, why: 'UNPIVOT' },
  WITH_EXPRESSION: { supported: true, why: 'WITH(...) expression' },
  WITH_ON_SUBQUERY: { supported: true, why: 'WITH inside subqueries' },
  WITH_RECURSIVE: { supported: true, why: 'WITH RECURSIVE' },

  // ---- not in the BigQuery dialect ----
  CAST_DIFFERENT_ARRAY_TYPES: {
    supported: false,
    why: 'conversion_functions.md, CAST AS ARRAY: an ARRAY casts only to the exact same array type (no element-wise casts)',
    link: 'https://cloud.google.com/bigquery/docs/reference/standard-sql/conversion_functions#cast_array',
  },
  ADDITIONAL_DATE_TIME_FUNCTIONS: { supported: false, why: 'NEXT_DAY and the other added date functions are not BigQuery functions' },
  AGGREGATE_FILTERING: { supported: false, why: 'aggregate WHERE/HAVING filters (COUNT(* WHERE ..)) are not BigQuery syntax' },
  ALIASES_FOR_STRING_AND_DATE_FUNCTIONS: { supported: false, why: 'LCASE/UCASE and similar aliases are not BigQuery functions' },
  ANALYSIS_CONSTANT_INTERVAL_CONSTRUCTOR: { supported: false, why: 'needs named constants (CREATE CONSTANT), which BigQuery lacks' },
  ARRAY_AGGREGATION_FUNCTIONS: { supported: false, why: 'ARRAY_SUM/ARRAY_AVG are not BigQuery functions' },
  ARRAY_ELEMENTS_WITH_SET: { supported: false, why: 'nested DML assigning array elements; BigQuery has no nested DML' },
  ARRAY_EQUALITY: { supported: false, why: 'BigQuery cannot compare ARRAYs with =' },
  ARRAY_FIND_FUNCTIONS: { supported: false, why: 'ARRAY_FIND* (lambda-based) are not BigQuery functions' },
  ARRAY_ORDERING: { supported: false, why: 'BigQuery cannot order ARRAY values (ORDER BY / MIN / MAX on arrays)' },
  BITWISE_AGGREGATE_BYTES_SIGNATURES: { supported: false, why: 'BIT_AND/BIT_OR/BIT_XOR take INT64 only in BigQuery' },
  COLLATION_IN_EXPLICIT_CAST: { supported: false, why: 'CAST(... AS STRING COLLATE ...) is not BigQuery syntax' },
  CONCAT_MIXED_TYPES: {
    supported: false,
    why: "BigQuery's || takes STRING, BYTES or ARRAY operands only (operators page: concatenation operator); its CONCAT does take values castable to STRING (string_functions: CONCAT('Summer', ' ', 1923)), and so does the emulator's (test/sql/fn-string.sqltest), but this one switch turns on both, so its cases are skipped",
  },
  CORRELATED_REFS_IN_NESTED_DML: { supported: false, why: 'nested DML' },
  DISABLE_ARRAY_MIN_AND_MAX: { supported: false, why: 'engine switch BigQuery does not set' },
  DISALLOW_GROUP_BY_FLOAT: { supported: false, why: 'BigQuery allows GROUP BY FLOAT64; switch not set' },
  DISALLOW_NULL_PRIMARY_KEYS: { supported: false, why: 'engine switch BigQuery does not set' },
  DISALLOW_PRIMARY_KEY_UPDATES: { supported: false, why: 'engine switch BigQuery does not set' },
  ENFORCE_CONDITIONAL_EVALUATION: { supported: false, why: 'needs aggregate filtering; BigQuery gives no such evaluation guarantee' },
  EXTENDED_DATE_TIME_SIGNATURES: { supported: false, why: 'DATE_ADD(DATE, INTERVAL n HOUR) etc.: BigQuery DATE_ADD takes DAY..YEAR only' },
  FIRST_AND_LAST_N: { supported: false, why: 'ARRAY_FIRST_N / ARRAY_LAST_N are not BigQuery functions' },
  IMPLICIT_COERCION_STRING_LITERAL_TO_BYTES: { supported: false, why: 'BigQuery does not coerce STRING literals to BYTES' },
  INLINE_LAMBDA_ARGUMENT: { supported: false, why: 'lambda arguments (x -> ...) are not BigQuery syntax' },
  LATERAL_COLUMN_REFERENCES: { supported: false, why: 'select-list aliases referenced in the same SELECT' },
  LATERAL_JOIN: { supported: false, why: 'LATERAL joins' },
  LIMIT_ALL: { supported: false, why: 'LIMIT ALL' },
  LITERAL_CONCATENATION: { supported: false, why: "adjacent literal concatenation ('a' 'b')" },
  MULTILEVEL_AGGREGATION: { supported: false, why: 'multi-level aggregation (GROUP BY inside aggregate calls)' },
  NESTED_UPDATE_DELETE_WITH_OFFSET: { supported: false, why: 'nested DML' },
  PIPE_ASSERT: { supported: false, why: 'pipe ASSERT operator is not in BigQuery' },
  PIPE_CALL_INPUT_TABLE: { supported: false, why: 'INPUT TABLE in pipe CALL is not in BigQuery' },
  PIPE_DESCRIBE: { supported: false, why: 'pipe DESCRIBE is not in BigQuery' },
  PIPE_IF: { supported: false, why: 'pipe IF is not in BigQuery' },
  PIPE_NAMED_WINDOWS: { supported: false, why: 'WINDOW clause inside pipe SELECT is not in BigQuery' },
  PIPE_STATIC_DESCRIBE: { supported: false, why: 'pipe STATIC_DESCRIBE is not in BigQuery' },
  RADIANS_DEGREES_FUNCTIONS: { supported: false, why: 'RADIANS/DEGREES are not BigQuery functions' },
  REPLACE_FIELDS: { supported: false, why: 'REPLACE_FIELDS() (proto-oriented) is not a BigQuery function' },
  REPLACE_FIELDS_ALLOW_MULTI_ONEOF: { supported: false, why: 'protos' },
  SAFE_FUNCTION_CALL_WITH_LAMBDA_ARGS: { supported: false, why: 'lambda arguments' },
  SINGLE_TABLE_NAME_ARRAY_PATH: { supported: false, why: 'FROM table.array_column without a comma join' },
  STRATIFIED_RESERVOIR_TABLESAMPLE: { supported: false, why: 'TABLESAMPLE RESERVOIR ... PARTITION BY' },
  TABLESAMPLE: {
    supported: false,
    why: 'every case samples with BERNOULLI or RESERVOIR (ROWS) and samples subqueries or pipe inputs; the service has only TABLESAMPLE SYSTEM (n PERCENT) on a table',
  },
  TIMESTAMP_NANOS: { supported: false, why: 'BigQuery TIMESTAMP has microsecond precision' },
  TYPEOF_FUNCTION: { supported: false, why: 'TYPEOF is not a BigQuery function' },
  UNNEST_AND_FLATTEN_ARRAYS: { supported: true, why: 'FLATTEN and the array elements field access operator (array.field) in FLATTEN/UNNEST, in BigQuery\'s array functions and operators references' },
  UUID_TYPE: { supported: false, why: 'BigQuery has no UUID type' },
  WITH_RECURSIVE_DEPTH_MODIFIER: { supported: false, why: 'WITH RECURSIVE ... WITH DEPTH' },

  // ---- pseudo-features (derived by the harness, not named in the files) ----
  'type:PROTO': { supported: false, why: 'PROTO values in the query or result; BigQuery has no protocol buffer types' },
  'type:ENUM': { supported: false, why: 'ENUM values; BigQuery has no enum types' },
  'type:UUID': { supported: false, why: 'UUID values; BigQuery has no UUID type' },
  'type:INT32': { supported: false, why: 'INT32 named in the query, or DML on an INT32 column; BigQuery has INT64 only' },
  'type:UINT32': { supported: false, why: 'UINT32 named in the query, or DML on a UINT32 column; BigQuery has INT64 only' },
  'type:UINT64': { supported: false, why: 'UINT64 (named in the query, or a value beyond the INT64 range in the data or result); BigQuery has INT64 only' },
  'type:DOUBLE': { supported: false, why: 'type name DOUBLE in the query; BigQuery spells it FLOAT64 (DOUBLE: "Type not found")' },
  'type:FLOAT32': { supported: false, why: 'FLOAT (32-bit) named in the query, or DML on a FLOAT column; BigQuery has FLOAT64 only' },
  'type:EMPTY_STRUCT': { supported: false, why: 'a table column of type STRUCT<>; BigQuery tables cannot hold an empty RECORD ("Field ... is type RECORD but has no schema")' },
  'array_null_elements': { supported: false, why: 'table data with NULL elements in ARRAY columns; BigQuery arrays cannot hold NULL' },
  'table_null_arrays': { supported: false, why: "a test of IS [NOT] NULL on an ARRAY column whose prepared rows hold a NULL array; a BigQuery table cannot hold a NULL ARRAY (it is written as []), so the reference's NULL row does not exist there" },
  'value_tables': { supported: false, why: 'value tables of a scalar (CREATE TABLE ... AS SELECT AS VALUE); BigQuery tables always have columns' },
  'recursive_with_placement': { supported: false, why: "WITH RECURSIVE in a subquery, a WITH inside WITH RECURSIVE, or UNION DISTINCT as a recursive CTE's union; BigQuery allows WITH RECURSIVE only at the top level of a query, no WITH inside it, and UNION ALL only (query-syntax.md, CTE rules and constraints)", link: 'https://cloud.google.com/bigquery/docs/reference/standard-sql/query-syntax#cte_rules_and_constraints' },
  'set_op_all_non_union': { supported: false, why: 'INTERSECT ALL or EXCEPT ALL; BigQuery supports the ALL modifier on UNION only (query-syntax.md, Set operators), the reference on all three', link: 'https://cloud.google.com/bigquery/docs/reference/standard-sql/query-syntax#set_operators' },
  'window_frame_without_order': { supported: false, why: 'a ROWS window frame that is not fully unbounded, without ORDER BY; BigQuery requires ORDER BY with a frame clause except for fully unbounded windows (window-function-calls.md, window specification), the reference runs it', link: 'https://cloud.google.com/bigquery/docs/reference/standard-sql/window-function-calls#def_window_spec' },
  'tvf_call_as_table_argument': { supported: false, why: 'a table-valued function call as a TABLE argument (TABLE f()); a table function\'s table parameter (data-definition-language.md, CREATE TABLE FUNCTION) takes the TABLE keyword before the name of a table (table-functions.md, Table parameters), the reference also a TVF call', link: 'https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language#create_table_function_statement' },
  'pivot_multi_argument_aggregate': { supported: false, why: 'a PIVOT aggregate of two columns (CORR, COVAR_SAMP); BigQuery allows only aggregate functions that take one argument in PIVOT (query-syntax.md, PIVOT operator, rules for aggregate_function_call), the reference more', link: 'https://cloud.google.com/bigquery/docs/reference/standard-sql/query-syntax#pivot_operator' },
  'named_constants': { supported: false, why: 'CREATE CONSTANT; BigQuery has no named constants' },
  'primary_key_mode:first_column_is_primary_key': { supported: false, why: 'BigQuery does not enforce primary keys' },
  // feature-off variants (see FEATURE_OFF_CASES)
  'feature_off:JSON_STRICT_NUMBER_PARSING': { supported: false, why: 'expects lossy NUMERIC/BIGNUMERIC to JSON conversion; BigQuery refuses it (TO_JSON docs; the _strict twin expects the error)' },
  'feature_off:JSON_QUERY_LAX': { supported: false, why: "expects 'lax' JSONPaths refused; BigQuery's JSON_QUERY documents lax and lax recursive modes" },
};

// The reference page that shows each missing feature's area without it.
const REF = 'https://cloud.google.com/bigquery/docs/reference/standard-sql/';
const LINKS: Record<string, string> = {
  ADDITIONAL_DATE_TIME_FUNCTIONS: 'date_functions',
  AGGREGATE_FILTERING: 'aggregate-function-calls',
  ALIASES_FOR_STRING_AND_DATE_FUNCTIONS: 'string_functions',
  ANALYSIS_CONSTANT_INTERVAL_CONSTRUCTOR: 'data-definition-language',
  ARRAY_AGGREGATION_FUNCTIONS: 'array_functions',
  ARRAY_ELEMENTS_WITH_SET: 'dml-syntax#update_statement',
  ARRAY_EQUALITY: 'operators#comparison_operators',
  ARRAY_FIND_FUNCTIONS: 'array_functions',
  ARRAY_ORDERING: 'data-types#orderable_data_types',
  BITWISE_AGGREGATE_BYTES_SIGNATURES: 'aggregate_functions#bit_and',
  COLLATION_IN_EXPLICIT_CAST: 'conversion_functions#cast',
  CONCAT_MIXED_TYPES: 'operators#concatenation_operator',
  CORRELATED_REFS_IN_NESTED_DML: 'dml-syntax',
  DISABLE_ARRAY_MIN_AND_MAX: 'aggregate_functions#max',
  DISALLOW_GROUP_BY_FLOAT: 'data-types#groupable_data_types',
  DISALLOW_NULL_PRIMARY_KEYS: 'data-definition-language#primary_key',
  DISALLOW_PRIMARY_KEY_UPDATES: 'data-definition-language#primary_key',
  ENFORCE_CONDITIONAL_EVALUATION: 'aggregate-function-calls',
  EXTENDED_DATE_TIME_SIGNATURES: 'date_functions#date_add',
  FIRST_AND_LAST_N: 'array_functions',
  IMPLICIT_COERCION_STRING_LITERAL_TO_BYTES: 'conversion_rules#coercion',
  INLINE_LAMBDA_ARGUMENT: 'functions-reference',
  LATERAL_COLUMN_REFERENCES: 'query-syntax#select_list',
  LATERAL_JOIN: 'query-syntax#join_types',
  LIMIT_ALL: 'query-syntax#limit_and_offset_clause',
  LITERAL_CONCATENATION: 'lexical#string_and_bytes_literals',
  MULTILEVEL_AGGREGATION: 'aggregate-function-calls',
  NESTED_UPDATE_DELETE_WITH_OFFSET: 'dml-syntax#update_statement',
  PIPE_ASSERT: 'pipe-syntax#pipe_operator_list',
  PIPE_CALL_INPUT_TABLE: 'pipe-syntax#call_pipe_operator',
  PIPE_DESCRIBE: 'pipe-syntax#pipe_operator_list',
  PIPE_IF: 'pipe-syntax#pipe_operator_list',
  PIPE_NAMED_WINDOWS: 'pipe-syntax#select_pipe_operator',
  PIPE_STATIC_DESCRIBE: 'pipe-syntax#pipe_operator_list',
  RADIANS_DEGREES_FUNCTIONS: 'mathematical_functions',
  REPLACE_FIELDS: 'functions-all',
  REPLACE_FIELDS_ALLOW_MULTI_ONEOF: 'functions-all',
  SAFE_FUNCTION_CALL_WITH_LAMBDA_ARGS: 'functions-reference#safe_prefix',
  SINGLE_TABLE_NAME_ARRAY_PATH: 'query-syntax#unnest_operator',
  STRATIFIED_RESERVOIR_TABLESAMPLE: 'query-syntax#tablesample_operator',
  TABLESAMPLE: 'query-syntax#tablesample_operator',
  TIMESTAMP_NANOS: 'data-types#timestamp_type',
  TYPEOF_FUNCTION: 'functions-all',
  UUID_TYPE: 'data-types',
  WITH_RECURSIVE_DEPTH_MODIFIER: 'query-syntax#with_clause',
  'type:PROTO': 'data-types',
  'type:ENUM': 'data-types',
  'type:UUID': 'data-types',
  'type:INT32': 'data-types#integer_types',
  'type:UINT32': 'data-types#integer_types',
  'type:UINT64': 'data-types#integer_types',
  'type:DOUBLE': 'data-types#floating_point_types',
  'type:FLOAT32': 'data-types#floating_point_types',
  'type:EMPTY_STRUCT': 'data-types#struct_type',
  array_null_elements: 'data-types#array_nulls',
  table_null_arrays: 'data-types#array_nulls',
  value_tables: 'query-syntax#value_tables',
  named_constants: 'data-definition-language',
  'primary_key_mode:first_column_is_primary_key': 'data-definition-language#primary_key',
  'feature_off:JSON_STRICT_NUMBER_PARSING': 'json_functions#to_json',
  'feature_off:JSON_QUERY_LAX': 'json_functions#JSONPath_mode',
};
for (const [f, page] of Object.entries(LINKS)) FEATURES[f]!.link = REF + page;

export type SkipDecision = { skip: false } | { skip: true; feature: string; why: string };

/** The first unsupported feature among `required`, or no skip. Unknown names skip too (loudly). */
export function decideSkip(required: Iterable<string>): SkipDecision {
  for (const f of required) {
    if (!f) continue;
    const info = FEATURES[f];
    if (!info) return { skip: true, feature: f, why: 'feature not in conformance/features.ts (add it)' };
    if (!info.supported) return { skip: true, feature: f, why: `${info.why} (${info.link})` };
  }
  return { skip: false };
}

/**
 * Cases that test a feature switched OFF: their required_features leave out a
 * feature BigQuery has, and their expected answer is the feature-off one (the
 * file holds the feature-on twin too). Keyed `<file>:<case name>`; the value is
 * the `feature_off:` pseudo-feature above.
 */
export const FEATURE_OFF_CASES: Record<string, string> = {
  'json_queries.test:json_array_bignumeric': 'feature_off:JSON_STRICT_NUMBER_PARSING',
  'json_queries.test:json_query_lax_no_feature_option': 'feature_off:JSON_QUERY_LAX',
};

/** Skip decision for a case that only holds with a feature BigQuery has switched off. */
export function decideFeatureOff(caseKey: string): SkipDecision {
  const f = FEATURE_OFF_CASES[caseKey];
  return f ? { skip: true, feature: f, why: `${FEATURES[f]!.why} (${FEATURES[f]!.link})` } : { skip: false };
}
