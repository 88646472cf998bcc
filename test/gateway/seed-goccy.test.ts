// goccy/bigquery-emulator seed files (`projects:` at the top, its
// --data-from-yaml flag) are accepted and mapped, so its users can switch with
// their existing files (src/gateway/seed.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { rest, startEmulator } from '../helpers/emulator.js';

const dir = mkdtempSync(join(tmpdir(), 'seed-goccy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GOCCY = `
projects:
- id: shop-proj
  datasets:
    - id: sales
      tables:
        - id: orders
          columns:
            - name: order_id
              type: BIGINT
              mode: required
            - name: amount
              type: DECIMAL
            - name: ratio
              type: DOUBLE
            - name: paid
              type: BOOLEAN
            - name: placed_at
              type: TIMESTAMP
            - name: items
              type: STRUCT
              mode: repeated
              fields:
                - name: sku
                  type: STRING
                - name: attrs
                  type: JSON
          data:
            - order_id: 10
              amount: 12.5
              ratio: 0.25
              paid: true
              placed_at: '2024-03-01T10:00:00'
              items:
                - sku: A-1
                  attrs: '{"color": "red"}'
            - order_id: 11
              amount: 3
              paid: false
              placed_at: '2024-03-02T11:30:00'
              items: []
          metadata:
            description: Orders placed in the shop
            labels:
              team: sales
        - id: big_orders
          view:
            query: SELECT order_id FROM \`shop-proj.sales.orders\` WHERE amount > 10
            useLegacySql: false
- id: other-proj
  datasets:
    - id: empty_one
    - id: empty_two
`;

it('loads a goccy file given with --data-from-yaml, and a restart replaces its tables instead of appending', async () => {
  const file = join(dir, 'data.yaml');
  writeFileSync(file, GOCCY);
  const dataDir = mkdtempSync(join(dir, 'data-'));
  for (const _boot of [1, 2]) {
    const emu = await startEmulator({ dataDir, args: [`--data-from-yaml=${file}`] });
    try {
      const base = `${emu.url}/bigquery/v2/projects`;
      const table = await rest(`${base}/shop-proj/datasets/sales/tables/orders`);
      expect(table.status).toBe(200);
      expect(table.body.description).toBe('Orders placed in the shop');
      expect(table.body.labels).toEqual({ team: 'sales' });
      expect(table.body.schema.fields.map((f: { name: string; type: string; mode?: string }) => `${f.name} ${f.type} ${f.mode ?? 'NULLABLE'}`)).toEqual([
        'order_id INTEGER REQUIRED',
        'amount NUMERIC NULLABLE',
        'ratio FLOAT NULLABLE',
        'paid BOOLEAN NULLABLE',
        'placed_at TIMESTAMP NULLABLE',
        'items RECORD REPEATED',
      ]);
      const q = await rest(`${base}/shop-proj/queries`, {
        method: 'POST',
        json: {
          query: "SELECT o.order_id, o.amount, JSON_VALUE(i.attrs, '$.color') AS color, (SELECT COUNT(*) FROM `shop-proj.sales.big_orders`) AS big FROM `shop-proj.sales.orders` o LEFT JOIN UNNEST(o.items) i ORDER BY 1",
          useLegacySql: false,
        },
      });
      expect(q.status, JSON.stringify(q.body)).toBe(200);
      expect(q.body.rows.map((r: { f: { v: string | null }[] }) => r.f.map((c) => c.v))).toEqual([
        ['10', '12.5', 'red', '1'],
        ['11', '3', null, '1'],
      ]);
      expect((await rest(`${base}/other-proj/datasets/empty_two`)).status).toBe(200);
    } finally {
      await emu.stop();
    }
  }
});

it('a goccy file that is not valid names the file and the culprit', async () => {
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, 'projects:\n- datasets: []\n');
  await expect(startEmulator({ args: [`--data-from-yaml=${file}`] })).rejects.toThrow(/bad\.yaml: every project needs an id/);
});
