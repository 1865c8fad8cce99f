// Built by web/scripts/bundle.mjs from web/js/; edit those files and run it again.
(() => {
'use strict';
const $m = [];
// js/router.js
$m[0] = (() => {
// Page state lives in the URL hash ("#/target/sm_90a?cell=gemm.simt.numerics"), so
// every view can be linked to. parseHash() splits it into a route and its parameters.
function parseHash(hash = window.location.hash) {
  const raw = hash.replace(/^#/, '') || '/';
  const [path, query = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] || 'overview', arg: parts.slice(1).join('/'), params: new URLSearchParams(query) };
}

// Rewrites the hash's query without adding a history entry or re-rendering the page.
function replaceParams(params) {
  const { page, arg } = parseHash();
  const path = page === 'overview' ? '/' : `/${page}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const qs = q.toString();
  history.replaceState(null, '', `#${path}${qs ? `?${qs}` : ''}`);
}
return { parseHash, replaceParams };
})();
// js/api.js
$m[1] = (() => {
// The coordinator's REST API, same origin. Errors come back as {error:{code,message}};
// getJSON throws an Error carrying that message and the HTTP status.
async function getJSON(path, params) {
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, v);
  const res = await fetch(url, { headers: { Accept: 'application/json' } });
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const msg = body && body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`;
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  return body;
}

const api = {
  overview: () => getJSON('/api/v1/dashboard/overview'),
  target: (name) => getJSON(`/api/v1/dashboard/targets/${encodeURIComponent(name)}`),
  commit: (sha) => getJSON(`/api/v1/dashboard/commits/${encodeURIComponent(sha)}`),
  kernel: (instance, dtype, shape) => getJSON(`/api/v1/dashboard/kernels/${encodeURIComponent(instance)}`, { dtype, shape }),
  runners: (all) => getJSON('/api/v1/dashboard/runners', { all: all ? '1' : '' }),
  results: (params) => getJSON('/api/v1/results', params),
  result: (id) => getJSON(`/api/v1/results/${id}`),
  best: (params) => getJSON('/api/v1/best', params),
  gpus: () => getJSON('/api/v1/gpus'),
  kernels: () => getJSON('/api/v1/kernels'),
};
return { getJSON, api };
})();
// js/prefetch.js
$m[2] = (() => {
// The first request of each page, started by main.js as soon as it runs, so the answer
// is on its way while the page's module is still being evaluated.
const { api } = $m[1];

const first = {
  overview: () => api.overview(),
  target: (r) => api.target(r.arg),
  commit: (r) => api.commit(r.arg),
  kernel: (r) => api.kernel(r.arg, r.params.get('dtype'), r.params.get('shape')),
  runners: (r) => api.runners(r.params.get('all') === '1'),
  // The form's GPU list, and the answer when a shared link carries a full question (an
  // error is the answer's to show, so it is kept as a value).
  best: (r) => Promise.all([api.gpus(), bestQuery(r.params) ? api.best(bestQuery(r.params)).catch((e) => e) : null]),
};

// The question a #/best link asks, or null when it asks none yet.
function bestQuery(p) {
  if (!p.get('gpu') || !p.get('shape')) return null;
  return { gpu: p.get('gpu'), op: p.get('op') || 'gemm', dtype: p.get('dtype') || 'bf16', shape: p.get('shape') };
}

// A promise of the page's first data, or null when the page fetches on its own.
function prefetch(route) {
  const start = first[route.page];
  if (!start) return null;
  const promise = start(route);
  promise.catch(() => {});  // the page reports the error when it awaits it
  return promise;
}
return { bestQuery, prefetch };
})();
// js/boot.js
$m[3] = (() => {
// The first script the browser runs: a plain script at the top of index.html, so the
// page's data is asked for before the dashboard's own script has arrived and while the
// browser lays out its first frame. main.js takes the answer over (window.kportFirst).
const { parseHash } = $m[0];
const { prefetch } = $m[2];

window.kportFirst = { hash: window.location.hash, data: prefetch(parseHash()) };
return {  };
})();
})();
