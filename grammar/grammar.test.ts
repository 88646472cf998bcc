// Data-driven grammar tests: behaviour lives in grammar/testdata/*, the shared
// conformance corpus is read in place from ../shared (never copied).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { int64LiteralValue, parseScript, SqlSyntaxError } from './index.js';
import { collectCorpus, formatReport, runCorpus, sharedDir } from './corpus.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const data = (f: string) => readFileSync(path.join(here, 'testdata', f), 'utf8');

/** Paragraphs (blank-line separated); comment-only paragraphs are dropped. */
function paragraphs(text: string): string[] {
  return text
    .split(/\n[ \t]*\n/)
    .map((p) => p.trim())
    .filter((p) => p && !p.split('\n').every((l) => l.startsWith('--')));
}

/** Uint8Array -> number[] so YAML expectations can state byte values. */
function plain(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x: unknown) => (x instanceof Uint8Array ? Array.from(x) : x)));
}

function at(root: unknown, dotted: string): unknown {
  let cur: unknown = root;
  for (const raw of dotted.split('.')) {
    const key = /^s\d+$/.test(raw) && cur === root ? ['statements', raw.slice(1)] : [raw];
    for (const k of key) {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = (cur as Record<string, unknown>)[k];
    }
  }
  return cur;
}

describe('parse_ok.sql', () => {
  for (const sql of paragraphs(data('parse_ok.sql'))) {
    it(sql.split('\n').find((l) => !l.startsWith('--'))!.slice(0, 100), () => {
      expect(() => parseScript(sql)).not.toThrow();
    });
  }
});

describe('errors.sql', () => {
  for (const para of paragraphs(data('errors.sql'))) {
    const idx = para.lastIndexOf('\n=> ');
    const sql = para.slice(0, idx);
    const message = para.slice(idx + 4).trim();
    it(message, () => {
      let err: unknown;
      try {
        parseScript(sql);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SqlSyntaxError);
      const e = err as SqlSyntaxError;
      expect(e.message).toBe(message);
      const m = /at \[(\d+):(\d+)\]$/.exec(message)!;
      expect([e.line, e.column]).toEqual([Number(m[1]), Number(m[2])]);
    });
  }
});

describe('ast.yaml', () => {
  const cases = YAML.parse(data('ast.yaml')) as { sql: string; expect: Record<string, unknown> }[];
  for (const c of cases) {
    it(c.sql.slice(0, 100), () => {
      const script = plain(parseScript(c.sql));
      for (const [p, want] of Object.entries(c.expect)) {
        const got = at(script, p);
        if (want !== null && typeof want === 'object') expect(got, p).toMatchObject(want as object);
        else expect(got, p).toEqual(want);
      }
    });
  }
});

describe('int_literals.yaml', () => {
  const cases = YAML.parse(data('int_literals.yaml')) as { text: string; value: string | null }[];
  for (const c of cases) {
    it(c.text, () => {
      const v = int64LiteralValue(c.text);
      expect(v === undefined ? null : v.toString()).toBe(c.value);
    });
  }
});

// Pinned from the achieved rate; raise it when the grammar improves, never lower it.
const PINNED_RATE = 0.994;

describe.skipIf(!existsSync(path.join(sharedDir(), 'conformance')))('shared conformance corpus', () => {
  it(`parses >= ${PINNED_RATE * 100}% of non-error statements`, () => {
    const cases = collectCorpus();
    expect(cases.length).toBeGreaterThan(4000);
    const r = runCorpus(cases);
    console.log(formatReport(r));
    expect(r.rate).toBeGreaterThanOrEqual(PINNED_RATE);
    expect(r.errorCasesFailed).toBe(r.errorCases);
  });
});
