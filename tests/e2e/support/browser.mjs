// Headless Chromium from Debian's package, driven by playwright-core (installed into
// web/node_modules by deploy/install-deps.sh). Neither downloads anything.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const chromiumPath = process.env.KPORT_CHROMIUM || '/usr/bin/chromium';

// The flags keep Chromium off the network: this machine's closed network refuses its
// background connections, many at a time, and slows every start.
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--disable-features=PreloadTopChromeWebUI,WebUIOmniboxPopup'];

// What is missing to run browser tests, or null when everything is there.
export function missingTools() {
  if (!existsSync(chromiumPath)) return `${chromiumPath} is missing (apt-get install chromium; deploy/install-deps.sh does it)`;
  if (!existsSync(join(repoRoot, 'web', 'node_modules', 'playwright-core')))
    return 'web/node_modules/playwright-core is missing (npm ci --prefix web; deploy/install-deps.sh does it)';
  if (!existsSync(join(repoRoot, 'web', 'vendor', 'uplot.esm.js'))) return 'web/vendor/uplot.esm.js is missing (npm ci --prefix web)';
  return null;
}

export async function launch() {
  const require = createRequire(join(repoRoot, 'web', 'package.json'));
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: FLAGS });
}

// A page that records script errors and CSP violations, so a test can assert none.
export async function openPage(browser, errors) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  return page;
}
