// Measures the dashboard's first paint per page in headless Chromium against a
// coordinator on a big database: first-contentful-paint, and "data painted": the Element
// Timing render time of the page's heading, which is inserted together with its data.
// Each page is loaded `runs` times in a fresh browser context (empty cache).
//
// With --waterfall, each page's last load is also printed as a waterfall: when the
// document, every script, stylesheet and API answer was requested and arrived, when the
// page's module ran, and when it painted (ms from navigation start).
//
//   node bench/dashboard/measure.mjs --coordinator BIN --db FILE [--commit SHA] [--runs 5] [--warm-tab] [--waterfall]
//   (--web DIR serves another copy of the dashboard's files; default web/)
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startCoordinator } from '../../tests/e2e/support/coordinator.mjs';
import { seed } from '../../tests/e2e/support/seed.mjs';
import { launch, openPage, repoRoot } from '../../tests/e2e/support/browser.mjs';

const { values: args } = parseArgs({ options: {
  coordinator: { type: 'string' }, db: { type: 'string' }, commit: { type: 'string' }, runs: { type: 'string', default: '5' },
  'warm-tab': { type: 'boolean', default: false }, waterfall: { type: 'boolean', default: false },
  web: { type: 'string', default: join(repoRoot, 'web') } } });
const runs = Number(args.runs);

const k = await startCoordinator({ binary: args.coordinator, web: args.web, db: args.db });
try {
  // The big seed has results only; pipelines, build records and runners come through the
  // API once, the way runners would add them.
  const pipelines = await k.client.call('GET', '/api/v1/pipelines?limit=1');
  if (pipelines.items.length === 0) await seed(k);
  const sha = args.commit || (await k.client.call('GET', '/api/v1/results?limit=1')).items[0].commit;
  const best = new URLSearchParams({ gpu: 'NVIDIA H200', op: 'gemm', dtype: 'bf16', shape: 'm=4096,n=4096,k=4096' });
  const pages = [
    ['overview', '#/'],
    ['target', '#/target/sm_90a'],
    ['commit', `#/commit/${sha}`],
    ['kernel', '#/kernel/gemm.wgmma_tma.a?dtype=bf16&shape=m=4096,n=4096,k=4096'],
    ['runners', '#/runners'],
    ['best', `#/best?${best}`],
  ];
  const browser = await launch();
  const rows = [];
  // The machine is shared: its load average says how much CPU these figures competed for.
  const loadBefore = loadavg()[0];
  for (const [name, hash] of pages) {
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const errors = [];
      const page = await openPage(browser, errors);
      if (args['warm-tab']) {
        // A tab that already shows a page of this origin, with the HTTP cache off: every
        // file and answer is fetched again, but the browser's processes are running, as
        // for someone who opens the dashboard from a browser they already use.
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
        await page.goto(`${k.url}/healthz`);
      }
      await page.goto(`${k.url}/${hash}`);
      await page.waitForSelector(`body[data-ready="${name}"]`, { timeout: 30000 });
      samples.push(await page.evaluate(async () => {
        const at = (n) => (performance.getEntriesByName(n)[0] || {}).startTime;
        // Element Timing: when the heading inserted with the page's data was painted.
        const element = await new Promise((resolve) => {
          new PerformanceObserver((list) => {
            const e = list.getEntries().find((x) => x.identifier === 'kport-data');
            if (e) resolve(e.renderTime || e.loadTime);
          }).observe({ type: 'element', buffered: true });
          setTimeout(() => resolve(null), 1000);
        });
        const api = performance.getEntriesByType('resource').filter((r) => r.name.includes('/api/v1/') && !r.name.includes('/events'));
        const nav = performance.getEntriesByType('navigation')[0];
        const rows = [['document', nav.requestStart, nav.responseStart, nav.responseEnd],
          ...performance.getEntriesByType('resource').map((r) => [new URL(r.name).pathname + new URL(r.name).search.slice(0, 24),
            r.startTime, r.responseStart, r.responseEnd]),
          ['DOM interactive', nav.domInteractive], ['first-contentful-paint', at('first-contentful-paint')],
          ['page rendered', at('kport:rendered')], ['data painted', element ?? at('kport:painted')]];
        return { fcp: at('first-contentful-paint'), painted: element ?? at('kport:painted'),
          api: Math.max(0, ...api.map((r) => r.responseEnd - r.startTime)), rows };
      }));
      if (errors.length) throw new Error(`${name}: ${errors.join('; ')}`);
      await page.context().close();
    }
    if (args.waterfall) {
      console.log(`-- ${name} (last load): what, requested, first byte, done (ms)`);
      for (const [what, ...t] of samples[samples.length - 1].rows)
        console.log(`   ${what.padEnd(48)} ${t.map((v) => (v === undefined ? '' : v.toFixed(1)).padStart(8)).join(' ')}`);
    }
    const med = (key) => { const v = samples.map((s) => s[key]).sort((a, b) => a - b); return v[Math.floor(v.length / 2)]; };
    const max = (key) => Math.max(...samples.map((s) => s[key]));
    rows.push({ page: name, fcp_median: med('fcp'), painted_median: med('painted'), painted_max: max('painted'),
      painted_first: samples[0].painted, api_median: med('api') });
  }
  await browser.close();
  console.log('| page | FCP median ms | data painted median ms | data painted max ms | first load ms | slowest API call median ms |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const r of rows)
    console.log(`| ${r.page} | ${r.fcp_median.toFixed(0)} | ${r.painted_median.toFixed(0)} | ${r.painted_max.toFixed(0)} | ${r.painted_first.toFixed(0)} | ${r.api_median.toFixed(0)} |`);
  const worst = Math.max(...rows.map((r) => r.painted_max));
  console.log(`worst data painted: ${worst.toFixed(0)} ms (budget 500 ms); load average ${loadBefore.toFixed(1)} -> ${loadavg()[0].toFixed(1)}`);
  process.exitCode = worst < 500 ? 0 : 1;
} finally {
  await k.stop();
}
