// `topo site` in headless Chromium: every page loads without console errors, the progress chart
// renders one point per measured candidate, every link resolves, and user text in a record (a
// hostile hypothesis, reason and learning) is shown as text, never run.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIO } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { repoRoot } from '../../support/run-action.js';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const HOSTILE =
  '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> @team </details> [x](javascript:window.__pwned=3)';
const EXAMPLE = 'topology-opt-vavam-ord-20261202';

const records = mkdtempSync(join(tmpdir(), 'topo-site-records-'));
const out = mkdtempSync(join(tmpdir(), 'topo-site-'));
let browser: Browser;

beforeAll(async () => {
  cpSync(join(repoRoot, 'experiments', `${EXAMPLE}.json`), join(records, `${EXAMPLE}.json`));
  const hostile = JSON.parse(readFileSync(join(repoRoot, 'experiments', `${EXAMPLE}.json`), 'utf8'));
  hostile.experiment_id = 'topology-opt-vavam-evil-20261203';
  hostile.runs[1].hypothesis = HOSTILE;
  hostile.runs[2].decision.reason = HOSTILE;
  hostile.runs[2].skill_reflections = [{ topic: 'other', learning: HOSTILE }];
  writeFileSync(join(records, `${hostile.experiment_id}.json`), JSON.stringify(hostile, null, 2));
  let stderr = '';
  const io: CliIO = {
    stdout: () => {},
    stderr: (t) => {
      stderr += t;
    },
    cwd: repoRoot,
    env: {},
    isTTY: false,
  };
  expect(await main(['site', '--records', records, '--out', out], io), stderr).toBe(0);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_FLAGS,
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

function pages(dir = out, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? pages(join(dir, e.name), `${prefix}${e.name}/`)
      : e.name.endsWith('.html')
        ? [`${prefix}${e.name}`]
        : [],
  );
}

describe('topo site in headless Chromium', () => {
  it('writes an index, a page per experiment, per candidate and the report', () => {
    const all = pages();
    expect(all).toContain('index.html');
    expect(all).toContain(`${EXAMPLE}/index.html`);
    expect(all).toContain(`${EXAMPLE}/report.html`);
    expect(all).toContain(`${EXAMPLE}/renderer-split.html`);
    expect(existsSync(join(out, '.nojekyll'))).toBe(true);
  });

  it('every page loads without console errors, runs no record text, and every link resolves', async () => {
    const all = pages();
    for (const path of all) {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(pathToFileURL(join(out, path)).href);
      expect(errors, path).toEqual([]);
      expect(await page.evaluate('window.__pwned'), path).toBeUndefined();
      // SVG links too (their .href is not a string): the attribute, resolved against the page.
      const hrefs = await page.$$eval('a[href]', (as) =>
        as.map((a) => new URL(a.getAttribute('href') ?? '', a.ownerDocument.baseURI).href),
      );
      for (const href of hrefs) {
        expect(href, `${path}: ${href}`).not.toMatch(/^javascript:/i);
        if (!href.startsWith('file:')) continue;
        const target = fileURLToPath(href.split('#')[0] as string);
        expect(existsSync(target), `${path} links to ${target}`).toBe(true);
      }
      await page.close();
    }
  }, 120_000);

  it('the progress chart renders a point with its interval per measured candidate, and the best so far', async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(join(out, EXAMPLE, 'index.html')).href);
    const record = JSON.parse(readFileSync(join(records, `${EXAMPLE}.json`), 'utf8'));
    expect(await page.locator('svg.progress circle').count()).toBe(record.runs.length);
    expect(await page.locator('svg.progress polyline.best').count()).toBe(1);
    const box = await page.locator('svg.progress').boundingBox();
    expect(box?.width).toBeGreaterThan(300);
    expect(await page.locator('p.best').textContent()).toContain(record.current_best.topology);
    // Clicking a point opens that candidate's page.
    await page.locator('svg.progress a.point').nth(1).click();
    expect(page.url()).toMatch(/renderer-split\.html$/);
    await page.close();
  });

  it('shows hostile record text as text', async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(join(out, 'topology-opt-vavam-evil-20261203', 'renderer-split.html')).href);
    expect(await page.locator('main').textContent()).toContain('<script>window.__pwned=1</script>');
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await page.close();
    const raw = pages()
      .map((p) => readFileSync(resolve(out, p), 'utf8'))
      .join('\n');
    expect(raw).not.toContain('<script');
    expect(raw).not.toContain('href="javascript:');
  });
});
