// Overview: every target's bring-up per family, runners online, recent pipelines and
// results. Counts update in place; new pipelines and results wait behind "N new".
import { h, fill, setText, fmtTime, shortSha, pageLink, pendingBadge } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';

const STAGES = [
  ['builds', 'builds'],
  ['numerics_passed', 'numerics pass'],
  ['measured', 'measured'],
  ['selected_best', 'selected'],
];

function bar(done, total) {
  const fillEl = h('span', { class: 'bar-fill' });
  fillEl.style.width = `${total ? Math.round((100 * done) / total) : 0}%`;
  return h('span', { class: 'bar', title: `${done} of ${total}` }, fillEl, h('span', { class: 'bar-text' }, `${done}/${total}`));
}

// A row per target, library (several may build a target) and family.
const rowKey = (t, g) => `${t.name}/${t.repo || ''}/${g.family}`;

function targetRows(t) {
  const rows = [];
  const groups = [{ family: 'all', ...t.progress }, ...t.families];
  groups.forEach((g, i) => {
    rows.push(h('tr', { class: i === 0 ? 'target-row' : 'family-row', dataset: { key: rowKey(t, g) } },
      i === 0 ? h('th', { rowspan: groups.length, scope: 'rowgroup' },
        pageLink(`/target/${t.name}`, t.repo ? { repo: t.repo } : null, t.name),
        t.repo ? h('div', { class: 'library' }, t.repo) : null, h('div', { class: 'muted' }, `arch ${t.arch}`),
        t.is_new ? h('span', { class: 'tag new' }, 'new') : null) : null,
      h('td', {}, g.family === 'all' ? h('strong', {}, 'all families') : g.family),
      h('td', { class: 'num' }, `${g.applicable}/${g.variants}`),
      STAGES.map(([key]) => h('td', { dataset: { stage: key } }, bar(g[key], g.applicable)))));
  });
  return rows;
}

function pipelineRow(p) {
  return h('tr', { dataset: { id: p.id } },
    h('td', { class: 'num' }, pageLink(`/pipeline/${p.id}`, null, `#${p.id}`)),
    h('td', {}, h('span', { class: `tag st-${p.status}` }, p.status)),
    h('td', {}, p.reason),
    h('td', {}, pageLink(`/commit/${p.commit}`, null, h('code', {}, shortSha(p.commit)))),
    h('td', { class: 'num' }, `${p.jobs_done}/${p.jobs_total}`),
    h('td', { class: 'muted' }, p.note),
    h('td', { class: 'muted' }, fmtTime(p.created)));
}

function resultRow(r) {
  return h('tr', { dataset: { id: r.id } },
    h('td', { class: 'num' }, `#${r.id}`),
    h('td', {}, h('span', { class: `tag st-${r.status}` }, r.status)),
    h('td', {}, pageLink(`/kernel/${r.instance}`, { repo: r.repo, dtype: r.dtype, shape: r.shape }, r.instance)),
    h('td', {}, r.dtype),
    h('td', {}, h('code', {}, r.shape)),
    h('td', {}, r.gpu_model),
    h('td', {}, pageLink(`/target/${r.target}`, null, r.target)),
    h('td', {}, pageLink(`/commit/${r.commit}`, null, h('code', {}, shortSha(r.commit)))));
}

export async function render(root, route) {
  // One answer: progress, runners, queue, recent pipelines and the latest results.
  const data = await (route.first || api.overview());
  const progressBody = h('tbody', {}, data.targets.map(targetRows));
  const runnersEl = h('p', { class: 'summary' });
  const pipelinesBody = h('tbody', {}, data.pipelines.map(pipelineRow));
  const resultsBody = h('tbody', {}, data.results.map(resultRow));
  const paintRunners = (d) => fill(runnersEl,
    h('a', { href: '#/runners' }, `${d.runners.online} runners online`),
    ` (${d.runners.online_by_role.gpu || 0} GPU, ${d.runners.online_by_role.build || 0} build; ${d.runners.busy} busy)`,
    ` · queue: ${Object.entries(d.queue.jobs).filter(([, v]) => v > 0).map(([k, v]) => `${v} ${k.replace('_', ' ')}`).join(', ') || 'empty'}`);
  paintRunners(data);

  const newPipelines = pendingBadge('pipeline', async () => fill(pipelinesBody, (await api.overview()).pipelines.map(pipelineRow)));
  const newResults = pendingBadge('result', async () => fill(resultsBody, (await api.results({ limit: 15 })).items.map(resultRow)));

  fill(root,
    h('h1', { elementtiming: 'kport-data' }, 'Bring-up overview'),
    runnersEl,
    h('table', { class: 'grid progress', id: 'progress' },
      h('thead', {}, h('tr', {}, h('th', {}, 'target'), h('th', {}, 'family'), h('th', {}, 'applicable'),
        STAGES.map(([, label]) => h('th', {}, label)))),
      progressBody),
    h('h2', {}, 'Recent pipelines ', newPipelines.el),
    h('table', { class: 'grid', id: 'pipelines' },
      h('thead', {}, h('tr', {}, ['id', 'status', 'reason', 'commit', 'jobs done', 'note', 'created'].map((t) => h('th', {}, t)))),
      pipelinesBody),
    h('h2', {}, 'Latest results ', newResults.el),
    h('table', { class: 'grid', id: 'results' },
      h('thead', {}, h('tr', {}, ['id', 'status', 'instance', 'dtype', 'shape', 'GPU', 'target', 'commit'].map((t) => h('th', {}, t)))),
      resultsBody));

  // Progress counts change in place: same rows, new numbers, nothing moves.
  const refresh = coalesce(async () => {
    const d = await api.overview();
    paintRunners(d);
    for (const t of d.targets) {
      for (const g of [{ family: 'all', ...t.progress }, ...t.families]) {
        const row = progressBody.querySelector(`tr[data-key="${CSS.escape(rowKey(t, g))}"]`);
        if (!row) continue;
        for (const [key] of STAGES) {
          const cell = row.querySelector(`td[data-stage="${key}"]`);
          const pct = g.applicable ? Math.round((100 * g[key]) / g.applicable) : 0;
          cell.querySelector('.bar-fill').style.width = `${pct}%`;
          setText(cell.querySelector('.bar-text'), `${g[key]}/${g.applicable}`);
        }
      }
    }
  }, 500);

  return {
    onEvent(name, payload) {
      if (name === 'pipeline') newPipelines.add(1);
      if (name === 'results') newResults.add(payload.ids ? payload.ids.length : 1);
      refresh(name);
    },
  };
}
