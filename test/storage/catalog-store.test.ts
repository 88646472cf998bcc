// The catalog is catalog.store (a checkpoint) plus catalog.log (a record per
// commit since). After every kind of change, what a restart reads back (the
// checkpoint and the log's records replayed, with or without a clean close)
// is the catalog in memory; a DDL costs one record, whatever the catalog's
// size; a checkpoint is exactly JSON.stringify of the catalog.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { deleteChild, putChild } from '../../src/engine/children.js';
import { deleteDataset, insertDataset, undeleteDataset, updateDataset } from '../../src/engine/datasets.js';
import { deleteTable, insertTable, updateTable } from '../../src/engine/tables.js';
import { atomicWrite } from '../../src/storage/fsutil.js';
import { Storage } from '../../src/storage/store.js';
import { restFieldToColumn } from '../../src/types/schema.js';
import { tempDir } from '../engine/helpers.js';
import { seededRandom } from '../../src/executor/operators/sample.js';

const onDisk = (st: Storage): string => fs.readFileSync(st.catalogFile, 'utf8');
/** The catalog without its log position (a reopen checkpoints, which moves it). */
const plain = (st: Storage): string => JSON.stringify({ ...st.catalogObject(), seq: 0 });
const logBytes = (dir: string): number => fs.statSync(path.join(dir, 'catalog.log')).size;

describe('catalog.store', () => {
  it('reads back as it was after creates, patches, renames, drops, children and undeletes, with and without a clean close', async () => {
    const dir = tempDir();
    let st = await Storage.open(dir, { noLock: true });
    let cat = new EngineCatalog(st);
    const rand = seededRandom(20261122);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const datasets: [string, string][] = [];
    for (const p of ['proj-a', 'proj-b']) {
      for (const d of ['raw', 'staging', 'marts', 'snapshots']) {
        await insertDataset(st, p, d, { datasetReference: { projectId: p, datasetId: d }, description: `${d} of ${p}`, labels: { env: 'dev' } });
        datasets.push([p, d]);
      }
    }
    const live = new Map<string, [string, string, string]>();
    const deletedDatasets: [string, string][] = [];
    /** Dropped tables and their entries then: snapshots kept in deleted-tables.log, not in the catalog. */
    const dropped: [string, string, string, unknown][] = [];
    let n = 0;
    const kinds: Record<string, number> = {};
    for (let step = 0; step < 400; step++) {
      const r = rand();
      const liveTables = [...live.values()].filter(([p, d, t]) => st.getTable(p, d, t));
      const liveDs = datasets.filter(([p, d]) => st.getDataset(p, d));
      let op: string;
      if (r < 0.35 || liveTables.length < 5) {
        op = 'create';
        const [p, d] = pick(liveDs);
        // Numeric-looking ids come first in a JS object's key order: the file must follow it too.
        const t = rand() < 0.1 ? String(n++) : `t_${n++}`;
        const view = rand() < 0.2;
        const body = view
          ? { view: { query: `SELECT ${n} AS x` }, description: 'a "view"\n' }
          : { schema: { fields: [{ name: 'id', type: 'INT64' }, { name: 'name', type: 'STRING', description: 'name ✓' }] }, labels: { team: 'a' } };
        await insertTable(st, p, d, t, body);
        live.set(`${p}.${d}.${t}`, [p, d, t]);
      } else if (r < 0.45) {
        op = 'patch';
        const [p, d, t] = pick(liveTables);
        await updateTable(st, p, d, t, { description: `patched ${step}`, labels: { step: String(step), team: null } }, true);
      } else if (r < 0.5) {
        op = 'update';
        const [p, d, t] = pick(liveTables);
        const e = st.requireTable(p, d, t);
        await updateTable(st, p, d, t, { ...e.resource, friendlyName: `full ${step}` }, false);
      } else if (r < 0.55) {
        op = 'addColumn';
        const [p, d, t] = pick(liveTables.filter(([p2, d2, t2]) => st.requireTable(p2, d2, t2).kind !== 'VIEW'));
        const cols = st.columnsOf(st.requireTable(p, d, t));
        await cat.alterColumns({ projectId: p, datasetId: d, tableId: t }, [...cols, restFieldToColumn({ name: `c${step}`, type: 'FLOAT64' })]);
      } else if (r < 0.6) {
        op = 'renameColumn';
        const [p, d, t] = pick(liveTables.filter(([p2, d2, t2]) => st.requireTable(p2, d2, t2).kind !== 'VIEW'));
        const cols = st.columnsOf(st.requireTable(p, d, t));
        await cat.alterColumns({ projectId: p, datasetId: d, tableId: t }, cols.map((c, i) => (i === 0 ? { ...c, name: `${c.name}_r` } : c)));
      } else if (r < 0.67) {
        // ALTER TABLE RENAME TO: a new table of the same shape, the old one dropped.
        op = 'renameTable';
        const [p, d, t] = pick(liveTables.filter(([p2, d2, t2]) => st.requireTable(p2, d2, t2).kind !== 'VIEW'));
        const to = `${t}_renamed${n++}`;
        await cat.createTable({ projectId: p, datasetId: d, tableId: to }, st.columnsOf(st.requireTable(p, d, t)));
        await cat.dropTable({ projectId: p, datasetId: d, tableId: t });
        live.delete(`${p}.${d}.${t}`);
        live.set(`${p}.${d}.${to}`, [p, d, to]);
      } else if (r < 0.7 && liveTables.some(([p2, d2, t2]) => st.requireTable(p2, d2, t2).kind === 'VIEW')) {
        // CREATE OR REPLACE VIEW over a view: the entry is swapped in one save.
        op = 'replaceView';
        const [p, d, t] = pick(liveTables.filter(([p2, d2, t2]) => st.requireTable(p2, d2, t2).kind === 'VIEW'));
        const before = st.requireTable(p, d, t);
        await cat.createTable({ projectId: p, datasetId: d, tableId: t }, [], { kind: 'VIEW', viewQuery: `SELECT ${step} AS y`, orReplace: true });
        expect((st.requireTable(p, d, t).resource.view as { query: string }).query).toBe(`SELECT ${step} AS y`);
        expect(st.findDeletedTable(p, d, t)?.entry).toEqual(before);
      } else if (r < 0.75) {
        op = 'drop';
        const [p, d, t] = pick(liveTables);
        const before = st.requireTable(p, d, t);
        await deleteTable(st, p, d, t);
        live.delete(`${p}.${d}.${t}`);
        dropped.push([p, d, t, before]);
      } else if (r < 0.8) {
        op = 'policy';
        const [p, d, t] = pick(liveTables.filter(([p2, d2, t2]) => st.requireTable(p2, d2, t2).kind !== 'VIEW'));
        const id = `pol_${step % 3}`;
        const has = st.requireTable(p, d, t).policies[id] !== undefined;
        if (has && rand() < 0.5) await deleteChild(st, 'rowAccessPolicies', p, d, t, id);
        else await putChild(st, 'rowAccessPolicies', p, d, t, id, { filterPredicate: `id > ${step}`, grantees: ['user:a@example.com'] }, false);
      } else if (r < 0.86) {
        op = 'routineOrModel';
        const [p, d] = pick(liveDs);
        const kind = rand() < 0.5 ? 'routines' : 'models';
        const id = `${kind}_${step % 4}`;
        const coll = kind === 'routines' ? st.requireDataset(p, d).routines : st.requireDataset(p, d).models;
        if (coll[id] && rand() < 0.4) await deleteChild(st, kind, p, d, '', id);
        else await putChild(st, kind, p, d, '', id, { routineType: 'SCALAR_FUNCTION', definitionBody: `x + ${step}`, description: 'ü' }, false);
      } else if (r < 0.91) {
        op = 'patchDataset';
        const [p, d] = pick(liveDs);
        await updateDataset(st, p, d, { description: `dataset patched ${step}`, labels: { step: String(step) } }, true);
      } else if (r < 0.96 && liveDs.length > 3) {
        op = 'dropDataset';
        const [p, d] = pick(liveDs);
        await deleteDataset(st, p, d, true);
        deletedDatasets.push([p, d]);
      } else if (deletedDatasets.length > 0) {
        op = 'undeleteDataset';
        const [p, d] = deletedDatasets.pop()!;
        await undeleteDataset(st, p, d);
      } else continue;
      kinds[op] = (kinds[op] ?? 0) + 1;
      if (step % 37 === 36) {
        // A restart: after a clean close, or as after kill -9 (nothing closed, the log read as it is).
        const clean = step % 2 === 0;
        const before = plain(st);
        if (clean) await st.close();
        const again = await Storage.open(dir, { noLock: true });
        expect(plain(again), `after step ${step} (${op}), ${clean ? 'closed' : 'not closed'}`).toBe(before);
        if (!clean) await st.close().catch(() => undefined);
        st = again;
        cat = new EngineCatalog(st);
      }
    }
    // Every kind of change ran at least once.
    for (const op of ['create', 'patch', 'update', 'addColumn', 'renameColumn', 'renameTable', 'replaceView', 'drop', 'policy', 'routineOrModel', 'patchDataset', 'dropDataset', 'undeleteDataset']) {
      expect(kinds[op] ?? 0, op).toBeGreaterThan(0);
    }
    expect(dropped.length).toBeGreaterThan(10);
    const text = plain(st);
    const tables = [...live.values()].map(([p, d, t]) => st.getTable(p, d, t));
    await st.close();

    // Reloaded, the catalog is the same, and the checkpoint a clean stop writes is exactly JSON.stringify of it.
    const again = await Storage.open(dir, { noLock: true });
    expect(plain(again)).toBe(text);
    const expected = JSON.stringify(again.catalogObject());
    const parsed = JSON.parse(expected) as ReturnType<Storage['catalogObject']>;
    expect(parsed.datasets.length).toBeGreaterThan(3);
    expect(parsed.deletedTables).toBeUndefined();
    [...live.values()].forEach(([p, d, t], i) => {
      expect(again.getTable(p, d, t)).toEqual(tables[i]);
    });
    // Every drop's snapshot is found again (a table name dropped twice: its newest one).
    const newest = new Map(dropped.map(([p, d, t, e]) => [`${p}.${d}.${t}`, [p, d, t, e] as const]));
    for (const [p, d, t, e] of newest.values()) expect(again.findDeletedTable(p, d, t)?.entry, `${p}.${d}.${t}`).toEqual(e);
    await again.close();
    expect(fs.readFileSync(path.join(dir, 'catalog.store'), 'utf8')).toBe(expected);
    expect(logBytes(dir)).toBe(0);
  }, 120_000);

  it('costs one log record per DDL, whatever the catalog holds, and checkpoints only now and then', async () => {
    const dir = tempDir();
    const st = await Storage.open(dir, { noLock: true });
    await insertDataset(st, 'p', 'd', { datasetReference: { projectId: 'p', datasetId: 'd' } });
    const body = (i: number) => ({ schema: { fields: [{ name: 'id', type: 'INT64' }, { name: 'name', type: 'STRING' }] }, description: `table ${String(i).padStart(5, '0')}` });
    const growth: number[] = [];
    let checkpoints = 0;
    let stored = onDisk(st);
    for (let i = 0; i < 3000; i++) {
      const before = logBytes(dir);
      await insertTable(st, 'p', 'd', `t${String(i).padStart(5, '0')}`, body(i));
      const after = logBytes(dir);
      if (after > before) growth.push(after - before);
      const now = onDisk(st);
      if (now !== stored) {
        checkpoints++;
        stored = now;
        // A checkpoint (written in the background) holds the first tables, as many as its record count says.
        const cp = JSON.parse(now) as ReturnType<Storage['catalogObject']>;
        const names = Object.keys(cp.datasets[0]!.tables);
        expect(names).toEqual(Array.from({ length: names.length }, (_, k) => `t${String(k).padStart(5, '0')}`));
        expect(cp.seq).toBe(names.length + 1);
      }
    }
    // Every create appended a record of the same size (the ids have the same length), ~0.5 KB, not the catalog.
    expect(Math.max(...growth) - Math.min(...growth)).toBeLessThan(40);
    expect(Math.max(...growth)).toBeLessThan(1024);
    // The 1 MB log bound checkpointed the catalog once or twice in 3,000 creates, not per DDL.
    expect(checkpoints).toBeGreaterThan(0);
    expect(checkpoints).toBeLessThan(4);
    await st.close();
    const again = await Storage.open(dir, { noLock: true });
    expect(Object.keys(again.requireDataset('p', 'd').tables)).toHaveLength(3000);
    await again.close();
  }, 120_000);

  it('atomicWrite writes a list of pieces in order (more than one writev can take, empty ones included)', async () => {
    const file = `${tempDir()}/f.json`;
    const pieces = Array.from({ length: 3000 }, (_, i) => Buffer.from(i % 7 === 0 ? '' : `piece ${i} ✓;`));
    await atomicWrite(file, pieces);
    expect(fs.readFileSync(file)).toEqual(Buffer.concat(pieces));
    await atomicWrite(file, []);
    expect(fs.readFileSync(file).length).toBe(0);
    expect(fs.readdirSync(file.slice(0, file.lastIndexOf('/')))).toEqual(['f.json']);
  });
});
