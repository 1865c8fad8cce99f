// The record pages the dashboard's links open instead of raw API answers, in real
// headless Chromium against a started kport-coordinator: a result (numerics against the
// tolerance, timing with its rounds and the baseline's interleaved figure, clocks, the
// reproduce command), a bisection driven to its end over a real three-commit repository
// (first bad commit, each probe's outcome and figure, the probe pipelines), a build
// record (diagnostics, resources, audits, source line), the links to them from the
// commit, kernel and target pages, and unknown ids.
//
//   node --test tests/e2e/pages.test.mjs   (env: KPORT_COORDINATOR_BIN, KPORT_E2E_OUT)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { facts, resultFor } from './support/seed.mjs';
import { dashboardSite } from './support/fixture.mjs';

const site = dashboardSite();
const { visit } = site;
const api = (method, path, opts) => site.k.client.call(method, path, opts);

const HARNESS = 'c3'.repeat(32);
const AUDIT = {
  ptx: { source: 'ptx', required: ['wgmma', 'cp_async_bulk'], counts: { wgmma: 24, cp_async_bulk: 0 }, missing: ['cp_async_bulk'], passed: false },
  sass: { audited: true, tool: 'cuobjdump -sass', required: ['wgmma'], counts: { wgmma: 48 }, missing: [], passed: true },
};
// A figure made of three rounds (one left out), re-measured against the parent's harness.
const ENV = {
  timing: {
    median_ms: 0.15, rounds: [{ median_ms: 0.1498, stddev_ms: 0.0012, samples: 50 }, { median_ms: 0.1502, stddev_ms: 0.0011, samples: 50 },
      { median_ms: 0.171, stddev_ms: 0.002, samples: 50, outlier: true }],
    sm_mhz_after_samples: { min: 1755, median: 1980, max: 1980 }, discarded_throttled: 2,
    paired: { commit: facts.parent, harness_sha256: 'd4'.repeat(32), order: 'interleaved', rounds: 4, median_ms: 0.1388,
      stddev_ms: 0.0009, samples: 200, round_medians_ms: [0.1387, 0.1389, 0.1388, 0.139], unstable: false },
  },
  clock_before: { sm_mhz: 1980, source: 'nvml', temperature_c: 41, power_w: 212.5 },
  clock_after: { sm_mhz: 1965, source: 'nvml', temperature_c: 47, power_w: 688 },
  reproduce: { harness: 'kport-harness-sm_90a', harness_sha256: HARNESS, target: 'sm_90a',
    check: ['check', '--case', 'gemm.wgmma_tma.a:bf16:m=4096,n=4096,k=4096', '--seed', '7'],
    bench: ['bench', '--case', 'gemm.wgmma_tma.a:bf16:m=4096,n=4096,k=4096', '--seed', '7', '--samples', '50'] },
};

const state = { result: null, build: null, bisection: null, commits: [] };

async function claim(token, kind) {
  const r = await api('POST', '/api/v1/runners/claim?wait=1', { token, body: {} });
  if (r.job) assert.equal(r.job.kind, kind, JSON.stringify(r.job));
  return r.job;
}

// A manual pipeline of the child on sm_90a: a build record with diagnostics, audits and
// its source line, then a check whose result carries rounds, a pair and clocks.
async function richPipeline() {
  const c = site.k.client;
  const { build, gpu } = site.runners;
  await c.call('POST', '/api/v1/pipelines', { token: site.k.admin, body: { commit: facts.child, repo: 'kernels', reason: 'manual', targets: ['sm_90a'] } });
  const b = await claim(build, 'build');
  assert.ok(b && b.target === 'sm_90a', 'the manual build was claimed');
  const record = { commit: facts.child, target: 'sm_90a', family: 'gemm', variant: 'wgmma_tma', status: 'ok',
    message: 'ptxas warning : Registers are spilled to local memory in function <wgmma_tma_kernel>',
    registers: 168, spill_stores_bytes: 96, spill_loads_bytes: 64, shared_mem_bytes: 196608, stack_frame_bytes: 16, constant_mem_bytes: 0,
    instruction_audit: AUDIT, source_path: 'kernels/gemm/wgmma_tma.cu', source_line: 42 };
  await c.call('POST', `/api/v1/jobs/${b.id}/builds`, { token: build, body: { attempt: b.attempt, records: [record] } });
  await c.call('POST', `/api/v1/jobs/${b.id}/complete`, { token: build, body: { attempt: b.attempt, status: 'succeeded' } });
  const check = await claim(gpu, 'check');
  assert.ok(check, 'its check was claimed');
  const r = { ...resultFor('gemm.wgmma_tma.a', ['passed', 150]), commit: facts.child, max_rel_err: 0.004, samples_dropped: 2,
    sm_clock_mhz: 1972, sm_clock_mhz_min: 1755, env: ENV };
  await c.call('POST', `/api/v1/jobs/${check.id}/results`, { token: gpu, body: { attempt: check.attempt, results: [r] } });
  await c.call('POST', `/api/v1/jobs/${check.id}/complete`, { token: gpu, body: { attempt: check.attempt, status: 'succeeded' } });
  const results = await api('GET', `/api/v1/results?commit=${facts.child}&instance=gemm.wgmma_tma.a&limit=1`);
  state.result = await api('GET', `/api/v1/results/${results.items[0].id}`);
  assert.equal(state.result.job, check.id, 'the newest result is the one just uploaded');
  const builds = await api('GET', `/api/v1/builds?commit=${facts.child}&target=sm_90a&family=gemm&variant=wgmma_tma&limit=1`);
  state.build = builds.items[0];
  assert.equal(state.build.job, b.id);
}

// A numerics failure bisected over a real repository: c0 passes, c1 and c2 fail, so c1
// is the first bad commit. Plays the build and GPU runners of a target and GPU of their own.
async function bisection() {
  const dir = join(site.k.dir, 'bisect');
  const src = join(dir, 'src');
  const bare = join(dir, 'bisect.git');
  mkdirSync(src, { recursive: true });
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com' };
  const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
  git(dir, 'init', '-q', '--bare', bare);
  git(src, 'init', '-q', '-b', 'main');
  const c = [];
  for (let i = 0; i < 3; i++) {
    writeFileSync(join(src, 'f'), `${i}\n`);
    git(src, 'add', 'f');
    git(src, 'commit', '-q', '-m', `c${i}`);
    c.push(git(src, 'rev-parse', 'HEAD'));
  }
  git(src, 'push', '-q', bare, 'main');
  state.commits = c;
  const admin = { token: site.k.admin };
  await api('POST', '/api/v1/repositories', { ...admin, body: { name: 'local/bisect', url: bare } });
  for (let i = 0; i < 3; i++)
    await api('POST', '/api/v1/commits', { ...admin, body: { sha: c[i], repo: 'local/bisect', message: `c${i}`, ...(i ? { parent: c[i - 1] } : {}) } });
  await api('PUT', '/api/v1/targets/sm_120a', { ...admin, body: { arch: '12.0', features: [] }, expect: [200, 201] });
  const caps = { toolkit: '13.0', arch: '12.0', gpu_model: 'NVIDIA RTX PRO 6000', driver: '580.1', gpu_uuid: 'GPU-9', targets: ['sm_120a'] };
  const bb = await api('POST', '/api/v1/runners/register', { token: site.k.registration, body: { name: 'bisect-build', role: 'build', capabilities: caps } });
  const bg = await api('POST', '/api/v1/runners/register', { token: site.k.registration, body: { name: 'bisect-gpu', role: 'gpu', capabilities: caps } });
  // One build and its check; only c0 passes. Each commit has its own harness (the same
  // harness passing and failing would be a flake).
  const serve = async (completeCheck) => {
    const job = await claim(bb.token, 'build');
    if (!job) return null;
    assert.equal(job.target, 'sm_120a');
    const rec = { family: 'gemm', variant: 'probe', status: 'ok' };
    await api('POST', `/api/v1/jobs/${job.id}/builds`, { token: bb.token, body: { attempt: job.attempt, records: [rec] } });
    await api('POST', `/api/v1/jobs/${job.id}/complete`, { token: bb.token, body: { attempt: job.attempt } });
    const check = await claim(bg.token, 'check');
    if (!check) return { sha: job.commit };
    const passed = job.commit === c[0];
    const r = { target: 'sm_120a', family: 'gemm', variant: 'probe', instance: 'gemm.probe.x', dtype: 'bf16', shape: 'm=64,n=64,k=64',
      toolkit: '13.0', gpu_model: caps.gpu_model, gpu_uuid: 'GPU-9', arch: '12.0', driver: '580.1', status: passed ? 'passed' : 'failed',
      message: passed ? '' : 'normwise_rel_err 0.4 > tolerance 0.01', normwise_rel_err: passed ? 1e-3 : 0.4, tolerance: 1e-2, nan_inf_count: 0, seed: 7,
      median_us: 10, stddev_us: 0.02, samples: 100, baseline: 'cublas', baseline_median_us: 20, ratio: 2,
      env: { reproduce: { harness_sha256: createHash('sha256').update(job.commit).digest('hex') } } };
    await api('POST', `/api/v1/jobs/${check.id}/results`, { token: bg.token, body: { attempt: check.attempt, results: [r] } });
    if (completeCheck) await api('POST', `/api/v1/jobs/${check.id}/complete`, { token: bg.token, body: { attempt: check.attempt } });
    return { sha: job.commit, check };
  };
  const pipeline = (sha) => api('POST', '/api/v1/pipelines', { ...admin, body: { commit: sha, repo: 'local/bisect', reason: 'manual', targets: ['sm_120a'] } });
  await pipeline(c[0]);
  await serve(true);
  await pipeline(c[2]);
  const held = await serve(false);  // its check still running: the bisection below is the first
  const opened = await api('POST', '/api/v1/bisections', { ...admin, body: { kind: 'numerics_failure', target: 'sm_120a', gpu_model: caps.gpu_model, bad: c[2] }, expect: [201] });
  await api('POST', `/api/v1/jobs/${held.check.id}/complete`, { token: bg.token, body: { attempt: held.check.attempt } });
  for (let i = 0; i < 8 && await serve(true); i++);
  state.bisection = await api('GET', `/api/v1/bisections/${opened.id}`);
  assert.equal(state.bisection.state, 'done', JSON.stringify(state.bisection));
  assert.equal(state.bisection.first_bad, c[1], JSON.stringify(state.bisection));
  assert.ok(state.bisection.probes.some((p) => p.commit === c[1]), 'the commit between the ends was probed');
}

// The records every test reads, made once, by the first test that runs (after the
// fixture's own before hook has started the coordinator).
let made = null;
const prepare = () => (made ||= (async () => {
  await richPipeline();
  await bisection();
})());

test('a result page shows what ran where, its numerics, timing, clocks and reproduce command', async () => {
  await prepare();
  const r = state.result;
  await visit('result', `#/result/${r.id}`, async (page) => {
    assert.match(await page.textContent('h1'), new RegExp(`Result #${r.id}`));
    assert.equal(await page.textContent('#result-status'), 'passed');
    const f = await page.textContent('#result-facts');
    for (const s of ['gemm.wgmma_tma.a', 'bf16', facts.shape, 'sm_90a', facts.gpu, '580.159.04', facts.child, `#${r.job}`]) assert.ok(f.includes(s), `${s} in ${f}`);
    assert.equal(await page.locator(`#result-facts a[href="#/commit/${facts.child}"]`).count(), 1, 'the commit links to its page');
    assert.equal(await page.getAttribute('#result-facts a[href^="#/kernel/"]', 'href'),
      `#/kernel/gemm.wgmma_tma.a?repo=kernels&dtype=bf16&shape=${encodeURIComponent(facts.shape)}`, "the kernel page of the result's library");
    assert.match(await page.textContent('#numerics-verdict'), /normwise relative error 0\.001 ≤ tolerance 0\.02/);
    assert.match(await page.textContent('#numerics'), /0\.004/, 'the max relative error');
    assert.equal(await page.textContent('#median'), '150 µs');
    const t = await page.textContent('#timing');
    assert.ok(t.includes('1.5 µs') && t.includes('50 (2 dropped)') && t.includes('cublas: 180 µs'), t);
    assert.equal(await page.locator('#rounds tbody tr').count(), 3);
    assert.match(await page.textContent('#rounds tbody tr:nth-child(3)'), /171.*outlier, left out/);
    assert.match(await page.textContent('#rounds tbody tr:nth-child(1)'), /149\.8/);
    assert.equal(await page.textContent('#paired-median'), '138.8 µs ± 0.9');
    const paired = await page.textContent('#paired');
    assert.ok(paired.includes('138.7 µs · 138.9 µs · 138.8 µs · 139 µs') && paired.includes('interleaved'), paired);
    assert.equal(await page.locator(`#paired a[href="#/commit/${facts.parent}"]`).count(), 1);
    const clocks = await page.textContent('#clocks');
    for (const s of ['1972 MHz', '1755 MHz', 'min 1755 MHz · median 1980 MHz · max 1980 MHz', 'SM 1980 MHz · 41 °C · 212.5 W · from nvml', '688 W'])
      assert.ok(clocks.includes(s), `${s} in ${clocks}`);
    const bench = await page.textContent('#reproduce-bench');
    assert.equal(bench, r.reproduce.bench, 'the reproduce command as the API gives it');
    assert.ok(bench.includes(HARNESS) && bench.includes('--samples 50') && bench.includes(site.k.url), bench);
    assert.equal(await page.textContent('#reproduce-check'), r.reproduce.check);
    assert.equal(await page.getAttribute('#raw-json', 'href'), `/api/v1/results/${r.id}`);
  });
});

test('a bisection page shows its ends, first bad commit and each probe with its outcome and figure', async () => {
  await prepare();
  const b = state.bisection;
  const [c0, c1, c2] = state.commits;
  const probe = b.probes.find((p) => p.commit === c1);
  await visit('bisection', `#/bisection/${b.id}`, async (page) => {
    assert.match(await page.textContent('h1'), new RegExp(`Bisection #${b.id}`));
    assert.equal(await page.textContent('#bisection-state'), 'done');
    assert.equal(await page.textContent('#first-bad'), c1.slice(0, 10));
    assert.equal(await page.locator(`#first-bad a[href="#/commit/${c1}"]`).count(), 1);
    const f = await page.textContent('#bisection-facts');
    assert.ok(f.includes(c0.slice(0, 10)) && f.includes(c2.slice(0, 10)), f);
    if (b.cause) assert.equal(await page.textContent('#cause'), b.cause);
    assert.equal(await page.locator('#commits tbody tr').count(), b.commits.length);
    const row = (sha) => page.locator(`#commits tr[data-commit="${sha}"]`);
    assert.match(await row(c1).textContent(), /first bad/);
    assert.equal(await row(c1).getAttribute('data-outcome'), 'bad');
    assert.equal(await row(c0).getAttribute('data-outcome'), 'good');
    assert.equal(await row(c1).locator(`a[href="#/pipeline/${probe.pipeline}"]`).count(), 1, 'the probe pipeline links to its page');
    // Each commit's figure: its result on the bisection's target and GPU, linked.
    const good = await api('GET', `/api/v1/results?commit=${c0}&target=sm_120a&instance=gemm.probe.x&limit=1`);
    assert.equal(await row(c0).locator(`a[href="#/result/${good.items[0].id}"]`).textContent(), '10 µs ± 0.02');
    assert.match(await row(c1).locator('a[href^="#/result/"]').textContent(), /failed/);
    assert.match(await page.textContent('#cases'), /gemm\.probe\.x/);
    assert.equal(await page.getAttribute('#cases a[href^="#/kernel/"]', 'href'),
      `#/kernel/gemm.probe.x?repo=${encodeURIComponent('local/bisect')}&dtype=bf16&shape=${encodeURIComponent('m=64,n=64,k=64')}`,
      "a case links to the kernel page of the bisection's library");
    assert.equal(await page.getAttribute('#raw-json', 'href'), `/api/v1/bisections/${b.id}`);
  });
  // From the bisection to the probe pipeline it ran.
  await visit('bisection-probe-link', `#/bisection/${b.id}`, async (page) => {
    await page.click(`#commits tr[data-commit="${c1}"] a[href="#/pipeline/${probe.pipeline}"]`);
    await page.waitForSelector('body[data-ready="pipeline"]');
    assert.match(await page.textContent('h1'), new RegExp(`Pipeline #${probe.pipeline}`));
  });
  await visit('commit-bisection-link', `#/commit/${c2}`, async (page) => {
    assert.equal(await page.locator(`#bisections a[href="#/bisection/${b.id}"]`).count(), 1, 'the commit links its bisection page');
    assert.equal(await page.locator('a[href^="/api/v1/"]').count(), 0, 'no link opens raw JSON');
  });
});

test('a build record page shows status, diagnostics, resources, audits and the source line', async () => {
  await prepare();
  const b = state.build;
  await visit('build', `#/build/${b.id}`, async (page) => {
    assert.match(await page.textContent('h1'), new RegExp(`Build record #${b.id}: gemm.wgmma_tma for sm_90a`));
    assert.equal(await page.textContent('#build-status'), 'ok');
    assert.equal(await page.textContent('#source'), 'kernels/gemm/wgmma_tma.cu:42');
    assert.match(await page.textContent('#diagnostics'), /Registers are spilled to local memory in function <wgmma_tma_kernel>/);
    const res = await page.textContent('#resources');
    for (const s of ['168', '96 B', '64 B', '196608 B', '16 B']) assert.ok(res.includes(s), `${s} in ${res}`);
    assert.match(await page.textContent('#audit tr[data-audit="PTX"]'), /missing cp_async_bulk.*wgmma 24/);
    assert.match(await page.textContent('#audit tr[data-audit="SASS"]'), /passed.*wgmma 48.*cuobjdump -sass/);
    assert.equal(await page.locator(`#build-facts a[href="#/job/${b.job}"]`).count(), 1);
    // The variant's other records: the two seeded commits' and this one.
    const all = await api('GET', '/api/v1/builds?target=sm_90a&family=gemm&variant=wgmma_tma');
    assert.equal(await page.locator('#history tbody tr').count(), all.items.length);
    assert.ok(all.items.length >= 3);
    const older = all.items.find((x) => x.id !== b.id);
    await page.click(`#history a[href="#/build/${older.id}"]`);
    await page.waitForFunction((id) => document.querySelector('h1').textContent.includes(`#${id}:`), older.id);
  });
});

test('the commit, kernel and target pages link to these pages, not to raw JSON', async () => {
  await prepare();
  await visit('commit-result-links', `#/commit/${facts.child}`, async (page) => {
    assert.ok(await page.locator('#groups a[href^="#/result/"]').count() > 0, 'the diff links its results');
    assert.equal(await page.locator('a[href^="/api/v1/"]').count(), 0, 'no link opens raw JSON');
    await page.locator('#groups a[href^="#/result/"]').first().click();
    await page.waitForSelector('body[data-ready="result"]');
    assert.match(await page.textContent('h1'), /Result #\d+/);
  });
  await visit('kernel-result-link', `#/kernel/gemm.wgmma_tma.a?dtype=bf16&shape=${encodeURIComponent(facts.shape)}`, async (page) => {
    assert.equal(await page.locator('#latest a[href^="#/result/"]').count(), 1, 'the latest figure links its result');
    assert.equal(await page.locator('a[href^="/api/v1/"]').count(), 0);
  });
  await visit('target-record-links', '#/target/sm_90a?cell=gemm.wgmma_tma:build', async (page) => {
    const link = page.locator('#cell-detail a[href^="#/build/"]');
    assert.ok(await link.count() >= 1, 'the build cell links its record');
    assert.equal(await page.locator('#cell-detail a[href^="/api/v1/"]').count(), 0);
    await link.first().click();
    await page.waitForSelector('body[data-ready="build"]');
    assert.match(await page.textContent('h1'), /Build record #\d+: gemm\.wgmma_tma for sm_90a/);
  });
  await visit('target-evidence-link', '#/target/sm_90a?cell=gemm.wgmma_tma:timing', async (page) => {
    assert.ok(await page.locator('#cell-detail a[href^="#/result/"]').count() >= 1, 'the evidence links its result page');
    assert.equal(await page.locator('#cell-detail a[href^="/api/v1/"]').count(), 0);
  });
});

test('unknown ids say they were not found', async () => {
  await prepare();
  for (const [page, id, what] of [['result', '987654', 'Result #987654'], ['bisection', '987654', 'Bisection #987654'],
    ['build', '987654', 'Build record #987654'], ['build', 'abc', 'Build record #abc'], ['result', 'abc', 'Result #abc']]) {
    await visit(`not-found-${page}-${id}`, `#/${page}/${id}`, async (p) => {
      assert.equal(await p.textContent('#not-found'), `${what} not found`);
      const msg = await p.textContent('p.error');
      assert.match(msg, id === 'abc' ? /invalid_argument/ : /not_found/, msg);
    });
  }
});
