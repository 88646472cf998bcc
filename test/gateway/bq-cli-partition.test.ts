// `bq partition`: date-sharded tables (prefix + YYYYMMDD) copied into the
// partitions of one table, a copy job per shard to `dest$YYYYMMDD`. Into a
// table partitioned by a DATE column the shards' rows land in their
// partitions. A destination bq has to create itself is partitioned by
// ingestion time (_PARTITIONTIME): each shard's rows get that partition's time.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { bqFor, hasBq, type Bq } from './bq-cli-setup.js';

describe.skipIf(!hasRealEngine() || !hasBq())('bq partition', () => {
  let emu: Emulator;
  let bq: Bq;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;
  const query = async (q: string) => {
    const r = await rest(api('/queries'), { method: 'POST', json: { query: q, useLegacySql: false } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  beforeAll(async () => {
    emu = await startEmulator();
    bq = bqFor(emu.url, { direct: true });
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'sh' } } })).status).toBe(200);
    for (const day of ['20240101', '20240102', '20240103']) {
      await query(`CREATE TABLE sh.ev_${day} AS SELECT DATE '${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}' AS day, n FROM UNNEST([1, 2]) AS n`);
    }
    await query('CREATE TABLE sh.not_a_shard (day DATE, n INT64)');
    await query('CREATE TABLE sh.by_day (day DATE, n INT64) PARTITION BY day');
  });
  afterAll(async () => emu?.stop());

  it('copies each shard into its partition of a table partitioned by a DATE column', async () => {
    const out = await bq('partition', 'sh.ev_', 'sh.by_day');
    expect(out).toContain('Copying 3 source partitions to test:sh.by_day');
    for (const day of ['20240101', '20240102', '20240103']) expect(out).toContain(`Successfully copied test:sh.ev_${day} to test:sh.by_day$${day}`);
    const r = await query('SELECT FORMAT_DATE("%Y%m%d", day) AS d, COUNT(*) AS n FROM sh.by_day GROUP BY d ORDER BY d');
    expect(r.rows.map((x: { f: { v: string }[] }) => x.f.map((c) => c.v))).toEqual([['20240101', '2'], ['20240102', '2'], ['20240103', '2']]);
    // Again with --no_clobber: the partitions hold rows, so bq copies nothing over them.
    const again = await bq.run('partition', '-n', 'sh.ev_', 'sh.by_day');
    expect(again.stdout + again.stderr).not.toContain('Successfully copied');
    expect((await query('SELECT COUNT(*) FROM sh.by_day')).rows[0].f[0].v).toBe('6');
  });

  it('into a destination bq creates, partitioned by ingestion time, each shard lands in its partition', async () => {
    const out = await bq('partition', 'sh.ev_', 'sh.by_ingestion');
    for (const day of ['20240101', '20240102', '20240103']) expect(out).toContain(`Successfully copied test:sh.ev_${day} to test:sh.by_ingestion$${day}`);
    const t = await rest(api('/datasets/sh/tables/by_ingestion'));
    expect(t.body.timePartitioning).toEqual({ type: 'DAY' });
    // The pseudo-column is no field of the table.
    expect(t.body.schema.fields.map((f: { name: string }) => f.name)).toEqual(['day', 'n']);
    const r = await query('SELECT FORMAT_DATE("%Y%m%d", _PARTITIONDATE) AS p, COUNTIF(day = _PARTITIONDATE) AS same, COUNT(*) AS n FROM sh.by_ingestion GROUP BY p ORDER BY p');
    expect(r.rows.map((x: { f: { v: string }[] }) => x.f.map((c) => c.v))).toEqual([['20240101', '2', '2'], ['20240102', '2', '2'], ['20240103', '2', '2']]);
    // bq rm of a partition decorator deletes that partition's rows; the table stays.
    await bq('rm', '-f', '-t', 'sh.by_ingestion$20240102');
    const left = await query('SELECT FORMAT_DATE("%Y%m%d", _PARTITIONDATE) AS p, COUNT(*) FROM sh.by_ingestion GROUP BY p ORDER BY p');
    expect(left.rows.map((x: { f: { v: string }[] }) => x.f.map((c) => c.v))).toEqual([['20240101', '2'], ['20240103', '2']]);
  });

  it('bq load into a partition decorator replaces only that partition with WRITE_TRUNCATE; bq query reads _PARTITIONTIME', async () => {
    await query('CREATE TABLE sh.ing (name STRING) PARTITION BY _PARTITIONDATE');
    const dir = mkdtempSync(join(tmpdir(), 'bq-ing-'));
    const csv = (name: string, rows: string[]): string => {
      const f = join(dir, name);
      writeFileSync(f, rows.join('\n') + '\n');
      return f;
    };
    await bq('load', '--source_format=CSV', 'sh.ing$20240101', csv('a.csv', ['a1', 'a2']), 'name:STRING');
    await bq('load', '--source_format=CSV', 'sh.ing$20240102', csv('b.csv', ['b1']), 'name:STRING');
    await bq('load', '--source_format=CSV', '--replace', 'sh.ing$20240101', csv('c.csv', ['c1']), 'name:STRING');
    const out = await bq('--format=json', 'query', '--use_legacy_sql=false', 'SELECT name, _PARTITIONTIME AS pt FROM sh.ing ORDER BY name');
    expect(JSON.parse(out)).toEqual([
      { name: 'b1', pt: '2024-01-02 00:00:00' },
      { name: 'c1', pt: '2024-01-01 00:00:00' },
    ]);
  });
});
