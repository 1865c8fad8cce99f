// Kernel page: one configuration (instance, dtype, shape) over commits, one line per GPU
// model with its noise band: as a share of the GPU's measured peak and as the ratio to
// the vendor baseline. An instance is named within its library: where several libraries
// publish the name, the page is one library's history and links the others'.
// State: #/kernel/<instance>?repo=<library>&dtype=..&shape=..
import { h, fill, fmtNum, fmtPct, shortSha, hashFor, afterPaint } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';

// Points come as columns ({time_ms: [...], median_us: [...], ...}); one point as an object.
function pointAt(s, i) {
  return Object.fromEntries(Object.entries(s.points).map(([key, column]) => [key, column[i]]));
}

function charts(container, data, lineChart) {
  container.replaceChildren();
  const times = [...new Set(data.series.flatMap((s) => s.points.time_ms))].sort((a, b) => a - b);
  // Series of different GPUs share the time axis; a GPU without a point there is a gap.
  const at = (s, key) => {
    const byTime = new Map(s.points.time_ms.map((t, i) => [t, s.points[key][i]]));
    return times.map((t) => (byTime.has(t) ? byTime.get(t) : null));
  };
  const x = times.map((t) => t / 1000);
  const shareEl = h('div', { class: 'chart', id: 'chart-share' });
  const ratioEl = h('div', { class: 'chart', id: 'chart-ratio' });
  const timeEl = h('div', { class: 'chart', id: 'chart-time' });
  container.append(shareEl, ratioEl, timeEl);
  const unit = data.series[0] ? data.series[0].unit : '';
  lineChart(shareEl, { title: `Share of the GPU's measured peak ${unit}`, yLabel: 'share', x,
    series: data.series.map((s) => ({ label: s.gpu_model, values: at(s, 'share'), low: at(s, 'share_low'), high: at(s, 'share_high') })) });
  // A family with no vendor baseline in the harness (gemm_fp8: cuBLASLt is timed by the
  // benchmarks, not beside each case) has no ratio to draw: say so rather than draw none.
  if (data.series.some((s) => s.points.ratio.some((r) => r != null))) {
    lineChart(ratioEl, { title: 'Ratio to the vendor baseline (higher is faster)', yLabel: 'ratio', x,
      series: data.series.map((s) => ({ label: s.gpu_model, values: at(s, 'ratio') })) });
  } else {
    ratioEl.classList.add('empty');
    fill(ratioEl, h('p', { class: 'muted' }, 'No vendor baseline was timed beside this configuration: no ratio to show.'));
  }
  lineChart(timeEl, { title: 'Median time with noise band (µs)', yLabel: 'µs', x,
    series: data.series.map((s) => ({ label: s.gpu_model, values: at(s, 'median_us'), low: at(s, 'low_us'), high: at(s, 'high_us') })) });
}

function table(data) {
  return h('table', { class: 'grid', id: 'latest' },
    h('thead', {}, h('tr', {}, ['GPU', 'measured peak', 'latest commit', 'median µs', 'band µs', 'share of peak', 'ratio', 'points'].map((t) => h('th', {}, t)))),
    h('tbody', {}, data.series.map((s) => {
      const n = s.points.time_ms.length;
      const p = pointAt(s, n - 1);
      return h('tr', { dataset: { gpu: s.gpu_model } },
        h('td', {}, s.gpu_model),
        h('td', { class: 'num' }, s.peak != null ? `${fmtNum(s.peak)} ${s.unit}` : '—'),
        h('td', {}, h('a', { href: hashFor(`/commit/${p.commit}`) }, h('code', {}, shortSha(p.commit)))),
        h('td', { class: 'num' }, h('a', { href: hashFor(`/result/${p.result}`) }, fmtNum(p.median_us))),
        h('td', { class: 'num' }, `${fmtNum(p.low_us)}–${fmtNum(p.high_us)}`),
        h('td', { class: 'num' }, fmtPct(p.share)),
        h('td', { class: 'num' }, p.ratio != null ? `×${fmtNum(p.ratio)}` : '—'),
        h('td', { class: 'num' }, String(n)));
    })));
}

// Each series' noise from its A/A history: the smallest change a verdict can see on it.
function noiseTable(data) {
  if (!data.noise || !data.noise.length) return h('p', { class: 'muted' }, 'No A/A history of this configuration yet.');
  return h('table', { class: 'grid', id: 'noise' },
    h('thead', {}, h('tr', {}, ['GPU', 'driver', 'A/A σ', 'detects (MDE)', 'A/A degrees', 'figures'].map((t) => h('th', {}, t)))),
    h('tbody', {}, data.noise.map((n) => h('tr', { dataset: { gpu: n.gpu_model, status: n.status } },
      h('td', {}, n.gpu_model),
      h('td', {}, n.driver),
      h('td', { class: 'num' }, n.sigma != null ? fmtPct(n.sigma) : '—'),
      h('td', { class: 'num' }, n.mde != null ? fmtPct(n.mde) : `insufficient data (${n.needed} more)`),
      h('td', { class: 'num' }, String(n.degrees)),
      h('td', { class: 'num' }, String(n.figures))))));
}

// The library the page is of, and links to the same name's page in each other library.
function libraryLine(instance, data) {
  const others = (data.libraries || []).filter((r) => r !== data.repo);
  const name = (r) => r || '(no library)';
  return [
    data.repo ? h('span', { id: 'library' }, 'library ',
      h('a', { href: hashFor(`/kernel/${instance}`, { repo: data.repo, dtype: data.dtype, shape: data.shape }) }, h('strong', {}, data.repo)), ' · ') : null,
    others.length ? h('span', { id: 'other-libraries' }, 'also published by: ',
      others.map((r, i) => [i ? ', ' : '', h('a', { href: hashFor(`/kernel/${instance}`, { repo: r }), dataset: { repo: r } }, name(r))]), ' · ') : null,
  ];
}

export async function render(root, route) {
  const instance = route.arg;
  const asked = route.params.get('repo') || '';
  let data = await (route.first || api.kernel(instance, route.params.get('dtype'), route.params.get('shape'), asked));
  const chartsEl = h('div', { id: 'charts' });
  const tableEl = h('div');
  const choose = h('select', { id: 'config', onchange: () => {
    const [dtype, shape] = choose.value.split('|');
    window.location.hash = hashFor(`/kernel/${instance}`, { repo: asked || data.repo, dtype, shape });
  } }, data.configs.map((c) => h('option', { value: `${c.dtype}|${c.shape}`, selected: c.dtype === data.dtype && c.shape === data.shape }, `${c.dtype} · ${c.shape}`)));
  // The figures paint first; then the chart library loads and draws the charts.
  const noiseEl = h('div');
  const paint = () => {
    fill(tableEl, data.series.length ? table(data) : h('p', { class: 'muted' }, 'No passing measurement of this configuration yet.'));
    fill(noiseEl, noiseTable(data));
    const shown = data;
    if (data.series.length) afterPaint(() => import('../chart.js').then(({ lineChart }) => charts(chartsEl, shown, lineChart)));
  };
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, `Kernel ${instance}`),
    h('p', { class: 'summary' }, ...libraryLine(instance, data), `${data.family} · variant ${data.variant} · `, h('label', {}, 'configuration ', choose)),
    tableEl, h('h2', {}, 'Noise and minimum detectable effect'), noiseEl, chartsEl,
    h('p', { class: 'muted' }, `Peak: ${data.peak_rule}. Band: median ± standard deviation of the results at that commit.`));
  paint();
  const refresh = coalesce(async () => {
    data = await api.kernel(instance, data.dtype, data.shape, asked || data.repo);
    paint();
  }, 1000);
  return { onEvent(ev) { if (ev === 'results') refresh(ev); } };
}
