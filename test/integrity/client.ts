// A small REST client for the integrity suites: what a user's program does
// through the real API (queries, insertAll, load and copy jobs), with every
// outcome classified: acknowledged, refused (an error envelope), or unknown
// (the connection died: a kill -9 under way).
import type { Emulator } from '../helpers/emulator.js';

export type Json = Record<string, any>;

export const PROJECT = 'integrity';

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string; status: number } | { ok: false; error: string; status: 0 };

export class Client {
  constructor(private readonly emu: Emulator) {}

  private get base(): string {
    return `${this.emu.url}/bigquery/v2/projects/${PROJECT}`;
  }

  async call(method: string, path: string, body?: unknown, timeoutMs = 120_000): Promise<Outcome<Json>> {
    let r: Response;
    try {
      r = await fetch(`${this.base}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      return { ok: false, status: 0, error: String(e) };
    }
    let json: Json = {};
    try {
      const text = await r.text();
      json = text ? (JSON.parse(text) as Json) : {};
    } catch (e) {
      return { ok: false, status: 0, error: `unreadable answer: ${String(e)}` };
    }
    if (r.status >= 200 && r.status < 300) return { ok: true, value: json };
    return { ok: false, status: r.status, error: String(json.error?.message ?? r.statusText) };
  }

  /** A query (script) run to completion: its first page and job statistics. */
  async query(sql: string, extra: Json = {}): Promise<Outcome<Json>> {
    const r = await this.call('POST', '/queries', { query: sql, useLegacySql: false, timeoutMs: 120_000, maxResults: 10_000, ...extra });
    if (!r.ok || r.value.jobComplete !== false) return r;
    // Still running: poll its results as a client does.
    const id = r.value.jobReference.jobId as string;
    for (;;) {
      const p = await this.call('GET', `/queries/${id}?timeoutMs=60000&maxResults=10000`);
      if (!p.ok || p.value.jobComplete !== false) return p;
    }
  }

  /** The first column of all of a query's rows (every page), as strings (NULL as null). */
  async column(sql: string): Promise<Outcome<(string | null)[]>> {
    let r = await this.query(sql);
    const out: (string | null)[] = [];
    for (;;) {
      if (!r.ok) return r;
      for (const row of (r.value.rows ?? []) as { f: { v: string | null }[] }[]) out.push(row.f[0]!.v);
      const token = r.value.pageToken as string | undefined;
      if (!token) return { ok: true, value: out };
      r = await this.call('GET', `/queries/${r.value.jobReference.jobId as string}?pageToken=${encodeURIComponent(token)}&maxResults=10000`);
    }
  }

  async insertAll(table: string, rows: Json[]): Promise<Outcome<Json>> {
    const r = await this.call('POST', `/datasets/d/tables/${table}/insertAll`, { rows: rows.map((json, i) => ({ insertId: `${json.id ?? i}`, json })) });
    if (r.ok && r.value.insertErrors) return { ok: false, status: 200, error: JSON.stringify(r.value.insertErrors).slice(0, 300) };
    return r;
  }

  /** A job (load from an upload, copy) run to DONE; refused when it ends with an error. */
  async job(configuration: Json, upload?: string): Promise<Outcome<Json>> {
    let r: Outcome<Json>;
    if (upload === undefined) r = await this.call('POST', '/jobs', { configuration });
    else {
      const boundary = 'integrity-boundary';
      const body = `--${boundary}\r\ncontent-type: application/json\r\n\r\n${JSON.stringify({ configuration })}\r\n--${boundary}\r\ncontent-type: application/octet-stream\r\n\r\n${upload}\r\n--${boundary}--\r\n`;
      try {
        const res = await fetch(`${this.emu.url}/upload/bigquery/v2/projects/${PROJECT}/jobs?uploadType=multipart`, {
          method: 'POST',
          headers: { 'content-type': `multipart/related; boundary=${boundary}` },
          body,
          signal: AbortSignal.timeout(120_000),
        });
        const json = (await res.json()) as Json;
        r = res.ok ? { ok: true, value: json } : { ok: false, status: res.status, error: String(json.error?.message) };
      } catch (e) {
        r = { ok: false, status: 0, error: String(e) };
      }
    }
    for (;;) {
      if (!r.ok) return r;
      if (r.value.status?.state === 'DONE') return r.value.status.errorResult ? { ok: false, status: 200, error: String(r.value.status.errorResult.message) } : r;
      await new Promise((res) => setTimeout(res, 20));
      r = await this.call('GET', `/jobs/${r.value.jobReference.jobId as string}`);
    }
  }
}
