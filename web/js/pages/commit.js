// Commit page: the commit's verdict (the one `kport status` prints: status, baseline,
// reasons) and beside it, per target and GPU, what changed against the same baseline
// (fixed, new failure, still failing, regressed, improved, unstable) with the figures
// behind each change, the pipelines that validated it, and the bisections the commit is part of
// (the first bad commit, the effect with its uncertainty, the cause). State: #/commit/<sha>?kind=<kind>
// filters the lists.
import { h, fill, fmtNum, fmtPct, fmtTime, shortSha, pageLink, pendingBadge } from '../dom.js';
import { api } from '../api.js';
import { replaceParams } from '../router.js';
import { coalesce } from '../live.js';

const KINDS = ['new_failure', 'regressed', 'fixed', 'improved', 'unstable', 'insufficient_data', 'still_failing'];
const LABEL = { new_failure: 'new failure', regressed: 'regressed', fixed: 'fixed', improved: 'improved',
  unstable: 'unstable', insufficient_data: 'too little history', still_failing: 'still failing', unchanged: 'unchanged',
  added: 'new key', dropped: 'not rerun' };
const REASON = { build_failure: 'build failure', job_failure: 'job failure', numerics_failure: 'numerics failure',
  perf_regression: 'slower', resource_regression: 'resources' };

function verdictBox(v) {
  const list = (cls, items, item) => (items.length ? h('ul', { class: cls }, items.map(item)) : null);
  return h('section', { class: `verdict verdict-${v.status}`, id: 'verdict', dataset: { status: v.status } },
    h('h2', {}, 'Verdict: ', h('span', { class: `tag verdict-${v.status}`, id: 'verdict-status' }, v.status),
      ' ', h('span', { class: 'muted' }, v.baseline ? ['against ', pageLink(`/commit/${v.baseline}`, null, h('code', {}, shortSha(v.baseline)))]
        : 'no validated ancestor to compare with')),
    list('reasons', v.reasons, (r) => h('li', { class: `reason reason-${r.kind}` },
      h('span', { class: `tag reason-${r.kind}` }, REASON[r.kind] || r.kind), ' ', r.message)),
    list('waiting', v.waiting, (w) => h('li', { class: 'muted' }, 'waiting: ', w)),
    list('notes', v.notes, (n) => h('li', { class: 'muted' }, 'not counted: ', n)),
    list('insufficient', v.insufficient_data || [], (u) => h('li', { class: 'muted' }, 'not judged: ',
      `${u.instance} ${u.dtype} ${u.shape} on ${u.target} / ${u.gpu_model} changed ${fmtPct(u.change)}; ${u.summary}`)),
    list('flaky', v.flaky || [], (f) => h('li', { class: 'muted' }, 'flaky, not counted: ',
      `${f.instance} ${f.dtype} ${f.shape} on ${f.gpu_model} ${f.status} (seed ${f.seed ?? '—'}; ${f.failures} of ${f.runs} runs failed)`)),
    list('infrastructure', v.infrastructure || [], (i) => h('li', { class: 'muted' }, 'machine, not code: ', i.message)),
    !v.reasons.length && v.status === 'pass' ? h('p', { class: 'muted' }, 'Nothing this commit changed counts against it.') : null);
}

const BISECT = { perf_regression: 'slowdown', numerics_failure: 'numerics failure', build_failure: 'build failure' };

function bisectionItem(b, sha) {
  const at = (x) => (x ? pageLink(`/commit/${x}`, null, h('code', {}, shortSha(x))) : '—');
  const role = b.first_bad === sha ? 'first bad commit' : b.bad === sha ? 'bad end' : b.good === sha ? 'good end' : 'probed';
  return h('li', { class: `bisection bisection-${b.state}`, dataset: { id: String(b.id), cause: b.cause || '' } },
    h('span', { class: `tag bisection-${b.state}` }, b.state), ' ',
    `${BISECT[b.kind] || b.kind} on ${b.target}${b.gpu_model ? ` / ${b.gpu_model}` : ''} (${b.origin}, ${role}): `,
    at(b.good), ' … ', at(b.bad), ' · ',
    b.first_bad ? h('span', { class: 'first-bad' }, 'first bad ', at(b.first_bad)) : null,
    b.effect != null ? ` · effect ${fmtPct(b.effect)} ± ${fmtPct(b.uncertainty)}` : '',
    b.cause ? [' · cause ', h('span', { class: `tag cause-${b.cause}` }, b.cause)] : '',
    h('div', { class: 'muted' }, `${b.summary} (${b.probes.length} probes, `,
      pageLink(`/bisection/${b.id}`, null, 'details'), ')'));
}

function bisectionsBox(list, sha) {
  if (!list || !list.length) return null;
  return h('section', { class: 'bisections', id: 'bisections' }, h('h2', {}, 'Bisections'),
    h('ul', {}, list.map((b) => bisectionItem(b, sha))));
}

function side(s) {
  if (!s) return '—';
  return s.status === 'passed' ? `${fmtNum(s.median_us)} µs ± ${fmtNum(s.stddev_us)}` : s.status;
}

function changeRow(c) {
  return h('tr', { class: `kind-${c.kind}` },
    h('td', {}, h('span', { class: `tag kind-${c.kind}` }, LABEL[c.kind])),
    h('td', {}, pageLink(`/kernel/${c.instance}`, { repo: c.repo, dtype: c.dtype, shape: c.shape }, c.instance)),
    h('td', {}, c.dtype), h('td', {}, h('code', {}, c.shape)),
    h('td', { class: 'num' }, c.before ? pageLink(`/result/${c.before.id}`, null, side(c.before)) : '—'),
    h('td', { class: 'num' }, pageLink(`/result/${c.after.id}`, null, side(c.after))),
    h('td', { class: 'num' }, c.delta ? `${c.delta > 0 ? '+' : ''}${fmtPct(c.delta)}` : ''));
}

function group(g, kind) {
  const changes = g.changes.filter((c) => !kind || c.kind === kind);
  return h('section', { class: 'group', dataset: { target: g.target, gpu: g.gpu_model } },
    h('h2', {}, pageLink(`/target/${g.target}`, null, g.target), ` on ${g.gpu_model}`),
    h('p', { class: 'counts' }, Object.entries(g.counts).filter(([, n]) => n > 0)
      .map(([k, n]) => h('span', { class: `tag kind-${k}` }, `${n} ${LABEL[k]}`))),
    changes.length
      ? h('table', { class: 'grid' },
        h('thead', {}, h('tr', {}, ['change', 'instance', 'dtype', 'shape', 'baseline', 'this commit', 'Δ time'].map((t) => h('th', {}, t)))),
        h('tbody', {}, changes.map(changeRow)))
      : h('p', { class: 'muted' }, 'No changes.'),
    g.truncated ? h('p', { class: 'muted' }, 'Showing the first changes only.') : null);
}

// The commit's pipelines, newest first, each linking to its page.
function pipelinesBox(page) {
  if (!page || !page.items.length) return h('p', { class: 'muted' }, 'No pipeline validated this commit.');
  return h('table', { class: 'grid', id: 'commit-pipelines' },
    h('thead', {}, h('tr', {}, ['pipeline', 'state', 'reason', 'jobs', 'created'].map((t) => h('th', {}, t)))),
    h('tbody', {}, page.items.map((p) => h('tr', { dataset: { id: p.id } },
      h('td', { class: 'num' }, pageLink(`/pipeline/${p.id}`, null, `#${p.id}`)),
      h('td', {}, h('span', { class: `tag st-${p.status}` }, p.status)),
      h('td', {}, p.reason, p.ref ? h('span', { class: 'muted' }, ` ${p.ref}`) : null),
      h('td', { class: 'num' }, `${p.jobs_done}/${p.jobs_total}`),
      h('td', { class: 'muted' }, fmtTime(p.created))))));
}

export async function render(root, route) {
  const sha = route.arg;
  let kind = route.params.get('kind') || '';
  const pipelines = api.pipelines({ commit: sha, limit: 20 }).catch(() => null);
  let data = await (route.first || api.commit(sha));
  const groupsEl = h('div', { id: 'groups' });
  const filter = h('select', { id: 'kind', onchange: () => { kind = filter.value; replaceParams({ kind }); paint(); } },
    h('option', { value: '' }, 'every change'), KINDS.map((k) => h('option', { value: k, selected: k === kind }, LABEL[k])));
  const paint = () => fill(groupsEl, data.groups.length ? data.groups.map((g) => group(g, kind))
    : h('p', { class: 'muted' }, 'No results for this commit yet.'));
  const verdictEl = h('div', { id: 'verdict-box' }, verdictBox(data.verdict));
  const pipelinesEl = h('div', { id: 'pipelines-box' }, pipelinesBox(await pipelines));
  const fresh = pendingBadge('result', async () => { data = await api.commit(sha); fill(verdictEl, verdictBox(data.verdict)); paint(); });
  const c = data.commit;
  const t = data.totals;
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, 'Commit ', h('code', {}, shortSha(c.sha))),
    h('pre', { class: 'message', id: 'commit-message' }, c.message || ''),
    h('p', { class: 'summary' }, `${c.author || 'unknown author'} · ${fmtTime(c.time)} · parent `,
      data.parent ? pageLink(`/commit/${data.parent}`, null, h('code', {}, shortSha(data.parent))) : 'none',
      ` · ${data.results} result keys here, ${data.baseline_results} on the baseline`),
    verdictEl,
    h('h2', {}, 'Pipelines'), pipelinesEl,
    bisectionsBox(data.bisections, c.sha),
    h('p', { class: 'counts', id: 'totals' }, KINDS.map((k) => h('span', { class: `tag kind-${k}` }, `${t[k]} ${LABEL[k]}`))),
    h('p', {}, h('label', {}, 'Show ', filter), ' ', fresh.el, h('span', { class: 'muted' }, ` Rule: ${data.rule}.`)),
    groupsEl);
  paint();
  const refreshPipelines = coalesce(async () => fill(pipelinesEl, pipelinesBox(await api.pipelines({ commit: sha, limit: 20 }))), 600);
  return {
    onEvent(ev, payload) {
      if (ev === 'results') fresh.add(payload.ids ? payload.ids.length : 1);
      if (ev === 'job' || ev === 'pipeline') refreshPipelines(ev);
    },
  };
}
