// Line charts with uPlot (web/vendor/, copied from npm by the setup). A series may carry
// a band: two extra hidden series filled between, for the noise around a median.
import uPlot from '../vendor/uplot.esm.js';

// The chart library's stylesheet is linked on first use, so pages without charts do
// not wait for it before their first paint.
function ensureStyles() {
  if (document.querySelector('link[data-uplot]')) return;
  document.head.appendChild(Object.assign(document.createElement('link'),
    { rel: 'stylesheet', href: '/static/vendor/uplot.min.css' })).dataset.uplot = '';
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];

// opts: {title, xLabel, yLabel, x: [seconds], series: [{label, values, low?, high?, step?}]}
export function lineChart(container, opts) {
  ensureStyles();
  const data = [opts.x];
  const series = [{}];
  const bands = [];
  opts.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const idx = data.length;
    data.push(s.values);
    series.push({ label: s.label, stroke: color, width: 2, spanGaps: true,
      paths: s.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
      points: { show: opts.x.length < 60, size: opts.x.length === 1 ? 9 : undefined } });
    if (s.low && s.high) {
      data.push(s.low, s.high);
      series.push({ label: `${s.label} low`, stroke: 'transparent', points: { show: false }, spanGaps: true },
        { label: `${s.label} high`, stroke: 'transparent', points: { show: false }, spanGaps: true });
      bands.push({ series: [idx + 2, idx + 1], fill: `${color}33` });
    }
  });
  const single = opts.x.length > 0 && opts.x.every((t) => t === opts.x[0]);
  // A page may draw before it is attached; then the app's width is the best guess.
  const avail = container.clientWidth || (document.getElementById('app').clientWidth - 40);
  const width = Math.max(320, Math.min(avail, 1300));
  const plot = new uPlot({
    title: opts.title,
    width,
    height: opts.height || 260,
    series,
    bands,
    // One point alone gives the x axis no width (uPlot then puts it at the left edge of
    // a range of years): a day either side of it instead, and the point drawn.
    scales: { x: single ? { time: opts.time !== false, range: () => [opts.x[0] - 86400, opts.x[0] + 86400] }
      : { time: opts.time !== false } },
    axes: [{ label: opts.xLabel }, { label: opts.yLabel, size: 60 }],
    legend: { live: true },
    // The drawn x range, for whoever checks that a chart can be read.
    hooks: { setScale: [(u, key) => {
      if (key !== 'x') return;
      container.dataset.points = String(opts.x.length);
      container.dataset.xMin = String(u.scales.x.min);
      container.dataset.xMax = String(u.scales.x.max);
    }] },
  }, data, container);
  // The band's bounds are drawing aids, not readings: keep them out of the legend.
  const rows = plot.root.querySelectorAll('.u-legend .u-series');
  series.forEach((s, i) => { if (s.stroke === 'transparent' && rows[i]) rows[i].classList.add('legend-hidden'); });
  return plot;
}
