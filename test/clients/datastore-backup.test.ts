// DATASTORE_BACKUP loads through the real Node client, from exports the
// format's own tool wrote: the Cloud Datastore emulator of the Google Cloud
// CLI (its :export writes what the managed export service writes, LevelDB
// logs of EntityProto records and .export_metadata files). Every Datastore
// value type becomes the column the service documents; projectionFields; an
// export of all kinds and a damaged file are refused as load errors.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery, type Dataset } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const DATASTORE_EMULATOR = '/usr/lib/google-cloud-sdk/platform/cloud-datastore-emulator/cloud_datastore_emulator';

/** The one file under `dir` whose name ends with `suffix`. */
function findFile(dir: string, suffix: string): string {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) {
      const found = findFile(p, suffix);
      if (found) return found;
    } else if (n.endsWith(suffix)) return p;
  }
  return '';
}

describe('DATASTORE_BACKUP loads of Datastore emulator exports', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let ds: Dataset;
  let books = '';
  let everything = '';

  beforeAll(async () => {
    // The test double here is the exporting side only: the Datastore emulator writes the files, as the managed service does.
    expect(existsSync(DATASTORE_EMULATOR), 'the Google Cloud CLI Datastore emulator (google-cloud-cli-datastore-emulator) writes the fixtures').toBe(true);
    const port = await freePort();
    const store = mkdtempSync(join(tmpdir(), 'ds-emu-'));
    const dse: ChildProcess = spawn(DATASTORE_EMULATOR, ['start', '--host=127.0.0.1', `--port=${port}`, '--store_on_disk=false', '--consistency=1.0', store], { stdio: 'ignore', detached: true });
    const api = `http://127.0.0.1:${port}/v1/projects/dsp`;
    const post = async (path: string, body: unknown): Promise<unknown> => {
      const r = await fetch(api + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r.json();
    };
    try {
      [emu] = await Promise.all([
        startEmulator({ args: ['--project-id', 'dsb-p'] }),
        (async () => {
          for (let i = 0; ; i++) {
            try {
              if ((await fetch(`http://127.0.0.1:${port}/`)).ok) break;
            } catch {
              if (i > 600) throw new Error('the Datastore emulator did not start');
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        })(),
      ]);
      const key = (kind: string, id: { name?: string; id?: string }, parent?: { kind: string; name: string }) => ({ partitionId: { projectId: 'dsp' }, path: [...(parent ? [parent] : []), { kind, ...id }] });
      await post(':commit', {
        mode: 'NON_TRANSACTIONAL',
        mutations: [
          {
            insert: {
              key: key('Book', { name: 'dune' }, { kind: 'Shelf', name: 'sf' }),
              properties: {
                title: { stringValue: 'Dune' }, pages: { integerValue: '412' }, price: { doubleValue: 9.5 }, inPrint: { booleanValue: true },
                published: { timestampValue: '1965-08-01T00:00:00.123456Z' }, tags: { arrayValue: { values: [{ stringValue: 'sf' }, { stringValue: 'classic' }] } },
                author: { entityValue: { properties: { name: { stringValue: 'Herbert' }, born: { integerValue: '1920' } } } },
                cover: { blobValue: 'AAEC' }, loc: { geoPointValue: { latitude: 1.5, longitude: 2.25 } }, note: { nullValue: null },
                blurb: { stringValue: 'x'.repeat(70_000), excludeFromIndexes: true },
                writer: { keyValue: key('Author', { id: '7' }) },
              },
            },
          },
          { insert: { key: key('Book', { id: '5' }), properties: { title: { stringValue: 'Emma' }, pages: { stringValue: 'many' }, tags: { arrayValue: {} } } } },
          { insert: { key: key('Author', { id: '7' }), properties: { name: { stringValue: 'Herbert' } } } },
        ],
      });
      const out = mkdtempSync(join(tmpdir(), 'ds-export-'));
      await post(':export', { output_url_prefix: join(out, 'books'), entity_filter: { kinds: ['Book'] } });
      await post(':export', { output_url_prefix: join(out, 'all') });
      books = findFile(join(out, 'books'), '.export_metadata');
      everything = findFile(join(out, 'all'), '.export_metadata');
    } finally {
      try {
        process.kill(-dse.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    bq = new BigQuery({ projectId: 'dsb-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    [ds] = await bq.createDataset('dsb');
  }, 120_000);
  afterAll(async () => emu?.stop());

  const load = async (table: string, uri: string, extra: Record<string, unknown> = {}) => {
    const [job] = await bq.createJob({ configuration: { load: { sourceUris: [uri], sourceFormat: 'DATASTORE_BACKUP', destinationTable: { projectId: 'dsb-p', datasetId: 'dsb', tableId: table }, ...extra } } });
    return job.promise().then(() => job.getMetadata()).then(([m]) => m);
  };

  it('every value type becomes the documented column; keys, embedded entities and errors as records', async () => {
    await load('books', books);
    const [meta] = await ds.table('books').getMetadata();
    const shape = (fs: { name: string; type: string; mode?: string; fields?: unknown[] }[]): unknown[] => fs.map((f) => [f.name, f.type, f.mode, ...(f.fields ? [shape(f.fields as never)] : [])]);
    const key = [['namespace', 'STRING', 'NULLABLE'], ['app', 'STRING', 'NULLABLE'], ['path', 'STRING', 'NULLABLE'], ['kind', 'STRING', 'NULLABLE'], ['name', 'STRING', 'NULLABLE'], ['id', 'INTEGER', 'NULLABLE']];
    // Blobs (cover) are discarded, as the service loads them; columns come in the export's order (unindexed properties last).
    expect(shape(meta.schema.fields).map((f) => (f as unknown[])[0])).toEqual(['title', 'pages', 'price', 'inPrint', 'published', 'tags', 'author', 'loc', 'note', 'writer', 'blurb', '__key__', '__error__', '__has_error__']);
    expect(shape(meta.schema.fields)).toContainEqual(['author', 'RECORD', 'NULLABLE', [['name', 'STRING', 'NULLABLE'], ['born', 'INTEGER', 'NULLABLE'], ['__key__', 'RECORD', 'NULLABLE', key]]]);
    expect(shape(meta.schema.fields)).toContainEqual(['loc', 'RECORD', 'NULLABLE', [['lat', 'FLOAT', 'NULLABLE'], ['long', 'FLOAT', 'NULLABLE']]]);
    expect(shape(meta.schema.fields)).toContainEqual(['writer', 'RECORD', 'NULLABLE', key]);
    expect(shape(meta.schema.fields)).toContainEqual(['tags', 'STRING', 'REPEATED']);
    expect(shape(meta.schema.fields)).toContainEqual(['published', 'TIMESTAMP', 'NULLABLE']);
    const [rows] = await bq.query(`SELECT title, pages, price, inPrint, published, tags, author.name AS author, author.born AS born, loc.lat AS lat, loc.long AS lng, note,
      BYTE_LENGTH(blurb) AS blurb_bytes, writer.path AS writer_path, writer.id AS writer_id, __key__.path AS path, __key__.kind AS kind, __key__.name AS name, __key__.id AS id, __has_error__, __error__
      FROM dsb.books ORDER BY title`);
    expect(rows[0]).toMatchObject({
      title: 'Dune', pages: 412, price: 9.5, inPrint: true, tags: ['sf', 'classic'], author: 'Herbert', born: 1920, lat: 1.5, lng: 2.25, note: null,
      blurb_bytes: 65536, writer_path: '"Author", 7', writer_id: 7, path: '"Shelf", "sf", "Book", "dune"', kind: 'Book', name: 'dune', id: null, __has_error__: false, __error__: [],
    });
    expect(rows[0].published.value).toBe('1965-08-01T00:00:00.123456000Z');
    // Emma's pages is a string where Dune's is an integer: NULL in that row, named in __error__.
    expect(rows[1]).toMatchObject({ title: 'Emma', pages: null, tags: [], path: '"Book", 5', kind: 'Book', name: null, id: 5, __has_error__: true });
    expect(rows[1].__error__).toHaveLength(1);
    expect(rows[1].__error__[0]).toContain('pages');
  });

  it('projectionFields loads only the properties named', async () => {
    await load('titles', books, { projectionFields: ['title', 'tags'] });
    const [meta] = await ds.table('titles').getMetadata();
    expect(meta.schema.fields.map((f: { name: string }) => f.name)).toEqual(['title', 'tags', '__key__', '__error__', '__has_error__']);
    const [rows] = await bq.query('SELECT title FROM dsb.titles ORDER BY title');
    expect(rows).toEqual([{ title: 'Dune' }, { title: 'Emma' }]);
  });

  it('an export without a kind filter and a damaged file are load errors; nothing is written', async () => {
    await expect(load('all', everything)).rejects.toThrow(/entity filter/);
    const dir = mkdtempSync(join(tmpdir(), 'ds-damaged-'));
    const kindDir = join(books, '..');
    cpSync(kindDir, dir, { recursive: true });
    const output = join(dir, 'output-0');
    const bytes = readFileSync(output);
    bytes[40] = bytes[40]! ^ 0xff;
    writeFileSync(output, bytes);
    await expect(load('damaged', join(dir, books.slice(kindDir.length + 1)))).rejects.toThrow(/not a readable Datastore export file \(checksum mismatch\)/);
    expect((await ds.getTables())[0].map((t) => t.id)).not.toContain('damaged');
  });
});
