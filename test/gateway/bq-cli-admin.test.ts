// The bq CLI's commands around tables and jobs, against the real engine:
// models (ls -m, show --model), routines, IAM policies of datasets and tables
// (get-iam-policy, add-/remove-iam-policy-binding), transfer configs (bq builds
// its transfer client from the served v1 discovery document: empty lists,
// 404s, and the 501 of spec §4.11 for mk), mkdef + mk --external_table_definition,
// snapshots, clones and restores, undelete. bq formats the API responses
// itself: a missing field of a resource shows up as a crash inside bq.
// Each bq run costs seconds: independent commands run in parallel waves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { bqFor, hasBq, oneLine, type Bq } from './bq-cli-setup.js';

describe.skipIf(!hasRealEngine() || !hasBq())('bq admin commands', () => {
  let emu: Emulator;
  let bq: Bq;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;
  /** The policy bq prints after its 'Successfully added/removed member ...' line. */
  const policyOf = (out: string): { bindings: unknown[] } => JSON.parse(out.slice(out.indexOf('{'))) as { bindings: unknown[] };
  const query = (q: string) => rest(api('/queries'), { method: 'POST', json: { query: q, useLegacySql: false } });

  beforeAll(async () => {
    emu = await startEmulator();
    bq = bqFor(emu.url, { direct: true });
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'a' } } })).status).toBe(200);
    for (const q of [
      "CREATE TABLE a.t AS SELECT 1 AS x, 'p' AS label UNION ALL SELECT 2, 'q'",
      "CREATE MODEL a.m OPTIONS (model_type = 'logistic_reg', input_label_cols = ['label']) AS SELECT x, label FROM a.t",
      'CREATE FUNCTION a.plus1(v INT64) RETURNS INT64 AS (v + 1)',
    ]) expect((await query(q)).status).toBe(200);
  });
  afterAll(async () => emu?.stop());

  it('models, routines, IAM policies, transfer configs, external definitions, snapshots and undelete', async () => {
    writeFileSync(join(bq.dir, 'e.csv'), 'n,s\n1,a\n2,b\n');
    const [models, model, routines, routine, policy, added, tablePolicy, mkTransfer, lsTransfer, showTransfer, def, snap, clone] = await Promise.all([
      bq('ls', '-m', 'a'),
      bq('show', '--model', 'a.m'),
      bq('ls', '--routines', 'a'),
      bq('show', '--routine', 'a.plus1'),
      bq('--format=json', 'get-iam-policy', 'a'),
      bq('--format=json', 'add-iam-policy-binding', '--member=user:ann@example.com', '--role=roles/bigquery.dataViewer', 'a'),
      bq('--format=json', 'add-iam-policy-binding', '--member=group:g@example.com', '--role=roles/bigquery.dataEditor', 'a.t'),
      bq.run('mk', '--transfer_config', '--target_dataset=a', '--display_name=nightly', '--data_source=scheduled_query', '--params={"query":"SELECT 1"}'),
      bq('ls', '--transfer_config', '--transfer_location=US'),
      bq.run('show', '--transfer_config', 'projects/test/locations/us/transferConfigs/nope'),
      bq('mkdef', '--autodetect', '--source_format=CSV', `file://${join(bq.dir, 'e.csv')}`),
      bq('cp', '--snapshot', 'a.t', 'a.snap'),
      bq('cp', '--clone', 'a.t', 'a.clone'),
    ]);
    // A model's feature and label columns carry their types (bq prints them from the resource).
    expect(models).toMatch(/m\s+LOGISTIC_REG/);
    expect(model).toContain('|- x: int64');
    expect(model).toContain('|- label: string');
    expect(routines).toMatch(/plus1\s+SCALAR_FUNCTION\s+SQL/);
    expect(routine).toMatch(/plus1\s+SCALAR_FUNCTION\s+SQL\s+\(v INT64\) -> INT64/);
    // A dataset's policy is its access list in IAM form; a binding added there is an access entry.
    expect(policyOf(policy).bindings).toEqual(expect.arrayContaining([{ role: 'roles/bigquery.dataOwner', members: ['projectOwner:test'] }]));
    expect(policyOf(added).bindings).toEqual(expect.arrayContaining([{ role: 'roles/bigquery.dataViewer', members: ['projectViewer:test', 'user:ann@example.com'] }]));
    const access = (await rest(api('/datasets/a'))).body.access as Record<string, string>[];
    expect(access).toEqual(expect.arrayContaining([{ role: 'READER', userByEmail: 'ann@example.com' }, { role: 'OWNER', specialGroup: 'projectOwners' }]));
    expect(policyOf(tablePolicy).bindings).toEqual([{ role: 'roles/bigquery.dataEditor', members: ['group:g@example.com'] }]);
    // Transfer configs: creating one is not emulated (spec §4.11), listing finds none, a named one is not found.
    expect(mkTransfer.code).not.toBe(0);
    expect(oneLine(mkTransfer)).toContain('BigQuery error in mk operation: Creating transfer configs is not supported by the emulator');
    expect(lsTransfer.trim()).toBe('');
    expect(showTransfer.code).not.toBe(0);
    expect(oneLine(showTransfer)).toContain('Not found: Transfer config nope');
    expect(snap).toContain("Table 'test:a.t' successfully snapshotted to 'test:a.snap'");
    expect(clone).toContain("Table 'test:a.t' successfully cloned to 'test:a.clone'");

    writeFileSync(join(bq.dir, 'def.json'), def);
    const [removed, ext, restored, snapInfo, dropped, modelExport] = await Promise.all([
      bq('--format=json', 'remove-iam-policy-binding', '--member=user:ann@example.com', '--role=roles/bigquery.dataViewer', 'a'),
      bq('mk', '--external_table_definition=./def.json', 'a.ext'),
      bq('cp', '--restore', 'a.snap', 'a.restored'),
      bq('--format=prettyjson', 'show', 'a.snap'),
      (async () => {
        await bq('mk', '--dataset', 'gone');
        await bq('rm', '-f', '-d', 'gone');
        return bq('undelete', 'gone');
      })(),
      bq.run('extract', '--model', 'a.m', 'gs://bkt/model'),
    ]);
    // Models are metadata only: an export is refused at insert, saying why.
    expect(modelExport.code).not.toBe(0);
    expect(oneLine(modelExport)).toContain('Exporting models is not supported by the emulator');
    expect(policyOf(removed).bindings).toEqual(expect.arrayContaining([{ role: 'roles/bigquery.dataViewer', members: ['projectViewer:test'] }]));
    expect(ext).toContain("Table 'test:a.ext' successfully created.");
    // An autodetected external definition (bq mkdef): the inferred schema and the file's rows.
    const extTable = await rest(api('/datasets/a/tables/ext'));
    expect(extTable.body.schema.fields.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual(['n:INTEGER', 's:STRING']);
    // external-tables.md, Limitations: no tabledata.list of an external table (overturned by sql66: this listed it); a query reads it.
    expect((await rest(api('/queries'), { method: 'POST', json: { query: 'SELECT COUNT(*) FROM a.ext', useLegacySql: false } })).body.rows).toEqual([{ f: [{ v: '2' }] }]);
    expect(restored).toContain("Table 'test:a.snap' successfully restored to 'test:a.restored'");
    expect(JSON.parse(snapInfo)).toMatchObject({ type: 'SNAPSHOT', snapshotDefinition: { baseTableReference: { tableId: 't' } } });
    expect((await rest(api('/datasets/a/tables/restored'))).body.type).toBe('TABLE');
    expect(dropped).toContain('Dataset undelete of test:gone successfully started');
    expect((await rest(api('/datasets/gone'))).status).toBe(200);
  }, 150_000);
});
