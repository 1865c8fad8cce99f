// Job page: one job's state, attempts, runner, timings and why it waits, and its log
// followed live: the page asks GET /api/v1/jobs/{id}/log?after=<last seq> every second
// while the job is unfinished (once more when it ends), appending only what is new, and
// keeps the view at the bottom while "follow" is on. State: #/job/<id>
import { h, fill, fmtTime, shortSha, pageLink } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';
import { tokenField, actionButton, FINISHED } from '../admin.js';
import { shardText } from './shared.js';
import { fmtDuration } from './pipeline.js';

const POLL_MS = 1000;

export async function render(root, route) {
  const id = route.arg;
  let data = await (route.first || api.job(id));
  const facts = h('dl', { class: 'facts', id: 'job-facts' });
  const head = h('div');
  const status = h('p', { class: 'action-status muted', id: 'action-status' });
  const actions = h('p', { class: 'actions', id: 'job-actions' });
  const log = h('pre', { class: 'log', id: 'log' });
  const follow = h('input', { type: 'checkbox', id: 'follow', checked: true });
  const logState = h('span', { class: 'muted', id: 'log-state' });
  let after = 0;
  let attempt = null;
  let stopped = false;
  let timer = null;

  const refresh = async () => {
    data = await api.job(id);
    paint();
  };
  const paint = () => {
    const j = data.job;
    const p = data.pipeline;
    fill(head,
      h('h1', { elementtiming: 'kport-data' }, `Job #${j.id}: ${j.kind} ${j.target} `,
        h('span', { class: `tag st-${j.status}`, id: 'job-status' }, j.status.replace('_', ' '))),
      h('p', { class: 'summary' }, 'pipeline ', p ? pageLink(`/pipeline/${p.id}`, null, `#${p.id}`) : `#${j.pipeline}`,
        ' · commit ', pageLink(`/commit/${j.commit}`, null, h('code', {}, shortSha(j.commit)))));
    const row = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
    fill(facts,
      row('state', j.status + (j.cancel_requested && !FINISHED.has(j.status) ? ' (cancel requested)' : '')),
      row('attempts', `${j.attempt} of ${j.max_attempts}`),
      j.kind === 'check' ? row('runs on', `arch ${j.arch}${j.gpu_model ? `, ${j.gpu_model}` : ''}`) : row('target', j.target),
      shardText(j) ? row('checks', shardText(j)) : null,
      j.depends_on ? row('after', pageLink(`/job/${j.depends_on}`, null, `build job #${j.depends_on}`)) : null,
      row('runner', j.runner_name || '—'),
      row('created', fmtTime(j.created)),
      row('started', fmtTime(j.started)),
      row('finished', fmtTime(j.finished)),
      row('took', fmtDuration(j.duration_ms)),
      j.wait ? row('waiting', h('span', { id: 'job-wait' }, j.wait)) : null,
      j.failure_reason ? row('reason', h('span', { id: 'job-reason' }, j.failure_reason)) : null);
    fill(actions,
      j.status === 'failed' || j.status === 'cancelled' ? actionButton('Re-run', `/api/v1/jobs/${j.id}/rerun`, status, refresh, { id: 'rerun-job' }) : null,
      FINISHED.has(j.status) ? null : actionButton('Cancel', `/api/v1/jobs/${j.id}/cancel`, status, refresh, { id: 'cancel-job' }));
  };

  // Appends the chunks after `after`; a new attempt starts with a marker line.
  const pull = async () => {
    for (;;) {
      const page = await api.jobLog(id, after);
      for (const c of page.chunks) {
        if (c.attempt !== attempt) {
          attempt = c.attempt;
          log.appendChild(h('span', { class: 'attempt', dataset: { attempt: c.attempt } }, `── attempt ${c.attempt} ──\n`));
        }
        log.appendChild(document.createTextNode(c.text));
        after = c.seq;
      }
      if (page.chunks.length < 1000) break;  // the endpoint answers at most 1000 chunks
    }
    if (!log.childNodes.length) log.textContent = '';
    logState.textContent = FINISHED.has(data.job.status) ? ' · the job ended; the log is complete' : ' · following';
    if (follow.checked) log.scrollTop = log.scrollHeight;
  };
  const tick = async () => {
    timer = null;
    if (stopped) return;
    const wasDone = FINISHED.has(data.job.status);
    try {
      await pull();
      if (!wasDone) await refresh();
    } catch (err) {
      logState.textContent = ` · ${err.message || err}`;
    }
    // One last read after the job ended catches the lines written before its end.
    if (!stopped && (!wasDone || !FINISHED.has(data.job.status))) timer = setTimeout(tick, POLL_MS);
  };

  paint();
  await pull();
  fill(root, head, facts, tokenField(), actions, status,
    h('h2', {}, 'Log ', h('label', { class: 'muted' }, follow, ' follow'), logState), log);
  if (!FINISHED.has(data.job.status)) timer = setTimeout(tick, POLL_MS);
  const later = coalesce(async () => {
    const wasDone = FINISHED.has(data.job.status);
    await refresh();
    // A re-run makes a finished job live again: follow its new attempt.
    if (wasDone && !FINISHED.has(data.job.status) && !timer) timer = setTimeout(tick, POLL_MS);
    else if (wasDone !== FINISHED.has(data.job.status)) await pull();
  }, 300);
  return {
    onEvent(ev) { if (ev === 'job' || ev === 'expired' || ev === 'runner') later(ev); },
    dispose() { stopped = true; clearTimeout(timer); },
  };
}
