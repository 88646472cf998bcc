// The server-level default dataset (--dataset) applies to queries as a request's defaultDataset does, and, like it,
// not to a view body (views-intro.md, Limitations: the default dataset doesn't affect a view body), also when the
// view is inserted over REST (tables.insert with view.query, as `bq mk --view` sends it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe('server-level default dataset (--dataset)', () => {
  let emu: Emulator;
  const base = (): string => `${emu.url}/bigquery/v2/projects/p`;
  const query = (sql: string) => rest(`${base()}/queries`, { method: 'POST', json: { query: sql, useLegacySql: false } });
  const view = (id: string, sql: string) =>
    rest(`${base()}/datasets/d/tables`, { method: 'POST', json: { tableReference: { tableId: id }, view: { query: sql, useLegacySql: false } } });

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'p', '--dataset', 'd'] });
    expect((await rest(`${base()}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
    expect((await query('CREATE TABLE d.t AS SELECT 1 AS x UNION ALL SELECT 2')).status).toBe(200);
  }, 60_000);
  afterAll(async () => emu?.stop());

  it('a query reads a bare name from it; a view body inserted over REST may not', async () => {
    const q = await query('SELECT SUM(x) AS s FROM t');
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: '3' }] }]);

    const bare = await view('v_bare', 'SELECT x FROM t');
    expect(bare.status).toBe(400);
    expect(bare.body.error.errors[0].reason).toBe('invalidQuery');
    expect(bare.body.error.message).toMatch(/^Table "t" must be qualified with a dataset/);
    expect((await rest(`${base()}/datasets/d/tables/v_bare`)).status).toBe(404);

    expect((await view('v', 'SELECT x FROM d.t')).status).toBe(200);
    const read = await query('SELECT COUNT(*) AS n FROM v');
    expect(read.status).toBe(200);
    expect(read.body.rows).toEqual([{ f: [{ v: '2' }] }]);
  });
});
