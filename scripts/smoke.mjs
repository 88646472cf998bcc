#!/usr/bin/env node
// The smoke check of spec §1.4.5: GET /healthz, then a synchronous query of a
// constant select. Node builtins only, so it runs on the host, in CI after
// installing the packed tarball, and inside the container (its healthcheck).
//   node scripts/smoke.mjs [base-url] [project]   (default http://localhost:9050, smoke-check)
// Exit 0 when both answer as expected, 1 otherwise (with the reason).
const base = (process.argv[2] ?? process.env.WAREHOUSE_EMULATOR_URL ?? 'http://localhost:9050').replace(/\/+$/, '');
const project = process.argv[3] ?? 'smoke-check';

async function check() {
  const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) });
  const h = await health.json();
  if (!health.ok || h.status !== 'ok') throw new Error(`GET /healthz answered ${health.status} ${JSON.stringify(h)}`);
  const res = await fetch(`${base}/bigquery/v2/projects/${project}/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'SELECT 1 AS one', useLegacySql: false }),
    signal: AbortSignal.timeout(30_000),
  });
  const q = await res.json();
  const v = q.rows?.[0]?.f?.[0]?.v;
  if (!res.ok || q.jobComplete !== true || v !== '1') throw new Error(`the constant select answered ${res.status} ${JSON.stringify(q).slice(0, 300)}`);
  return h.service;
}

check().then(
  (service) => console.log(`smoke ok: ${base} (${service}) healthy, SELECT 1 = 1`),
  (e) => {
    console.error(`smoke failed: ${base}: ${e.message}`);
    process.exit(1);
  },
);
