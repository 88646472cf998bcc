// A rewrite of a table's rows (ALTER TABLE DROP COLUMN, SET DATA TYPE) rebuilds its REST schema from the
// columns: what the SqlType does not carry, a STRUCT field's REQUIRED mode and description, must stay, and a
// field SET DATA TYPE changed takes its new type (engine/catalog.ts keptRestFields).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, run, setupDataset, type Harness } from './harness.js';
import { restFieldToColumn, type RestField } from '../../src/types/schema.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
  await setupDataset(h, 'p', 'ds');
});
afterAll(async () => h.close());

const o = { projectId: 'p', defaultDataset: { projectId: 'p', datasetId: 'ds' } };
const schemaOf = (t: string) => (h.catalog.getTable({ projectId: 'p', datasetId: 'ds', tableId: t })!.resource.schema as { fields: RestField[] }).fields;

describe('nested REST schema across a rows rewrite', () => {
  it('keeps a STRUCT field\'s REQUIRED and description through DROP COLUMN and SET DATA TYPE', async () => {
    const fields: RestField[] = [
      { name: 's', type: 'RECORD', mode: 'NULLABLE', fields: [{ name: 'a', type: 'INTEGER', mode: 'REQUIRED', description: 'the a' }, { name: 'n', type: 'INTEGER', mode: 'NULLABLE' }] },
      { name: 'b', type: 'INTEGER', mode: 'NULLABLE' },
    ];
    await h.catalog.createTable({ projectId: 'p', datasetId: 'ds', tableId: 't' }, fields.map(restFieldToColumn), { resource: { schema: { fields } } });
    await run(h, 'INSERT ds.t (s, b) VALUES (STRUCT(1, 2), 3)', o);
    await run(h, 'ALTER TABLE ds.t DROP COLUMN b', o);
    expect(schemaOf('t')).toEqual([fields[0]]);
    await run(h, 'ALTER TABLE ds.t ALTER COLUMN s SET DATA TYPE STRUCT<a INT64, n NUMERIC>', o);
    expect(schemaOf('t')).toEqual([{ name: 's', type: 'RECORD', mode: 'NULLABLE', fields: [{ name: 'a', type: 'INTEGER', mode: 'REQUIRED', description: 'the a' }, { name: 'n', type: 'NUMERIC', mode: 'NULLABLE' }] }]);
  });
});
