// Takes the README's console screenshots (docs/console-*.png) and measures
// the console's time to interactive, in Debian's chromium at 1280x720:
//   npm run build && node console/screenshots.mjs [--tti-only]
// Time to interactive: navigation start -> the 'console-ready' mark (the app
// rendered, projects listed, the editor accepting keys), median of 5 cold
// loads (a fresh browser profile each).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { startEmulator } from '../dist/index.js';

const ROOT = resolve(import.meta.dirname, '..');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ttiOnly = process.argv.includes('--tti-only');

const emu = await startEmulator({ projectId: 'demo', log: 'ignore' });
const query = async (sql) => {
  const r = await fetch(`${emu.url}/bigquery/v2/projects/demo/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: sql, useLegacySql: false }) });
  if (!r.ok) throw new Error(`${sql}: ${await r.text()}`);
};

async function browser(colorScheme = 'light') {
  const dir = mkdtempSync(join(tmpdir(), 'console-shots-'));
  const ctx = await chromium.launchPersistentContext(dir, { executablePath: '/usr/bin/chromium', headless: true, args: ARGS, viewport: { width: 1280, height: 720 }, colorScheme });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  return { page, close: async () => { await ctx.close(); rmSync(dir, { recursive: true, force: true }); } };
}

try {
  const tti = [];
  for (let i = 0; i < 5; i++) {
    const b = await browser();
    await b.page.goto(`${emu.url}/console/`);
    await b.page.locator('body[data-ready="1"]').waitFor();
    tti.push(await b.page.evaluate(() => performance.getEntriesByName('console-ready')[0].startTime));
    await b.close();
  }
  tti.sort((a, b) => a - b);
  const gz = (f) => statSync(join(ROOT, 'dist', 'console', f)).size;
  console.log(`time to interactive (ms, 5 cold loads): ${tti.map((t) => t.toFixed(0)).join(', ')}; median ${tti[2].toFixed(0)}`);
  console.log(`bundle: app.js ${gz('app.js')} B (gzip ${gz('app.js.gz')}), app.css ${gz('app.css')} B (gzip ${gz('app.css.gz')}), index.html gzip ${gz('index.html.gz')}; functions.json gzip ${gz('functions.json.gz')} (fetched on first completion)`);
  if (ttiOnly) process.exit(0);

  await query("CREATE SCHEMA shop OPTIONS(description='Orders of the demo shop', labels=[('team', 'sales')])");
  await query(
    "CREATE TABLE shop.orders (order_id INT64 NOT NULL OPTIONS(description='Order number'), customer STRING OPTIONS(description='Who ordered'), amount NUMERIC, placed_at TIMESTAMP, " +
      'items ARRAY<STRUCT<sku STRING, qty INT64>>, meta JSON) PARTITION BY DATE(placed_at) CLUSTER BY customer',
  );
  await query(
    "INSERT shop.orders SELECT n, CONCAT('customer_', CAST(MOD(n, 7) AS STRING)), CAST(n * 1.25 AS NUMERIC) + NUMERIC '0.000000001', " +
      "TIMESTAMP_ADD(TIMESTAMP '2024-05-01 12:00:00.123456+00', INTERVAL n HOUR), [STRUCT('sku-1' AS sku, n AS qty), STRUCT('sku-2', 2)], " +
      "JSON_OBJECT('channel', IF(MOD(n, 2) = 0, 'web', 'store'), 'tags', ['gift', 'express']) FROM UNNEST(GENERATE_ARRAY(1, 2500)) n",
  );
  await query('CREATE VIEW shop.big_orders AS SELECT * FROM shop.orders WHERE amount > 100');
  await query('CREATE FUNCTION shop.with_tax(x NUMERIC) RETURNS NUMERIC AS (x * 1.2)');
  await query("DECLARE n INT64 DEFAULT 0; SET n = (SELECT COUNT(*) FROM shop.orders); SELECT n AS orders, 'counted' AS note;");

  const shot = (page, name) => page.screenshot({ path: join(ROOT, 'docs', `console-${name}.png`) });
  const editorText = async (page, text) => {
    await page.locator('.tab-panel:not([hidden]) .cm-content').click();
    await page.keyboard.press('Control+a');
    await page.keyboard.insertText(text);
    await page.keyboard.press('Escape');
  };

  // Light: a query, its results and a nested value; then the explorer's table details.
  let b = await browser('light');
  let page = b.page;
  await page.goto(`${emu.url}/`);
  await page.locator('body[data-ready="1"]').waitFor();
  await page.getByRole('treeitem', { name: 'shop' }).click();
  await editorTab(page);
  await editorText(page, 'SELECT customer, COUNT(*) AS orders, SUM(amount) AS total,\n  MAX(placed_at) AS last_order, ANY_VALUE(items) AS items\nFROM shop.orders\nGROUP BY customer\nORDER BY total DESC');
  await page.keyboard.press('Control+Enter');
  await page.locator('.results[data-run-state="done"]').waitFor();
  await page.locator('.validation.ok').waitFor();
  await page.locator('td[data-col="items"]').first().click();
  await shot(page, 'query');
  await page.getByRole('treeitem', { name: 'orders', exact: true }).click();
  await page.locator('.resource-tab:not([hidden]) table.schema').waitFor();
  await page.locator('.resource-tab:not([hidden])').getByRole('tab', { name: 'Details' }).click();
  await page.locator('.resource-tab:not([hidden]) .facts').waitFor();
  await shot(page, 'table');
  await page.locator('.resource-tab:not([hidden])').getByRole('tab', { name: 'Preview' }).click();
  await page.locator('.resource-tab:not([hidden]) td[data-col="order_id"]').first().waitFor();
  await page.locator('.resource-tab:not([hidden]) td[data-col="meta"]').first().click();
  await page.locator('.inspector pre.json').waitFor();
  await shot(page, 'preview');
  await b.close();

  // Dark: an error marked in the editor, completion, a chart, the jobs view.
  b = await browser('dark');
  page = b.page;
  await page.goto(`${emu.url}/console/`);
  await page.locator('body[data-ready="1"]').waitFor();
  await editorText(page, 'SELECT customer, SUM(amount) AS total\nFROM shop.orders\nWHERE placed_at > TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 30 DAY)\n  AND chanel = "web"\nGROUP BY customer');
  await page.keyboard.press('Control+Enter');
  await page.locator('.results[data-run-state="error"]').waitFor();
  await shot(page, 'error-dark');
  await editorText(page, 'SELECT customer, SUM(amount) AS total FROM shop.orders GROUP BY customer ORDER BY customer');
  await page.keyboard.press('Control+Enter');
  await page.locator('.results[data-run-state="done"]').waitFor();
  await page.getByRole('tab', { name: 'Chart' }).click();
  await page.keyboard.press('End');
  await page.locator('.tab-panel:not([hidden]) .cm-content').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.insertText('\n-- ');
  await page.keyboard.press('Enter');
  await page.keyboard.insertText('SELECT APPROX_');
  await page.keyboard.press('Control+Space');
  await page.locator('.cm-completionInfo').waitFor();
  await shot(page, 'chart-completion-dark');
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: 'Jobs' }).click();
  await page.locator('.jobs-table td').first().waitFor();
  await page.getByRole('row').filter({ hasText: 'SCRIPT' }).first().getByRole('button').click();
  await page.locator('.job-detail .children').waitFor();
  await shot(page, 'jobs-dark');
  await b.close();
  console.log('screenshots written to docs/console-*.png');
} finally {
  await emu.stop();
}

async function editorTab(page) {
  await page.getByRole('tab', { name: /Query 1/ }).click();
}
