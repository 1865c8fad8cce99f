// Built by web/scripts/bundle.mjs (esbuild) from web/js/; edit those files and run it again.
'use strict';
(() => {
  // js/router.js
  function parseHash(hash = window.location.hash) {
    const raw = hash.replace(/^#/, "") || "/";
    const [path, query = ""] = raw.split("?");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    return { page: parts[0] || "overview", arg: parts.slice(1).join("/"), params: new URLSearchParams(query) };
  }

  // js/api.js
  async function getJSON(path, params) {
    const url = new URL(path, window.location.origin);
    for (const [k, v] of Object.entries(params || {})) if (v !== void 0 && v !== null && v !== "") url.searchParams.set(k, v);
    const res = await fetch(url, { headers: { Accept: "application/json" } });
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
  var api = {
    overview: () => getJSON("/api/v1/dashboard/overview"),
    target: (name, repo) => getJSON(`/api/v1/dashboard/targets/${encodeURIComponent(name)}${repo ? `?repo=${encodeURIComponent(repo)}` : ""}`),
    commit: (sha) => getJSON(`/api/v1/dashboard/commits/${encodeURIComponent(sha)}`),
    kernel: (instance, dtype, shape, repo) => getJSON(`/api/v1/dashboard/kernels/${encodeURIComponent(instance)}`, { dtype, shape, repo }),
    runners: (all) => getJSON("/api/v1/dashboard/runners", { all: all ? "1" : "" }),
    results: (params) => getJSON("/api/v1/results", params),
    result: (id) => getJSON(`/api/v1/results/${encodeURIComponent(id)}`),
    bisection: (id) => getJSON(`/api/v1/bisections/${encodeURIComponent(id)}`),
    builds: (params) => getJSON("/api/v1/builds", params),
    build: (id) => getJSON(`/api/v1/builds/${encodeURIComponent(id)}`),
    best: (params) => getJSON("/api/v1/best", params),
    gpus: () => getJSON("/api/v1/gpus"),
    families: () => getJSON("/api/v1/families"),
    kernels: () => getJSON("/api/v1/kernels"),
    forges: () => getJSON("/api/v1/forges"),
    pipeline: (id) => getJSON(`/api/v1/dashboard/pipelines/${encodeURIComponent(id)}`),
    job: (id) => getJSON(`/api/v1/dashboard/jobs/${encodeURIComponent(id)}`),
    jobLog: (id, after) => getJSON(`/api/v1/jobs/${encodeURIComponent(id)}/log`, { after }),
    pipelines: (params) => getJSON("/api/v1/pipelines", params),
    deliveries: (state) => getJSON("/api/v1/deliveries", { state, limit: 200 })
  };

  // js/prefetch.js
  var first = {
    overview: () => api.overview(),
    target: (r) => api.target(r.arg, r.params.get("repo")),
    commit: (r) => api.commit(r.arg),
    kernel: (r) => api.kernel(r.arg, r.params.get("dtype"), r.params.get("shape"), r.params.get("repo")),
    pipeline: (r) => api.pipeline(r.arg),
    job: (r) => api.job(r.arg),
    result: (r) => api.result(r.arg),
    bisection: (r) => api.bisection(r.arg),
    build: (r) => api.build(r.arg),
    runners: (r) => api.runners(r.params.get("all") === "1"),
    // The form's GPU list, the answer when a shared link carries a full question (an error
    // is the answer's to show, so it is kept as a value), and the op families it offers.
    deliveries: (r) => Promise.all([api.forges(), api.deliveries(r.params.get("state") || "")]),
    best: (r) => Promise.all([
      api.gpus(),
      bestQuery(r.params) ? api.best(bestQuery(r.params)).catch((e) => e) : null,
      api.families()
    ])
  };
  function bestQuery(p) {
    if (!p.get("gpu") || !p.get("shape")) return null;
    const q = { gpu: p.get("gpu"), op: p.get("op") || "gemm", dtype: p.get("dtype") || "bf16", shape: p.get("shape") };
    if (p.get("repo")) q.repo = p.get("repo");
    return q;
  }
  function prefetch(route) {
    const start = first[route.page];
    if (!start) return null;
    const promise = start(route);
    promise.catch(() => {
    });
    return promise;
  }

  // js/boot.js
  window.kportFirst = { hash: window.location.hash, data: prefetch(parseHash()) };
})();
