// Schema rules of the REST path (issue 16, set ao): what tables.patch / tables.insert take and refuse, from
// managing-table-schemas.md (Add a column, Change a column's mode, Change a column's data type, Delete a column:
// "Schema updates can't drop nested fields"), default-values.md (Limitations: no new column with a default) and
// schemas.md (Column names, Flexible column names, Column descriptions). The SQL side is in
// test/sql/unseen-ao-rules-*.sqltest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, killEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

type Field = { name: string; type: string; mode?: string; fields?: Field[]; defaultValueExpression?: string; description?: string };

describe.skipIf(!hasRealEngine())('table schema rules over REST', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/srules${p}`;
  let n = 0;
  /** A new table of `fields`; returns its id. */
  const table = async (fields: Field[]): Promise<string> => {
    const id = `t${++n}`;
    const r = await rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId: id }, schema: { fields } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return id;
  };
  const patch = (id: string, fields: Field[]) => rest(url(`/datasets/d/tables/${id}`), { method: 'PATCH', json: { schema: { fields } } });
  const refused = (r: { status: number; body: any }, text: string) => {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalid');
    expect(r.body.error.message).toContain(text);
  };

  it('relaxes a REQUIRED column to NULLABLE', async () => {
    const id = await table([{ name: 'a', type: 'INTEGER', mode: 'REQUIRED' }]);
    const r = await patch(id, [{ name: 'a', type: 'INTEGER', mode: 'NULLABLE' }]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.schema.fields[0].mode).toBe('NULLABLE');
  });

  it('refuses NULLABLE to REQUIRED and REPEATED to NULLABLE', async () => {
    const id = await table([{ name: 'a', type: 'INTEGER' }, { name: 'r', type: 'STRING', mode: 'REPEATED' }]);
    refused(await patch(id, [{ name: 'a', type: 'INTEGER', mode: 'REQUIRED' }, { name: 'r', type: 'STRING', mode: 'REPEATED' }]), 'changed mode from NULLABLE to REQUIRED');
    refused(await patch(id, [{ name: 'a', type: 'INTEGER' }, { name: 'r', type: 'STRING', mode: 'NULLABLE' }]), 'changed mode from REPEATED to NULLABLE');
  });

  it('adds NULLABLE and REPEATED columns at the end, refuses a REQUIRED one', async () => {
    const id = await table([{ name: 'a', type: 'INTEGER' }]);
    refused(await patch(id, [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING', mode: 'REQUIRED' }]), 'Cannot add required fields');
    const r = await patch(id, [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING' }, { name: 'c', type: 'DATE', mode: 'REPEATED' }]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.schema.fields.map((f: Field) => f.name)).toEqual(['a', 'b', 'c']);
  });

  it('takes a new RECORD holding a REQUIRED field, and a new field inside an existing RECORD', async () => {
    const id = await table([{ name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'INTEGER' }] }]);
    const r = await patch(id, [
      { name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'INTEGER' }, { name: 'y', type: 'STRING' }] },
      { name: 'n', type: 'RECORD', fields: [{ name: 'k', type: 'STRING', mode: 'REQUIRED' }] },
    ]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.schema.fields[0].fields.map((f: Field) => f.name)).toEqual(['x', 'y']);
    expect(r.body.schema.fields[1].fields[0].mode).toBe('REQUIRED');
  });

  it('refuses dropping a nested field, dropping a column and changing a type', async () => {
    const id = await table([{ name: 'a', type: 'INTEGER' }, { name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'INTEGER' }, { name: 'y', type: 'STRING' }] }]);
    refused(await patch(id, [{ name: 'a', type: 'INTEGER' }, { name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'INTEGER' }] }]), 'Field s.y is missing in new schema');
    refused(await patch(id, [{ name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'INTEGER' }, { name: 'y', type: 'STRING' }] }]), 'Field a is missing in new schema');
    refused(await patch(id, [{ name: 'a', type: 'NUMERIC' }, { name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'INTEGER' }, { name: 'y', type: 'STRING' }] }]), 'Field a has changed type from INTEGER to NUMERIC');
    const t = (await rest(url(`/datasets/d/tables/${id}`))).body;
    expect(t.schema.fields.map((f: Field) => f.name)).toEqual(['a', 's']);
  });

  it('refuses a new column with a default value, takes a default set on an existing column', async () => {
    const id = await table([{ name: 'a', type: 'INTEGER' }]);
    refused(await patch(id, [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING', defaultValueExpression: "'x'" }]), 'default value');
    expect((await patch(id, [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING' }])).status).toBe(200);
    const r = await patch(id, [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING', defaultValueExpression: "'x'" }]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.schema.fields[1].defaultValueExpression).toBe("'x'");
  });

  it('insertAll gives a row that leaves out a defaulted column its default', async () => {
    // default-values.md, Use the BigQuery Storage Write API (REST): defaults apply per row, to the columns a row lacks;
    // a column the row sets (even to null) keeps what it was sent.
    const q = await rest(url('/queries'), { method: 'POST', json: { query: "CREATE TABLE d.streamed (a STRING, b STRING DEFAULT 'dflt_b')", useLegacySql: false } });
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const ins = await rest(url('/datasets/d/tables/streamed/insertAll'), { method: 'POST', json: { rows: [{ json: { a: 'x', b: 'y' } }, { json: { a: 'z' } }, { json: { a: 'w', b: null } }] } });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
    expect(ins.body.insertErrors).toBeUndefined();
    const r = await rest(url('/queries'), { method: 'POST', json: { query: 'SELECT a, b FROM d.streamed ORDER BY a', useLegacySql: false } });
    expect(r.body.rows.map((x: { f: { v: unknown }[] }) => x.f.map((c) => c.v))).toEqual([['w', null], ['x', 'y'], ['z', 'dflt_b']]);
  });

  it('insertAll evaluates a default per row, once: the rows read the same after the engine restarts', async () => {
    // default-values.md: a default's function runs as each row is written (GENERATE_UUID differs per row); the WAL
    // keeps the rows as made, not the request, so a restart does not evaluate them again.
    const q = await rest(url('/queries'), {
      method: 'POST',
      json: { query: 'CREATE TABLE d.uuids (n INT64, id STRING DEFAULT GENERATE_UUID(), ts TIMESTAMP DEFAULT CURRENT_TIMESTAMP())', useLegacySql: false },
    });
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const before = Date.now();
    const rows = [1, 2, 3, 4].map((n) => ({ insertId: `r${n}`, json: n === 4 ? { n, id: 'mine', TS: null } : { n } }));
    const ins = await rest(url('/datasets/d/tables/uuids/insertAll'), { method: 'POST', json: { rows } });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
    expect(ins.body.insertErrors).toBeUndefined();
    const read = async () =>
      (await rest(url('/queries'), { method: 'POST', json: { query: 'SELECT n, id, UNIX_MILLIS(ts) FROM d.uuids ORDER BY n', useLegacySql: false } })).body.rows.map(
        (x: { f: { v: unknown }[] }) => x.f.map((c) => c.v),
      );
    const got = await read();
    const ids = got.slice(0, 3).map((r: unknown[]) => r[1]);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(got[3].slice(1)).toEqual(['mine', null]);
    for (const r of got.slice(0, 3)) expect(Number(r[2])).toBeGreaterThanOrEqual(before - 1000);
    await killEngine(emu, 'srules');
    expect(await read()).toEqual(got);
  });

  it('refuses column names flexible names do not allow, reserved prefixes and long descriptions', async () => {
    const insert = (fields: Field[]) => rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId: `bad${++n}` }, schema: { fields } } });
    for (const name of ['a.b', 'cost(usd)', 'x/y', 'k@v']) refused(await insert([{ name, type: 'STRING' }]), `Invalid field name "${name}"`);
    refused(await insert([{ name: 's', type: 'RECORD', fields: [{ name: 'p.q', type: 'STRING' }] }]), 'Invalid field name "p.q"');
    refused(await insert([{ name: '_CHANGE_TYPE', type: 'STRING' }]), 'Invalid field name "_CHANGE_TYPE"');
    refused(await insert([{ name: 'a', type: 'STRING', description: 'd'.repeat(1025) }]), '1024');
    // Allowed: hyphens, spaces, the listed symbols, other scripts, a leading digit; a description of 1,024 characters.
    const ok = await insert([{ name: 'first-name', type: 'STRING' }, { name: 'unit price', type: 'STRING' }, { name: 'a&b=c', type: 'STRING' }, { name: '名前', type: 'STRING' }, { name: '2nd', type: 'STRING', description: 'd'.repeat(1024) }]);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});
