// What dbt-bigquery sends for `dbt seed && dbt run && dbt test && dbt snapshot`,
// run twice (the second pass takes the incremental and snapshot-merge paths),
// then `dbt docs generate`'s catalog query and the grants round trip, through
// the real Node client. The SQL is written as dbt renders it from the
// dbt-bigquery / dbt-adapters macros: the query-comment header, backquoted
// `project`.`dataset`.`table` names, `OPTIONS()` even when empty, labels as
// Python tuples, descriptions in triple quotes, scripts with DECLARE/SET for
// insert_overwrite, `on FALSE` merges, the snapshot staging CTE chain with
// dbt_scd_id = to_hex(md5(...)). API calls are the ones the adapter makes
// itself: datasets.insert/get/list, tables.get/list/patch, load jobs for
// seeds, copy jobs with partition decorators for copy_partitions.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery, type Job, type Query } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const P = 'dbt-proj';
const D = 'analytics';
const rel = (t: string): string => `\`${P}\`.\`${D}\`.\`${t}\``;
const TMP_OPTS = 'OPTIONS(\n      expiration_timestamp=TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 12 hour)\n    )';

type Row = Record<string, unknown>;

// Seeds as dbt finds them in seeds/*.csv; the second pass edits them.
const CUSTOMERS_CSV = `id,first_name,last_name,email,signup_date
1,Ada,Lovelace,ada@example.com,2024-01-01
2,Grace,Hopper,grace@example.com,2024-01-02
3,Linus,Torvalds,,2024-01-02
4,Barbara,Liskov,barbara@example.com,2024-01-03
`;
const ORDERS_CSV_1 = `id,customer_id,order_date,status,amount,updated_at
1,1,2024-01-01,completed,10.5,2024-01-01 10:00:00
2,2,2024-01-02,shipped,20,2024-01-02 11:00:00
3,2,2024-01-02,placed,5.25,2024-01-02 12:00:00
4,3,2024-01-03,placed,7,2024-01-03 09:30:00
5,4,2024-01-03,COMPLETED,12,2024-01-03 15:45:00
`;
// Pass 2: order 3 shipped (updated later), order 6 new on a new day.
const ORDERS_CSV_2 = `id,customer_id,order_date,status,amount,updated_at
1,1,2024-01-01,completed,10.5,2024-01-01 10:00:00
2,2,2024-01-02,shipped,20,2024-01-02 11:00:00
3,2,2024-01-02,shipped,5.25,2024-01-05 08:00:00
4,3,2024-01-03,placed,7,2024-01-03 09:30:00
5,4,2024-01-03,COMPLETED,12,2024-01-03 15:45:00
6,1,2024-01-04,placed,30,2024-01-04 18:00:00
`;
const EVENTS_CSV = `id,order_id,event_type,event_time
1,1,created,2024-01-01 10:00:00 UTC
2,2,created,2024-01-02 11:00:00 UTC
3,2,shipped,2024-01-02 23:59:59 UTC
4,3,created,2024-01-03 00:00:00 UTC
`;

describe('dbt-bigquery flow (seed, run, test, snapshot, twice; docs; grants)', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let dir: string;
  const invocation = 'f2a9e0c4-5d1b-4c3e-9a77-0123456789ab';

  /** dbt's query comment, prepended to every statement it runs. */
  const comment = (node: string): string =>
    `/* {"app": "dbt", "dbt_version": "1.9.1", "profile_name": "jaffle_shop", "target_name": "dev", "node_id": "${node}"} */\n`;

  /** One statement or script the way the adapter runs it: jobs.insert with labels, then getQueryResults. */
  async function run(node: string, sql: string): Promise<{ rows: Row[]; job: Job; stats: Record<string, any> }> {
    const opts: Query = { query: comment(node) + sql, location: 'US', labels: { dbt_invocation_id: invocation } };
    const [job] = await bq.createQueryJob(opts);
    const [rows] = await job.getQueryResults();
    const [meta] = await job.getMetadata();
    return { rows: rows as Row[], job, stats: meta.statistics };
  }

  async function meta(table: string): Promise<Record<string, any>> {
    const [m] = await bq.dataset(D).table(table).getMetadata();
    return m as Record<string, any>;
  }

  /** adapter.load_dataframe: a load job from the CSV file with the agate-inferred schema, header skipped. */
  async function seed(table: string, csv: string, fields: { name: string; type: string }[]): Promise<void> {
    // bigquery__reset_csv_table on a re-seed: drop, then load again.
    const [exists] = await bq.dataset(D).table(table).exists();
    if (exists) await run(`seed.jaffle_shop.${table}`, `drop table if exists ${rel(table)}`);
    const file = join(dir, `${table}.csv`);
    writeFileSync(file, csv);
    const [job] = await bq.dataset(D).table(table).load(file, { sourceFormat: 'CSV', skipLeadingRows: 1, schema: { fields }, location: 'US' });
    expect(job.status?.errorResult).toBeUndefined();
  }

  const ordersSchema = [
    { name: 'id', type: 'INTEGER' },
    { name: 'customer_id', type: 'INTEGER' },
    { name: 'order_date', type: 'DATE' },
    { name: 'status', type: 'STRING' },
    { name: 'amount', type: 'FLOAT' },
    { name: 'updated_at', type: 'DATETIME' },
  ];

  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    dir = mkdtempSync(join(tmpdir(), 'dbt-seeds-'));
    emu = await startEmulator({ args: ['--project-id', P] });
    bq = new BigQuery({ projectId: P, apiEndpoint: emu.url, authClient: fakeAuth(), location: 'US' });
  });
  afterAll(async () => emu?.stop());

  it('schemas: datasets.get 404, create_dataset(exists_ok), CREATE SCHEMA IF NOT EXISTS, datasets.list', async () => {
    const [exists] = await bq.dataset(D).exists();
    expect(exists).toBe(false);
    await bq.createDataset(D, { location: 'US' });
    // exists_ok: a second insert answers 409, which the adapter swallows.
    await expect(bq.createDataset(D, { location: 'US' })).rejects.toMatchObject({ code: 409 });
    await run('model.jaffle_shop.stg_orders', `create schema if not exists \`${P}\`.\`${D}_snapshots\``);
    const [datasets] = await bq.getDatasets();
    expect(datasets.map((d) => d.id).sort()).toEqual([D, `${D}_snapshots`]);
  });

  it('dbt seed: load jobs from CSV with the agate schema', async () => {
    await seed('raw_customers', CUSTOMERS_CSV, [
      { name: 'id', type: 'INTEGER' },
      { name: 'first_name', type: 'STRING' },
      { name: 'last_name', type: 'STRING' },
      { name: 'email', type: 'STRING' },
      { name: 'signup_date', type: 'DATE' },
    ]);
    await seed('raw_orders', ORDERS_CSV_1, ordersSchema);
    // column_types: {event_time: timestamp}
    await seed('raw_events', EVENTS_CSV, [
      { name: 'id', type: 'INTEGER' },
      { name: 'order_id', type: 'INTEGER' },
      { name: 'event_type', type: 'STRING' },
      { name: 'event_time', type: 'TIMESTAMP' },
    ]);
    expect((await meta('raw_customers')).numRows).toBe('4');
    expect((await meta('raw_orders')).numRows).toBe('5');
    const { rows } = await run('seed.jaffle_shop.raw_events', `select count(*) as n, min(event_time) as first from ${rel('raw_events')}`);
    expect(rows[0]!['n']).toBe(4);
    expect((rows[0]!['first'] as { value: string }).value).toBe('2024-01-01T10:00:00.000Z');
    // persist_docs for the seed: the adapter patches the schema with column descriptions.
    const table = bq.dataset(D).table('raw_customers');
    const m = await meta('raw_customers');
    const fields = (m.schema.fields as { name: string; description?: string }[]).map((f) => (f.name === 'email' ? { ...f, description: 'May be empty' } : f));
    await table.setMetadata({ schema: { fields } });
    expect((await meta('raw_customers')).schema.fields[3]).toMatchObject({ name: 'email', type: 'STRING', description: 'May be empty' });
  });

  // ---- dbt run (pass 1) ----

  const STG_ORDERS = `create or replace view ${rel('stg_orders')}
  OPTIONS(
      description="""Orders, cleaned up""",
      labels=[('layer', 'staging')]
    )
  as with source as (

    select * from ${rel('raw_orders')}

),

renamed as (

    select
        id as order_id,
        customer_id,
        order_date,
        lower(status) as status,
        cast(round(amount * 100) as int64) as amount_cents,
        updated_at

    from source

)

select * from renamed;
`;

  const CUSTOMERS_SQL = `with customers as (

    select
        id as customer_id,
        first_name,
        last_name,
        signup_date
    from ${rel('raw_customers')}

),

orders as (

    select * from ${rel('stg_orders')}

),

customer_orders as (

    select
        customer_id,

        min(order_date) as first_order,
        max(order_date) as most_recent_order,
        count(order_id) as number_of_orders,
        sum(amount_cents) / 100 as lifetime_value

    from orders

    group by customer_id

)

select
    customers.customer_id,
    customers.first_name,
    customers.last_name,
    customers.signup_date,
    customer_orders.first_order,
    customer_orders.most_recent_order,
    coalesce(customer_orders.number_of_orders, 0) as number_of_orders,
    customer_orders.lifetime_value

from customers

left join customer_orders using (customer_id)`;

  const DAILY_SQL = (incremental: boolean): string => `select
    order_date,
    count(*) as n_orders,
    sum(amount_cents) as revenue_cents
from ${rel('stg_orders')}
${incremental ? 'where order_date >= date_sub(_dbt_max_partition, interval 1 day)' : ''}
group by order_date`;

  const MERGE_SQL = (incremental: boolean): string => `select * from ${rel('stg_orders')}
${incremental ? `where updated_at > (select max(updated_at) from ${rel('orders_merge')})` : ''}`;

  /** The microbatch model with dbt's event-time filter on its ref, one batch = one day. */
  const EVENTS_SQL = (day: string, next: string): string => `select
    id as event_id,
    order_id,
    event_type,
    event_time
from (select * from ${rel('raw_events')} where event_time >= '${day} 00:00:00+00:00' and event_time < '${next} 00:00:00+00:00')`;

  const insertOverwriteMerge = (table: string, source: string, predicate: string, cols: string[]): string => {
    const list = cols.map((c) => `\`${c}\``).join(', ');
    return `merge into ${rel(table)} as DBT_INTERNAL_DEST
        using ${source} as DBT_INTERNAL_SOURCE
        on FALSE

    when not matched by source
         and ${predicate}
        then delete

    when not matched then insert
        (${list})
    values
        (${list})
`;
  };

  async function dbtRunPass1(): Promise<void> {
    await run('model.jaffle_shop.stg_orders', STG_ORDERS);

    // A table model the materialized view reads: a partitioned materialized view needs a base table partitioned the
    // same way (data-definition-language.md, CREATE MATERIALIZED VIEW, partition_expression), and a seed is not.
    await run(
      'model.jaffle_shop.orders_dated',
      `create or replace table ${rel('orders_dated')}
    partition by order_date

    OPTIONS()
    as (
      select order_date, status from ${rel('raw_orders')}
    );`,
    );

    // materialized_view (bigquery__get_create_materialized_view_as_sql)
    await run(
      'model.jaffle_shop.orders_by_day_mv',
      `create materialized view ${rel('orders_by_day_mv')}
        partition by order_date
        cluster by status
        options(
            enable_refresh = True,refresh_interval_minutes = 30.0,kms_key_name = 'projects/dbt-proj/locations/us/keyRings/dbt/cryptoKeys/mv',description = """Orders per day and status"""
        )
    as select order_date, status, count(*) as n from ${rel('orders_dated')} group by order_date, status`,
    );

    await run(
      'model.jaffle_shop.customers',
      `

  create or replace table ${rel('customers')}

    partition by signup_date
    cluster by customer_id

    OPTIONS(
      description="""One row per customer, with their order history""",

      labels=[('team', 'analytics'), ('tier', 'gold')]
    )
    as (
      ${CUSTOMERS_SQL}
    );
  `,
    );

    // incremental, strategy merge, first run: plain CTAS with an empty OPTIONS().
    await run(
      'model.jaffle_shop.orders_merge',
      `create or replace table ${rel('orders_merge')}
    partition by order_date
    cluster by status, customer_id

    OPTIONS()
    as (
      ${MERGE_SQL(false)}
    );`,
    );

    // incremental, insert_overwrite, first run; require_partition_filter on the target.
    await run(
      'model.jaffle_shop.orders_daily',
      `create or replace table ${rel('orders_daily')}
    partition by order_date

    OPTIONS(
      require_partition_filter=True
    )
    as (
      ${DAILY_SQL(false)}
    );`,
    );

    // insert_overwrite with copy_partitions, integer-range partitioned: first run is a CTAS.
    await run(
      'model.jaffle_shop.orders_by_customer',
      `create or replace table ${rel('orders_by_customer')}
    partition by range_bucket(
            customer_id,
            generate_array(0, 10, 1)
        )

    OPTIONS()
    as (
      select customer_id, count(*) as n_orders, max(updated_at) as last_update from ${rel('stg_orders')} group by customer_id
    );`,
    );

    // microbatch (batch_size day): the first batch creates the table, later ones are static insert_overwrites.
    const days = ['2024-01-01', '2024-01-02', '2024-01-03'];
    await run(
      'model.jaffle_shop.events_daily',
      `create or replace table ${rel('events_daily')}
    partition by timestamp_trunc(event_time, day)

    OPTIONS()
    as (
      ${EVENTS_SQL(days[0]!, days[1]!)}
    );`,
    );
    for (let i = 1; i < days.length; i++) {
      const next = i + 1 < days.length ? days[i + 1]! : '2024-01-04';
      await run(
        'model.jaffle_shop.events_daily',
        `-- 1. run the merge statement
      ${insertOverwriteMerge('events_daily', `(\n${EVENTS_SQL(days[i]!, next)}\n  )`, `timestamp_trunc(DBT_INTERNAL_DEST.event_time, day) in (\n              '${days[i]} 00:00:00+00:00'\n          )`, ['event_id', 'order_id', 'event_type', 'event_time'])};`,
      );
    }
  }

  it('dbt run (pass 1): view, partitioned/clustered table with options, incremental first builds, microbatch', async () => {
    await dbtRunPass1();
    // dbt's cache: tables.list of the schema
    const [tables] = await bq.dataset(D).getTables();
    const kinds = Object.fromEntries(tables.map((t) => [t.id, (t.metadata as { type: string }).type]));
    expect(kinds).toEqual({
      customers: 'TABLE',
      events_daily: 'TABLE',
      orders_by_customer: 'TABLE',
      orders_daily: 'TABLE',
      orders_dated: 'TABLE',
      orders_merge: 'TABLE',
      orders_by_day_mv: 'MATERIALIZED_VIEW',
      raw_customers: 'TABLE',
      raw_events: 'TABLE',
      raw_orders: 'TABLE',
      stg_orders: 'VIEW',
    });

    const mv = await meta('orders_by_day_mv');
    expect(mv).toMatchObject({
      type: 'MATERIALIZED_VIEW',
      description: 'Orders per day and status',
      timePartitioning: { type: 'DAY', field: 'order_date' },
      clustering: { fields: ['status'] },
      materializedView: { enableRefresh: true, refreshIntervalMs: '1800000' },
      encryptionConfiguration: { kmsKeyName: 'projects/dbt-proj/locations/us/keyRings/dbt/cryptoKeys/mv' },
    });

    const view = await meta('stg_orders');
    expect(view.type).toBe('VIEW');
    expect(view.description).toBe('Orders, cleaned up');
    expect(view.labels).toEqual({ layer: 'staging' });

    const c = await meta('customers');
    expect(c.numRows).toBe('4');
    expect(c.timePartitioning).toEqual({ type: 'DAY', field: 'signup_date' });
    expect(c.clustering).toEqual({ fields: ['customer_id'] });
    expect(c.description).toBe('One row per customer, with their order history');
    expect(c.labels).toEqual({ team: 'analytics', tier: 'gold' });
    expect((c.schema.fields as { name: string; type: string }[]).map((f) => `${f.name}:${f.type}`)).toEqual([
      'customer_id:INTEGER',
      'first_name:STRING',
      'last_name:STRING',
      'signup_date:DATE',
      'first_order:DATE',
      'most_recent_order:DATE',
      'number_of_orders:INTEGER',
      'lifetime_value:FLOAT',
    ]);
    const { rows } = await run('model.jaffle_shop.customers', `select customer_id, number_of_orders, lifetime_value from ${rel('customers')} order by customer_id`);
    expect(rows).toEqual([
      { customer_id: 1, number_of_orders: 1, lifetime_value: 10.5 },
      { customer_id: 2, number_of_orders: 2, lifetime_value: 25.25 },
      { customer_id: 3, number_of_orders: 1, lifetime_value: 7 },
      { customer_id: 4, number_of_orders: 1, lifetime_value: 12 },
    ]);

    const m = await meta('orders_merge');
    expect(m.numRows).toBe('5');
    expect(m.timePartitioning).toEqual({ type: 'DAY', field: 'order_date' });
    expect(m.clustering).toEqual({ fields: ['status', 'customer_id'] });

    const daily = await meta('orders_daily');
    expect(daily.requirePartitionFilter).toBe(true);
    // tables.md: timePartitioning.requirePartitionFilter is the deprecated twin of the table-level setting and shows it.
    expect(daily.timePartitioning).toEqual({ type: 'DAY', field: 'order_date', requirePartitionFilter: true });

    const byCustomer = await meta('orders_by_customer');
    expect(byCustomer.rangePartitioning).toEqual({ field: 'customer_id', range: { start: '0', end: '10', interval: '1' } });

    const ev = await meta('events_daily');
    expect(ev.timePartitioning).toEqual({ type: 'DAY', field: 'event_time' });
    const e = await run('model.jaffle_shop.events_daily', `select event_id from ${rel('events_daily')} order by event_id`);
    expect(e.rows.map((r) => r['event_id'])).toEqual([1, 2, 3, 4]);
  });

  it('persist_docs: column descriptions through tables.patch of the schema', async () => {
    const m = await meta('customers');
    const fields = (m.schema.fields as { name: string; description?: string }[]).map((f) =>
      f.name === 'customer_id' ? { ...f, description: 'Primary key' } : f.name === 'lifetime_value' ? { ...f, description: 'Sum of order amounts' } : f,
    );
    await bq.dataset(D).table('customers').setMetadata({ schema: { fields } });
    const after = await meta('customers');
    expect(after.schema.fields[0]).toEqual({ name: 'customer_id', type: 'INTEGER', mode: 'NULLABLE', description: 'Primary key' });
    expect(after.schema.fields[7].description).toBe('Sum of order amounts');
    // the table's own options survive the patch
    expect(after.description).toBe('One row per customer, with their order history');
    expect(after.clustering).toEqual({ fields: ['customer_id'] });
  });

  // ---- dbt test ----

  const wrapTest = (sql: string): string => `select
      count(*) as failures,
      count(*) != 0 as should_warn,
      count(*) != 0 as should_error
    from (
      ${sql}
    ) dbt_internal_test`;

  async function dbtTest(): Promise<Record<string, number>> {
    const tests: Record<string, string> = {
      unique_customers_customer_id: `
with dbt_test__target as (

  select customer_id as unique_field
  from ${rel('customers')}
  where customer_id is not null

)

select
    unique_field,
    count(*) as n_records

from dbt_test__target
group by unique_field
having count(*) > 1
`,
      not_null_customers_customer_id: `
select customer_id
from ${rel('customers')}
where customer_id is null
`,
      accepted_values_stg_orders_status: `
with all_values as (

    select
        status as value_field,
        count(*) as n_records

    from ${rel('stg_orders')}
    group by status

)

select *
from all_values
where value_field not in (
    'placed','shipped','completed','returned'
)
`,
      relationships_stg_orders_customer_id: `
with child as (
    select customer_id as from_field
    from ${rel('stg_orders')}
    where customer_id is not null
),

parent as (
    select customer_id as to_field
    from ${rel('customers')}
)

select
    from_field

from child
left join parent
    on child.from_field = parent.to_field

where parent.to_field is null
`,
      not_null_raw_customers_email: `
select email
from ${rel('raw_customers')}
where email is null
`,
    };
    const out: Record<string, number> = {};
    for (const [name, sql] of Object.entries(tests)) {
      const { rows } = await run(`test.jaffle_shop.${name}`, wrapTest(sql));
      expect(rows).toHaveLength(1);
      const r = rows[0]!;
      expect(r['should_warn']).toBe(r['failures'] !== 0);
      expect(r['should_error']).toBe(r['failures'] !== 0);
      out[name] = r['failures'] as number;
    }
    return out;
  }

  it('dbt test (pass 1): unique, not_null, accepted_values, relationships', async () => {
    expect(await dbtTest()).toEqual({
      unique_customers_customer_id: 0,
      not_null_customers_customer_id: 0,
      accepted_values_stg_orders_status: 0,
      relationships_stg_orders_customer_id: 0,
      // CSV empty field loads as NULL: the seed test fails with one row
      not_null_raw_customers_email: 1,
    });
  });

  // ---- dbt snapshot ----

  const SNAP = 'orders_snapshot';
  const snapRel = `\`${P}\`.\`${D}_snapshots\`.\`${SNAP}\``;
  const snapTmp = `\`${P}\`.\`${D}_snapshots\`.\`${SNAP}__dbt_tmp\``;
  const SNAP_SOURCE = `

select * from ${rel('stg_orders')}
`;
  const scdId = `to_hex(md5(concat(coalesce(cast(order_id as string), ''), '|',coalesce(cast(updated_at as string), ''))))`;

  async function dbtSnapshot(first: boolean): Promise<void> {
    // check_time_data_types: the column schema of the snapshot query
    const probe = await run(`snapshot.jaffle_shop.${SNAP}`, `select * from (${SNAP_SOURCE}) as __dbt_sbq\n    where false\n    limit 0\n`);
    expect(probe.rows).toEqual([]);
    if (first) {
      await run(
        `snapshot.jaffle_shop.${SNAP}`,
        `create or replace table ${snapRel}

    OPTIONS()
    as (

    select *,
        ${scdId} as dbt_scd_id,
        updated_at as dbt_updated_at,
        updated_at as dbt_valid_from,
        coalesce(nullif(updated_at, updated_at), null)
  as dbt_valid_to
    from (
        ${SNAP_SOURCE}
    ) sbq

    );`,
      );
      return;
    }
    const staging = `with snapshot_query as (

        ${SNAP_SOURCE}

    ),

    snapshotted_data as (

        select *,
            order_id as dbt_unique_key

        from ${snapRel}
        where
                dbt_valid_to is null

    ),

    insertions_source_data as (

        select *,
            order_id as dbt_unique_key
,
            updated_at as dbt_updated_at,
            updated_at as dbt_valid_from,
            coalesce(nullif(updated_at, updated_at), null)
  as dbt_valid_to,
            ${scdId} as dbt_scd_id

        from snapshot_query
    ),

    updates_source_data as (

        select *,
            order_id as dbt_unique_key
,
            updated_at as dbt_updated_at,
            updated_at as dbt_valid_from,
            updated_at as dbt_valid_to

        from snapshot_query
    ),

    insertions as (

        select
            'insert' as dbt_change_type,
            source_data.*

        from insertions_source_data as source_data
        left outer join snapshotted_data on
                snapshotted_data.dbt_unique_key = source_data.dbt_unique_key
                where snapshotted_data.dbt_unique_key is null
                or (
                    snapshotted_data.dbt_unique_key is not null
                and (
                    (snapshotted_data.dbt_valid_from < source_data.updated_at)
                )
            )

    ),

    updates as (

        select
            'update' as dbt_change_type,
            source_data.*,
            snapshotted_data.dbt_scd_id

        from updates_source_data as source_data
        join snapshotted_data on
                snapshotted_data.dbt_unique_key = source_data.dbt_unique_key
        where (
            (snapshotted_data.dbt_valid_from < source_data.updated_at)
        )
    )

    select * from insertions
    union all
    select * from updates`;
    await run(`snapshot.jaffle_shop.${SNAP}`, `create or replace table ${snapTmp}\n    ${TMP_OPTS}\n    as (\n      ${staging}\n    );`);
    // the staging table's columns (tables.get) decide the merge's insert list
    const [stagingMeta] = await bq.dataset(`${D}_snapshots`).table(`${SNAP}__dbt_tmp`).getMetadata();
    const cols = (stagingMeta.schema.fields as { name: string }[]).map((f) => f.name).filter((n) => n !== 'dbt_change_type' && n !== 'dbt_unique_key');
    expect(cols).toEqual(['order_id', 'customer_id', 'order_date', 'status', 'amount_cents', 'updated_at', 'dbt_updated_at', 'dbt_valid_from', 'dbt_valid_to', 'dbt_scd_id']);
    expect(Number(stagingMeta.expirationTime)).toBeGreaterThan(Date.now() + 11 * 3600e3);
    const list = cols.map((c) => `\`${c}\``).join(', ');
    const merge = await run(
      `snapshot.jaffle_shop.${SNAP}`,
      `merge into ${snapRel} as DBT_INTERNAL_DEST
    using ${snapTmp} as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_scd_id = DBT_INTERNAL_DEST.dbt_scd_id

    when matched
     and DBT_INTERNAL_DEST.dbt_valid_to is null
     and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update
        set dbt_valid_to = DBT_INTERNAL_SOURCE.dbt_valid_to

    when not matched
     and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert (${list})
        values (${list})

`,
    );
    // order 3 closed (update) + its new version and order 6 (inserts)
    expect(merge.stats['query']['numDmlAffectedRows']).toBe('3');
    // bigquery__post_snapshot: drop the staging relation
    await run(`snapshot.jaffle_shop.${SNAP}`, `drop table if exists ${snapTmp}`);
  }

  it('dbt snapshot (pass 1): the snapshot table with dbt_scd_id = to_hex(md5(...))', async () => {
    await dbtSnapshot(true);
    const { rows } = await run(`snapshot.jaffle_shop.${SNAP}`, `select order_id, dbt_scd_id, dbt_valid_to, cast(dbt_valid_from as string) as vf from ${snapRel} order by order_id`);
    expect(rows).toHaveLength(5);
    expect(rows[0]).toEqual({ order_id: 1, dbt_scd_id: md5hex('1|2024-01-01 10:00:00'), dbt_valid_to: null, vf: '2024-01-01 10:00:00' });
    for (const r of rows) expect(r['dbt_scd_id']).toMatch(/^[0-9a-f]{32}$/);
  });

  // ---- pass 2 ----

  it('dbt seed (pass 2): the edited seed replaces the table', async () => {
    await seed('raw_orders', ORDERS_CSV_2, ordersSchema);
    expect((await meta('raw_orders')).numRows).toBe('6');
  });

  it('dbt run (pass 2): incremental merge on unique_key', async () => {
    const cols = ((await meta('orders_merge')).schema.fields as { name: string }[]).map((f) => f.name);
    const quoted = cols.map((c) => `\`${c}\``);
    const sql = `merge into ${rel('orders_merge')} as DBT_INTERNAL_DEST
        using (
           ${MERGE_SQL(true)}
        ) as DBT_INTERNAL_SOURCE
        on (
                DBT_INTERNAL_SOURCE.order_id = DBT_INTERNAL_DEST.order_id
            )

    when matched then update set
        ${quoted.map((c) => `${c} = DBT_INTERNAL_SOURCE.${c}`).join(',')}

    when not matched then insert
        (${quoted.join(', ')})
    values
        (${quoted.join(', ')})

`;
    const r = await run('model.jaffle_shop.orders_merge', sql);
    expect(r.stats['query']['statementType']).toBe('MERGE');
    expect(r.stats['query']['numDmlAffectedRows']).toBe('2');
    const { rows } = await run('model.jaffle_shop.orders_merge', `select order_id, status from ${rel('orders_merge')} order by order_id`);
    expect(rows.map((x) => `${x['order_id']}:${x['status']}`)).toEqual(['1:completed', '2:shipped', '3:shipped', '4:placed', '5:completed', '6:placed']);
  });

  it('dbt run (pass 2): insert_overwrite, dynamic partitions (DECLARE/SET script over a require_partition_filter table)', async () => {
    const script = `-- generated script to merge partitions into ${rel('orders_daily')}
      declare dbt_partitions_for_replacement array<date>;

      declare _dbt_max_partition date default (
      select max(order_date) from ${rel('orders_daily')}
      where order_date is not null
    );

       -- 1. create a temp table with model data

  create or replace table ${rel('orders_daily__dbt_tmp')}

    partition by order_date

    ${TMP_OPTS}
    as (
      ${DAILY_SQL(true)}
    );

      -- 2. define partitions to update
      set (dbt_partitions_for_replacement) = (
          select as struct
              -- IGNORE NULLS: this needs to be aligned to _dbt_max_partition, which ignores null
              array_agg(distinct order_date IGNORE NULLS)
          from ${rel('orders_daily__dbt_tmp')}
      );

      -- 3. run the merge statement
      ${insertOverwriteMerge('orders_daily', `(\n        select\n        * from ${rel('orders_daily__dbt_tmp')}\n      )`, 'DBT_INTERNAL_DEST.order_date in unnest(dbt_partitions_for_replacement)', ['order_date', 'n_orders', 'revenue_cents'])};

      -- 4. clean up the temp table
      drop table if exists ${rel('orders_daily__dbt_tmp')}

  `;
    const r = await run('model.jaffle_shop.orders_daily', script);
    expect(r.stats['query']['statementType']).toBe('SCRIPT');
    const [exists] = await bq.dataset(D).table('orders_daily__dbt_tmp').exists();
    expect(exists).toBe(false);
    // Partitions 2024-01-02..04 rebuilt from pass-2 data; 2024-01-01 untouched.
    const { rows } = await run(
      'model.jaffle_shop.orders_daily',
      `select cast(order_date as string) as d, n_orders, revenue_cents from ${rel('orders_daily')} where order_date >= '2024-01-01' order by order_date`,
    );
    expect(rows).toEqual([
      { d: '2024-01-01', n_orders: 1, revenue_cents: 1050 },
      { d: '2024-01-02', n_orders: 2, revenue_cents: 2525 },
      { d: '2024-01-03', n_orders: 2, revenue_cents: 1900 },
      { d: '2024-01-04', n_orders: 1, revenue_cents: 3000 },
    ]);
    // The filter the table requires is enforced.
    await expect(run('model.jaffle_shop.orders_daily', `select count(*) from ${rel('orders_daily')}`)).rejects.toThrow(
      /Cannot query over table 'dbt-proj\.analytics\.orders_daily' without a filter over column\(s\) 'order_date' that can be used for partition elimination/,
    );
  });

  it('dbt run (pass 2): insert_overwrite with copy_partitions (tmp table, distinct partitions, copy jobs to $decorators)', async () => {
    await run(
      'model.jaffle_shop.orders_by_customer',
      `create or replace table ${rel('orders_by_customer__dbt_tmp')}
    partition by range_bucket(
            customer_id,
            generate_array(0, 10, 1)
        )

    ${TMP_OPTS}
    as (
      select customer_id, count(*) as n_orders, max(updated_at) as last_update from ${rel('stg_orders')}
      where customer_id in (select customer_id from ${rel('stg_orders')} where updated_at > '2024-01-04')
      group by customer_id
    );`,
    );
    const parts = await run('model.jaffle_shop.orders_by_customer', `select distinct customer_id\n    from ${rel('orders_by_customer__dbt_tmp')}`);
    const ids = parts.rows.map((r) => r['customer_id'] as number).sort();
    expect(ids).toEqual([1, 2]);
    for (const id of ids) {
      const [job] = await bq
        .dataset(D)
        .table(`orders_by_customer__dbt_tmp$${id}`)
        .createCopyJob(bq.dataset(D).table(`orders_by_customer$${id}`), { writeDisposition: 'WRITE_TRUNCATE', createDisposition: 'CREATE_IF_NEEDED' });
      await job.promise();
    }
    await run('model.jaffle_shop.orders_by_customer', `-- Clean up the temp table\n  drop table if exists ${rel('orders_by_customer__dbt_tmp')}`);
    const { rows } = await run('model.jaffle_shop.orders_by_customer', `select customer_id, n_orders, cast(last_update as string) as u from ${rel('orders_by_customer')} order by customer_id`);
    expect(rows).toEqual([
      { customer_id: 1, n_orders: 2, u: '2024-01-04 18:00:00' },
      { customer_id: 2, n_orders: 2, u: '2024-01-05 08:00:00' },
      { customer_id: 3, n_orders: 1, u: '2024-01-03 09:30:00' },
      { customer_id: 4, n_orders: 1, u: '2024-01-03 15:45:00' },
    ]);
  });

  it('dbt test (pass 2) and dbt snapshot (pass 2): the merge closes changed rows and inserts new versions', async () => {
    await run('model.jaffle_shop.customers', `create or replace table ${rel('customers')}\n    partition by signup_date\n    cluster by customer_id\n\n    OPTIONS(\n      description="""One row per customer, with their order history""",\n\n      labels=[('team', 'analytics'), ('tier', 'gold')]\n    )\n    as (\n      ${CUSTOMERS_SQL}\n    );`);
    expect(await dbtTest()).toMatchObject({ unique_customers_customer_id: 0, relationships_stg_orders_customer_id: 0, accepted_values_stg_orders_status: 0 });
    await dbtSnapshot(false);
    const { rows } = await run(
      `snapshot.jaffle_shop.${SNAP}`,
      `select order_id, status, cast(dbt_valid_from as string) as vf, cast(dbt_valid_to as string) as vt from ${snapRel} order by order_id, dbt_valid_from`,
    );
    expect(rows).toEqual([
      { order_id: 1, status: 'completed', vf: '2024-01-01 10:00:00', vt: null },
      { order_id: 2, status: 'shipped', vf: '2024-01-02 11:00:00', vt: null },
      { order_id: 3, status: 'placed', vf: '2024-01-02 12:00:00', vt: '2024-01-05 08:00:00' },
      { order_id: 3, status: 'shipped', vf: '2024-01-05 08:00:00', vt: null },
      { order_id: 4, status: 'placed', vf: '2024-01-03 09:30:00', vt: null },
      { order_id: 5, status: 'completed', vf: '2024-01-03 15:45:00', vt: null },
      { order_id: 6, status: 'placed', vf: '2024-01-04 18:00:00', vt: null },
    ]);
    const [gone] = await bq.dataset(`${D}_snapshots`).table(`${SNAP}__dbt_tmp`).exists();
    expect(gone).toBe(false);
  });

  it('dbt docs generate: the catalog query over __TABLES__, TABLE_OPTIONS, MATERIALIZED_VIEWS, COLUMNS, COLUMN_FIELD_PATHS', async () => {
    const is = (v: string): string => `\`${P}\`.\`${D}\`.INFORMATION_SCHEMA.${v}`;
    const sql = `
            with
                table_shards as (
    select
        tables.project_id as table_catalog,
        tables.dataset_id as table_schema,
        coalesce(REGEXP_EXTRACT(tables.table_id, '^(.+)[0-9]{8}$'), tables.table_id) as table_name,
        tables.table_id as shard_name,
        REGEXP_EXTRACT(tables.table_id, '^.+([0-9]{8})$') as shard_index,
        REGEXP_CONTAINS(tables.table_id, '^.+[0-9]{8}$') and tables.type = 1 as is_date_shard,
        case
            when materialized_views.table_name is not null then 'materialized view'
            when tables.type = 1 then 'table'
            when tables.type = 2 then 'view'
            else 'external'
        end as table_type,
        tables.type = 1 as is_table,
        JSON_VALUE(table_description.option_value) as table_comment,
        tables.size_bytes,
        tables.row_count
    from \`${P}\`.\`${D}\`.__TABLES__ tables
    left join ${is('MATERIALIZED_VIEWS')} materialized_views
        on materialized_views.table_catalog = tables.project_id
        and materialized_views.table_schema = tables.dataset_id
        and materialized_views.table_name = tables.table_id
    left join ${is('TABLE_OPTIONS')} table_description
        on table_description.table_catalog = tables.project_id
        and table_description.table_schema = tables.dataset_id
        and table_description.table_name = tables.table_id
        and table_description.option_name = 'description'
                    where (upper(tables.dataset_id) = upper('${D}'))
                ),
                tables as (
    select distinct
        table_catalog,
        table_schema,
        table_name,
        is_date_shard,
        table_type,
        is_table,
        table_comment
    from table_shards
),
                table_stats as (
    select
        table_catalog,
        table_schema,
        table_name,
        max(shard_name) as latest_shard_name,
        min(shard_index) as shard_min,
        max(shard_index) as shard_max,
        count(shard_index) as shard_count,
        sum(size_bytes) as size_bytes,
        sum(row_count) as row_count
    from table_shards
    group by 1, 2, 3
),

                columns as (
    select
        columns.table_catalog,
        columns.table_schema,
        columns.table_name as shard_name,
        coalesce(paths.field_path, '<unknown>') as column_name,
        -- invent a row number to account for nested fields
        -- BQ does not treat these nested properties as independent fields
        row_number() over (
            partition by
                columns.table_catalog,
                columns.table_schema,
                columns.table_name
            order by
                columns.ordinal_position,
                paths.field_path
        ) as column_index,
        coalesce(paths.data_type, '<unknown>') as column_type,
        paths.description as column_comment,
        case when columns.is_partitioning_column = 'YES' then 1 else 0 end as is_partitioning_column,
        case when columns.is_partitioning_column = 'YES' then paths.field_path end as partition_column,
        case when columns.clustering_ordinal_position is not null then 1 else 0 end as is_clustering_column,
        case when columns.clustering_ordinal_position is not null then paths.field_path end as cluster_column,
        columns.clustering_ordinal_position
    from ${is('COLUMNS')} columns
    join ${is('COLUMN_FIELD_PATHS')} paths
        on paths.table_catalog = columns.table_catalog
        and paths.table_schema = columns.table_schema
        and paths.table_name = columns.table_name
        and paths.column_name = columns.column_name
    where columns.ordinal_position is not null
),
                column_stats as (
    select
        table_catalog,
        table_schema,
        shard_name,
        max(is_partitioning_column) = 1 as is_partitioned,
        max(partition_column) as partition_column,
        max(is_clustering_column) = 1 as is_clustered,
        array_to_string(
            array_agg(
                cluster_column ignore nulls
                order by clustering_ordinal_position
            ), ', '
        ) as clustering_columns
    from columns
    group by 1, 2, 3
)

    select
        tables.table_catalog as table_database,
        tables.table_schema,
        case
            when tables.is_date_shard then concat(tables.table_name, '*')
            else tables.table_name
        end as table_name,
        tables.table_type,
        tables.table_comment,
        columns.column_name,
        columns.column_index,
        columns.column_type,
        columns.column_comment,
        '# Rows' as \`stats__num_rows__label\`,
        table_stats.row_count as \`stats__num_rows__value\`,
        tables.is_table as \`stats__num_rows__include\`,
        column_stats.partition_column as \`stats__partitioning_type__value\`,
        column_stats.is_partitioned as \`stats__partitioning_type__include\`,
        column_stats.clustering_columns as \`stats__clustering_fields__value\`,
        column_stats.is_clustered as \`stats__clustering_fields__include\`
    from tables
    join table_stats
        on table_stats.table_catalog = tables.table_catalog
        and table_stats.table_schema = tables.table_schema
        and table_stats.table_name = tables.table_name
    left join column_stats
        on column_stats.table_catalog = tables.table_catalog
        and column_stats.table_schema = tables.table_schema
        and column_stats.shard_name = table_stats.latest_shard_name
    left join columns
        on columns.table_catalog = tables.table_catalog
        and columns.table_schema = tables.table_schema
        and columns.shard_name = table_stats.latest_shard_name`;
    const { rows } = await run('generate_catalog', sql);
    const byCol = (t: string, c: string): Row | undefined => rows.find((r) => r['table_name'] === t && r['column_name'] === c);
    const cid = byCol('customers', 'customer_id')!;
    expect(cid).toMatchObject({
      table_database: P,
      table_schema: D,
      table_type: 'table',
      table_comment: 'One row per customer, with their order history',
      column_index: 1,
      column_type: 'INT64',
      stats__num_rows__value: 4,
      stats__num_rows__include: true,
      stats__partitioning_type__value: 'signup_date',
      stats__partitioning_type__include: true,
      stats__clustering_fields__value: 'customer_id',
      stats__clustering_fields__include: true,
    });
    expect(byCol('stg_orders', 'status')).toMatchObject({ table_type: 'view', table_comment: 'Orders, cleaned up', stats__num_rows__include: false, stats__clustering_fields__include: false });
    expect(byCol('raw_customers', 'email')).toMatchObject({ column_comment: 'May be empty', column_type: 'STRING', column_index: 4 });
    expect(byCol('orders_merge', 'customer_id')).toMatchObject({ stats__clustering_fields__value: 'status, customer_id' });
    // one row per column of every table and view in the dataset
    const tablesSeen = new Set(rows.map((r) => r['table_name']));
    expect([...tablesSeen].sort()).toEqual(['customers', 'events_daily', 'orders_by_customer', 'orders_by_day_mv', 'orders_daily', 'orders_dated', 'orders_merge', 'raw_customers', 'raw_events', 'raw_orders', 'stg_orders']);
    expect(byCol('orders_by_day_mv', 'n')).toMatchObject({ table_type: 'materialized view', table_comment: 'Orders per day and status', stats__partitioning_type__value: 'order_date', stats__clustering_fields__value: 'status' });
    expect(rows.filter((r) => r['table_name'] === 'customers')).toHaveLength(8);
  });

  it('grants: show grants (OBJECT_PRIVILEGES), grant, show again, revoke', async () => {
    const show = `select privilege_type, grantee from ${P}.\`region-us\`.INFORMATION_SCHEMA.OBJECT_PRIVILEGES
    where object_schema = "${D}" and object_name = "customers" and split(grantee, ':')[offset(1)] != current_user()`;
    const before = await run('model.jaffle_shop.customers', show);
    expect(before.rows).toEqual([]);
    await run('model.jaffle_shop.customers', `grant \`roles/bigquery.dataViewer\` on table ${rel('customers')} to "user:analyst@example.com";`);
    const after = await run('model.jaffle_shop.customers', show);
    expect(after.rows).toEqual([{ privilege_type: 'roles/bigquery.dataViewer', grantee: 'user:analyst@example.com' }]);
    await run('model.jaffle_shop.customers', `revoke \`roles/bigquery.dataViewer\` on table ${rel('customers')}  from "user:analyst@example.com";\n`);
    expect((await run('model.jaffle_shop.customers', show)).rows).toEqual([]);
  });

  it('on_schema_change, --full-refresh with a new partitioning, source freshness, store_failures', async () => {
    // on_schema_change='append_new_columns': bigquery__alter_relation_add_columns
    await run('model.jaffle_shop.orders_merge', `alter table ${rel('orders_merge')}\n        \n          add column amount_usd FLOAT64\n        \n`);
    expect(((await meta('orders_merge')).schema.fields as { name: string }[]).map((f) => f.name)).toContain('amount_usd');

    // --full-refresh after partition_by changed: a plain create or replace is refused, so
    // adapter.is_replaceable (tables.get) sends dbt to drop the table first.
    const ctas = `create or replace table ${rel('orders_merge')}
    partition by range_bucket(
            customer_id,
            generate_array(0, 100, 10)
        )
    cluster by status

    OPTIONS()
    as (
      ${MERGE_SQL(false)}
    );`;
    await expect(run('model.jaffle_shop.orders_merge', ctas)).rejects.toThrow(
      /Cannot replace a table with a different partitioning spec\. Instead, DROP the table, and then recreate it\. New partitioning spec is range\(type:integer,field:customer_id,start:0,end:100,interval:10\) clustering\(status\) and existing spec is interval\(type:day,field:order_date\) clustering\(status,customer_id\)/,
    );
    expect((await meta('orders_merge')).timePartitioning).toEqual({ type: 'DAY', field: 'order_date' });
    await run('model.jaffle_shop.orders_merge', `drop table if exists ${rel('orders_merge')}`);
    await run('model.jaffle_shop.orders_merge', ctas);
    const m = await meta('orders_merge');
    expect(m.rangePartitioning).toEqual({ field: 'customer_id', range: { start: '0', end: '100', interval: '10' } });
    expect(m.timePartitioning).toBeUndefined();
    expect(m.numRows).toBe('6');

    // dbt source freshness / get_relation_last_modified
    const before = Date.now();
    const fresh = await run(
      'source.jaffle_shop.raw.orders',
      `select
      project_id as table_database,
      dataset_id as table_schema,
      table_id as identifier,
      TIMESTAMP_MILLIS(last_modified_time) as last_modified,
      current_timestamp() as snapshotted_at
    from \`${P}\`.\`${D}\`.__TABLES__
    where (upper(dataset_id) = upper('${D}') and upper(table_id) = upper('raw_orders'))`,
    );
    expect(fresh.rows).toHaveLength(1);
    expect(fresh.rows[0]).toMatchObject({ table_database: P, table_schema: D, identifier: 'raw_orders' });
    const modified = Date.parse((fresh.rows[0]!['last_modified'] as { value: string }).value);
    expect(modified).toBeLessThanOrEqual(before);
    expect(modified).toBeGreaterThan(before - 10 * 60_000);

    // dbt test --store-failures: the audit schema and table of the failing rows
    await run('test.jaffle_shop.not_null_raw_customers_email', `create schema if not exists \`${P}\`.\`${D}_dbt_test__audit\``);
    await run(
      'test.jaffle_shop.not_null_raw_customers_email',
      `create or replace table \`${P}\`.\`${D}_dbt_test__audit\`.\`not_null_raw_customers_email\`

    OPTIONS()
    as (
      select *
from ${rel('raw_customers')}
where email is null
    );`,
    );
    const audit = await run('test.jaffle_shop.not_null_raw_customers_email', `select id, first_name from \`${P}\`.\`${D}_dbt_test__audit\`.\`not_null_raw_customers_email\``);
    expect(audit.rows).toEqual([{ id: 3, first_name: 'Linus' }]);
  });

  it('drop_relation: drop view if exists / drop table if exists', async () => {
    await run('model.jaffle_shop.stg_orders', `drop view if exists ${rel('stg_orders')}`);
    await run('model.jaffle_shop.orders_daily', `drop table if exists ${rel('orders_daily')}`);
    await run('model.jaffle_shop.orders_daily', `drop table if exists ${rel('orders_daily')}`);
    const [tables] = await bq.dataset(D).getTables();
    expect(tables.map((t) => t.id)).not.toContain('stg_orders');
    expect(tables.map((t) => t.id)).not.toContain('orders_daily');
  });

  it("tables.get on a query job's anonymous destination table", async () => {
    const before = Date.now();
    const [job] = await bq.createQueryJob({ query: `select customer_id, first_name from unnest(['ada', 'grace', 'linus', 'barbara']) as first_name with offset as customer_id`, location: 'US' });
    await job.getQueryResults();
    const [jm] = await job.getMetadata();
    const dest = jm.configuration.query.destinationTable as { projectId: string; datasetId: string; tableId: string };
    expect(dest.datasetId.startsWith('_')).toBe(true);
    const r = await rest(`${emu.url}/bigquery/v2/projects/${dest.projectId}/datasets/${dest.datasetId}/tables/${dest.tableId}`);
    expect(r.status).toBe(200);
    const t = r.body as Record<string, any>;
    expect(t).toMatchObject({
      kind: 'bigquery#table',
      id: `${dest.projectId}:${dest.datasetId}.${dest.tableId}`,
      tableReference: dest,
      type: 'TABLE',
      numRows: '4',
      location: 'US',
      schema: { fields: [{ name: 'customer_id', type: 'INTEGER', mode: 'NULLABLE' }, { name: 'first_name', type: 'STRING', mode: 'NULLABLE' }] },
    });
    const created = Number(t.creationTime);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(Date.now());
    expect(Number(t.expirationTime) - created).toBe(24 * 3600e3);
    // the Node client's view of it
    const [m] = await bq.dataset(dest.datasetId, { projectId: dest.projectId }).table(dest.tableId).getMetadata();
    expect(m.numRows).toBe('4');
    // a table of that dataset that was never a result is still a 404
    const missing = await rest(`${emu.url}/bigquery/v2/projects/${dest.projectId}/datasets/${dest.datasetId}/tables/anon_nope`);
    expect(missing.status).toBe(404);
  });
});

function md5hex(s: string): string {
  return createHash('md5').update(s).digest('hex');
}
