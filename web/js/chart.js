// Line charts with uPlot (web/vendor/, copied from npm by the setup). A series may carry
// a band: two extra hidden series filled between, for the noise around a median.
import uPlot from '../vendor/uplot.esm.js';

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];

// opts: {title, xLabel, yLabel, x: [seconds], series: [{label, values, low?, high?, step?}]}
export function lineChart(container, opts) {
  const data = [opts.x];
  const series = [{}];
  const bands = [];
  opts.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const idx = data.length;
    data.push(s.values);
    series.push({ label: s.label, stroke: color, width: 2, spanGaps: true,
      paths: s.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
      points: { show: opts.x.length < 60 } });
    if (s.low && s.high) {
      data.push(s.low, s.high);
      series.push({ label: `${s.label} low`, stroke: 'transparent', points: { show: false }, spanGaps: true },
        { label: `${s.label} high`, stroke: 'transparent', points: { show: false }, spanGaps: true });
      bands.push({ series: [idx + 2, idx + 1], fill: `${color}33` });
    }
  });
  const width = Math.max(320, Math.min(container.clientWidth || 900, 1100));
  return new uPlot({
    title: opts.title,
    width,
    height: opts.height || 260,
    series,
    bands,
    scales: { x: { time: opts.time !== false } },
    axes: [{ label: opts.xLabel }, { label: opts.yLabel, size: 60 }],
    legend: { live: true },
  }, data, container);
}
