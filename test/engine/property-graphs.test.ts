// Property graphs (graph-schema-statements.md) are catalog objects: kept across a restart like views and routines,
// and a query's cached plan follows a graph replaced or dropped under the same query text.
import { describe, expect, it } from 'vitest';
import { startInProcess, tempDir, type InProcessEngine } from './helpers.js';

let n = 0;
const q = (eng: InProcessEngine, query: string) => eng.client.call<{ rowsJson: string }>('ExecuteQuery', { projectId: 'p', jobId: `graph_${n++}`, query, maxResults: 100 });
const rows = async (eng: InProcessEngine, query: string): Promise<string[]> =>
  (JSON.parse((await q(eng, query)).rowsJson) as { f: { v: string }[] }[]).map((r) => r.f.map((c) => c.v).join('|')).sort();
const failure = (eng: InProcessEngine, query: string) => eng.client.error('ExecuteQuery', { projectId: 'p', jobId: `graph_${n++}`, query, maxResults: 100 });
const error = async (eng: InProcessEngine, query: string): Promise<string> => (await failure(eng, query)).message;

const QUERY = 'GRAPH d.g MATCH (a:City)-[r:Road]->(b:City) RETURN a.name AS src, b.name AS dst';

describe('property graphs in the catalog', () => {
  it('survive a restart, and a cached plan follows a replaced or dropped graph', async () => {
    const dir = tempDir('wh-graph-');
    let eng = await startInProcess(dir);
    await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
    await q(eng, `CREATE TABLE d.city (id INT64, name STRING, PRIMARY KEY (id) NOT ENFORCED);
      CREATE TABLE d.road (a INT64, b INT64, km INT64);
      INSERT d.city VALUES (1, 'Rome'), (2, 'Pisa'), (3, 'Bari');
      INSERT d.road VALUES (1, 2, 350), (2, 3, 900);
      CREATE PROPERTY GRAPH d.g NODE TABLES (d.city LABEL City) EDGE TABLES (d.road KEY (a, b) SOURCE KEY (a) REFERENCES city DESTINATION KEY (b) REFERENCES city LABEL Road)`);
    expect(await rows(eng, QUERY)).toEqual(['Pisa|Bari', 'Rome|Pisa']);
    await eng.close();

    eng = await startInProcess(dir);
    expect(await rows(eng, QUERY)).toEqual(['Pisa|Bari', 'Rome|Pisa']);
    // The same text again after the graph is replaced: the edges now run the other way.
    await q(eng, 'CREATE OR REPLACE PROPERTY GRAPH d.g NODE TABLES (d.city LABEL City) EDGE TABLES (d.road KEY (a, b) SOURCE KEY (b) REFERENCES city DESTINATION KEY (a) REFERENCES city LABEL Road)');
    expect(await rows(eng, QUERY)).toEqual(['Bari|Pisa', 'Pisa|Rome']);
    await q(eng, 'DROP PROPERTY GRAPH d.g');
    expect(await error(eng, QUERY)).toMatch(/Property graph not found/);
    await eng.close();

    eng = await startInProcess(dir);
    expect(await error(eng, QUERY)).toMatch(/Property graph not found/);
    await eng.close();
  });

  // data-definition-language.md (DROP SCHEMA): without CASCADE a dataset that is not empty is an error;
  // error-messages.md names it: resourceInUse, as datasets.delete gives. A graph alone keeps a dataset in use too.
  it('DROP SCHEMA of a dataset in use is refused with one reason, whether it holds a table or only a graph', async () => {
    const eng = await startInProcess(tempDir('wh-graph-'));
    for (const d of ['t', 'n', 'g']) await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: d } }) });
    await q(eng, `CREATE TABLE t.x (id INT64);
      CREATE TABLE n.city (id INT64, PRIMARY KEY (id) NOT ENFORCED);
      CREATE PROPERTY GRAPH g.pg NODE TABLES (n.city)`);
    for (const d of ['t', 'g']) {
      expect(await failure(eng, `DROP SCHEMA ${d}`)).toMatchObject({ code: 400, reason: 'resourceInUse', message: expect.stringContaining(`Dataset p:${d} is still in use`) });
      expect(await failure(eng, `DROP SCHEMA ${d} RESTRICT`)).toMatchObject({ reason: 'resourceInUse' });
    }
    await q(eng, 'DROP SCHEMA g CASCADE');
    expect(await error(eng, 'GRAPH g.pg MATCH (c) RETURN c.id')).toMatch(/not found/i);
    await eng.close();
  });
});
