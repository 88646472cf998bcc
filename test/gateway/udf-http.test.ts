// JavaScript UDFs over HTTP against the real engine: a routine made with
// routines.insert (no DDL) is callable, DDL-made routines carry their REST
// fields, and a runtime exception comes back as a 400 query error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('JavaScript UDFs over HTTP', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/udfp${p}`;
  const query = (sql: string) => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });

  it('routines.insert of a JAVASCRIPT function, then a query calls it', async () => {
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
    const ins = await rest(url('/datasets/d/routines'), {
      method: 'POST',
      json: {
        routineReference: { projectId: 'udfp', datasetId: 'd', routineId: 'clamp' },
        routineType: 'SCALAR_FUNCTION',
        language: 'JAVASCRIPT',
        arguments: [
          { name: 'x', dataType: { typeKind: 'FLOAT64' } },
          { name: 'hi', dataType: { typeKind: 'FLOAT64' } },
        ],
        returnType: { typeKind: 'FLOAT64' },
        definitionBody: 'return Math.min(x, hi);',
      },
    });
    expect(ins.status).toBe(200);
    const q = await query('SELECT d.clamp(x, 2) AS v FROM UNNEST([1.0, 5.0]) x WITH OFFSET o ORDER BY o');
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: '1.0' }] }, { f: [{ v: '2.0' }] }]);
  });

  it('CREATE FUNCTION ... LANGUAGE js keeps language, libraries and determinism on the routine', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd2' } } });
    const c = await query(`CREATE FUNCTION d2.r(x FLOAT64) RETURNS FLOAT64 NOT DETERMINISTIC LANGUAGE js OPTIONS (library = ['gs://b/lib.js']) AS "return x * Math.random();"`);
    expect(c.status).toBe(200);
    const r = await rest(url('/datasets/d2/routines/r'));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ language: 'JAVASCRIPT', importedLibraries: ['gs://b/lib.js'], determinismLevel: 'NOT_DETERMINISTIC', definitionBody: 'return x * Math.random();' });
  });

  it('an exception thrown by the body is a 400 naming the function', async () => {
    const q = await query(`CREATE TEMP FUNCTION boom(s STRING) RETURNS STRING LANGUAGE js AS "throw new Error('no ' + s);"; SELECT boom('way')`);
    expect(q.status).toBe(400);
    expect(q.body.error.message).toBe('Error: no way at boom(STRING) line 1, columns 6-7');
    expect(q.body.error.errors[0].reason).toBe('invalidQuery');
  });
});
