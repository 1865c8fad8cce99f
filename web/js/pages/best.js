// Best-kernel explorer: a form over GET /api/v1/best, with the answer's evidence.
// State: #/best?gpu=..&op=..&dtype=..&shape=.. (the form fills from it and writes it).
import { h, fill, fmtNum, fmtTime, shortSha, pageLink, pendingBadge } from '../dom.js';
import { api } from '../api.js';
import { replaceParams } from '../router.js';
import { bestQuery } from '../prefetch.js';

const OPS = ['gemm', 'attention', 'rmsnorm', 'softmax'];
const DTYPES = ['bf16', 'fp16', 'fp32'];
const EXAMPLE_SHAPE = { gemm: 'm=4096,n=4096,k=4096', attention: 'b=4,h=16,l=4096,d=128,causal=0',
  rmsnorm: 'rows=32768,cols=4096', softmax: 'rows=32768,cols=4096' };

function answer(a) {
  return [
    h('h2', {}, a.best ? ['Best: ', pageLink(`/kernel/${a.best}`, { dtype: a.query.dtype, shape: a.matched_shape || a.query.shape }, a.best)] : 'No answer'),
    h('p', { class: 'summary' }, a.provisional ? h('span', { class: 'tag st-queued' }, `provisional (${a.kind})`) : h('span', { class: 'tag st-succeeded' }, 'measured'),
      ` ${a.reason}`),
    h('p', { class: 'muted' }, `shape ${a.matched_shape || '—'}${a.exact_shape ? ' (exact)' : ' (nearest measured)'}`,
      a.evidence_gpu_model ? ` · evidence from ${a.evidence_gpu_model}` : '', a.tied.length > 1 ? ` · tied: ${a.tied.join(', ')}` : ''),
    h('table', { class: 'grid', id: 'ranking' },
      h('thead', {}, h('tr', {}, ['rank', 'instance', 'variant', 'tie', 'slowdown', 'median µs', 'samples', 'GPU', 'commit', 'measured', 'evidence'].map((t) => h('th', {}, t)))),
      h('tbody', {}, a.ranking.map((r, i) => {
        const e = r.evidence;
        return h('tr', {},
          h('td', { class: 'num' }, String(i + 1)), h('td', {}, r.instance), h('td', {}, r.variant),
          h('td', {}, r.tie_with_best ? 'tie' : ''), h('td', { class: 'num' }, `×${fmtNum(r.slowdown)}`),
          h('td', { class: 'num' }, e ? `${fmtNum(e.median_us)} ± ${fmtNum(e.stddev_us)}` : '—'),
          h('td', { class: 'num' }, e ? String(e.samples) : '—'),
          h('td', {}, e ? e.gpu_model : '—'),
          h('td', {}, e ? pageLink(`/commit/${e.commit}`, null, h('code', {}, shortSha(e.commit))) : '—'),
          h('td', {}, e ? fmtTime(e.measured) : '—'),
          h('td', {}, e ? h('a', { href: e.url }, `result #${e.result}`) : 'build only'));
      }))),
  ];
}

export async function render(root, route) {
  const p = route.params;
  // A shared link asks at once, alongside the form's GPU list (main.js started both).
  const [gpus, first] = await (route.first || Promise.all([api.gpus(), bestQuery(p) ? api.best(bestQuery(p)).catch((e) => e) : null]));
  const out = h('div', { id: 'answer' });
  const field = (label, input) => h('label', {}, h('span', {}, label), input);
  const gpu = h('select', { name: 'gpu' }, gpus.items.map((g) => h('option', { value: g.name, selected: g.name === p.get('gpu') }, `${g.name} (${g.arch})`)));
  const op = h('select', { name: 'op' }, OPS.map((o) => h('option', { value: o, selected: o === p.get('op') }, o)));
  const dtype = h('select', { name: 'dtype' }, DTYPES.map((d) => h('option', { value: d, selected: d === p.get('dtype') }, d)));
  const shape = h('input', { name: 'shape', size: 36, value: p.get('shape') || EXAMPLE_SHAPE[op.value], required: true });
  op.addEventListener('change', () => { shape.value = EXAMPLE_SHAPE[op.value]; });
  const ask = async () => {
    const q = { gpu: gpu.value, op: op.value, dtype: dtype.value, shape: shape.value.trim() };
    replaceParams(q);
    try {
      fill(out, answer(await api.best(q)));
    } catch (err) {
      fill(out, h('p', { class: 'error' }, err.message));
    }
  };
  const stale = pendingBadge('result', ask);
  const form = h('form', { class: 'form', id: 'best-form', onsubmit: (e) => { e.preventDefault(); ask(); } },
    field('GPU', gpu), field('op', op), field('dtype', dtype), field('shape', shape), h('button', { type: 'submit' }, 'Ask'));
  fill(root, h('h1', { elementtiming: 'kport-data' }, 'Best kernel'), form, stale.el, out);
  if (first) {
    fill(out, first instanceof Error ? h('p', { class: 'error' }, first.message) : answer(first));
  } else fill(out, h('p', { class: 'muted' }, 'Pick a GPU, op, dtype and shape.'));
  return { onEvent(ev, payload) { if (ev === 'results' && out.querySelector('table')) stale.add(payload.ids ? payload.ids.length : 1); } };
}
