import { describe, expect, it } from 'vitest';
import { prepareQueryText, rewriteLegacy } from '../../src/gateway/jobs/legacy-sql.js';

describe('useLegacySql handling', () => {
  it('rewrites bracket table references outside literals and comments', () => {
    expect(rewriteLegacy('SELECT a FROM [p:ds.t] WHERE b = "[x:y.z]"')).toBe('SELECT a FROM `p.ds.t` WHERE b = "[x:y.z]"');
    expect(rewriteLegacy('SELECT * FROM [ds.t1], [ds.t2] -- [a.b]')).toBe('SELECT * FROM `ds.t1`, `ds.t2` -- [a.b]');
    expect(rewriteLegacy('SELECT * FROM t JOIN [my-proj:ds.t2] ON x')).toBe('SELECT * FROM t JOIN `my-proj.ds.t2` ON x');
  });

  it('leaves standard array syntax alone', () => {
    expect(rewriteLegacy('SELECT [1, 2], arr[OFFSET(0)] FROM t')).toBe('SELECT [1, 2], arr[OFFSET(0)] FROM t');
    expect(rewriteLegacy("SELECT 'FLATTEN(' AS s")).toBe("SELECT 'FLATTEN(' AS s");
  });

  it('rejects legacy-only constructs with invalidQuery', () => {
    for (const q of ['#legacySQL\nSELECT 1', 'SELECT * FROM TABLE_DATE_RANGE(x, a, b)', 'SELECT a FROM t GROUP EACH BY a', 'SELECT NTH(1, x) FROM t', 'SELECT a FROM t WHERE a CONTAINS "x"']) {
      expect(() => prepareQueryText(q, true), q).toThrow(expect.objectContaining({ code: 400, reason: 'invalidQuery' }));
    }
  });

  it('runs standard SQL unchanged when useLegacySql is false or unset (spec §1.6.3), and checks the dialect prefix', () => {
    expect(prepareQueryText('SELECT * FROM [a.b]', false)).toBe('SELECT * FROM [a.b]');
    for (const q of ['SELECT * FROM [a.b]', 'SELECT NOW() FROM t', 'SELECT a FROM t GROUP EACH BY a']) expect(prepareQueryText(q, undefined)).toBe(q);
    expect(prepareQueryText('#standardSQL\nSELECT [1]', undefined)).toBe('#standardSQL\nSELECT [1]');
    expect(() => prepareQueryText('#legacySQL\nSELECT 1', false)).toThrow(/use_legacy_sql:true/);
  });
});
