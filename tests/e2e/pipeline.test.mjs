// The pages a forge's check links to, in real headless Chromium against a started
// kport-coordinator: a pipeline's jobs with state, attempts, runner, timings and why each
// waits; a job's log followed live while a runner writes it; re-run and cancel with the
// admin token; links that used to open raw JSON opening these pages; the burndown of a
// target with one point drawn readable.
//
//   node --test tests/e2e/pipeline.test.mjs   (env: KPORT_COORDINATOR_BIN, KPORT_E2E_OUT)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { facts } from './support/seed.mjs';
import { dashboardSite } from './support/fixture.mjs';

const site = dashboardSite();
const { visit } = site;

const api = (method, path, opts) => site.k.client.call(method, path, opts);

async function childPipeline() {
  const page = await api('GET', `/api/v1/pipelines?commit=${facts.child}`);
  return page.items[page.items.length - 1];  // the push pipeline, the first made
}

test('a pipeline page lists its jobs with state, attempts, runner, timings and why one waits', async () => {
  const p = await childPipeline();
  const full = await api('GET', `/api/v1/pipelines/${p.id}`);
  // The sm_100a build spawned a check for arch 10.0, which no runner has.
  const waiting = full.jobs.find((j) => j.kind === 'check' && j.arch === '10.0');
  assert.ok(waiting, JSON.stringify(full.jobs));
  const built = full.jobs.find((j) => j.kind === 'build' && j.target === 'sm_90a');
  await visit('pipeline', `#/pipeline/${p.id}`, async (page) => {
    assert.match(await page.textContent('h1'), new RegExp(`Pipeline #${p.id}`));
    assert.equal(await page.locator('#jobs tbody tr').count(), full.jobs.length);
    const row = await page.textContent(`#jobs tr[data-id="${waiting.id}"]`);
    assert.match(row, /awaiting runner/);
    assert.match(row, /no online GPU runner of arch 10\.0/, row);
    const b = await page.textContent(`#jobs tr[data-id="${built.id}"]`);
    assert.ok(b.includes('succeeded') && b.includes('build-0') && b.includes('1 / 3'), b);
    assert.match(b, /\d+s/, 'how long it took');
    const verdict = await api('GET', `/api/v1/commits/${facts.child}/verdict`);
    assert.equal(await page.textContent('#verdict-status'), verdict.status, 'the commit verdict beside the jobs');
    assert.equal(await page.locator(`#verdict a[href="#/commit/${facts.child}"]`).count(), 1);
    await page.click(`#jobs tr[data-id="${built.id}"] a[href="#/job/${built.id}"]`);
    await page.waitForSelector('body[data-ready="job"]');
    assert.ok((await page.textContent('#log')).includes(`nvcc -arch=${built.target} ... <done>`), 'the job page shows its log');
    assert.equal(await page.locator('#log done').count(), 0, 'log text is text');
  });
});

test('links open the pages, not raw JSON', async () => {
  const p = await childPipeline();
  await visit('overview-links', '#/', async (page) => {
    assert.equal(await page.locator(`#pipelines a[href="#/pipeline/${p.id}"]`).count(), 1, 'overview links each pipeline');
  });
  await visit('commit-pipelines', `#/commit/${facts.child}`, async (page) => {
    assert.ok(await page.locator(`#commit-pipelines a[href="#/pipeline/${p.id}"]`).count() === 1, 'the commit lists its pipelines');
    assert.ok((await page.textContent('#verdict-status')).length > 0, 'and its verdict');
  });
  await visit('target-job-link', '#/target/sm_90a?cell=gemm.simt:build', async (page) => {
    const link = page.locator('#cell-detail a[href^="#/job/"]');
    assert.equal(await link.count(), 1, 'the build log is the job page');
  });
});

test('a job page follows its log live while the runner writes it', async () => {
  // A manual pipeline whose build a runner holds and writes to.
  await api('POST', '/api/v1/pipelines', { token: site.k.admin, body: { commit: facts.parent, repo: 'kernels', reason: 'manual', targets: ['sm_90a'] } });
  const claimed = await api('POST', '/api/v1/runners/claim?wait=0', { token: site.runners.build, body: {} });
  const job = claimed.job;
  assert.ok(job, 'the build was claimed');
  const write = (text) => api('POST', `/api/v1/jobs/${job.id}/log`, { token: site.runners.build, body: { attempt: job.attempt, text } });
  await write('configuring sm_90a\n');
  await visit('job-live', `#/job/${job.id}`, async (page) => {
    assert.match(await page.textContent('#job-status'), /running/);
    assert.ok((await page.textContent('#job-facts')).includes('build-0'), 'its runner');
    assert.ok((await page.textContent('#log')).includes('configuring sm_90a'));
    await write('compiling gemm.wgmma_tma <1/4>\n');
    await page.waitForFunction(() => document.getElementById('log').textContent.includes('compiling gemm.wgmma_tma <1/4>'), null, { timeout: 5000 });
    await write('linked kport-harness-sm_90a\n');
    await api('POST', `/api/v1/jobs/${job.id}/complete`, { token: site.runners.build, body: { attempt: job.attempt, status: 'failed', reason: 'harness link failed' } });
    await page.waitForFunction(() => document.getElementById('job-status').textContent === 'failed', null, { timeout: 5000 });
    // The page reads the log once more after it sees the end, then says the log is complete.
    await page.waitForFunction(() => document.getElementById('log-state').textContent.includes('the log is complete'), null, { timeout: 5000 });
    const log = await page.textContent('#log');
    assert.ok(log.includes('linked kport-harness-sm_90a'), 'the last lines before the end arrive');
    assert.equal(log.split('configuring sm_90a').length, 2, 'nothing is appended twice');
    assert.ok((await page.textContent('#job-reason')).includes('harness link failed'));
  });
  return job;
});

test('an admin re-runs a failed pipeline and cancels a job from the pages', async () => {
  const list = await api('GET', `/api/v1/pipelines?commit=${facts.parent}&reason=manual`);
  const p = list.items[0];
  const failed = (await api('GET', `/api/v1/pipelines/${p.id}`)).jobs.find((j) => j.status === 'failed');
  assert.ok(failed, 'the job the previous test failed');
  await visit('pipeline-rerun', `#/pipeline/${p.id}`, async (page) => {
    assert.equal(await page.textContent('#pipeline-status'), 'failed');
    // Without the token the coordinator refuses, and the page says so.
    await page.click('#rerun-pipeline');
    await page.waitForFunction(() => /admin token/.test(document.getElementById('action-status').textContent));
    await page.fill('#admin-token', site.k.admin);
    await page.dispatchEvent('#admin-token', 'change');
    await page.click('#rerun-pipeline');
    await page.waitForFunction(() => document.getElementById('pipeline-status').textContent === 'queued', null, { timeout: 5000 });
    const row = await page.textContent(`#jobs tr[data-id="${failed.id}"]`);
    assert.match(row, /queued/);
    assert.match(row, /1 \/ 4/, 'attempts go on, with a fresh allowance');
    assert.match(row, /next in line|queued behind/, row);
    const job = await api('GET', `/api/v1/jobs/${failed.id}`);
    assert.equal(job.status, 'queued');
    // Cancel it from its row: the queued job ends at once.
    await page.click(`#jobs tr[data-id="${failed.id}"] button[data-cancel="${failed.id}"]`);
    await page.waitForFunction((id) => document.querySelector(`#jobs tr[data-id="${id}"]`).dataset.status === 'cancelled', failed.id, { timeout: 5000 });
    assert.equal((await api('GET', `/api/v1/jobs/${failed.id}`)).status, 'cancelled');
    assert.equal(await page.textContent('#pipeline-status'), 'cancelled');
  });
  // The API's rules hold whatever the page shows.
  const again = await site.k.client.call('POST', `/api/v1/jobs/${failed.id}/rerun`, { expect: [401] });
  assert.equal(again.error.code, 'unauthorized');
  const done = (await api('GET', `/api/v1/pipelines/${(await childPipeline()).id}`)).jobs.find((j) => j.status === 'succeeded');
  const refused = await site.k.client.call('POST', `/api/v1/jobs/${done.id}/rerun`, { token: site.k.admin, expect: [409] });
  assert.match(refused.error.message, /only a failed or cancelled job runs again/);
});

test('the burndown of a target with a single point is drawn with room around it', async () => {
  const board = await api('GET', '/api/v1/dashboard/targets/sm_100a');
  assert.equal(board.burndown.length, 1, 'one commit built sm_100a variants for the first time');
  await visit('burndown-one-point', '#/target/sm_100a', async (page) => {
    await page.waitForSelector('#burndown canvas', { timeout: 5000 });
    const [points, min, max] = await page.evaluate(() => {
      const d = document.getElementById('burndown').dataset;
      return [d.points, Number(d.xMin), Number(d.xMax)];
    });
    assert.equal(points, '1');
    assert.ok(max - min >= 86400, `the x axis spans the point with a margin: ${min}..${max}`);
    const at = board.burndown[0].time_ms / 1000;
    assert.ok(min < at && at < max, `the point ${at} lies inside ${min}..${max}`);
  });
});

test("a check that is one part of its arch's check split over several GPUs says which families it runs", async () => {
  // A manual pipeline whose payload is a shard's, as spawn_checks writes it on a host of two
  // GPUs: its build's check inherits the payload and is not split again.
  const payload = { families: ['gemm'], shard: { index: 0, count: 2 } };
  const made = await api('POST', '/api/v1/pipelines', { token: site.k.admin, body: { commit: facts.child, repo: 'kernels', reason: 'manual', targets: ['sm_90a'], payload } });
  const build = (await api('GET', `/api/v1/pipelines/${made.id}`)).jobs.find((j) => j.kind === 'build');
  const claimed = await api('POST', '/api/v1/runners/claim?wait=0', { token: site.runners.build, body: {} });
  assert.equal(claimed.job && claimed.job.id, build.id, 'the build of that pipeline is the one queued');
  await api('POST', `/api/v1/jobs/${build.id}/complete`, { token: site.runners.build, body: { attempt: claimed.job.attempt } });
  const check = (await api('GET', `/api/v1/pipelines/${made.id}`)).jobs.find((j) => j.kind === 'check');
  assert.ok(check, 'the build spawned its check');
  assert.deepEqual(check.payload, payload);
  await visit('pipeline-shard', `#/pipeline/${made.id}`, async (page) => {
    assert.match(await page.textContent(`#jobs tr[data-id="${check.id}"]`), /sm_90a on arch 9\.0 · part 1 of 2: gemm/);
  });
  await visit('job-shard', `#/job/${check.id}`, async (page) => {
    assert.match(await page.textContent('#job-facts'), /checkspart 1 of 2: gemm/);
  });
});
