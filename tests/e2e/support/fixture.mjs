// What every dashboard test file starts from: one kport-coordinator (KPORT_COORDINATOR_BIN)
// serving web/, seeded through the API, and one headless Chromium, started before the
// file's tests and stopped after them; screenshots go to KPORT_E2E_OUT.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startCoordinator } from './coordinator.mjs';
import { seed } from './seed.mjs';
import { launch, openPage, missingTools, repoRoot } from './browser.mjs';

export const binary = process.env.KPORT_COORDINATOR_BIN || join(repoRoot, 'build', 'dev', 'bin', 'kport-coordinator');
const outDir = process.env.KPORT_E2E_OUT || join(repoRoot, 'build', 'e2e-screenshots');

// Registers the file's before/after hooks; the returned site's `k` (the coordinator) and
// `runners` (the seeded runners' tokens) are set once its before hook ran.
export function dashboardSite() {
  const missing = missingTools();
  // A missing tool skips these tests (CTest's SKIP_RETURN_CODE), never passes them; where
  // CI is set, deploy/install-deps.sh should have installed everything, so it fails.
  if (missing) {
    console.log(`e2e: ${missing}`);
    process.exit(process.env.CI ? 1 : 77);
  }
  const site = { k: null, runners: null, browser: null };
  before(async () => {
    mkdirSync(outDir, { recursive: true });
    site.k = await startCoordinator({ binary, web: join(repoRoot, 'web') });
    site.runners = await seed(site.k);
    site.browser = await launch();
  });
  after(async () => {
    if (site.browser) await site.browser.close();
    if (site.k) await site.k.stop();
  });
  // Opens #hash, waits for the page to paint its data, runs fn, and takes a screenshot.
  site.visit = async (name, hash, fn) => {
    const errors = [];
    const page = await openPage(site.browser, errors);
    try {
      await page.goto(`${site.k.url}/${hash}`);
      await page.waitForSelector(`body[data-ready="${hash.split('/')[1].split('?')[0] || 'overview'}"]`, { timeout: 10000 });
      await fn(page);
      await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
      assert.deepEqual(errors, [], 'no script errors or CSP violations');
    } finally {
      await page.context().close();
    }
  };
  return site;
}
