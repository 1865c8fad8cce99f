// Result page: one measured case as a user needs it: what ran where (instance, dtype,
// shape, target, GPU model and driver, commit), its numerics against the tolerance, its
// timing (median, spread, samples, the rounds the figure was made of and, for a
// re-measure, the baseline's interleaved figure under env.timing.paired), the clocks and
// telemetry read around it, and the commands that reproduce it. State: #/result/<id>
import { h, fill, fmtNum, fmtTime, shortSha, pageLink } from '../dom.js';
import { api } from '../api.js';
import { facts, missing, rawLink, withOrigin } from './shared.js';

const us = (ms) => (typeof ms === 'number' ? ms * 1000 : null);
const obj = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : null);

function numericsBox(r) {
  const n = r.numerics || {};
  const within = n.normwise_rel_err != null && n.tolerance != null ? n.normwise_rel_err <= n.tolerance : null;
  const extra = Object.entries(n).filter(([k]) => !['max_abs_err', 'max_rel_err', 'normwise_rel_err', 'tolerance', 'nan_inf_count', 'seed'].includes(k));
  return [
    h('p', { class: 'summary', id: 'numerics-verdict' },
      h('span', { class: `tag st-${r.status}` }, r.status), ' ',
      within === null ? 'no error norms recorded'
        : `normwise relative error ${fmtNum(n.normwise_rel_err, 6)} ${within ? '≤' : '>'} tolerance ${fmtNum(n.tolerance, 6)}`),
    r.message ? h('pre', { class: 'log', id: 'result-message' }, r.message) : null,
    h('table', { class: 'grid', id: 'numerics' },
      h('thead', {}, h('tr', {}, ['max abs error', 'max rel error', 'normwise rel error', 'tolerance', 'NaN/Inf', 'seed'].map((t) => h('th', {}, t)))),
      h('tbody', {}, h('tr', {},
        h('td', { class: 'num' }, fmtNum(n.max_abs_err, 6)),
        h('td', { class: 'num' }, fmtNum(n.max_rel_err, 6)),
        h('td', { class: 'num' }, fmtNum(n.normwise_rel_err, 6)),
        h('td', { class: 'num' }, fmtNum(n.tolerance, 6)),
        h('td', { class: 'num' }, n.nan_inf_count ?? '—'),
        h('td', { class: 'num' }, n.seed ?? '—')))),
    extra.length ? h('dl', { class: 'facts' }, extra.map(([k, v]) => [h('dt', {}, k.replace(/_/g, ' ')), h('dd', {}, v == null ? '—' : String(v))])) : null,
  ];
}

function roundsTable(rounds) {
  return h('table', { class: 'grid', id: 'rounds' },
    h('thead', {}, h('tr', {}, ['round', 'median µs', 'stddev µs', 'samples', 'kept'].map((t) => h('th', {}, t)))),
    h('tbody', {}, rounds.map((x, i) => {
      const o = obj(x) || { median_ms: x };
      return h('tr', { class: o.outlier ? 'outlier' : '' },
        h('td', { class: 'num' }, String(i + 1)),
        h('td', { class: 'num' }, fmtNum(us(o.median_ms), 3)),
        h('td', { class: 'num' }, fmtNum(us(o.stddev_ms), 3)),
        h('td', { class: 'num' }, o.samples ?? '—'),
        h('td', {}, o.outlier ? 'outlier, left out' : 'kept'));
    })));
}

function pairedBox(p) {
  const medians = Array.isArray(p.round_medians_ms) ? p.round_medians_ms : [];
  return h('section', { class: 'verdict', id: 'paired' },
    h('h3', {}, 'Baseline timed interleaved (A/B/A/B)'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'baseline commit'), h('dd', {}, p.commit ? pageLink(`/commit/${p.commit}`, null, h('code', {}, shortSha(p.commit))) : '—'),
      h('dt', {}, 'median'), h('dd', { id: 'paired-median' }, `${fmtNum(us(p.median_ms), 3)} µs ± ${fmtNum(us(p.stddev_ms), 3)}`),
      h('dt', {}, 'samples'), h('dd', {}, p.samples ?? '—'),
      h('dt', {}, 'rounds'), h('dd', {}, `${p.rounds ?? medians.length}${p.order ? ` (${p.order})` : ''}`),
      h('dt', {}, 'round medians'), h('dd', {}, medians.length ? medians.map((m) => `${fmtNum(us(m), 3)} µs`).join(' · ') : '—'),
      h('dt', {}, 'stable'), h('dd', {}, p.unstable ? 'no: its rounds disagreed, so it does not count' : 'yes'),
      p.harness_sha256 ? [h('dt', {}, 'harness'), h('dd', {}, h('code', {}, p.harness_sha256))] : null));
}

function timingBox(r) {
  const t = r.timing || {};
  const et = obj(obj(r.env) && r.env.timing) || {};
  if (t.median_us == null && !Object.keys(et).length) return h('p', { class: 'muted' }, 'Not timed: only a passing check is timed.');
  const rows = [
    ['median', h('span', { id: 'median' }, `${fmtNum(t.median_us, 3)} µs`)],
    ['stddev', `${fmtNum(t.stddev_us, 3)} µs`],
    ['samples', `${t.samples ?? '—'}${t.samples_dropped ? ` (${t.samples_dropped} dropped)` : ''}`],
    t.tflops != null ? ['throughput', `${fmtNum(t.tflops)} TFLOP/s`] : null,
    t.gbps != null ? ['bandwidth', `${fmtNum(t.gbps)} GB/s`] : null,
    ['baseline', t.baseline ? `${t.baseline}: ${fmtNum(t.baseline_median_us, 3)} µs` : '—'],
    ['ratio to baseline', t.ratio != null ? `×${fmtNum(t.ratio)} (higher is faster)` : '—'],
    ['stable', t.unstable ? `no: the rounds disagreed${et.unstable_reason ? ` (${et.unstable_reason})` : ''}` : 'yes'],
    et.precision ? ['precision', String(et.precision)] : null,
    obj(et.screen) ? ['screen', `${fmtNum(us(et.screen.median_ms), 3)} µs over ${et.screen.samples ?? '—'} samples`] : null,
    et.round_spread != null ? ['round spread', `${fmtNum(et.round_spread * 100)}%`] : null,
  ].filter(Boolean);
  const rounds = Array.isArray(et.rounds) ? et.rounds : [];
  return [
    h('dl', { class: 'facts', id: 'timing' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    rounds.length ? [h('h3', {}, `Rounds (${rounds.length})`), roundsTable(rounds)] : null,
    obj(et.paired) ? pairedBox(et.paired) : null,
  ];
}

function clockText(c) {
  if (!obj(c)) return null;
  const parts = [c.sm_mhz != null ? `SM ${c.sm_mhz} MHz` : 'SM clock not read'];
  if (c.temperature_c != null) parts.push(`${c.temperature_c} °C`);
  if (c.power_w != null) parts.push(`${fmtNum(c.power_w)} W`);
  if (c.source) parts.push(`from ${c.source}`);
  return parts.join(' · ');
}

function clocksBox(r) {
  const env = obj(r.env) || {};
  const et = obj(env.timing) || {};
  const after = obj(et.sm_mhz_after_samples);
  const rows = [
    r.sm_clock_mhz != null ? ['SM clock', `${r.sm_clock_mhz} MHz`] : null,
    r.timing && r.timing.sm_clock_mhz_min != null ? ['lowest SM clock while timed', `${r.timing.sm_clock_mhz_min} MHz`] : null,
    after ? ['SM clock after samples', ['min', 'median', 'max'].filter((k) => after[k] != null).map((k) => `${k} ${after[k]} MHz`).join(' · ')] : null,
    et.discarded_throttled != null ? ['samples dropped as throttled', String(et.discarded_throttled)] : null,
    clockText(env.clock_before) ? ['before timing', clockText(env.clock_before)] : null,
    clockText(env.clock_after) ? ['after timing', clockText(env.clock_after)] : null,
  ].filter(Boolean);
  if (!rows.length) return h('p', { class: 'muted' }, 'No clock or telemetry was recorded with this result.');
  return h('dl', { class: 'facts', id: 'clocks' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function reproduceBox(p) {
  if (!p) return h('p', { class: 'muted' }, 'No reproduce command.');
  return [
    h('p', {}, 'Check (numerics):'), h('pre', { class: 'cmd', id: 'reproduce-check' }, withOrigin(p.check)),
    p.bench ? [h('p', {}, 'Bench (timing):'), h('pre', { class: 'cmd', id: 'reproduce-bench' }, withOrigin(p.bench))] : null,
    p.harness_sha256 ? h('p', { class: 'muted' }, `harness ${p.harness || ''} sha256 `, h('code', {}, p.harness_sha256)) : null,
    (p.missing || []).length ? h('ul', { class: 'notes', id: 'reproduce-missing' }, p.missing.map((m) => h('li', { class: 'muted' }, `not exact: ${m}`))) : null,
  ];
}

export async function render(root, route) {
  const id = route.arg;
  let r;
  try {
    r = await (route.first || api.result(id));
  } catch (err) {
    return missing(root, `Result #${id}`, err);
  }
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, `Result #${r.id} `, h('span', { class: `tag st-${r.status}`, id: 'result-status' }, r.status)),
    h('p', { class: 'summary' },
      pageLink(`/kernel/${r.instance}`, { repo: r.repo, dtype: r.dtype, shape: r.shape }, r.instance), ` · ${r.dtype} · `, h('code', {}, r.shape),
      ' · on ', pageLink(`/target/${r.target}`, null, r.target), ` / ${r.gpu_model} · commit `,
      pageLink(`/commit/${r.commit}`, null, h('code', {}, shortSha(r.commit))), ` · ${fmtTime(r.created)}`),
    facts('result-facts', [
      ['instance', pageLink(`/kernel/${r.instance}`, { repo: r.repo, dtype: r.dtype, shape: r.shape }, r.instance)],
      r.repo ? ['library', h('span', { id: 'result-library' }, r.repo)] : null,
      ['family / variant', `${r.family} · ${r.variant}`],
      ['dtype', r.dtype],
      ['shape', h('code', {}, r.shape)],
      ['target', [pageLink(`/target/${r.target}`, null, r.target), ` (toolkit ${r.toolkit || '—'})`]],
      ['GPU', `${r.gpu_model} · arch ${r.arch || '—'} · ${r.gpu_uuid || '—'}`],
      ['driver', r.driver || '—'],
      ['commit', pageLink(`/commit/${r.commit}`, null, h('code', {}, r.commit))],
      ['job', r.job ? [pageLink(`/job/${r.job}`, null, `#${r.job}`), ` attempt ${r.attempt}`] : '—'],
      ['measured', fmtTime(r.created)],
    ]),
    h('h2', {}, 'Numerics'), numericsBox(r),
    h('h2', {}, 'Timing'), timingBox(r),
    h('h2', {}, 'Clocks and telemetry'), clocksBox(r),
    h('h2', {}, 'Reproduce'), reproduceBox(r.reproduce),
    rawLink(`/api/v1/results/${r.id}`));
  return null;
}
