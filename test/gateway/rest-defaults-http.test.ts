// tables.insert / tables.patch check a column's defaultValueExpression as CREATE TABLE ... DEFAULT does
// (default-values.md): the same rules and the same words, through planner/rest-defaults.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('column defaults through tables.insert and tables.patch', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/dv${p}`;
  const insert = (tableId: string, fields: unknown[]): Promise<any> =>
    rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId }, schema: { fields } } });
  const query = (sql: string): Promise<any> => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
  /** The message CREATE TABLE gives for the same column and default. */
  const ddlMessage = async (column: string, dflt: string): Promise<string> => {
    const r = await query(`CREATE TABLE d.ddl_probe (${column} DEFAULT ${dflt})`);
    expect(r.status).toBe(400);
    return String(r.body.error.message).replace(/ at \[\d+:\d+\]$/, '');
  };

  it('takes a default CREATE TABLE takes, and INSERT uses it', async () => {
    const r = await insert('ok', [{ name: 'a', type: 'INT64' }, { name: 'b', type: 'STRING', defaultValueExpression: "'hello'" }]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.schema.fields[1].defaultValueExpression).toBe("'hello'");
    expect((await query('INSERT d.ok (a) VALUES (1)')).status).toBe(200);
    expect((await query('SELECT b FROM d.ok')).body.rows).toEqual([{ f: [{ v: 'hello' }] }]);
  });

  it('refuses what CREATE TABLE refuses, with its words', async () => {
    const cases: [unknown, string, string][] = [
      // An expression other than a literal or an allowed function.
      [{ name: 'x', type: 'INT64', defaultValueExpression: '1 + 1' }, 'x INT64', '1 + 1'],
      // A function not on the list.
      [{ name: 'x', type: 'STRING', defaultValueExpression: "UPPER('a')" }, 'x STRING', "UPPER('a')"],
      // A type that does not coerce to the column's.
      [{ name: 'x', type: 'INT64', defaultValueExpression: "'abc'" }, 'x INT64', "'abc'"],
      // NULL for a REQUIRED column.
      [{ name: 'x', type: 'STRING', mode: 'REQUIRED', defaultValueExpression: 'NULL' }, 'x STRING NOT NULL', 'NULL'],
      // A value that does not fit a parameterized type.
      [{ name: 'x', type: 'STRING', maxLength: '2', defaultValueExpression: "'abcdef'" }, 'x STRING(2)', "'abcdef'"],
    ];
    for (const [field, column, dflt] of cases) {
      const r = await insert('bad', [field]);
      expect(r.status, JSON.stringify(field)).toBe(400);
      expect(r.body.error.errors[0].reason).toBe('invalid');
      expect(r.body.error.message).toContain(await ddlMessage(column, dflt));
      expect((await rest(url('/datasets/d/tables/bad'))).status).toBe(404);
    }
    // Text that is no expression at all.
    const junk = await insert('bad', [{ name: 'x', type: 'INT64', defaultValueExpression: '1 FROM t' }]);
    expect(junk.status).toBe(400);
    // A STRUCT takes its default as a whole, not per field.
    const nested = await insert('bad', [{ name: 's', type: 'RECORD', fields: [{ name: 'f', type: 'INT64', defaultValueExpression: '1' }] }]);
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toMatch(/s\.f/);
  });

  it('tables.patch: a new column comes without a default; a changed default is checked', async () => {
    expect((await insert('p', [{ name: 'a', type: 'INT64' }])).status).toBe(200);
    const patch = (fields: unknown[]): Promise<any> => rest(url('/datasets/d/tables/p'), { method: 'PATCH', json: { schema: { fields } } });

    const added = await patch([{ name: 'a', type: 'INT64' }, { name: 'b', type: 'STRING', defaultValueExpression: "'x'" }]);
    expect(added.status).toBe(400);
    expect(added.body.error.message).toMatch(/Cannot add a field with a default value/);
    expect((await patch([{ name: 'a', type: 'INT64' }, { name: 'b', type: 'STRING' }])).status).toBe(200);

    const bad = await patch([{ name: 'a', type: 'INT64', defaultValueExpression: "'no'" }, { name: 'b', type: 'STRING' }]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain(await ddlMessage('x INT64', "'no'"));

    const good = await patch([{ name: 'a', type: 'INT64', defaultValueExpression: '7' }, { name: 'b', type: 'STRING', defaultValueExpression: 'SESSION_USER()' }]);
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect((await query('INSERT d.p (b) VALUES (NULL)')).status).toBe(200);
    expect((await query('SELECT a FROM d.p')).body.rows).toEqual([{ f: [{ v: '7' }] }]);
  });
});
