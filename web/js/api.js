// The coordinator's REST API, same origin. Errors come back as {error:{code,message}};
// getJSON throws an Error carrying that message and the HTTP status.
export async function getJSON(path, params) {
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

// An operator's call (re-run, cancel) with the admin token the page was given; the
// token stays in this tab's session storage, never in the URL.
export async function postAdmin(path) {
  const token = adminToken();
  if (!token) throw new Error('this needs the admin token: enter it under "Admin token"');
  const res = await fetch(new URL(path, window.location.origin), {
    method: 'POST', headers: { Accept: 'application/json', Authorization: `Bearer ${token}` },
  });
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) throw new Error(body && body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`);
  return body;
}

export function adminToken(value) {
  if (value !== undefined) {
    if (value) sessionStorage.setItem('kport.admin', value);
    else sessionStorage.removeItem('kport.admin');
  }
  return sessionStorage.getItem('kport.admin') || '';
}

// One build record by id: the list's cursor reads the records below an id, newest
// first, so the first of those below id + 1 is the record when it exists.
export const api = {
  overview: () => getJSON('/api/v1/dashboard/overview'),
  target: (name, repo) => getJSON(`/api/v1/dashboard/targets/${encodeURIComponent(name)}${repo ? `?repo=${encodeURIComponent(repo)}` : ''}`),
  commit: (sha) => getJSON(`/api/v1/dashboard/commits/${encodeURIComponent(sha)}`),
  kernel: (instance, dtype, shape, repo) => getJSON(`/api/v1/dashboard/kernels/${encodeURIComponent(instance)}`, { dtype, shape, repo }),
  runners: (all) => getJSON('/api/v1/dashboard/runners', { all: all ? '1' : '' }),
  results: (params) => getJSON('/api/v1/results', params),
  result: (id) => getJSON(`/api/v1/results/${encodeURIComponent(id)}`),
  bisection: (id) => getJSON(`/api/v1/bisections/${encodeURIComponent(id)}`),
  builds: (params) => getJSON('/api/v1/builds', params),
  build: (id) => getJSON(`/api/v1/builds/${encodeURIComponent(id)}`),
  best: (params) => getJSON('/api/v1/best', params),
  gpus: () => getJSON('/api/v1/gpus'),
  families: () => getJSON('/api/v1/families'),
  kernels: () => getJSON('/api/v1/kernels'),
  forges: () => getJSON('/api/v1/forges'),
  pipeline: (id) => getJSON(`/api/v1/dashboard/pipelines/${encodeURIComponent(id)}`),
  job: (id) => getJSON(`/api/v1/dashboard/jobs/${encodeURIComponent(id)}`),
  jobLog: (id, after) => getJSON(`/api/v1/jobs/${encodeURIComponent(id)}/log`, { after }),
  pipelines: (params) => getJSON('/api/v1/pipelines', params),
  deliveries: (state) => getJSON('/api/v1/deliveries', { state, limit: 200 }),
};
