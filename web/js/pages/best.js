// Best-kernel explorer: a form over GET /api/v1/best, with the answer's evidence.
// State: #/best?gpu=..&op=..&dtype=..&shape=..[&repo=..] (the form fills from it and writes
// it; repo: the library to answer from, where several run the op).
import { h, fill, fmtNum, fmtTime, shortSha, pageLink, pendingBadge } from '../dom.js';
import { api } from '../api.js';
import { replaceParams } from '../router.js';
import { bestQuery } from '../prefetch.js';

// A family's shape to offer: its declared example, else its dims to fill in.
const exampleShape = (f) => (f ? f.example || f.dims.map((d) => `${d.name}=${d.default ?? ''}`).join(',') : '');

const KIND_TAG = { measured: 'st-succeeded', provisional: 'st-queued', unranked: 'st-failed' };
const RANKED_BY = { median_us: 'ranked by measured median', ratio_to_baseline: 'ranked by time relative to the vendor baseline' };
// An answer from another shape ranks by each figure moved to the asked shape, by the
// method the answer's confidence names.
const MOVED_BY = { wave_model: 'ranked by each figure moved to this shape by its waves of tiles',
  problem_size: 'ranked by each figure moved to this shape by its problem size' };
const rankedBy = (a) => (a.ranked_by === 'estimate_us'
  ? MOVED_BY[a.confidence && a.confidence.method] || 'ranked by each figure moved to this shape'
  : RANKED_BY[a.ranked_by] || a.ranked_by);

function heading(a) {
  if (a.best) return h('h2', {}, [a.kind === 'measured' ? 'Best: ' : 'Provisional best: ',
    pageLink(`/kernel/${a.best}`, { repo: a.query.repo, dtype: a.query.dtype, shape: a.matched_shape || a.query.shape }, a.best)]);
  return h('h2', {}, a.kind === 'unranked' ? 'No best yet: unranked' : 'No answer');
}

function answer(a) {
  const ev = a.evidence;
  const moved = a.ranked_by === 'estimate_us';
  return [
    heading(a),
    h('p', { class: 'summary' }, h('span', { class: `tag ${KIND_TAG[a.kind] || 'st-queued'}` }, a.kind),
      a.ranked_by ? ` ${rankedBy(a)}.` : '', a.reason ? ` ${a.reason}` : ''),
    h('p', { class: 'muted' }, a.query.repo ? h('span', { id: 'answer-library' }, `library ${a.query.repo} · `) : '',
      `shape ${a.matched_shape || '—'}${a.matched_shape ? (a.exact_shape ? ' (exact)' : ' (nearest measured)') : ''}`,
      ev ? ` · evidence from ${ev.gpu_model}, commit ` : '', ev ? pageLink(`/commit/${ev.commit}`, null, h('code', {}, shortSha(ev.commit))) : '',
      ev ? ` · driver ${ev.driver} · ${ev.samples} samples · ${fmtTime(ev.measured)}` : '',
      a.candidates_from ? ` · candidates: instances that ${a.candidates_from}` : '',
      a.tied.length > 1 ? ` · tied: ${a.tied.join(', ')}` : ''),
    a.notes.length ? h('ul', { class: 'notes', id: 'answer-notes' }, a.notes.map((n) => h('li', {}, n))) : '',
    h('table', { class: 'grid', id: 'ranking' },
      h('thead', {}, h('tr', {}, ['rank', 'instance', 'variant', 'tie', 'slowdown', ...(moved ? ['estimate µs here', 'median µs there'] : ['median µs']),
        'vs baseline', 'samples', 'GPU', 'commit', 'measured', 'evidence'].map((t) => h('th', {}, t)))),
      h('tbody', {}, a.ranking.map((r, i) => {
        const e = r.evidence;
        return h('tr', {},
          h('td', { class: 'num' }, r.ranked ? String(i + 1) : '—'), h('td', {}, r.instance), h('td', {}, r.variant),
          h('td', {}, r.tie_with_best ? 'tie' : ''), h('td', { class: 'num' }, r.ranked ? `×${fmtNum(r.slowdown)}` : '—'),
          moved ? h('td', { class: 'num estimate' }, r.estimate_us != null ? fmtNum(r.estimate_us) : '—') : null,
          h('td', { class: 'num' }, e && e.median_us ? `${fmtNum(e.median_us)} ± ${fmtNum(e.stddev_us)}${e.unstable ? ' (unstable)' : ''}` : '—'),
          h('td', { class: 'num' }, e && e.ratio ? `×${fmtNum(e.ratio)}` : '—'),
          h('td', { class: 'num' }, e ? String(e.samples) : '—'),
          h('td', {}, e ? e.gpu_model : '—'),
          h('td', {}, e ? pageLink(`/commit/${e.commit}`, null, h('code', {}, shortSha(e.commit))) : '—'),
          h('td', {}, e ? fmtTime(e.measured) : '—'),
          h('td', {}, e ? pageLink(`/result/${e.result}`, null, `result #${e.result}`) : 'not measured'));
      }))),
    a.excluded.length ? [h('h3', {}, 'Out of the ranking'),
      h('table', { class: 'grid', id: 'excluded' },
        h('thead', {}, h('tr', {}, ['instance', 'why', 'evidence'].map((t) => h('th', {}, t)))),
        h('tbody', {}, a.excluded.map((x) => h('tr', {}, h('td', {}, x.instance), h('td', {}, x.reason),
          h('td', {}, x.evidence ? pageLink(`/result/${x.evidence.result}`, null, `result #${x.evidence.result}`) : '—')))))] : '',
  ];
}

export async function render(root, route) {
  const p = route.params;
  // A shared link asks at once, alongside the form's GPU list and op families (main.js
  // started all three).
  const [gpus, first, known] = await (route.first || Promise.all([api.gpus(),
    bestQuery(p) ? api.best(bestQuery(p)).catch((e) => e) : null, api.families()]));
  // The op families the coordinator knows (kport's own and those builds reported).
  const families = known.families;
  const familyOf = (name) => families.find((f) => f.name === name);
  const out = h('div', { id: 'answer' });
  const field = (label, input) => h('label', {}, h('span', {}, label), input);
  const gpu = h('select', { name: 'gpu' }, gpus.items.map((g) => h('option', { value: g.name, selected: g.name === p.get('gpu') }, `${g.name} (${g.arch})`)));
  const op = h('select', { name: 'op' }, families.map((f) => h('option', { value: f.name, selected: f.name === p.get('op'), title: f.description }, f.name)));
  const dtypeOptions = (f, want) => (f ? f.dtypes : []).map((d) => h('option', { value: d, selected: d === want }, d));
  const dtype = h('select', { name: 'dtype' }, dtypeOptions(familyOf(op.value), p.get('dtype')));
  const shape = h('input', { name: 'shape', size: 36, value: p.get('shape') || exampleShape(familyOf(op.value)), required: true });
  const repo = h('input', { name: 'repo', size: 16, value: p.get('repo') || '', placeholder: 'any' });
  op.addEventListener('change', () => {
    const f = familyOf(op.value);
    fill(dtype, dtypeOptions(f, dtype.value));
    shape.value = exampleShape(f);
  });
  const ask = async () => {
    const q = { gpu: gpu.value, op: op.value, dtype: dtype.value, shape: shape.value.trim() };
    if (repo.value.trim()) q.repo = repo.value.trim();
    replaceParams(q);
    try {
      fill(out, answer(await api.best(q)));
    } catch (err) {
      fill(out, h('p', { class: 'error' }, err.message));
    }
  };
  const stale = pendingBadge('result', ask);
  const form = h('form', { class: 'form', id: 'best-form', onsubmit: (e) => { e.preventDefault(); ask(); } },
    field('GPU', gpu), field('op', op), field('dtype', dtype), field('shape', shape), field('library', repo), h('button', { type: 'submit' }, 'Ask'));
  fill(root, h('h1', { elementtiming: 'kport-data' }, 'Best kernel'), form, stale.el, out);
  if (first) {
    fill(out, first instanceof Error ? h('p', { class: 'error' }, first.message) : answer(first));
  } else fill(out, h('p', { class: 'muted' }, 'Pick a GPU, op, dtype and shape.'));
  return { onEvent(ev, payload) { if (ev === 'results' && out.querySelector('table')) stale.add(payload.ids ? payload.ids.length : 1); } };
}
