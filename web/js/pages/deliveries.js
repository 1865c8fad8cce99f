// Deliveries page: the forge connections (a broken one says why) and every outgoing
// call (forge check runs and statuses, webhooks) with its attempts and last error.
// State: #/deliveries?state=failed shows one state only.
import { h, fill, fmtTime, shortSha, pageLink } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';

const STATES = ['', 'pending', 'delivered', 'failed'];
const TAG = { pending: 'st-queued', delivered: 'st-succeeded', failed: 'st-failed' };

function connectionRow(c) {
  return h('tr', { class: c.state },
    h('td', {}, c.repo),
    h('td', {}, `${c.kind} (${c.mode})`),
    h('td', {}, h('code', {}, c.api_url)),
    h('td', {}, c.project),
    h('td', { class: 'auth' }, c.auth === 'github_app'
      ? [`GitHub App ${c.app_id}, installation ${c.installation_id}, key `, h('code', {}, c.private_key_file)]
      : ['token file ', h('code', {}, c.token_file)]),
    h('td', {}, h('span', { class: `tag ${c.state === 'ok' ? 'st-succeeded' : 'st-failed'}` }, c.state),
      c.broken_reason ? h('span', { class: 'reason' }, c.broken_reason) : null));
}

function deliveryRow(d) {
  const when = d.state === 'pending' ? `next ${fmtTime(d.next_attempt_at)}` : fmtTime(d.finished_at);
  return h('tr', { dataset: { id: d.id } },
    h('td', {}, `#${d.id}`),
    h('td', {}, d.kind),
    h('td', {}, d.event, d.pipeline ? [' · ', pageLink(`/pipeline/${d.pipeline}`, null, `pipeline #${d.pipeline}`)] : null),
    h('td', {}, d.commit ? pageLink(`/commit/${d.commit}`, null, h('code', {}, shortSha(d.commit))) : ''),
    h('td', {}, h('span', { class: `tag ${TAG[d.state] || ''}` }, d.state)),
    h('td', {}, `${d.attempts} / ${d.max_attempts}`),
    h('td', {}, d.last_status === null ? '' : String(d.last_status)),
    h('td', { class: 'error-text' }, d.last_error),
    h('td', { class: 'muted' }, when));
}

export async function render(root, route) {
  const state = route.params.get('state') || '';
  let [forges, page] = await (route.first || Promise.all([api.forges(), api.deliveries(state)]));
  const conns = h('tbody');
  const rows = h('tbody');
  const paint = () => {
    fill(conns, forges.items.length ? forges.items.map(connectionRow)
      : h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No forge connections: PUT /api/v1/repositories/{name}/forge.')));
    fill(rows, page.items.length ? page.items.map(deliveryRow)
      : h('tr', {}, h('td', { colspan: 9, class: 'muted' }, 'No deliveries.')));
  };
  paint();
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, 'Deliveries'),
    h('p', { class: 'summary' }, 'Show: ', ...STATES.map((s) => [
      s === state ? h('b', {}, s || 'all') : h('a', { href: s ? `#/deliveries?state=${s}` : '#/deliveries' }, s || 'all'), ' '])),
    h('h2', {}, 'Forge connections'),
    h('table', { class: 'grid', id: 'forges' },
      h('thead', {}, h('tr', {}, ['repository', 'forge', 'API', 'project', 'credentials', 'state'].map((t) => h('th', {}, t)))), conns),
    h('h2', {}, 'Outgoing calls'),
    h('table', { class: 'grid', id: 'deliveries' },
      h('thead', {}, h('tr', {}, ['id', 'kind', 'event', 'commit', 'state', 'attempts', 'last status', 'last error', 'when'].map((t) => h('th', {}, t)))),
      rows));
  const refresh = coalesce(async () => {
    [forges, page] = await Promise.all([api.forges(), api.deliveries(state)]);
    paint();
  }, 1000);
  // The sender announces every report it queues and every attempt it records.
  return { onEvent(ev) { if (ev === 'delivery') refresh(ev); } };
}
