// Bisection page: one search for the commit that caused a slowdown, a numerics failure
// or a build failure. Its state, good and bad ends, the first bad commit with the effect
// and its uncertainty, the cause class, and every commit between the ends with what its
// probe pipeline saw: the outcome the rule judged and the figure of each case (from the
// results or build records of that commit on the bisection's target and GPU model).
// Live: bisection, job and pipeline events refresh it. State: #/bisection/<id>
import { h, fill, fmtNum, fmtPct, fmtTime, shortSha, pageLink } from '../dom.js';
import { api } from '../api.js';
import { coalesce } from '../live.js';
import { facts, missing, rawLink } from './shared.js';

const KIND = { perf_regression: 'slowdown', numerics_failure: 'numerics failure', build_failure: 'build failure' };
const OUTCOME_TAG = { good: 'st-succeeded', bad: 'st-failed', ambiguous: 'st-running', pending: 'st-queued', skipped: 'st-queued' };
const STATE_TAG = { done: 'st-succeeded', failed: 'st-failed', running: 'st-running' };
const ORIGIN = { verdict: 'started by a verdict', manual: 'started by hand' };
const MAX_CASES = 4;  // figures asked for per commit: the page stays quick on wide bisections

const commitLink = (sha) => (sha ? pageLink(`/commit/${sha}`, null, h('code', {}, shortSha(sha))) : '—');

// Per commit and case, the record that shows what the commit does: a result (or, for a
// build failure, a build record) of the bisection's target and GPU model, newest first.
async function figures(b) {
  const cases = b.cases.slice(0, MAX_CASES);
  const out = new Map();
  await Promise.all(b.commits.flatMap((sha) => cases.map(async (c) => {
    let rec = null;
    try {
      if (b.kind === 'build_failure') {
        const page = await api.builds({ commit: sha, target: b.target, family: c.family, variant: c.variant, limit: 1 });
        rec = page.items[0] ? { build: page.items[0] } : null;
      } else {
        const page = await api.results({ commit: sha, target: b.target, gpu: b.gpu_model, instance: c.instance,
          dtype: c.dtype, shape: c.shape, limit: 1 });
        rec = page.items[0] ? { result: page.items[0] } : null;
      }
    } catch {
      rec = null;
    }
    out.set(`${sha}|${c.key}`, rec);
  })));
  return out;
}

function figureCell(rec) {
  if (!rec) return h('span', { class: 'muted' }, 'not measured');
  if (rec.build) {
    const r = rec.build;
    return pageLink(`/build/${r.id}`, null, h('span', { class: `tag st-${r.status === 'ok' ? 'succeeded' : 'failed'}` }, r.status));
  }
  const r = rec.result;
  const t = r.timing || {};
  const text = r.status === 'passed' && t.median_us != null ? `${fmtNum(t.median_us, 3)} µs ± ${fmtNum(t.stddev_us, 3)}` : r.status;
  return pageLink(`/result/${r.id}`, null, h('span', { class: `tag st-${r.status}` }, text));
}

function commitsTable(b, figs) {
  const judged = new Map((b.judged || []).map((j) => [j.commit, j.outcome]));
  const probes = new Map();
  for (const p of b.probes) {
    if (!probes.has(p.commit)) probes.set(p.commit, []);
    probes.get(p.commit).push(p);
  }
  const suspects = new Set(b.suspects || []);
  const cases = b.cases.slice(0, MAX_CASES);
  const role = (sha) => {
    const r = [];
    if (sha === b.good) r.push('good end');
    if (sha === b.bad) r.push('bad end');
    if (sha === b.last_good) r.push('last good');
    if (sha === b.first_bad) r.push('first bad');
    else if (suspects.has(sha)) r.push('could be it');
    return r.join(', ');
  };
  return h('table', { class: 'grid', id: 'commits' },
    h('thead', {}, h('tr', {}, ['#', 'commit', 'role', 'outcome', 'probe pipelines', ...cases.map((c) => c.key)].map((t) => h('th', {}, t)))),
    h('tbody', {}, b.commits.map((sha, i) => {
      const outcome = judged.get(sha) || (sha === b.good ? 'good' : sha === b.bad ? 'bad' : (probes.has(sha) ? 'pending' : ''));
      return h('tr', { dataset: { commit: sha, outcome }, class: sha === b.first_bad ? 'first-bad' : '' },
        h('td', { class: 'num' }, String(i)),
        h('td', {}, commitLink(sha)),
        h('td', {}, role(sha)),
        h('td', {}, outcome ? h('span', { class: `tag ${OUTCOME_TAG[outcome] || 'st-queued'}` }, outcome) : h('span', { class: 'muted' }, 'not probed')),
        h('td', {}, (probes.get(sha) || []).map((p) => h('span', { class: 'probe' },
          pageLink(`/pipeline/${p.pipeline}`, null, `#${p.pipeline}`), ' ', h('span', { class: `tag st-${p.status}` }, p.status), ' '))),
        cases.map((c) => h('td', { class: 'num' }, figureCell(figs.get(`${sha}|${c.key}`)))));
    })));
}

function casesTable(b) {
  const perf = b.kind === 'perf_regression';
  return h('table', { class: 'grid', id: 'cases' },
    h('thead', {}, h('tr', {}, ['case', 'instance', 'dtype', 'shape', ...(perf ? ['good µs', 'bad µs', 'noise σ'] : [])].map((t) => h('th', {}, t)))),
    h('tbody', {}, b.cases.map((c) => h('tr', {},
      h('td', {}, h('code', {}, c.key)),
      h('td', {}, c.instance ? pageLink(`/kernel/${c.instance}`, { repo: b.repo, dtype: c.dtype, shape: c.shape }, c.instance) : `${c.family}.${c.variant}`),
      h('td', {}, c.dtype || '—'), h('td', {}, c.shape ? h('code', {}, c.shape) : '—'),
      perf ? [h('td', { class: 'num' }, fmtNum(c.good_us, 3)), h('td', { class: 'num' }, fmtNum(c.bad_us, 3)), h('td', { class: 'num' }, fmtPct(c.sigma))] : null))));
}

function effectsTable(list) {
  if (!list || !list.length) return null;
  return [h('h2', {}, 'Effect per case'), h('table', { class: 'grid', id: 'effects' },
    h('thead', {}, h('tr', {}, ['case', 'last good µs', 'first bad µs', 'effect'].map((t) => h('th', {}, t)))),
    h('tbody', {}, list.map((e) => h('tr', {},
      h('td', {}, h('code', {}, e.case)), h('td', { class: 'num' }, fmtNum(e.good_us, 3)), h('td', { class: 'num' }, fmtNum(e.bad_us, 3)),
      h('td', { class: 'num' }, `${e.effect > 0 ? '+' : ''}${fmtPct(e.effect)} ± ${fmtPct(e.uncertainty)}`)))))];
}

function paint(root, b, figs) {
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, `Bisection #${b.id} `, h('span', { class: `tag ${STATE_TAG[b.state] || 'st-queued'}`, id: 'bisection-state' }, b.state)),
    h('p', { class: 'summary' }, `${KIND[b.kind] || b.kind} on `, pageLink(`/target/${b.target}`, null, b.target),
      b.gpu_model ? ` / ${b.gpu_model}` : '', ` · ${ORIGIN[b.origin] || `started by ${b.origin}`} · ${b.repo}`,
      ` · ${b.commits.length} commits, ${b.probes.length} probes`),
    h('p', { class: 'summary', id: 'bisection-summary' }, b.summary),
    facts('bisection-facts', [
      ['good end', commitLink(b.good)],
      ['bad end', commitLink(b.bad)],
      ['first bad commit', h('span', { id: 'first-bad' }, b.first_bad ? commitLink(b.first_bad) : 'not found yet')],
      b.last_good ? ['last good commit', commitLink(b.last_good)] : null,
      (b.suspects || []).length > 1 ? ['could also be', b.suspects.filter((s) => s !== b.first_bad).map((s) => [commitLink(s), ' '])] : null,
      ['effect', h('span', { id: 'effect' }, b.effect != null ? `${b.effect > 0 ? '+' : ''}${fmtPct(b.effect)} ± ${fmtPct(b.uncertainty)}` : '—')],
      ['cause', b.cause ? h('span', { class: `tag cause-${b.cause}`, id: 'cause' }, b.cause) : '—'],
      ['created', fmtTime(b.created)],
      ['updated', fmtTime(b.updated)],
      ['finished', fmtTime(b.finished)],
    ]),
    h('h2', {}, 'Commits and probes'),
    h('p', { class: 'muted' }, 'From the good end (first) to the bad end (last), first parents only. A figure links to its record.'),
    commitsTable(b, figs),
    effectsTable(b.effects),
    h('h2', {}, 'Cases'), casesTable(b),
    rawLink(`/api/v1/bisections/${b.id}`));
}

export async function render(root, route) {
  const id = route.arg;
  let b;
  try {
    b = await (route.first || api.bisection(id));
  } catch (err) {
    return missing(root, `Bisection #${id}`, err);
  }
  paint(root, b, await figures(b));
  const refresh = coalesce(async () => {
    b = await api.bisection(id);
    paint(root, b, await figures(b));
  }, 800);
  return {
    onEvent(ev) { if (b.state === 'running' && ['job', 'pipeline', 'results'].includes(ev)) refresh(ev); },
  };
}
