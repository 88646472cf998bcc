// JSON and GEOGRAPHY columns of several row groups read under a small
// --memory-limit, right after a restart and again warm: the values kept
// beside the text chunks (storage/column-chunk.ts TextValues) do not all fit,
// so they are evicted and made again while queries run; every answer equals
// the engine's without a limit, and a Storage-Read-free wire check (the
// values' texts through a fingerprint) equals it too. (Memory itself is
// measured in bench/, not asserted here.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { queryRows, startEmulator, type Emulator } from '../helpers/emulator.js';

const dataDir = mkdtempSync(join(tmpdir(), 'wh-jgm-'));
let emu: Emulator | undefined;
afterAll(async () => {
  await emu?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

// Four row groups (fragment-file.ts ROW_GROUP 65,536 rows).
const N = 220_000;

/** The first row of a query's answer. */
const query = async (e: Emulator, sql: string): Promise<string[]> => ((await queryRows(e, 'jgm', sql))[0] ?? []) as string[];

const QUERIES = [
  // Path functions and subscripts, a filter on a field, whole-value reads (TO_JSON_STRING, JSON_TYPE).
  "SELECT SUM(INT64(j.a)), COUNTIF(JSON_VALUE(j, '$.s') = 's7'), SUM(LAX_INT64(j.n[1])), COUNTIF(JSON_TYPE(j.n) = 'array') FROM d.t",
  "SELECT COUNT(*), SUM(LENGTH(TO_JSON_STRING(j))), BIT_XOR(FARM_FINGERPRINT(TO_JSON_STRING(j))) FROM d.t WHERE JSON_VALUE(j, '$.s') IN ('s1', 's2', 's50')",
  // The texts as the writers send them, and geography functions over the kept shapes.
  'SELECT BIT_XOR(FARM_FINGERPRINT(CONCAT(TO_JSON_STRING(j), ST_ASTEXT(g)))), SUM(ST_X(g)), SUM(ST_Y(g)), ROUND(SUM(ST_DISTANCE(g, ST_GEOGPOINT(1, 2))), 0) FROM d.t',
];

async function answers(e: Emulator): Promise<string[][]> {
  const out: string[][] = [];
  // Each query twice: values made from the texts (and kept where they fit), then kept ones where they stayed.
  for (const q of QUERIES) for (let run = 0; run < 2; run++) out.push(await query(e, q));
  return out;
}

describe('JSON and GEOGRAPHY columns under a small memory limit', () => {
  it('answer as without a limit, cold after a restart and warm', async () => {
    emu = await startEmulator({ dataDir, args: ['--project-id', 'jgm'] });
    await query(emu, 'CREATE SCHEMA d');
    await query(
      emu,
      `CREATE TABLE d.t AS SELECT x AS id, TO_JSON(STRUCT(x AS a, CONCAT('s', CAST(MOD(x, 100) AS STRING)) AS s, [MOD(x, 7), MOD(x, 11)] AS n, IF(MOD(x, 13) = 0, NULL, 'é') AS u)) AS j, IF(MOD(x, 17) = 0, NULL, ST_GEOGPOINT(MOD(x, 359) - 179 + 0.5, MOD(x, 169) - 84 + 0.25)) AS g FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS x`,
    );
    await emu.stop();
    emu = await startEmulator({ dataDir, args: ['--project-id', 'jgm'] });
    const unlimited = await answers(emu);
    expect(unlimited[0]![0]).toBe(String((N * (N + 1)) / 2));
    for (let i = 0; i < unlimited.length; i += 2) expect(unlimited[i + 1]).toEqual(unlimited[i]);
    await emu.stop();
    for (const limit of ['24MB', '96MB']) {
      emu = await startEmulator({ dataDir, args: ['--project-id', 'jgm', '--memory-limit', limit] });
      expect(await answers(emu), limit).toEqual(unlimited);
      await emu.stop();
    }
    emu = undefined;
  }, 600_000);
});
