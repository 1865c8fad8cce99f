// Target page: variants x stages in colour with figures, as of the target's latest commit
// with a build (the stages `kport bringup` prints); a cell opens its evidence and the
// command that reproduces it; the burndown shows how many variants still have to reach
// each stage over time. One library at a time (several may build for a target): the one
// named, else the one built last, with links to the others.
// State: #/target/<name>?repo=<library>&cell=<family.variant>:<stage>
import { h, fill, fmtNum, fmtTime, shortSha, pageLink, hashFor, afterPaint } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';
import { replaceParams } from '../router.js';
import { withOrigin } from './shared.js';

const STAGES = [
  ['build', 'builds'],
  ['resources', 'resources clean'],
  ['numerics', 'numerics pass'],
  ['timing', 'measured'],
  ['selected', 'selected best'],
];

function figure(stage, c) {
  switch (stage) {
    case 'build': return c.status || 'not built';
    case 'resources': return c.registers != null ? `${c.registers} regs · ${c.spill_bytes || 0} B spill` : '—';
    case 'numerics': return `${c.passed} pass · ${c.failed} fail`;
    case 'timing': return c.max_ratio != null ? `${c.measured} timed · up to ×${fmtNum(c.max_ratio)} vs baseline` : `${c.measured} timed`;
    case 'selected': return c.count ? `best on ${c.count}` : c.state === 'none' ? 'fastest at no measured shape' : '—';
    default: return '';
  }
}

function cellId(v, stage) {
  return `${v.family}.${v.variant}:${stage}`;
}

// repo: the library the board is of, whose instance the evidence's is.
function evidenceBlock(title, e, repo) {
  if (!e) return null;
  return h('div', { class: 'evidence' },
    h('h4', {}, title, ' ', pageLink(`/result/${e.id}`, null, `result #${e.id}`)),
    h('dl', {},
      h('dt', {}, 'instance'), h('dd', {}, pageLink(`/kernel/${e.instance}`, { repo, dtype: e.dtype, shape: e.shape }, e.instance)),
      h('dt', {}, 'dtype / shape'), h('dd', {}, `${e.dtype} · `, h('code', {}, e.shape)),
      h('dt', {}, 'GPU'), h('dd', {}, `${e.gpu_model} (driver ${e.driver || '—'})`),
      h('dt', {}, 'commit'), h('dd', {}, pageLink(`/commit/${e.commit}`, null, h('code', {}, shortSha(e.commit)))),
      h('dt', {}, 'status'), h('dd', {}, e.status, e.message ? h('pre', { class: 'log' }, e.message) : null),
      h('dt', {}, 'numerics'), h('dd', {}, `max abs ${fmtNum(e.max_abs_err, 6)} · normwise ${fmtNum(e.normwise_rel_err, 6)} · tol ${fmtNum(e.tolerance, 6)}`),
      h('dt', {}, 'timing'), h('dd', {}, `median ${fmtNum(e.median_us)} µs ± ${fmtNum(e.stddev_us)} (${e.samples ?? '—'} samples) · ${e.baseline || 'baseline'} ratio ×${fmtNum(e.ratio)}`)),
    h('p', {}, 'Reproduce:'), h('pre', { class: 'cmd' }, withOrigin(e.command)));
}

function detail(target, v, stage, repo) {
  const c = v.cells[stage];
  const parts = [h('h3', {}, `${v.family}.${v.variant} — ${STAGES.find(([s]) => s === stage)[1]}: `,
    h('span', { class: `tag cell-${c.state}` }, c.state))];
  if (stage === 'build' || stage === 'resources') {
    const b = v.cells.build;
    const r = v.cells.resources;
    parts.push(h('dl', {},
      h('dt', {}, 'build'), h('dd', {}, b.status || 'no build record yet',
        b.record ? h('span', { class: 'muted' }, ' (', pageLink(`/build/${b.record}`, null, `record #${b.record}`), ', commit ', pageLink(`/commit/${b.commit}`, null, shortSha(b.commit)), ')') : null),
      h('dt', {}, 'resources'), h('dd', {}, `registers ${r.registers ?? '—'} · spills ${r.spill_bytes ?? '—'} B · shared memory ${r.shared_mem_bytes ?? '—'} B`),
      h('dt', {}, 'build log'), h('dd', {}, b.job ? pageLink(`/job/${b.job}`, null, `job #${b.job} and its log`) : '—'),
      h('dt', {}, 'records'), h('dd', {}, b.record ? pageLink(`/build/${b.record}`, null, 'this record and the earlier ones') : '—')));
    parts.push(h('p', {}, 'Reproduce:'), h('pre', { class: 'cmd' }, b.command));
  } else if (stage === 'numerics') {
    parts.push(evidenceBlock('Latest pass', c.evidence, repo), evidenceBlock('Latest failure', c.failure, repo));
  } else {
    parts.push(evidenceBlock('Evidence', v.cells.timing.evidence, repo));
  }
  if (parts.length === 1 || parts.slice(1).every((p) => !p)) parts.push(h('p', { class: 'muted' }, 'No evidence yet.'));
  return parts;
}

function burndown(container, data) {
  if (!data.burndown.length) {
    fill(container, h('p', { class: 'muted' }, 'No progress recorded yet.'));
    return;
  }
  const total = data.progress.applicable;
  const x = data.burndown.map((p) => p.time_ms / 1000);
  const series = [['builds', 'to build'], ['numerics_passed', 'to pass numerics'], ['measured', 'to measure']]
    .map(([key, label]) => ({ label, step: true, values: data.burndown.map((p) => total - p[key]) }));
  return import('../chart.js').then(({ lineChart }) => {
    container.replaceChildren();
    lineChart(container, { title: 'Burndown: variants still to reach each stage', yLabel: 'variants', x, series });
  });
}

export async function render(root, route) {
  const name = route.arg;
  const repo = route.params.get('repo') || '';
  let data = await (route.first || api.target(name, repo));
  let selected = route.params.get('cell') || '';
  const panel = h('div', { class: 'panel', id: 'cell-detail' });
  const chart = h('div', { class: 'chart', id: 'burndown' });
  const body = h('tbody');
  const summary = h('p', { class: 'summary' });

  const paint = () => {
    const p = data.progress;
    const others = (data.repositories || []).filter((r) => r !== data.repo);
    fill(summary, data.repo ? h('span', { id: 'library' }, 'library ', h('strong', {}, data.repo), ' · ') : null,
      others.length ? h('span', { id: 'other-libraries' }, 'also built here: ',
        others.map((r, i) => [i ? ', ' : '', h('a', { href: hashFor(`/target/${name}`, { repo: r }) }, r)]), ' · ') : null,
      `arch ${data.target.arch} · checked on ${data.check_arches.join(', ')} · `,
      data.commit ? h('span', { id: 'stage-commit' }, 'at ', pageLink(`/commit/${data.commit}`, null, h('code', {}, shortSha(data.commit))))
        : h('span', { id: 'stage-commit' }, 'not built yet: the planner\'s view'),
      ` · ${p.builds}/${p.applicable} build · ${p.numerics_passed} pass numerics · ${p.measured} measured · ${p.selected_best} selected`);
    fill(body, data.variants.map((v) => h('tr', { dataset: { variant: `${v.family}.${v.variant}`, stage: v.stage } },
      h('th', { scope: 'row', title: v.reason || v.stage.replace(/_/g, ' ') }, `${v.family}.${v.variant}`),
      STAGES.map(([stage]) => {
        const c = v.cells[stage];
        const id = cellId(v, stage);
        return h('td', { class: `cell cell-${c.state}${id === selected ? ' selected' : ''}` },
          h('a', { href: hashFor(`/target/${name}`, { repo, cell: id }), dataset: { cell: id },
            onclick: (e) => { e.preventDefault(); select(id); } },
          h('span', { class: 'state' }, c.state), h('span', { class: 'fig' }, figure(stage, c))));
      }))));
    paintDetail();
  };
  const paintDetail = () => {
    const [key, stage] = selected.split(':');
    const v = data.variants.find((x) => `${x.family}.${x.variant}` === key);
    if (!v || !stage || !v.cells[stage]) {
      fill(panel, h('p', { class: 'muted' }, 'Choose a cell to see its evidence and the command that reproduces it.'));
      return;
    }
    fill(panel, detail(name, v, stage, data.repo));
  };
  const select = (id) => {
    selected = id;
    replaceParams({ repo, cell: id });
    for (const td of body.querySelectorAll('td.selected')) td.classList.remove('selected');
    const a = body.querySelector(`a[data-cell="${CSS.escape(id)}"]`);
    if (a) a.parentElement.classList.add('selected');
    paintDetail();
  };

  paint();
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, `Target ${data.target.name}`, data.target.is_new ? h('span', { class: 'tag new' }, 'new') : null),
    summary,
    h('div', { class: 'split' },
      h('table', { class: 'grid matrix', id: 'matrix' },
        h('thead', {}, h('tr', {}, h('th', {}, 'variant'), STAGES.map(([, label]) => h('th', {}, label)))), body),
      panel),
    chart,
    h('p', { class: 'muted' }, 'Updated ', h('span', { id: 'updated' }, fmtTime(Date.now()))));
  // The matrix paints first; then the chart library loads and draws the burndown (its
  // box keeps its height meanwhile, so nothing moves).
  afterPaint(() => burndown(chart, data));

  // Cells keep their size while their text changes, so a refresh does not move the page.
  const refresh = coalesce(async () => {
    data = await api.target(name, repo);
    paint();
    const u = root.querySelector('#updated');
    if (u) u.textContent = fmtTime(Date.now());
  }, 600);
  return {
    onEvent(ev) {
      if (ev === 'results' || ev === 'job') refresh(ev);
    },
  };
}
