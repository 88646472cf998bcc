// Table expiration enforced through REST (managing-tables.md, Update a table's expiration time): a table past its
// expirationTime is deleted with its data, so tables.get and tabledata.list answer 404 and tables.list leaves it out;
// an expiration already passed deletes it at once; the name is free again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('table expiration', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'x' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/texp${p}`;
  const schema = { fields: [{ name: 'a', type: 'INT64' }] };
  const listed = async (): Promise<string[]> => ((await rest(url('/datasets/x/tables'))).body.tables ?? []).map((t: any) => t.tableReference.tableId);

  it('a table whose expirationTime passes is not found, not listed, and its name can be reused', async () => {
    const made = await rest(url('/datasets/x/tables'), { method: 'POST', json: { tableReference: { tableId: 'soon' }, schema, expirationTime: String(Date.now() + 1500) } });
    expect(made.status).toBe(200);
    await rest(url('/datasets/x/tables'), { method: 'POST', json: { tableReference: { tableId: 'kept' }, schema } });
    expect((await rest(url('/datasets/x/tables/soon'))).status).toBe(200);
    expect(await listed()).toEqual(['kept', 'soon']);
    await new Promise((r) => setTimeout(r, 1700));
    const got = await rest(url('/datasets/x/tables/soon'));
    expect(got.status).toBe(404);
    expect(got.body.error.errors[0].reason).toBe('notFound');
    expect((await rest(url('/datasets/x/tables/soon/data'))).status).toBe(404);
    expect(await listed()).toEqual(['kept']);
    const again = await rest(url('/datasets/x/tables'), { method: 'POST', json: { tableReference: { tableId: 'soon' }, schema } });
    expect(again.status).toBe(200);
    expect((await rest(url('/datasets/x/tables/soon'))).status).toBe(200);
  });

  it('tables.patch with an expirationTime already passed deletes the table at once', async () => {
    await rest(url('/datasets/x/tables'), { method: 'POST', json: { tableReference: { tableId: 'old' }, schema } });
    const patched = await rest(url('/datasets/x/tables/old'), { method: 'PATCH', json: { expirationTime: String(Date.now() - 60_000) } });
    expect(patched.status).toBe(200);
    expect((await rest(url('/datasets/x/tables/old'))).status).toBe(404);
    expect(await listed()).not.toContain('old');
  });
});
