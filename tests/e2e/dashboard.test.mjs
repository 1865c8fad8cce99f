// The dashboard in real headless Chromium against a started kport-coordinator whose
// database was seeded through the API: every page shows the seeded facts, a result
// posted by a runner appears live, a commit message holding a script renders as text,
// the Content-Security-Policy header is sent, and an instance two libraries publish is
// shown one library at a time.
//
//   node --test tests/e2e/dashboard.test.mjs   (env: KPORT_COORDINATOR_BIN, KPORT_E2E_OUT)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCoordinator } from './support/coordinator.mjs';
import { facts, runPipeline } from './support/seed.mjs';
import { binary, dashboardSite } from './support/fixture.mjs';

const site = dashboardSite();
const { visit } = site;

const opts = {};

test('the dashboard is served with a Content-Security-Policy', opts, async () => {
  const res = await fetch(`${site.k.url}/`);
  const csp = res.headers.get('content-security-policy') || '';
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /default-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  const vendor = await fetch(`${site.k.url}/static/vendor/uplot.esm.js`);
  assert.equal(vendor.status, 200, 'the chart library is served by the coordinator');
});

test('the bundled script is kept for good; other files revalidate by ETag', opts, async () => {
  const html = await (await fetch(`${site.k.url}/`)).text();
  const src = html.match(/<script type="module" async src="([^"]+)"/)[1];
  assert.match(src, /^\/static\/dist\/app\.js\?v=[0-9a-f]{12}$/, 'index.html names the bundle by its content hash');
  const app = await fetch(site.k.url + src);
  assert.equal(app.status, 200);
  assert.match(app.headers.get('cache-control'), /immutable/);
  assert.match(app.headers.get('content-type'), /^text\/javascript/);
  const page = await fetch(`${site.k.url}/`);
  assert.equal(page.headers.get('cache-control'), 'no-cache', 'the page itself is always revalidated');
  const etag = page.headers.get('etag');
  assert.match(etag, /^"[0-9a-f]+"$/);
  const again = await fetch(`${site.k.url}/`, { headers: { 'If-None-Match': `W/"other", ${etag}` } });
  assert.equal(again.status, 304, 'an unchanged file costs a 304');
  assert.equal(again.headers.get('etag'), etag);
  assert.equal((await again.text()).length, 0);
  const changed = await fetch(`${site.k.url}/`, { headers: { 'If-None-Match': '"0000"' } });
  assert.equal(changed.status, 200);
});

test('no file outside the served folder is served, not even a sibling named like it', opts, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kport-e2e-web-'));
  mkdirSync(join(dir, 'web'));
  mkdirSync(join(dir, 'web-private'));
  writeFileSync(join(dir, 'web', 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(dir, 'web-private', 'secret.txt'), 'private-content-7f3a');
  const other = await startCoordinator({ binary, web: join(dir, 'web') });
  try {
    assert.equal((await fetch(`${other.url}/`)).status, 200);
    // %2F keeps the browser-side URL parser from folding the "..": the server decodes it.
    for (const path of ['/static/..%2Fweb-private%2Fsecret.txt', '/static/..%2F..%2Fetc%2Fpasswd']) {
      const res = await fetch(other.url + path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(await res.text(), /private-content-7f3a|root:/);
    }
  } finally {
    await other.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('overview shows every target, runners and recent pipelines', opts, async () => {
  await visit('overview', '#/', async (page) => {
    const progress = await page.textContent('#progress');
    for (const t of facts.targets) assert.ok(progress.includes(t), `target ${t} listed`);
    assert.ok(progress.includes('gemm') && progress.includes('rmsnorm'), 'families listed');
    assert.match(await page.textContent('.summary'), /2 runners online/);
    assert.equal(await page.locator('#pipelines tbody tr').count(), 2);
    assert.ok((await page.textContent('#results')).includes('gemm.wgmma_tma.a'));
  });
});

test('target page shows the matrix, evidence with its command, and the burndown', opts, async () => {
  await visit('target-sm_90a', '#/target/sm_90a?cell=gemm.simt:numerics', async (page) => {
    const row = page.locator('tr[data-variant="gemm.wgmma_tma"]');
    assert.equal(await row.locator('td').nth(0).getAttribute('class'), 'cell cell-ok');
    assert.match(await row.locator('td').nth(1).getAttribute('class'), /cell-fail/, 'spills make resources fail');
    const detail = await page.textContent('#cell-detail');
    assert.ok(detail.includes(`kport-harness-sm_90a check --instance gemm.simt.a --dtype bf16 --shape ${facts.shape}`), detail);
    assert.ok(detail.includes('max_rel_err 0.31'), 'the failure is shown');
    await page.click('a[data-cell="gemm.mma_sync:timing"]');
    assert.match(page.url(), /cell=gemm\.mma_sync%3Atiming|cell=gemm\.mma_sync:timing/);
    assert.ok((await page.textContent('#cell-detail')).includes('kport-harness-sm_90a bench --instance gemm.mma_sync.a'));
    await page.waitForSelector('#burndown canvas', { timeout: 5000 });  // drawn after the matrix
  });
  await visit('target-sm_100a', '#/target/sm_100a', async (page) => {
    assert.ok((await page.textContent('#stage-commit')).includes(facts.child.slice(0, 7)), 'stages of the latest built commit');
    assert.match(await page.locator('tr[data-variant="gemm.wgmma_tma"] td').first().getAttribute('class'), /cell-na/);
    assert.match(await page.locator('tr[data-variant="gemm.simt"] td').first().getAttribute('class'), /cell-fail/);
  });
});

test('commit page classifies changes and renders a script in a message as text', opts, async () => {
  await visit('commit', `#/commit/${facts.child}`, async (page) => {
    assert.equal(await page.textContent('#commit-message'), facts.childMessage);
    assert.equal(await page.evaluate(() => window.__kportXss), undefined, 'the script did not run');
    assert.equal(await page.locator('#commit-message script').count(), 0);
    const totals = await page.textContent('#totals');
    // The +40 % of gemm.mma_sync.a is on a series with no A/A history: not judged, and said so.
    for (const s of ['1 new failure', '0 regressed', '1 fixed']) assert.ok(totals.includes(s), `${s} in ${totals}`);
    assert.match(totals, /[1-9]\d* too little history/);
    const group = await page.textContent('section.group');
    assert.ok(group.includes('gemm.mma_sync.a') && group.includes('+40.0%'), group);
    // The verdict beside the diff is the one GET /api/v1/commits/{sha}/verdict gives.
    const verdict = await site.k.client.call('GET', `/api/v1/commits/${facts.child}/verdict`);
    assert.equal(await page.textContent('#verdict-status'), verdict.status);
    const box = await page.textContent('#verdict');
    assert.ok(box.includes('numerics failure') && box.includes(facts.parent.slice(0, 7)), box);
    assert.equal(await page.locator('#verdict li.reason').count(), verdict.reasons.length);
  });
});

test('kernel page charts a configuration per GPU with share of peak and ratio', opts, async () => {
  await visit('kernel', `#/kernel/gemm.mma_sync.a?dtype=bf16&shape=${facts.shape}`, async (page) => {
    const latest = await page.textContent('#latest');
    assert.ok(latest.includes(facts.gpu), latest);
    assert.ok(latest.includes('420'), 'latest median');
    assert.ok(latest.includes('×0.43'), 'ratio to the baseline');
    const body = await page.textContent('body');
    assert.ok(body.includes('Noise and minimum detectable effect'), 'each series says what it can detect');
    assert.ok(body.includes('No A/A history') || (await page.locator('#noise tr[data-gpu]').count()) > 0, body);
    await page.waitForSelector('#chart-share canvas', { timeout: 5000 });  // drawn after the figures
    await page.waitForSelector('#chart-ratio canvas', { timeout: 5000 });
  });
});

test('runners page lists GPUs, drivers and state, names as text', opts, async () => {
  await visit('runners', '#/runners', async (page) => {
    const table = await page.textContent('#runners');
    assert.ok(table.includes(facts.gpuRunner), 'the markup in a runner name is shown as text');
    assert.ok(table.includes('580.159.04') && table.includes(facts.gpu));
    assert.equal(await page.locator('#runners b').count(), 0);
  });
});

test('best-kernel explorer answers from the URL with its evidence', opts, async () => {
  const q = new URLSearchParams({ gpu: facts.gpu, op: 'gemm', dtype: 'bf16', shape: facts.shape });
  await visit('best', `#/best?${q}`, async (page) => {
    await page.waitForSelector('#ranking');
    assert.ok((await page.textContent('#answer h2')).includes('gemm.wgmma_tma.a'));
    assert.ok((await page.textContent('#answer .summary')).includes('measured'), 'the kind of answer is shown');
    assert.ok((await page.textContent('#answer .muted')).includes('evidence from'), 'where the evidence comes from');
    assert.ok(await page.locator('#ranking a[href^="#/result/"]').count() >= 2, 'evidence links to the result pages');
    // The form offers the op families the coordinator knows, each with its own dtypes and
    // example shape (GET /api/v1/families: kport's own seven here).
    const options = (name) => page.$$eval(`#best-form select[name=${name}] option`, (os) => os.map((o) => o.value));
    assert.deepEqual(await options('op'), ['gemm', 'attention', 'gemm_fp8', 'grouped_gemm', 'grouped_gemm_fp8', 'rmsnorm', 'softmax']);
    assert.deepEqual(await options('dtype'), ['bf16', 'fp16', 'fp32']);
    await page.selectOption('#best-form select[name=op]', 'attention');
    assert.deepEqual(await options('dtype'), ['bf16', 'fp16']);
    assert.equal(await page.inputValue('#best-form input[name=shape]'), 'b=4,h=16,l=4096,d=128,causal=0');
    await page.selectOption('#best-form select[name=op]', 'gemm_fp8');
    assert.deepEqual(await options('dtype'), ['e4m3', 'e5m2']);
    assert.equal(await page.inputValue('#best-form input[name=shape]'), 'm=4096,n=7168,k=16384,scale=2');
  });
  // A shape nobody measured: ranked by each figure moved here from the nearest measured shape
  // (by problem size: the seeded instances publish no tiles), the estimate beside the median there.
  const moved = new URLSearchParams({ gpu: facts.gpu, op: 'gemm', dtype: 'bf16', shape: 'm=2048,n=2048,k=2048' });
  await visit('best-moved', `#/best?${moved}`, async (page) => {
    await page.waitForSelector('#ranking');
    assert.ok((await page.textContent('#answer .summary')).includes('moved to this shape by its problem size'));
    const head = await page.$$eval('#ranking th', (ths) => ths.map((t) => t.textContent));
    assert.ok(head.includes('estimate µs here') && head.includes('median µs there'), head.join(' | '));
    assert.ok(await page.locator('#ranking td.estimate').count() >= 2, 'each ranked instance has its estimate');
  });
});

test('a result posted by a runner appears live without moving the page', opts, async () => {
  await visit('live', '#/', async (page) => {
    await page.waitForFunction(() => document.getElementById('live').textContent === 'live');
    await page.mouse.wheel(0, 300);
    const firstBefore = await page.getAttribute('#results tbody tr', 'data-id');
    const where = () => page.evaluate(() => [window.scrollY, document.getElementById('results').getBoundingClientRect().top]);
    const before = await where();
    await runPipeline(site.k, site.runners, facts.child, { 'gemm.wgmma_tma.a': ['passed', 140] }, 'manual');
    const badge = page.locator('h2:has(+ #results) button.pending');
    await badge.waitFor({ state: 'visible', timeout: 5000 });
    assert.match(await badge.textContent(), /^1 new result — show$/);
    assert.deepEqual(await where(), before, 'nothing moved while the update waited');
    await badge.click();
    await page.waitForFunction((id) => document.querySelector('#results tbody tr').dataset.id !== id, firstBefore);
    const first = await page.textContent('#results tbody tr');
    assert.ok(first.includes('gemm.wgmma_tma.a') && first.includes('passed'), first);
    assert.ok(await page.locator('h2:has(+ #pipelines) button.pending:not([hidden])').count() === 1, 'the new pipeline is announced');
    // The coordinator reuses dashboard answers until an event announces a change.
    const overview = await site.k.client.call('GET', '/api/v1/dashboard/overview');
    assert.equal(overview.pipelines.length, 3, 'the cached overview was refreshed by the events');
    assert.equal(overview.results[0].instance, 'gemm.wgmma_tma.a', 'its latest results too');
    assert.equal(overview.results[0].status, 'passed');
  });
});

test('deliveries page shows forge connections and every outgoing call with its last error', opts, async () => {
  // A Gitea on a closed port: the push pipeline's status is queued and its first attempt fails.
  const tokenFile = join(site.k.dir, 'forge-token');
  writeFileSync(tokenFile, 'forge-token-e2e\n', { mode: 0o600 });
  await site.k.client.call('PUT', '/api/v1/repositories/kernels/forge', {
    token: site.k.admin, body: { kind: 'gitea', api_url: 'http://127.0.0.1:1/api/v1', project: 'org/kernels', token_file: tokenFile },
  });
  const sha = 'c3'.repeat(20);
  await site.k.client.call('POST', '/api/v1/commits', { token: site.k.admin, body: { sha, repo: 'kernels', message: 'report me' } });
  await site.k.client.call('POST', '/api/v1/pipelines', { token: site.k.admin, body: { commit: sha, repo: 'kernels', reason: 'push', targets: ['sm_90a'] } });
  let tried = null;
  for (let i = 0; i < 100 && !tried; i++) {
    const page = await site.k.client.call('GET', '/api/v1/deliveries');
    tried = page.items.find((d) => d.commit === sha && d.attempts >= 1) || null;
    if (!tried) await new Promise((r) => setTimeout(r, 100));  // the sender's first attempt; no event reaches this client
  }
  assert.ok(tried, 'the status delivery was attempted');
  await visit('deliveries', '#/deliveries', async (page) => {
    const forges = await page.textContent('#forges');
    assert.ok(forges.includes('kernels') && forges.includes('gitea (status)') && forges.includes('ok'), forges);
    assert.ok(!forges.includes('forge-token-e2e'), 'the token is never shown');
    assert.ok(forges.includes(`token file ${tokenFile}`), `the credentials say where the token is read from: ${forges}`);
    const row = await page.textContent(`#deliveries tr[data-id="${tried.id}"]`);
    assert.ok(row.includes('commit_status') && row.includes('pipeline.queued') && row.includes('pending'), row);
    assert.ok(row.includes(`1 / ${tried.max_attempts}`), row);
    assert.ok(row.includes('/api/v1/repos/org/kernels/statuses/'), `the last error names the call: ${row}`);
    assert.ok(await page.locator(`#deliveries a[href="#/commit/${sha}"]`).count() === 1, 'the commit links to its page');
  });
  await visit('deliveries-failed', '#/deliveries?state=failed', async (page) => {
    assert.ok((await page.textContent('#deliveries')).includes('No deliveries.'));
  });
});

test('a target two libraries build shows one library at a time, linking to the other', opts, async () => {
  const c = site.k.client;
  const admin = { token: site.k.admin };
  await c.call('POST', '/api/v1/repositories', { ...admin, body: { name: 'norm-lib', url: '/srv/git/norm-lib.git' } });
  // Older than the kernels library's commits: the target's page stays the kernels' by default.
  const sha = 'd4'.repeat(20);
  await c.call('POST', '/api/v1/commits', { ...admin, body: { sha, repo: 'norm-lib', message: 'norm-lib', author: 'dev', time_ms: 1764300000000 } });
  await c.call('PUT', '/api/v1/kernels', { ...admin, body: { variants: [{ family: 'layer', variant: 'rows', features: [] }] } });
  await c.call('POST', '/api/v1/pipelines', { ...admin, body: { commit: sha, repo: 'norm-lib', reason: 'manual', targets: ['sm_90a'] } });
  // The build runner takes the queue in order: norm-lib's build comes after any left by earlier tests.
  let job = null;
  for (let i = 0; i < 5 && !job; i++) {
    const r = await c.call('POST', '/api/v1/runners/claim?wait=0', { token: site.runners.build, body: {} });
    assert.ok(r.job, 'a build job to claim');
    const records = r.job.commit === sha ? [{ commit: sha, target: 'sm_90a', family: 'layer', variant: 'rows', status: 'ok' }] : [];
    if (records.length) await c.call('POST', `/api/v1/jobs/${r.job.id}/builds`, { token: site.runners.build, body: { attempt: r.job.attempt, records } });
    await c.call('POST', `/api/v1/jobs/${r.job.id}/complete`, { token: site.runners.build, body: { attempt: r.job.attempt, status: 'succeeded' } });
    if (r.job.commit === sha) job = r.job;
  }
  assert.ok(job, 'norm-lib was built');
  await visit('target-two-libraries', '#/target/sm_90a', async (page) => {
    assert.ok((await page.textContent('#library')).includes('kernels'), 'the library built last');
    assert.ok((await page.textContent('#other-libraries')).includes('norm-lib'));
    assert.equal(await page.locator('tr[data-variant="layer.rows"]').count(), 0, 'no other library in the matrix');
    await page.click('#other-libraries a');
    await page.waitForSelector('tr[data-variant="layer.rows"]', { timeout: 5000 });
    assert.match(page.url(), /#\/target\/sm_90a\?repo=norm-lib/);
    assert.ok((await page.textContent('#library')).includes('norm-lib'));
    assert.ok((await page.textContent('#stage-commit')).includes(sha.slice(0, 7)), 'its own stage commit');
    assert.equal(await page.locator('tr[data-variant="gemm.simt"]').count(), 0, 'the kernels library is not on its board');
    assert.ok((await page.textContent('#other-libraries')).includes('kernels'), 'and it links back');
  });
  await visit('overview-two-libraries', '#/', async (page) => {
    // A row group per library that built the target, each opening its own board.
    assert.equal(await page.locator('#progress a[href="#/target/sm_90a?repo=norm-lib"]').count(), 1);
    assert.equal(await page.locator('#progress a[href="#/target/sm_90a?repo=kernels"]').count(), 1);
    assert.ok((await page.textContent('#progress')).includes('layer'), "norm-lib's family is listed");
  });
});

// Two libraries publish an instance of the same name, each with its own figures. The
// kernel page is one library's at a time, names it and links the other's; the result
// and commit pages of a library's figure link to that library's kernel page.
test('a kernel two libraries publish shows one library at a time, linked from its results and commits', opts, async () => {
  const c = site.k.client;
  const admin = { token: site.k.admin };
  const instance = 'gemm.shared.x';
  const libs = [
    { repo: 'alpha-lib', sha: 'e5'.repeat(20), median: 100 },
    { repo: 'beta-lib', sha: 'f6'.repeat(20), median: 50 },
  ];
  // Takes jobs of `kind` as `token` until one of `sha`, completing any other left queued by
  // earlier tests; `during` runs while that job is held.
  const serve = async (token, sha, during) => {
    for (let i = 0; i < 8; i++) {
      const r = await c.call('POST', '/api/v1/runners/claim?wait=0', { token, body: {} });
      assert.ok(r.job, `a job of ${sha} to claim`);
      if (r.job.commit === sha) await during(r.job);
      await c.call('POST', `/api/v1/jobs/${r.job.id}/complete`, { token, body: { attempt: r.job.attempt, status: 'succeeded' } });
      if (r.job.commit === sha) return r.job;
    }
    assert.fail(`no job of ${sha}`);
  };
  for (const lib of libs) {
    await c.call('POST', '/api/v1/repositories', { ...admin, body: { name: lib.repo, url: `/srv/git/${lib.repo}.git` } });
    await c.call('POST', '/api/v1/commits', { ...admin, body: { sha: lib.sha, repo: lib.repo, message: lib.repo, author: 'dev', time_ms: 1764500000000 } });
    await c.call('POST', '/api/v1/pipelines', { ...admin, body: { commit: lib.sha, repo: lib.repo, reason: 'manual', targets: ['sm_90a'] } });
    // The build runner publishes the catalog while it holds the library's build: the
    // instance is named within that library.
    await serve(site.runners.build, lib.sha, async (job) => {
      await c.call('PUT', '/api/v1/kernels', { token: site.runners.build,
        body: { variants: [{ family: 'gemm', variant: 'shared', features: [] }], instances: [{ name: instance, family: 'gemm', variant: 'shared' }] } });
      await c.call('POST', `/api/v1/jobs/${job.id}/builds`, { token: site.runners.build,
        body: { attempt: job.attempt, records: [{ commit: lib.sha, target: 'sm_90a', family: 'gemm', variant: 'shared', status: 'ok' }] } });
    });
    // Its check: a bf16 figure, and an fp16 case that fails (a change the commit page lists).
    await serve(site.runners.gpu, lib.sha, async (job) => {
      const base = { commit: lib.sha, target: 'sm_90a', family: 'gemm', variant: 'shared', instance, shape: facts.shape, toolkit: '13.0',
        gpu_model: facts.gpu, gpu_uuid: 'GPU-0', arch: '9.0', driver: '580.159.04', tolerance: 0.02, seed: 7 };
      const results = [
        { ...base, dtype: 'bf16', status: 'passed', normwise_rel_err: 1e-3, median_us: lib.median, stddev_us: 1, samples: 50 },
        { ...base, dtype: 'fp16', status: 'failed', message: 'normwise_rel_err 0.3 > tolerance 0.02', normwise_rel_err: 0.3 },
      ];
      await c.call('POST', `/api/v1/jobs/${job.id}/results`, { token: site.runners.gpu, body: { attempt: job.attempt, results } });
    });
  }
  const kernelHash = (repo, dtype = 'bf16') => `#/kernel/${instance}?repo=${repo}&dtype=${dtype}&shape=${encodeURIComponent(facts.shape)}`;
  const [alpha, beta] = libs;
  await visit('kernel-two-libraries', `#/kernel/${instance}?dtype=bf16&shape=${encodeURIComponent(facts.shape)}`, async (page) => {
    // Without a choice, the first library by name; its own figure, not the other's.
    assert.equal(await page.textContent('#library strong'), alpha.repo);
    assert.equal(await page.getAttribute('#library a', 'href'), kernelHash(alpha.repo));
    const median = () => page.locator('#latest a[href^="#/result/"]').allTextContents();
    assert.deepEqual(await median(), ['100'], "its own figure, not the other library's");
    const other = page.locator('#other-libraries a');
    assert.equal(await other.count(), 1, 'one other library');
    assert.equal(await other.textContent(), beta.repo);
    assert.equal(await other.getAttribute('href'), `#/kernel/${instance}?repo=${beta.repo}`);
    await other.click();
    await page.waitForFunction((repo) => document.querySelector('#library strong')?.textContent === repo, beta.repo, { timeout: 5000 });
    assert.match(page.url(), new RegExp(`#/kernel/${instance.replaceAll('.', '\\.')}\\?repo=${beta.repo}`));
    await page.waitForFunction(() => document.querySelector('#latest a[href^="#/result/"]')?.textContent === '50', null, { timeout: 5000 });
    assert.deepEqual(await median(), ['50']);
    assert.equal(await page.getAttribute('#other-libraries a', 'href'), `#/kernel/${instance}?repo=${alpha.repo}`, 'and it links back');
  });
  // A result of beta-lib links to beta-lib's kernel page, which the page then shows.
  const listed = await c.call('GET', `/api/v1/results?commit=${beta.sha}&instance=${instance}&limit=10`);
  const betaResult = listed.items.find((r) => r.dtype === 'bf16');
  assert.equal(betaResult.repo, beta.repo, 'a result answer names its library');
  await visit('result-kernel-link-library', `#/result/${betaResult.id}`, async (page) => {
    assert.equal(await page.textContent('#result-library'), beta.repo);
    const link = page.locator(`#result-facts a[href^="#/kernel/"]`);
    assert.equal(await link.getAttribute('href'), kernelHash(beta.repo));
    await link.click();
    await page.waitForSelector('body[data-ready="kernel"]');
    await page.waitForFunction((repo) => document.querySelector('#library strong')?.textContent === repo, beta.repo, { timeout: 5000 });
  });
  // The commit page's change (beta-lib's failing fp16 case) links to beta-lib's page.
  await visit('commit-kernel-link-library', `#/commit/${beta.sha}`, async (page) => {
    const link = page.locator(`#groups a[href^="#/kernel/"]`);
    assert.equal(await link.count(), 1, 'the new failure is the one change');
    assert.equal(await link.getAttribute('href'), kernelHash(beta.repo, 'fp16'));
  });
});
