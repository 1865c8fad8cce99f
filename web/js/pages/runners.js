// Runners page: GPUs, drivers, online state and current job; rows update in place.
// State: #/runners?all=1 includes deregistered runners.
import { h, fill, fmtTime, shortSha, pageLink } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';

function row(r) {
  const c = r.capabilities;
  const job = r.job;
  return h('tr', { dataset: { id: r.id }, class: r.online ? 'online' : 'offline' },
    h('td', {}, r.name),
    h('td', {}, r.role),
    h('td', {}, h('span', { class: `tag ${r.online ? 'st-succeeded' : 'st-failed'}` }, r.online ? 'online' : r.deregistered ? 'left' : 'offline')),
    h('td', {}, r.role === 'gpu' ? c.gpu_model : `${c.cores || '?'} cores`),
    h('td', {}, r.role === 'gpu' ? c.arch : (c.targets || []).join(' ')),
    h('td', {}, r.role === 'gpu' ? c.driver : c.toolkit ? `CUDA ${c.toolkit}` : ''),
    h('td', {}, job ? [pageLink(`/job/${job.id}`, null, `#${job.id}`), ` ${job.kind} ${job.target} `, pageLink(`/commit/${job.commit}`, null, h('code', {}, shortSha(job.commit))), ` (${job.status})`] : h('span', { class: 'muted' }, 'idle')),
    h('td', { class: 'muted' }, fmtTime(r.last_heartbeat)));
}

export async function render(root, route) {
  const all = route.params.get('all') === '1';
  let data = await (route.first || api.runners(all));
  const body = h('tbody');
  const paint = () => fill(body, data.items.length ? data.items.map(row)
    : h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No runners registered.')));
  paint();
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, 'Runners'),
    h('p', { class: 'summary' }, `${data.items.filter((r) => r.online).length} online of ${data.items.length} · `,
      h('a', { href: all ? '#/runners' : '#/runners?all=1' }, all ? 'hide runners that left' : 'include runners that left')),
    h('table', { class: 'grid', id: 'runners' },
      h('thead', {}, h('tr', {}, ['name', 'role', 'state', 'GPU / cores', 'arch / targets', 'driver / toolkit', 'current job', 'last heard'].map((t) => h('th', {}, t)))),
      body));
  const refresh = coalesce(async () => {
    data = await api.runners(all);
    paint();
  }, 500);
  return { onEvent(ev) { if (ev === 'runner' || ev === 'job' || ev === 'expired') refresh(ev); } };
}
