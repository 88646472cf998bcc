// JavaScript libraries (file:// and gs:// through the object-store stand-in of
// test/helpers/object-store.ts)
// and Python UDFs (LANGUAGE python: they run only when enabled, here through
// WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS; they need python3 on the machine, the
// cases are skipped, with that reason, where there is none).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonPath } from '../../src/udf/python.js';
import { startGcsStandIn } from '../helpers/object-store.js';
import { errorMessage, openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

let h: Harness;
let n = 0;
let dir: string;
beforeAll(async () => {
  h = await openHarness();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'udf-lib-'));
});
afterAll(async () => {
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function query(sql: string): Promise<unknown[]> {
  const projectId = `pu${++n}`;
  await setupDataset(h, projectId, 'ds');
  return rowsOf(await run(h, sql, { projectId, defaultDataset: { projectId, datasetId: 'ds' } }));
}

async function queryError(sql: string): Promise<string> {
  try {
    await query(sql);
  } catch (e) {
    return errorMessage(e);
  }
  throw new Error('expected an error');
}

describe('JavaScript libraries', () => {
  it('loads OPTIONS(library=) from file:// before the body', async () => {
    const lib = path.join(dir, 'helpers.js');
    fs.writeFileSync(lib, 'function triple(x) { return 3 * x; }\nvar OFFSET = 0.5;\n');
    const rows = await query(`CREATE TEMP FUNCTION f(x FLOAT64) RETURNS FLOAT64 LANGUAGE js OPTIONS (library = ['file://${lib}']) AS "return triple(x) + OFFSET;";
      SELECT f(2) AS v`);
    expect(rows).toEqual([['6.5']]);
  });

  it('loads a library from gs:// through the object store', async () => {
    const gcs = await startGcsStandIn(['libs']);
    await gcs.put('libs', 'util/str.js', 'function shout(s) { return s.toUpperCase() + "!"; }');
    const old = process.env['STORAGE_EMULATOR_HOST'];
    process.env['STORAGE_EMULATOR_HOST'] = `http://${gcs.endpoint}`;
    try {
      const rows = await query(`CREATE TEMP FUNCTION s(x STRING) RETURNS STRING LANGUAGE js OPTIONS (library = 'gs://libs/util/str.js') AS "return shout(x);";
        SELECT s('hey') AS v`);
      expect(rows).toEqual([['HEY!']]);
      const msg = await queryError(`CREATE TEMP FUNCTION s(x STRING) RETURNS STRING LANGUAGE js OPTIONS (library = 'gs://libs/missing.js') AS "return x;";
        SELECT s('hey') AS v`);
      expect(msg).toContain('Cannot read JavaScript library gs://libs/missing.js: HTTP 404');
    } finally {
      if (old === undefined) delete process.env['STORAGE_EMULATOR_HOST'];
      else process.env['STORAGE_EMULATOR_HOST'] = old;
      await gcs.close();
    }
  });

  it('an error inside a library names the library', async () => {
    const lib = path.join(dir, 'bad.js');
    fs.writeFileSync(lib, 'throw new RangeError("library failed");');
    const msg = await queryError(`CREATE TEMP FUNCTION f(x FLOAT64) RETURNS FLOAT64 LANGUAGE js OPTIONS (library = 'file://${lib}') AS "return x;";
      SELECT f(1) AS v`);
    expect(msg).toContain(`RangeError: library failed at file://${lib} line 1`);
  });
});

const python = pythonPath();
const OPTS = `OPTIONS (entry_point = 'main', runtime_version = 'python-3.11')`;

describe('Python UDFs without --enable-python-udfs', () => {
  it('CREATE works, a call fails saying how to enable them', async () => {
    const old = process.env['WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS'];
    delete process.env['WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS'];
    try {
      const projectId = `pu${++n}`;
      await setupDataset(h, projectId, 'ds');
      const opts = { projectId, defaultDataset: { projectId, datasetId: 'ds' } };
      await run(h, `CREATE FUNCTION ds.py_off(x INT64) RETURNS INT64 LANGUAGE python ${OPTS} AS "def main(x): return x"`, opts);
      let msg = '';
      try {
        await run(h, 'SELECT ds.py_off(1)', opts);
      } catch (e) {
        msg = errorMessage(e);
      }
      expect(msg).toContain('Python UDF ds.py_off(INT64) cannot run: Python UDFs are disabled');
      expect(msg).toContain('--enable-python-udfs');
    } finally {
      if (old !== undefined) process.env['WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS'] = old;
    }
  });
});

describe.skipIf(!python)('Python UDFs (python3 present, enabled)', () => {
  beforeAll(() => {
    process.env['WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS'] = 'true';
  });
  afterAll(() => {
    delete process.env['WAREHOUSE_EMULATOR_ENABLE_PYTHON_UDFS'];
  });

  it('adds one over many rows in one process', async () => {
    const rows = await query(`CREATE FUNCTION ds.py_add(x INT64) RETURNS INT64 LANGUAGE python ${OPTS} AS r'''
def main(x):
    return x + 1
''';
      SELECT COUNT(*) AS n, SUM(ds.py_add(x)) AS s, MIN(ds.py_add(x)) AS lo FROM UNNEST(GENERATE_ARRAY(1, 10000)) x`);
    expect(rows).toEqual([['10000', '50015000', '2']]);
  });

  it('maps SQL types to Python values and back', async () => {
    const rows = await query(`CREATE FUNCTION ds.describe(i INT64, f FLOAT64, s STRING, b BYTES, d DATE, t TIMESTAMP, n NUMERIC, a ARRAY<INT64>, st STRUCT<k STRING, v INT64>)
RETURNS STRING LANGUAGE python ${OPTS} AS r'''
def main(i, f, s, b, d, t, n, a, st):
    return "|".join([type(i).__name__, type(f).__name__, s, b.decode(), d.isoformat(), t.isoformat(), str(n + 1), str(sum(a)), st["k"] + str(st["v"])])
''';
      SELECT ds.describe(7, 1.5, 'x', b'hi', DATE '2024-03-01', TIMESTAMP '2024-03-01 10:00:00.5+00', NUMERIC '1.25', [1, 2, 3], STRUCT('k' AS k, 9 AS v)) AS v`);
    expect(rows).toEqual([['int|float|x|hi|2024-03-01|2024-03-01T10:00:00.500000+00:00|2.25|6|k9']]);
  });

  it('returns dates, structs and arrays', async () => {
    const rows = await query(`CREATE FUNCTION ds.mk(x INT64) RETURNS STRUCT<d DATE, xs ARRAY<STRING>> LANGUAGE python ${OPTS} AS r'''
import datetime
def main(x):
    return {"d": datetime.date(2020, 1, x), "xs": [str(i) for i in range(x)]}
''';
      SELECT v.d, ARRAY_LENGTH(v.xs) AS n FROM (SELECT ds.mk(3) AS v)`);
    expect(rows).toEqual([['2020-01-03', '3']]);
  });

  it('print() in the body does not disturb the results', async () => {
    const rows = await query(`CREATE FUNCTION ds.noisy(x INT64) RETURNS INT64 LANGUAGE python ${OPTS} AS r'''
def main(x):
    print("computing", x)
    return x * 10
''';
      SELECT SUM(ds.noisy(x)) AS s FROM UNNEST(GENERATE_ARRAY(1, 100)) x`);
    expect(rows).toEqual([['50500']]);
  });

  it('NULL arguments arrive as None', async () => {
    const rows = await query(`CREATE FUNCTION ds.isnone(x STRING) RETURNS BOOL LANGUAGE python ${OPTS} AS r'''
def main(x):
    return x is None
''';
      SELECT ds.isnone(NULL) AS a, ds.isnone('') AS b`);
    expect(rows).toEqual([['true', 'false']]);
  });

  it('an exception in the body is a query error naming the function', async () => {
    const msg = await queryError(`CREATE FUNCTION ds.boom(x INT64) RETURNS INT64 LANGUAGE python ${OPTS} AS r'''
def main(x):
    raise ValueError("bad value %d" % x)
''';
      SELECT ds.boom(4)`);
    expect(msg).toContain('Python UDF ds.boom(INT64) failed: ValueError: bad value 4 at line 3');
  });

  it('a declared package that is not installed fails before the body runs', async () => {
    const msg = await queryError(`CREATE FUNCTION ds.pk(x INT64) RETURNS INT64 LANGUAGE python
      OPTIONS (entry_point = 'main', runtime_version = 'python-3.11', packages = ['bqemu_nonexistent_pkg_xyz==1.0'])
      AS "def main(x): return x";
      SELECT ds.pk(1)`);
    expect(msg).toContain("No module named 'bqemu_nonexistent_pkg_xyz'");
  });

  it('the entry point must be defined by the code', async () => {
    const msg = await queryError(`CREATE FUNCTION ds.ep(x INT64) RETURNS INT64 LANGUAGE python ${OPTS} AS "def other(x): return x";
      SELECT ds.ep(1)`);
    expect(msg).toContain("entry_point 'main' is not a function defined by the code");
  });
});

describe('routines made through the REST API (no DDL)', () => {
  const put = async (projectId: string, id: string, resource: Record<string, unknown>) =>
    h.catalog.putChild('routines', projectId, 'ds', id, { routineReference: { projectId, datasetId: 'ds', routineId: id }, ...resource });

  it('JavaScript, SQL, aggregate and table functions are callable', async () => {
    const projectId = `pr${++n}`;
    await setupDataset(h, projectId, 'ds');
    await put(projectId, 'js_mul', {
      routineType: 'SCALAR_FUNCTION',
      language: 'JAVASCRIPT',
      arguments: [{ name: 'x', dataType: { typeKind: 'FLOAT64' } }, { name: 'tags', dataType: { typeKind: 'ARRAY', arrayElementType: { typeKind: 'STRING' } } }],
      returnType: { typeKind: 'STRING' },
      definitionBody: 'return x * 2 + ":" + tags.join("|") + "\'\'\'";',
    });
    await put(projectId, 'sql_add', {
      routineType: 'SCALAR_FUNCTION',
      language: 'SQL',
      arguments: [{ name: 'a', dataType: { typeKind: 'INT64' } }, { name: 'b', argumentKind: 'ANY_TYPE' }],
      definitionBody: 'a + b',
    });
    await put(projectId, 'js_count', {
      routineType: 'AGGREGATE_FUNCTION',
      language: 'JAVASCRIPT',
      arguments: [{ name: 'x', dataType: { typeKind: 'FLOAT64' } }, { name: 'min', dataType: { typeKind: 'FLOAT64' }, isAggregate: false }],
      returnType: { typeKind: 'INT64' },
      definitionBody: 'export function initialState(min) { return {n: 0}; }\nexport function aggregate(s, x, min) { if (x >= min) s.n++; }\nexport function merge(s, p) { s.n += p.n; }\nexport function finalize(s) { return s.n; }',
    });
    await put(projectId, 'tvf', {
      routineType: 'TABLE_VALUED_FUNCTION',
      language: 'SQL',
      arguments: [{ name: 'k', dataType: { typeKind: 'INT64' } }],
      definitionBody: 'SELECT x FROM UNNEST(GENERATE_ARRAY(1, k)) x',
    });
    const rows = rowsOf(
      await run(h, `SELECT ds.js_mul(1.5, ['a', 'b']) AS a, ds.sql_add(1, 2.5) AS b, (SELECT ds.js_count(x, 2) FROM UNNEST([1.0, 2.0, 3.0]) x) AS c, (SELECT COUNT(*) FROM ds.tvf(4)) AS d`, {
        projectId,
        defaultDataset: { projectId, datasetId: 'ds' },
      }),
    );
    expect(rows).toEqual([["3:a|b'''", '3.5', '2', '4']]);
  });
});
