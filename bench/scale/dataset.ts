// The scale set's data: one 8-column fact table of N rows and a 100k-row
// dimension, written once as GoogleSQL for the emulator (a CTAS from
// GENERATE_ARRAY: the fastest path a user has that needs no files) and once
// as DuckDB SQL over range(). Both compute every value with the same integer
// arithmetic, so the two engines hold identical data: no random generator
// whose sequence would differ between them.
//
// Per row (id = 0 .. N-1), hj = (id * Aj) mod P for four multipliers, P the
// prime 2^31 - 1 (products stay below 2^53, so INT64 stays exact as doubles):
//   id     INT64    0 .. N-1, unique
//   k1000  INT64    h1 mod 1000                       (1,000 values)
//   hk     INT64    h2 mod N/2                        (~0.86 × N/2 values)
//   v      FLOAT64  h3 / P × 1000                     (distinct, in [0, 1000))
//   s      STRING   12 chars: 'Red'|'Grn'|'Blu'|'Ylw' + 9 digits of h4 mod 10,000 (10,000 values, mixed case)
//   d      DATE     2020-01-01 + (h1 mod 1500) days
//   ts     TIMESTAMP 2020-01-01 00:00:00 UTC + (h2 mod 31,536,000) s
//   b      BOOL     h3 mod 3 = 0

export const PRIME = 2147483647;
const MULT = { h1: 48271, h2: 69621, h3: 16807, h4: 39373 } as const;
export const DIM_ROWS = 100_000;

/** '10m' → 10,000,000; also '500k', '1e7', plain digits. Sizes are multiples of 1,000 (the CTAS crosses two ranges). */
export function parseRows(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(k|m|g|e\d+)?$/i.exec(text.trim());
  if (!m) throw new Error(`--rows: cannot read '${text}' (e.g. 10m, 100m, 500k)`);
  const base = Number(m[1]);
  const suffix = (m[2] ?? '').toLowerCase();
  const mult = suffix === 'k' ? 1e3 : suffix === 'm' ? 1e6 : suffix === 'g' ? 1e9 : suffix.startsWith('e') ? 10 ** Number(suffix.slice(1)) : 1;
  const rows = Math.round(base * mult);
  if (rows < 2_000 || rows % 1_000 !== 0) throw new Error(`--rows: ${rows} must be a multiple of 1,000 and at least 2,000`);
  return rows;
}

/** '10m', '100m', '1.5m', '500k': the size as written in result file names. */
export function sizeLabel(rows: number): string {
  if (rows % 1e9 === 0) return `${rows / 1e9}g`;
  if (rows >= 1e6 && rows % 1e5 === 0) return `${rows / 1e6}m`;
  if (rows % 1e3 === 0) return `${rows / 1e3}k`;
  return String(rows);
}

/** Column expressions over h1..h4, in GoogleSQL and DuckDB. */
function columns(rows: number, dialect: 'bq' | 'duck'): string {
  const half = rows / 2;
  const mod = (a: string, b: number | string): string => (dialect === 'bq' ? `MOD(${a}, ${b})` : `(${a} % ${b})`);
  const prefix = `CASE ${mod('h4', 4)} WHEN 0 THEN 'Red' WHEN 1 THEN 'Grn' WHEN 2 THEN 'Blu' ELSE 'Ylw' END`;
  const digits = dialect === 'bq' ? `LPAD(CAST(${mod('h4', 10000)} AS STRING), 9, '0')` : `lpad(CAST(${mod('h4', 10000)} AS VARCHAR), 9, '0')`;
  const date = dialect === 'bq'
    ? `DATE_ADD(DATE '2020-01-01', INTERVAL ${mod('h1', 1500)} DAY)`
    : `DATE '2020-01-01' + CAST(${mod('h1', 1500)} AS INTEGER)`;
  const ts = dialect === 'bq'
    ? `TIMESTAMP_ADD(TIMESTAMP '2020-01-01 00:00:00 UTC', INTERVAL ${mod('h2', 31536000)} SECOND)`
    : `TIMESTAMP '2020-01-01 00:00:00' + to_seconds(${mod('h2', 31536000)})`;
  return [
    'id',
    `${mod('h1', 1000)} AS k1000`,
    `${mod('h2', half)} AS hk`,
    `h3 / ${PRIME} * 1000 AS v`,
    dialect === 'bq' ? `CONCAT(${prefix}, ${digits}) AS s` : `(${prefix}) || ${digits} AS s`,
    `${date} AS d`,
    `${ts} AS ts`,
    `${mod('h3', 3)} = 0 AS b`,
  ].join(',\n  ');
}

function hashes(dialect: 'bq' | 'duck'): string {
  return Object.entries(MULT)
    .map(([name, a]) => (dialect === 'bq' ? `MOD(id * ${a}, ${PRIME}) AS ${name}` : `(id * ${a}) % ${PRIME} AS ${name}`))
    .join(', ');
}

/** Emulator setup: the fact table `f` and the dimension `dim` in dataset `ds`. */
export function emulatorSetup(ds: string, rows: number): { fact: string; dim: string } {
  const fact = `CREATE TABLE ${ds}.f AS
SELECT
  ${columns(rows, 'bq')}
FROM (
  SELECT id, ${hashes('bq')}
  FROM (SELECT hi * 1000 + lo AS id FROM UNNEST(GENERATE_ARRAY(0, ${rows / 1000 - 1})) AS hi CROSS JOIN UNNEST(GENERATE_ARRAY(0, 999)) AS lo)
)`;
  const dim = `CREATE TABLE ${ds}.dim AS
SELECT k, CONCAT('name_', CAST(k AS STRING)) AS name, MOD(k, 10) AS g
FROM UNNEST(GENERATE_ARRAY(0, ${DIM_ROWS - 1})) AS k`;
  return { fact, dim };
}

/** DuckDB setup: the same two tables in the default schema. */
export function duckdbSetup(rows: number): { fact: string; dim: string } {
  const fact = `CREATE TABLE f AS
SELECT
  ${columns(rows, 'duck')}
FROM (SELECT id, ${hashes('duck')} FROM range(0, ${rows}) AS _r(id))`;
  const dim = `CREATE TABLE dim AS
SELECT k, 'name_' || CAST(k AS VARCHAR) AS name, k % 10 AS g
FROM range(0, ${DIM_ROWS}) AS _r(k)`;
  return { fact, dim };
}
