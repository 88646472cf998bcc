// The web console in a real browser: Debian's chromium driven by
// playwright-core against the real emulator (gateway + engine). Every step is
// what a person does with the mouse and keyboard; the answers are checked in
// the page and, where it matters, through the REST API.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rest, ROOT, startEmulator, type Emulator } from '../helpers/emulator.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, ensureConsoleBuilt } from './browser.js';

const PROJECT = 'console-test';
/** ~400 million joined rows: runs for tens of seconds, long enough to be cancelled. */
const SLOW_QUERY = 'SELECT COUNT(*) AS n FROM UNNEST(GENERATE_ARRAY(1, 20000)) a CROSS JOIN UNNEST(GENERATE_ARRAY(1, 20000)) b WHERE MOD(a * b, 7) = 1';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical findings on the page as it is (WCAG 2 A/AA rules: names, roles, contrast). */
async function accessibilityViolations(): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // Page-side code is passed as text (this project's type check has no DOM library); page.evaluate
  // runs it through the DevTools protocol, which the console's CSP (no 'unsafe-eval') allows.
  const r = (await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })",
  )) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ')}`);
}

let emu: Emulator;
let ctx: BrowserContext;
let page: Page;
let userDataDir: string;
const external: string[] = [];

/** The visible query tab's editor. */
const editor = (): ReturnType<Page['locator']> => page.locator('.tab-panel:not([hidden]) .cm-content');

async function setQuery(text: string): Promise<void> {
  await editor().click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(text);
}

/** Runs the editor's text with Ctrl+Enter and waits for this run (not an earlier one) to end in `state`. */
async function runQuery(text: string, state: 'done' | 'error' = 'done'): Promise<void> {
  await setQuery(text);
  const results = page.locator('.tab-panel:not([hidden]) .results');
  const before = (await results.getAttribute('data-run-id')) ?? '';
  await page.keyboard.press('Control+Enter');
  const ended = page.locator(`.tab-panel:not([hidden]) .results:not([data-run-id="${before}"]):not([data-run-state="running"])[data-run-state]`);
  await ended.waitFor();
  const got = await ended.getAttribute('data-run-state');
  if (got !== state) throw new Error(`expected the query to end ${state}, it ended ${got}: ${await results.textContent()}`);
}

beforeAll(async () => {
  await ensureConsoleBuilt();
  emu = await startEmulator({ args: ['--project-id', PROJECT] });
  userDataDir = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 720 },
    acceptDownloads: true,
  });
  page = ctx.pages()[0] ?? (await ctx.newPage());
  page.on('request', (r) => {
    if (!r.url().startsWith(emu.url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) external.push(r.url());
  });
});

// A failed step leaves a screenshot of the page in .tmp/ (what the browser showed).
afterEach(async (t) => {
  if (t.task.result?.state === 'fail' && page) await page.screenshot({ path: join(ROOT, '.tmp', `console-failure-${t.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
});

afterAll(async () => {
  await ctx?.close();
  await emu?.stop();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

describe('web console (Debian chromium)', () => {
  it("a browser's GET / lands on the console, which loads only from the emulator", async () => {
    const health = await rest(`${emu.url}/`);
    expect(health.body).toEqual({ service: 'warehouse-emulator', status: 'ok' });
    await page.goto(`${emu.url}/`);
    expect(new URL(page.url()).pathname).toBe('/console/');
    await page.locator('body[data-ready="1"]').waitFor();
    await expect(page.title()).resolves.toMatch(/console/);
    await page.getByRole('treeitem', { name: PROJECT }).waitFor();
    const csp = (await rest(`${emu.url}/console/app.js`)).headers.get('content-security-policy');
    expect(csp).toContain("default-src 'self'");
  });

  it('creates a dataset, a table and rows, runs a query and pages its results', async () => {
    await page.getByRole('button', { name: '+ Dataset' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create dataset' });
    await dialog.getByLabel('Dataset ID').fill('shop');
    await dialog.getByRole('button', { name: 'Create dataset' }).click();
    await page.getByRole('treeitem', { name: 'shop' }).waitFor();
    expect((await rest(`${emu.url}/bigquery/v2/projects/${PROJECT}/datasets/shop`)).status).toBe(200);

    await runQuery(
      'CREATE TABLE shop.orders (id INT64 NOT NULL, amount NUMERIC, placed_at TIMESTAMP, items ARRAY<STRUCT<sku STRING, qty INT64>>, meta JSON)',
    );
    await runQuery(
      "INSERT shop.orders SELECT n, NUMERIC '0.000000001' + n, TIMESTAMP_ADD(TIMESTAMP '2024-05-01 00:00:00.123456+00', INTERVAL n MINUTE), " +
        "[STRUCT('a' AS sku, n AS qty)], JSON '{\"big\": 12345678901234567890}' FROM UNNEST(GENERATE_ARRAY(1, 250)) n",
    );
    await page.getByText('250 rows affected').waitFor();

    await runQuery('SELECT * FROM shop.orders ORDER BY id');
    const info = page.locator('.tab-panel:not([hidden]) .pager-info');
    await expect(info.textContent()).resolves.toContain('Rows 1–100 of 250');
    const firstCell = (col: string) => page.locator(`.tab-panel:not([hidden]) td[data-col="${col}"]`).first();
    await expect(firstCell('id').textContent()).resolves.toBe('1');
    // Exact NUMERIC, TIMESTAMP in UTC with its microseconds.
    await expect(firstCell('amount').textContent()).resolves.toBe('1.000000001');
    await expect(firstCell('placed_at').textContent()).resolves.toBe('2024-05-01 00:01:00.123456 UTC');

    await page.locator('.tab-panel:not([hidden])').getByRole('button', { name: 'Next page' }).click();
    await info.filter({ hasText: 'Rows 101–200 of 250' }).waitFor();
    await expect(firstCell('id').textContent()).resolves.toBe('101');

    // A nested value opens as a tree; JSON keeps its 20-digit number.
    await firstCell('items').click();
    const inspector = page.getByRole('complementary', { name: 'Cell value' });
    await inspector.getByText('ARRAY [1]').waitFor();
    await expect(inspector.textContent()).resolves.toContain('qty: 101');
    await firstCell('meta').click();
    await expect(inspector.locator('pre.json').textContent()).resolves.toBe('{\n  "big": 12345678901234567890\n}');
  });

  it('passes axe-core (WCAG 2.1 A/AA) in the light and dark themes, with results and a dialog open', async () => {
    const theme = page.getByLabel('Theme');
    for (const t of ['light', 'dark']) {
      await theme.selectOption(t);
      await page.locator(`html[data-theme="${t}"]`).waitFor();
      expect(await accessibilityViolations()).toEqual([]);
    }
    await page.getByRole('button', { name: 'Keyboard shortcuts' }).click();
    expect(await accessibilityViolations()).toEqual([]);
    await page.keyboard.press('Escape');
    await theme.selectOption('system');
  });

  it('marks an error at its [line:col] in the editor, for the whole text and for a selection', async () => {
    await runQuery('SELECT id,\n  nosuch_column + 1\nFROM shop.orders', 'error');
    await page.getByRole('alert').filter({ hasText: 'Unrecognized name: nosuch_column at [2:3]' }).waitFor();
    await expect(page.locator('.tab-panel:not([hidden]) .cm-lintRange-error').textContent()).resolves.toBe('nosuch_column');

    // Run the second line alone: the service counts from the selection's start.
    await setQuery('SELECT 1;\nSELECT id, bad_name FROM shop.orders');
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Shift+Home');
    await page.keyboard.press('Control+Enter');
    await page.getByRole('alert').filter({ hasText: 'Unrecognized name: bad_name at [1:12]' }).waitFor();
    const mark = page.locator('.tab-panel:not([hidden]) .cm-lintRange-error');
    await expect(mark.textContent()).resolves.toBe('bad_name');
    const line = await mark.evaluate((el) => el.closest('.cm-line')?.textContent);
    expect(line).toBe('SELECT id, bad_name FROM shop.orders');
  });

  it('completes functions with their signatures and columns of the tables in the query', async () => {
    await setQuery('SELECT o. FROM shop.orders o');
    await page.keyboard.press('Home');
    for (let i = 0; i < 'SELECT o.'.length; i++) await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Control+Space');
    const list = page.locator('.cm-tooltip-autocomplete');
    await list.getByText('amount', { exact: true }).waitFor();
    await page.keyboard.press('Escape');
    await setQuery('SELECT SAFE_DIV');
    await page.keyboard.press('Control+Space');
    await list.getByText('SAFE_DIVIDE', { exact: true }).waitFor();
    // Every overload of the engine's registry, in the selected entry's info.
    await expect(page.locator('.cm-completionInfo').textContent()).resolves.toBe(
      'SAFE_DIVIDE(FLOAT64, FLOAT64) -> FLOAT64SAFE_DIVIDE(NUMERIC, NUMERIC) -> NUMERICSAFE_DIVIDE(BIGNUMERIC, BIGNUMERIC) -> BIGNUMERIC'.replace(/(?<=\w)(?=SAFE_DIVIDE)/g, '\n'),
    );
    await page.keyboard.press('Escape');
  });

  it('works from the keyboard: new tab, explorer tree, tab list, history', async () => {
    await page.keyboard.press('Alt+N');
    const tabs = page.getByRole('tablist', { name: 'Open tabs' }).getByRole('tab');
    const count = await tabs.count();
    await expect(tabs.nth(count - 1).getAttribute('aria-selected')).resolves.toBe('true');
    // The new tab's editor has the focus: type and run without touching the mouse.
    await page.locator('.tab-panel:not([hidden]) .cm-editor.cm-focused').waitFor();
    await page.keyboard.insertText('SELECT 6 * 7 AS answer');
    await page.keyboard.press('Control+Enter');
    await page.locator('.tab-panel:not([hidden]) td[data-col="answer"]').filter({ hasText: '42' }).waitFor();

    // Alt+E: the explorer tree; arrows walk it, Right expands, Enter opens.
    await page.keyboard.press('Alt+E');
    await page.locator('[role="treeitem"]:focus').waitFor();
    await page.keyboard.press('ArrowDown'); // the dataset
    await page.keyboard.press('ArrowRight'); // expand it
    await page.getByRole('treeitem', { name: 'orders' }).waitFor();
    await page.keyboard.press('ArrowDown');
    await page.locator('[role="treeitem"][data-key$=".shop.orders"]:focus').waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.resource-tab:not([hidden]) h2').filter({ hasText: `${PROJECT}.shop.orders` }).waitFor();

    // Tab list: Left moves to the previous tab, Delete closes the focused one.
    await page.getByRole('tab', { name: /orders/ }).focus();
    await page.keyboard.press('Delete');
    await page.getByRole('tab', { name: /orders/ }).waitFor({ state: 'detached' });
    await expect(tabs.count()).resolves.toBe(count);

    // History (Alt+H) lists the query just run; opening it makes a new tab with its text.
    await page.keyboard.press('Alt+H');
    const history = page.getByRole('complementary', { name: 'Query history' });
    await history.getByText('SELECT 6 * 7 AS answer').click();
    await expect(tabs.count()).resolves.toBe(count + 1);
    await expect(editor().textContent()).resolves.toBe('SELECT 6 * 7 AS answer');
    await page.keyboard.press('Alt+H');
  });

  it('cancels a running query from the editor and opens the job details', async () => {
    await setQuery(SLOW_QUERY);
    // jobs.insert of this run (the editor's live validation posts dry runs to the same URL).
    const inserted = page.waitForResponse((r) => r.request().method() === 'POST' && /\/jobs$/.test(new URL(r.url()).pathname) && !r.request().postData()?.includes('"dryRun"'));
    await page.keyboard.press('Control+Enter');
    await page.locator('.tab-panel:not([hidden]) .run-stats').filter({ hasText: 'Running' }).waitFor();
    // jobs.insert answers RUNNING after its grace period: the job is registered and running.
    expect(((await (await inserted).json()) as { status: { state: string } }).status.state).toBe('RUNNING');
    await page.getByRole('button', { name: '■ Cancel' }).click();
    await page.locator('.tab-panel:not([hidden]) .run-stats').filter({ hasText: 'Cancelled' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'Job execution was cancelled' }).waitFor();

    await page.getByRole('tab', { name: 'Job information' }).click();
    await page.locator('.job-info button.link').click();
    const detail = page.locator('.job-detail');
    await detail.locator('.state-cancelled').first().waitFor();
    await expect(detail.textContent()).resolves.toContain('stopped');
    await expect(detail.locator('pre.sql').textContent()).resolves.toBe(SLOW_QUERY);
    await detail.getByText('Configuration').click();
    await expect(detail.locator('details[open] pre').first().textContent()).resolves.toContain('"query"');
  });

  it('cancels a running job from the jobs view, which shows it live', async () => {
    const jobId = `slow_${Date.now()}`;
    const insert = rest(`${emu.url}/bigquery/v2/projects/${PROJECT}/jobs`, {
      method: 'POST',
      json: { jobReference: { projectId: PROJECT, jobId }, configuration: { query: { query: SLOW_QUERY, useLegacySql: false } } },
    });
    expect((await insert).body.status.state).toBe('RUNNING');
    await page.getByRole('button', { name: 'Jobs' }).click();
    await page.getByLabel('State').selectOption('RUNNING');
    await page.getByRole('button', { name: jobId }).click();
    const detail = page.locator('.job-detail');
    await detail.getByRole('progressbar').waitFor();
    expect(await accessibilityViolations()).toEqual([]);
    await detail.getByRole('button', { name: '■ Cancel job' }).click();
    await detail.locator('.state-cancelled').first().waitFor();
    const job = await rest(`${emu.url}/bigquery/v2/projects/${PROJECT}/jobs/${jobId}`);
    expect(job.body.status.state).toBe('DONE');
    expect(job.body.status.errorResult.reason).toBe('stopped');
    await page.getByLabel('State').selectOption('');
    await page.getByRole('button', { name: 'SQL workspace' }).click();
  });

  it('previews a table through tabledata.list, copies its name and deletes it', async () => {
    const shop = page.getByRole('treeitem', { name: 'shop' });
    if ((await shop.getAttribute('aria-expanded')) !== 'true') await shop.click();
    await page.getByRole('treeitem', { name: 'orders' }).click();
    const tab = page.locator('.resource-tab:not([hidden])');
    await tab.getByRole('cell', { name: 'NUMERIC' }).waitFor();
    await tab.getByRole('tab', { name: 'Details' }).click();
    await expect(tab.locator('.facts').textContent()).resolves.toContain('250');
    await tab.getByRole('tab', { name: 'Preview' }).click();
    await tab.locator('.pager-info').filter({ hasText: 'Rows 1–100 of 250' }).waitFor();
    await tab.getByRole('button', { name: 'Last page' }).click();
    await tab.locator('.pager-info').filter({ hasText: 'Rows 201–250 of 250' }).waitFor();
    expect(await accessibilityViolations()).toEqual([]);

    await tab.getByRole('button', { name: 'Copy name' }).click();
    await page.getByRole('status').filter({ hasText: `Copied ${PROJECT}.shop.orders` }).waitFor();

    await tab.getByRole('button', { name: 'Delete table' }).click();
    await page.getByRole('dialog', { name: 'Delete table' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('treeitem', { name: 'orders' }).waitFor({ state: 'detached' });
    expect((await rest(`${emu.url}/bigquery/v2/projects/${PROJECT}/datasets/shop/tables/orders`)).status).toBe(404);
  });

  it('never asked for anything outside the emulator', () => {
    expect(external).toEqual([]);
  });
});

describe('--no-console', () => {
  it('serves neither /console nor the redirect of /', async () => {
    const off = await startEmulator({ args: ['--no-console'] });
    try {
      expect((await rest(`${off.url}/console/`)).status).toBe(404);
      const root = await fetch(`${off.url}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
      expect(root.status).toBe(200);
      expect(await root.json()).toEqual({ service: 'warehouse-emulator', status: 'ok' });
    } finally {
      await off.stop();
    }
  });
});
