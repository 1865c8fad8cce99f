// The first request of each page, started by main.js as soon as it runs, so the answer
// is on its way while the page's module is still being evaluated.
import { api } from './api.js';

const first = {
  overview: () => api.overview(),
  target: (r) => api.target(r.arg, r.params.get('repo')),
  commit: (r) => api.commit(r.arg),
  kernel: (r) => api.kernel(r.arg, r.params.get('dtype'), r.params.get('shape'), r.params.get('repo')),
  pipeline: (r) => api.pipeline(r.arg),
  job: (r) => api.job(r.arg),
  result: (r) => api.result(r.arg),
  bisection: (r) => api.bisection(r.arg),
  build: (r) => api.build(r.arg),
  runners: (r) => api.runners(r.params.get('all') === '1'),
  // The form's GPU list, the answer when a shared link carries a full question (an error
  // is the answer's to show, so it is kept as a value), and the op families it offers.
  deliveries: (r) => Promise.all([api.forges(), api.deliveries(r.params.get('state') || '')]),
  best: (r) => Promise.all([api.gpus(), bestQuery(r.params) ? api.best(bestQuery(r.params)).catch((e) => e) : null,
    api.families()]),
};

// The question a #/best link asks, or null when it asks none yet.
export function bestQuery(p) {
  if (!p.get('gpu') || !p.get('shape')) return null;
  const q = { gpu: p.get('gpu'), op: p.get('op') || 'gemm', dtype: p.get('dtype') || 'bf16', shape: p.get('shape') };
  if (p.get('repo')) q.repo = p.get('repo');
  return q;
}

// A promise of the page's first data, or null when the page fetches on its own.
export function prefetch(route) {
  const start = first[route.page];
  if (!start) return null;
  const promise = start(route);
  promise.catch(() => {});  // the page reports the error when it awaits it
  return promise;
}
