// Pipeline page: what a forge's check links to. The pipeline's jobs with their state,
// attempts, runner, timings and why each waits; the commit's verdict; what was reported
// to the forge; re-run and cancel for an operator. Live: job events refresh it, and a
// slow timer catches what changes with time alone (a runner going quiet, a backoff
// ending). State: #/pipeline/<id>
import { h, fill, fmtTime, shortSha, pageLink } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';
import { tokenField, actionButton, FINISHED } from '../admin.js';
import { shardText } from './shared.js';

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function where(j) {
  if (j.kind === 'build') return j.target;
  const part = shardText(j);
  return `${j.target} on arch ${j.arch}${j.gpu_model ? ` (${j.gpu_model})` : ''}${part ? ` · ${part}` : ''}`;
}

function jobRow(j, status, refresh) {
  const actions = [];
  if (j.status === 'failed' || j.status === 'cancelled')
    actions.push(actionButton('Re-run', `/api/v1/jobs/${j.id}/rerun`, status, refresh, { dataset: { rerun: j.id } }));
  if (!FINISHED.has(j.status))
    actions.push(actionButton('Cancel', `/api/v1/jobs/${j.id}/cancel`, status, refresh, { dataset: { cancel: j.id } }));
  const why = j.wait || (j.cancel_requested && !FINISHED.has(j.status) ? 'cancel requested; the runner stops at its next heartbeat' : j.failure_reason);
  return h('tr', { dataset: { id: j.id, status: j.status } },
    h('td', { class: 'num' }, pageLink(`/job/${j.id}`, null, `#${j.id}`)),
    h('td', {}, j.kind),
    h('td', {}, where(j)),
    h('td', {}, h('span', { class: `tag st-${j.status}` }, j.status.replace('_', ' '))),
    h('td', { class: 'num' }, `${j.attempt} / ${j.max_attempts}`),
    h('td', {}, j.runner_name || h('span', { class: 'muted' }, '—')),
    h('td', { class: 'muted' }, fmtTime(j.started)),
    h('td', { class: 'num' }, fmtDuration(j.duration_ms)),
    h('td', { class: j.wait ? 'wait' : 'muted' }, why || ''),
    h('td', {}, actions));
}

function verdictLine(v, sha) {
  const reasons = v.reasons || [];
  return h('section', { class: `verdict verdict-${v.status}`, id: 'verdict', dataset: { status: v.status } },
    h('h2', {}, 'Commit verdict: ', h('span', { class: `tag verdict-${v.status}`, id: 'verdict-status' }, v.status), ' ',
      pageLink(`/commit/${sha}`, null, 'the commit page')),
    reasons.length ? h('ul', { class: 'reasons' }, reasons.slice(0, 10).map((r) => h('li', {}, r.message))) : null,
    reasons.length > 10 ? h('p', { class: 'muted' }, `and ${reasons.length - 10} more on the commit page`) : null,
    (v.waiting || []).length ? h('p', { class: 'muted' }, `waiting: ${v.waiting.join('; ')}`) : null);
}

function deliveryRow(d) {
  return h('tr', { dataset: { id: d.id } },
    h('td', {}, `#${d.id}`), h('td', {}, d.kind), h('td', {}, d.event),
    h('td', {}, h('span', { class: `tag st-${d.state === 'delivered' ? 'succeeded' : d.state === 'failed' ? 'failed' : 'queued'}` }, d.state)),
    h('td', { class: 'num' }, `${d.attempts} / ${d.max_attempts}`),
    h('td', { class: 'muted' }, d.last_error));
}

export async function render(root, route) {
  const id = route.arg;
  let data = await (route.first || api.pipeline(id));
  const head = h('div');
  const verdictEl = h('div');
  const jobs = h('tbody');
  const sent = h('div');
  const status = h('p', { class: 'action-status muted', id: 'action-status' });
  const actions = h('p', { class: 'actions', id: 'pipeline-actions' });
  const refresh = async () => {
    data = await api.pipeline(id);
    paint();
  };
  const paint = () => {
    const p = data.pipeline;
    const c = data.commit;
    fill(head,
      h('h1', { elementtiming: 'kport-data' }, `Pipeline #${p.id} `, h('span', { class: `tag st-${p.status}`, id: 'pipeline-status' }, p.status)),
      h('p', { class: 'summary' }, `${p.reason} · ${p.repo || 'no repository'} ${p.ref || ''} · commit `,
        pageLink(`/commit/${p.commit}`, null, h('code', {}, shortSha(p.commit))),
        c && c.message ? ` “${c.message.split('\n')[0]}”` : '',
        ` · ${p.jobs_done}/${p.jobs_total} jobs done · created ${fmtTime(p.created)}`),
      p.note ? h('p', { class: 'muted' }, p.note) : null);
    fill(verdictEl, verdictLine(data.verdict, p.commit));
    fill(jobs, data.jobs.length ? data.jobs.map((j) => jobRow(j, status, refresh))
      : h('tr', {}, h('td', { colspan: 10, class: 'muted' }, 'No jobs.')));
    const anyRerun = data.jobs.some((j) => j.status === 'failed' || j.status === 'cancelled');
    const anyOpen = data.jobs.some((j) => !FINISHED.has(j.status));
    fill(actions,
      anyRerun ? actionButton('Re-run failed and cancelled jobs', `/api/v1/pipelines/${p.id}/rerun`, status, refresh, { id: 'rerun-pipeline' }) : null,
      anyOpen ? actionButton('Cancel pipeline', `/api/v1/pipelines/${p.id}/cancel`, status, refresh, { id: 'cancel-pipeline' }) : null);
    fill(sent, data.deliveries.length
      ? h('table', { class: 'grid', id: 'reported' },
        h('thead', {}, h('tr', {}, ['id', 'kind', 'event', 'state', 'attempts', 'last error'].map((t) => h('th', {}, t)))),
        h('tbody', {}, data.deliveries.map(deliveryRow)))
      : h('p', { class: 'muted' }, 'Nothing reported: only push pipelines are reported to a forge.'));
  };
  paint();
  fill(root, head, verdictEl,
    h('h2', {}, 'Jobs'),
    h('table', { class: 'grid', id: 'jobs' },
      h('thead', {}, h('tr', {}, ['job', 'kind', 'target', 'state', 'attempts', 'runner', 'started', 'took', 'why', ''].map((t) => h('th', {}, t)))),
      jobs),
    tokenField(), actions, status,
    h('h2', {}, 'Reported to the forge and webhooks'), sent);
  const later = coalesce(() => refresh().catch(() => {}), 500);
  const timer = setInterval(() => { if (data.pipeline.status === 'queued' || data.pipeline.status === 'running') later('tick'); }, 5000);
  return {
    onEvent(ev) { if (['job', 'pipeline', 'runner', 'expired', 'delivery', 'results'].includes(ev)) later(ev); },
    dispose() { clearInterval(timer); },
  };
}
