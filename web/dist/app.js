// Built by web/scripts/bundle.mjs (esbuild) from web/js/; edit those files and run it again.
var __defProp = Object.defineProperty;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __esm = (fn, res, err) => function __init() {
  if (err) throw err[0];
  try {
    return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;
  } catch (e) {
    throw err = [e], e;
  }
};
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};

// js/dom.js
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === void 0 || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}
function append(el, children) {
  for (const child of children) {
    if (child === void 0 || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}
function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}
function setText(el, text) {
  const s = String(text);
  if (el.textContent !== s) el.textContent = s;
}
function fmtNum(v, digits = 2) {
  if (v === null || v === void 0 || Number.isNaN(v)) return "\u2014";
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(1);
  return Number(v.toFixed(digits)).toString();
}
function fmtPct(v) {
  return v === null || v === void 0 ? "\u2014" : `${(v * 100).toFixed(1)}%`;
}
function fmtTime(msOrIso) {
  if (!msOrIso) return "\u2014";
  const d = new Date(msOrIso);
  return Number.isNaN(d.getTime()) ? String(msOrIso) : d.toISOString().replace("T", " ").slice(0, 16) + "Z";
}
function shortSha(sha) {
  return sha ? String(sha).slice(0, 10) : "\u2014";
}
function pageLink(path, params, ...children) {
  return h("a", { href: hashFor(path, params) }, ...children);
}
function hashFor(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== void 0 && v !== null && v !== "") q.set(k, v);
  const qs = q.toString();
  return `#${path}${qs ? `?${qs}` : ""}`;
}
function pendingBadge(label, onApply) {
  let count = 0;
  const el = h("button", { class: "pending", hidden: true, type: "button" });
  el.addEventListener("click", () => {
    count = 0;
    el.hidden = true;
    onApply();
  });
  return {
    el,
    add(n = 1) {
      count += n;
      el.textContent = `${count} new ${label}${count === 1 ? "" : "s"} \u2014 show`;
      el.hidden = false;
    },
    get count() {
      return count;
    }
  };
}
function afterPaint(fn) {
  requestAnimationFrame(() => setTimeout(fn, 0));
}
var init_dom = __esm({
  "js/dom.js"() {
  }
});

// js/router.js
function parseHash(hash = window.location.hash) {
  const raw = hash.replace(/^#/, "") || "/";
  const [path, query = ""] = raw.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] || "overview", arg: parts.slice(1).join("/"), params: new URLSearchParams(query) };
}
function replaceParams(params) {
  const { page, arg } = parseHash();
  const path = page === "overview" ? "/" : `/${page}${arg ? `/${encodeURIComponent(arg)}` : ""}`;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== void 0 && v !== null && v !== "") q.set(k, v);
  const qs = q.toString();
  history.replaceState(null, "", `#${path}${qs ? `?${qs}` : ""}`);
}
var init_router = __esm({
  "js/router.js"() {
  }
});

// js/live.js
function connect(statusEl) {
  if (source) return;
  source = new EventSource("/api/v1/events?topics=results,jobs,pipelines,runners,deliveries");
  const set = (on, text) => {
    statusEl.textContent = text;
    statusEl.classList.toggle("off", !on);
  };
  source.addEventListener("open", () => set(true, "live"));
  source.addEventListener("error", () => set(false, "reconnecting"));
  for (const name of ["pipeline", "job", "results", "runner", "expired", "delivery"]) {
    source.addEventListener(name, (e) => {
      let data = null;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      for (const fn of listeners) fn(name, data);
    });
  }
}
function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
function coalesce(fn, ms = 400) {
  let timer = null;
  let queued = [];
  return (item) => {
    queued.push(item);
    if (timer) return;
    timer = setTimeout(() => {
      const batch = queued;
      queued = [];
      timer = null;
      fn(batch);
    }, ms);
  };
}
var listeners, source;
var init_live = __esm({
  "js/live.js"() {
    listeners = /* @__PURE__ */ new Set();
    source = null;
  }
});

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
async function postAdmin(path) {
  const token = adminToken();
  if (!token) throw new Error('this needs the admin token: enter it under "Admin token"');
  const res = await fetch(new URL(path, window.location.origin), {
    method: "POST",
    headers: { Accept: "application/json", Authorization: `Bearer ${token}` }
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
function adminToken(value) {
  if (value !== void 0) {
    if (value) sessionStorage.setItem("kport.admin", value);
    else sessionStorage.removeItem("kport.admin");
  }
  return sessionStorage.getItem("kport.admin") || "";
}
var api;
var init_api = __esm({
  "js/api.js"() {
    api = {
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
  }
});

// js/prefetch.js
function bestQuery(p) {
  if (!p.get("gpu") || !p.get("shape")) return null;
  const q = { gpu: p.get("gpu"), op: p.get("op") || "gemm", dtype: p.get("dtype") || "bf16", shape: p.get("shape") };
  if (p.get("repo")) q.repo = p.get("repo");
  return q;
}
function prefetch(route) {
  const start2 = first[route.page];
  if (!start2) return null;
  const promise = start2(route);
  promise.catch(() => {
  });
  return promise;
}
var first;
var init_prefetch = __esm({
  "js/prefetch.js"() {
    init_api();
    first = {
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
  }
});

// js/pages/overview.js
var overview_exports = {};
__export(overview_exports, {
  render: () => render
});
function bar(done, total) {
  const fillEl = h("span", { class: "bar-fill" });
  fillEl.style.width = `${total ? Math.round(100 * done / total) : 0}%`;
  return h("span", { class: "bar", title: `${done} of ${total}` }, fillEl, h("span", { class: "bar-text" }, `${done}/${total}`));
}
function targetRows(t) {
  const rows = [];
  const groups = [{ family: "all", ...t.progress }, ...t.families];
  groups.forEach((g, i) => {
    rows.push(h(
      "tr",
      { class: i === 0 ? "target-row" : "family-row", dataset: { key: rowKey(t, g) } },
      i === 0 ? h(
        "th",
        { rowspan: groups.length, scope: "rowgroup" },
        pageLink(`/target/${t.name}`, t.repo ? { repo: t.repo } : null, t.name),
        t.repo ? h("div", { class: "library" }, t.repo) : null,
        h("div", { class: "muted" }, `arch ${t.arch}`),
        t.is_new ? h("span", { class: "tag new" }, "new") : null
      ) : null,
      h("td", {}, g.family === "all" ? h("strong", {}, "all families") : g.family),
      h("td", { class: "num" }, `${g.applicable}/${g.variants}`),
      STAGES.map(([key]) => h("td", { dataset: { stage: key } }, bar(g[key], g.applicable)))
    ));
  });
  return rows;
}
function pipelineRow(p) {
  return h(
    "tr",
    { dataset: { id: p.id } },
    h("td", { class: "num" }, pageLink(`/pipeline/${p.id}`, null, `#${p.id}`)),
    h("td", {}, h("span", { class: `tag st-${p.status}` }, p.status)),
    h("td", {}, p.reason),
    h("td", {}, pageLink(`/commit/${p.commit}`, null, h("code", {}, shortSha(p.commit)))),
    h("td", { class: "num" }, `${p.jobs_done}/${p.jobs_total}`),
    h("td", { class: "muted" }, p.note),
    h("td", { class: "muted" }, fmtTime(p.created))
  );
}
function resultRow(r) {
  return h(
    "tr",
    { dataset: { id: r.id } },
    h("td", { class: "num" }, `#${r.id}`),
    h("td", {}, h("span", { class: `tag st-${r.status}` }, r.status)),
    h("td", {}, pageLink(`/kernel/${r.instance}`, { repo: r.repo, dtype: r.dtype, shape: r.shape }, r.instance)),
    h("td", {}, r.dtype),
    h("td", {}, h("code", {}, r.shape)),
    h("td", {}, r.gpu_model),
    h("td", {}, pageLink(`/target/${r.target}`, null, r.target)),
    h("td", {}, pageLink(`/commit/${r.commit}`, null, h("code", {}, shortSha(r.commit))))
  );
}
async function render(root2, route) {
  const data = await (route.first || api.overview());
  const progressBody = h("tbody", {}, data.targets.map(targetRows));
  const runnersEl = h("p", { class: "summary" });
  const pipelinesBody = h("tbody", {}, data.pipelines.map(pipelineRow));
  const resultsBody = h("tbody", {}, data.results.map(resultRow));
  const paintRunners = (d) => fill(
    runnersEl,
    h("a", { href: "#/runners" }, `${d.runners.online} runners online`),
    ` (${d.runners.online_by_role.gpu || 0} GPU, ${d.runners.online_by_role.build || 0} build; ${d.runners.busy} busy)`,
    ` \xB7 queue: ${Object.entries(d.queue.jobs).filter(([, v]) => v > 0).map(([k, v]) => `${v} ${k.replace("_", " ")}`).join(", ") || "empty"}`
  );
  paintRunners(data);
  const newPipelines = pendingBadge("pipeline", async () => fill(pipelinesBody, (await api.overview()).pipelines.map(pipelineRow)));
  const newResults = pendingBadge("result", async () => fill(resultsBody, (await api.results({ limit: 15 })).items.map(resultRow)));
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, "Bring-up overview"),
    runnersEl,
    h(
      "table",
      { class: "grid progress", id: "progress" },
      h("thead", {}, h(
        "tr",
        {},
        h("th", {}, "target"),
        h("th", {}, "family"),
        h("th", {}, "applicable"),
        STAGES.map(([, label]) => h("th", {}, label))
      )),
      progressBody
    ),
    h("h2", {}, "Recent pipelines ", newPipelines.el),
    h(
      "table",
      { class: "grid", id: "pipelines" },
      h("thead", {}, h("tr", {}, ["id", "status", "reason", "commit", "jobs done", "note", "created"].map((t) => h("th", {}, t)))),
      pipelinesBody
    ),
    h("h2", {}, "Latest results ", newResults.el),
    h(
      "table",
      { class: "grid", id: "results" },
      h("thead", {}, h("tr", {}, ["id", "status", "instance", "dtype", "shape", "GPU", "target", "commit"].map((t) => h("th", {}, t)))),
      resultsBody
    )
  );
  const refresh = coalesce(async () => {
    const d = await api.overview();
    paintRunners(d);
    for (const t of d.targets) {
      for (const g of [{ family: "all", ...t.progress }, ...t.families]) {
        const row2 = progressBody.querySelector(`tr[data-key="${CSS.escape(rowKey(t, g))}"]`);
        if (!row2) continue;
        for (const [key] of STAGES) {
          const cell = row2.querySelector(`td[data-stage="${key}"]`);
          const pct = g.applicable ? Math.round(100 * g[key] / g.applicable) : 0;
          cell.querySelector(".bar-fill").style.width = `${pct}%`;
          setText(cell.querySelector(".bar-text"), `${g[key]}/${g.applicable}`);
        }
      }
    }
  }, 500);
  return {
    onEvent(name, payload) {
      if (name === "pipeline") newPipelines.add(1);
      if (name === "results") newResults.add(payload.ids ? payload.ids.length : 1);
      refresh(name);
    }
  };
}
var STAGES, rowKey;
var init_overview = __esm({
  "js/pages/overview.js"() {
    init_dom();
    init_api();
    init_live();
    STAGES = [
      ["builds", "builds"],
      ["numerics_passed", "numerics pass"],
      ["measured", "measured"],
      ["selected_best", "selected"]
    ];
    rowKey = (t, g) => `${t.name}/${t.repo || ""}/${g.family}`;
  }
});

// js/pages/shared.js
function facts(id, rows) {
  return h("dl", { class: "facts", id }, rows.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}
function rawLink(path) {
  return h("p", { class: "muted raw" }, "The API answer behind this page: ", h("a", { href: path, id: "raw-json" }, path));
}
function missing(root2, what, err) {
  if (err.status !== 404 && err.status !== 400) throw err;
  fill(
    root2,
    h("h1", { elementtiming: "kport-data", id: "not-found" }, `${what} not found`),
    h("p", { class: "error" }, err.message),
    h("p", {}, h("a", { href: "#/" }, "Back to the overview"))
  );
  return null;
}
function withOrigin(command) {
  return command ? command.split("${KPORT_SERVER:-http://127.0.0.1:8080}").join(window.location.origin) : command;
}
function shardText(j) {
  const s = j.payload && j.payload.shard;
  if (!s) return "";
  const named = j.payload.families || [];
  const which = named.length ? named.join(", ") : `every family but ${(j.payload.families_except || []).join(", ")}`;
  return `part ${s.index + 1} of ${s.count}: ${which}`;
}
var init_shared = __esm({
  "js/pages/shared.js"() {
    init_dom();
  }
});

// js/pages/target.js
var target_exports = {};
__export(target_exports, {
  render: () => render2
});
function figure(stage, c) {
  switch (stage) {
    case "build":
      return c.status || "not built";
    case "resources":
      return c.registers != null ? `${c.registers} regs \xB7 ${c.spill_bytes || 0} B spill` : "\u2014";
    case "numerics":
      return `${c.passed} pass \xB7 ${c.failed} fail`;
    case "timing":
      return c.max_ratio != null ? `${c.measured} timed \xB7 up to \xD7${fmtNum(c.max_ratio)} vs baseline` : `${c.measured} timed`;
    case "selected":
      return c.count ? `best on ${c.count}` : c.state === "none" ? "fastest at no measured shape" : "\u2014";
    default:
      return "";
  }
}
function cellId(v, stage) {
  return `${v.family}.${v.variant}:${stage}`;
}
function evidenceBlock(title, e, repo) {
  if (!e) return null;
  return h(
    "div",
    { class: "evidence" },
    h("h4", {}, title, " ", pageLink(`/result/${e.id}`, null, `result #${e.id}`)),
    h(
      "dl",
      {},
      h("dt", {}, "instance"),
      h("dd", {}, pageLink(`/kernel/${e.instance}`, { repo, dtype: e.dtype, shape: e.shape }, e.instance)),
      h("dt", {}, "dtype / shape"),
      h("dd", {}, `${e.dtype} \xB7 `, h("code", {}, e.shape)),
      h("dt", {}, "GPU"),
      h("dd", {}, `${e.gpu_model} (driver ${e.driver || "\u2014"})`),
      h("dt", {}, "commit"),
      h("dd", {}, pageLink(`/commit/${e.commit}`, null, h("code", {}, shortSha(e.commit)))),
      h("dt", {}, "status"),
      h("dd", {}, e.status, e.message ? h("pre", { class: "log" }, e.message) : null),
      h("dt", {}, "numerics"),
      h("dd", {}, `max abs ${fmtNum(e.max_abs_err, 6)} \xB7 normwise ${fmtNum(e.normwise_rel_err, 6)} \xB7 tol ${fmtNum(e.tolerance, 6)}`),
      h("dt", {}, "timing"),
      h("dd", {}, `median ${fmtNum(e.median_us)} \xB5s \xB1 ${fmtNum(e.stddev_us)} (${e.samples ?? "\u2014"} samples) \xB7 ${e.baseline || "baseline"} ratio \xD7${fmtNum(e.ratio)}`)
    ),
    h("p", {}, "Reproduce:"),
    h("pre", { class: "cmd" }, withOrigin(e.command))
  );
}
function detail(target, v, stage, repo) {
  const c = v.cells[stage];
  const parts = [h(
    "h3",
    {},
    `${v.family}.${v.variant} \u2014 ${STAGES2.find(([s]) => s === stage)[1]}: `,
    h("span", { class: `tag cell-${c.state}` }, c.state)
  )];
  if (stage === "build" || stage === "resources") {
    const b = v.cells.build;
    const r = v.cells.resources;
    parts.push(h(
      "dl",
      {},
      h("dt", {}, "build"),
      h(
        "dd",
        {},
        b.status || "no build record yet",
        b.record ? h("span", { class: "muted" }, " (", pageLink(`/build/${b.record}`, null, `record #${b.record}`), ", commit ", pageLink(`/commit/${b.commit}`, null, shortSha(b.commit)), ")") : null
      ),
      h("dt", {}, "resources"),
      h("dd", {}, `registers ${r.registers ?? "\u2014"} \xB7 spills ${r.spill_bytes ?? "\u2014"} B \xB7 shared memory ${r.shared_mem_bytes ?? "\u2014"} B`),
      h("dt", {}, "build log"),
      h("dd", {}, b.job ? pageLink(`/job/${b.job}`, null, `job #${b.job} and its log`) : "\u2014"),
      h("dt", {}, "records"),
      h("dd", {}, b.record ? pageLink(`/build/${b.record}`, null, "this record and the earlier ones") : "\u2014")
    ));
    parts.push(h("p", {}, "Reproduce:"), h("pre", { class: "cmd" }, b.command));
  } else if (stage === "numerics") {
    parts.push(evidenceBlock("Latest pass", c.evidence, repo), evidenceBlock("Latest failure", c.failure, repo));
  } else {
    parts.push(evidenceBlock("Evidence", v.cells.timing.evidence, repo));
  }
  if (parts.length === 1 || parts.slice(1).every((p) => !p)) parts.push(h("p", { class: "muted" }, "No evidence yet."));
  return parts;
}
function burndown(container, data) {
  if (!data.burndown.length) {
    fill(container, h("p", { class: "muted" }, "No progress recorded yet."));
    return;
  }
  const total = data.progress.applicable;
  const x = data.burndown.map((p) => p.time_ms / 1e3);
  const series = [["builds", "to build"], ["numerics_passed", "to pass numerics"], ["measured", "to measure"]].map(([key, label]) => ({ label, step: true, values: data.burndown.map((p) => total - p[key]) }));
  return import("/static/js/chart.js").then(({ lineChart }) => {
    container.replaceChildren();
    lineChart(container, { title: "Burndown: variants still to reach each stage", yLabel: "variants", x, series });
  });
}
async function render2(root2, route) {
  const name = route.arg;
  const repo = route.params.get("repo") || "";
  let data = await (route.first || api.target(name, repo));
  let selected = route.params.get("cell") || "";
  const panel = h("div", { class: "panel", id: "cell-detail" });
  const chart = h("div", { class: "chart", id: "burndown" });
  const body = h("tbody");
  const summary = h("p", { class: "summary" });
  const paint2 = () => {
    const p = data.progress;
    const others = (data.repositories || []).filter((r) => r !== data.repo);
    fill(
      summary,
      data.repo ? h("span", { id: "library" }, "library ", h("strong", {}, data.repo), " \xB7 ") : null,
      others.length ? h(
        "span",
        { id: "other-libraries" },
        "also built here: ",
        others.map((r, i) => [i ? ", " : "", h("a", { href: hashFor(`/target/${name}`, { repo: r }) }, r)]),
        " \xB7 "
      ) : null,
      `arch ${data.target.arch} \xB7 checked on ${data.check_arches.join(", ")} \xB7 `,
      data.commit ? h("span", { id: "stage-commit" }, "at ", pageLink(`/commit/${data.commit}`, null, h("code", {}, shortSha(data.commit)))) : h("span", { id: "stage-commit" }, "not built yet: the planner's view"),
      ` \xB7 ${p.builds}/${p.applicable} build \xB7 ${p.numerics_passed} pass numerics \xB7 ${p.measured} measured \xB7 ${p.selected_best} selected`
    );
    fill(body, data.variants.map((v) => h(
      "tr",
      { dataset: { variant: `${v.family}.${v.variant}`, stage: v.stage } },
      h("th", { scope: "row", title: v.reason || v.stage.replace(/_/g, " ") }, `${v.family}.${v.variant}`),
      STAGES2.map(([stage]) => {
        const c = v.cells[stage];
        const id = cellId(v, stage);
        return h(
          "td",
          { class: `cell cell-${c.state}${id === selected ? " selected" : ""}` },
          h(
            "a",
            {
              href: hashFor(`/target/${name}`, { repo, cell: id }),
              dataset: { cell: id },
              onclick: (e) => {
                e.preventDefault();
                select(id);
              }
            },
            h("span", { class: "state" }, c.state),
            h("span", { class: "fig" }, figure(stage, c))
          )
        );
      })
    )));
    paintDetail();
  };
  const paintDetail = () => {
    const [key, stage] = selected.split(":");
    const v = data.variants.find((x) => `${x.family}.${x.variant}` === key);
    if (!v || !stage || !v.cells[stage]) {
      fill(panel, h("p", { class: "muted" }, "Choose a cell to see its evidence and the command that reproduces it."));
      return;
    }
    fill(panel, detail(name, v, stage, data.repo));
  };
  const select = (id) => {
    selected = id;
    replaceParams({ repo, cell: id });
    for (const td of body.querySelectorAll("td.selected")) td.classList.remove("selected");
    const a = body.querySelector(`a[data-cell="${CSS.escape(id)}"]`);
    if (a) a.parentElement.classList.add("selected");
    paintDetail();
  };
  paint2();
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, `Target ${data.target.name}`, data.target.is_new ? h("span", { class: "tag new" }, "new") : null),
    summary,
    h(
      "div",
      { class: "split" },
      h(
        "table",
        { class: "grid matrix", id: "matrix" },
        h("thead", {}, h("tr", {}, h("th", {}, "variant"), STAGES2.map(([, label]) => h("th", {}, label)))),
        body
      ),
      panel
    ),
    chart,
    h("p", { class: "muted" }, "Updated ", h("span", { id: "updated" }, fmtTime(Date.now())))
  );
  afterPaint(() => burndown(chart, data));
  const refresh = coalesce(async () => {
    data = await api.target(name, repo);
    paint2();
    const u = root2.querySelector("#updated");
    if (u) u.textContent = fmtTime(Date.now());
  }, 600);
  return {
    onEvent(ev) {
      if (ev === "results" || ev === "job") refresh(ev);
    }
  };
}
var STAGES2;
var init_target = __esm({
  "js/pages/target.js"() {
    init_dom();
    init_api();
    init_live();
    init_router();
    init_shared();
    STAGES2 = [
      ["build", "builds"],
      ["resources", "resources clean"],
      ["numerics", "numerics pass"],
      ["timing", "measured"],
      ["selected", "selected best"]
    ];
  }
});

// js/pages/commit.js
var commit_exports = {};
__export(commit_exports, {
  render: () => render3
});
function verdictBox(v) {
  const list = (cls, items, item) => items.length ? h("ul", { class: cls }, items.map(item)) : null;
  return h(
    "section",
    { class: `verdict verdict-${v.status}`, id: "verdict", dataset: { status: v.status } },
    h(
      "h2",
      {},
      "Verdict: ",
      h("span", { class: `tag verdict-${v.status}`, id: "verdict-status" }, v.status),
      " ",
      h("span", { class: "muted" }, v.baseline ? ["against ", pageLink(`/commit/${v.baseline}`, null, h("code", {}, shortSha(v.baseline)))] : "no validated ancestor to compare with")
    ),
    list("reasons", v.reasons, (r) => h(
      "li",
      { class: `reason reason-${r.kind}` },
      h("span", { class: `tag reason-${r.kind}` }, REASON[r.kind] || r.kind),
      " ",
      r.message
    )),
    list("waiting", v.waiting, (w) => h("li", { class: "muted" }, "waiting: ", w)),
    list("notes", v.notes, (n) => h("li", { class: "muted" }, "not counted: ", n)),
    list("insufficient", v.insufficient_data || [], (u) => h(
      "li",
      { class: "muted" },
      "not judged: ",
      `${u.instance} ${u.dtype} ${u.shape} on ${u.target} / ${u.gpu_model} changed ${fmtPct(u.change)}; ${u.summary}`
    )),
    list("flaky", v.flaky || [], (f) => h(
      "li",
      { class: "muted" },
      "flaky, not counted: ",
      `${f.instance} ${f.dtype} ${f.shape} on ${f.gpu_model} ${f.status} (seed ${f.seed ?? "\u2014"}; ${f.failures} of ${f.runs} runs failed)`
    )),
    list("infrastructure", v.infrastructure || [], (i) => h("li", { class: "muted" }, "machine, not code: ", i.message)),
    !v.reasons.length && v.status === "pass" ? h("p", { class: "muted" }, "Nothing this commit changed counts against it.") : null
  );
}
function bisectionItem(b, sha) {
  const at = (x) => x ? pageLink(`/commit/${x}`, null, h("code", {}, shortSha(x))) : "\u2014";
  const role = b.first_bad === sha ? "first bad commit" : b.bad === sha ? "bad end" : b.good === sha ? "good end" : "probed";
  return h(
    "li",
    { class: `bisection bisection-${b.state}`, dataset: { id: String(b.id), cause: b.cause || "" } },
    h("span", { class: `tag bisection-${b.state}` }, b.state),
    " ",
    `${BISECT[b.kind] || b.kind} on ${b.target}${b.gpu_model ? ` / ${b.gpu_model}` : ""} (${b.origin}, ${role}): `,
    at(b.good),
    " \u2026 ",
    at(b.bad),
    " \xB7 ",
    b.first_bad ? h("span", { class: "first-bad" }, "first bad ", at(b.first_bad)) : null,
    b.effect != null ? ` \xB7 effect ${fmtPct(b.effect)} \xB1 ${fmtPct(b.uncertainty)}` : "",
    b.cause ? [" \xB7 cause ", h("span", { class: `tag cause-${b.cause}` }, b.cause)] : "",
    h(
      "div",
      { class: "muted" },
      `${b.summary} (${b.probes.length} probes, `,
      pageLink(`/bisection/${b.id}`, null, "details"),
      ")"
    )
  );
}
function bisectionsBox(list, sha) {
  if (!list || !list.length) return null;
  return h(
    "section",
    { class: "bisections", id: "bisections" },
    h("h2", {}, "Bisections"),
    h("ul", {}, list.map((b) => bisectionItem(b, sha)))
  );
}
function side(s) {
  if (!s) return "\u2014";
  return s.status === "passed" ? `${fmtNum(s.median_us)} \xB5s \xB1 ${fmtNum(s.stddev_us)}` : s.status;
}
function changeRow(c) {
  return h(
    "tr",
    { class: `kind-${c.kind}` },
    h("td", {}, h("span", { class: `tag kind-${c.kind}` }, LABEL[c.kind])),
    h("td", {}, pageLink(`/kernel/${c.instance}`, { repo: c.repo, dtype: c.dtype, shape: c.shape }, c.instance)),
    h("td", {}, c.dtype),
    h("td", {}, h("code", {}, c.shape)),
    h("td", { class: "num" }, c.before ? pageLink(`/result/${c.before.id}`, null, side(c.before)) : "\u2014"),
    h("td", { class: "num" }, pageLink(`/result/${c.after.id}`, null, side(c.after))),
    h("td", { class: "num" }, c.delta ? `${c.delta > 0 ? "+" : ""}${fmtPct(c.delta)}` : "")
  );
}
function group(g, kind) {
  const changes = g.changes.filter((c) => !kind || c.kind === kind);
  return h(
    "section",
    { class: "group", dataset: { target: g.target, gpu: g.gpu_model } },
    h("h2", {}, pageLink(`/target/${g.target}`, null, g.target), ` on ${g.gpu_model}`),
    h("p", { class: "counts" }, Object.entries(g.counts).filter(([, n]) => n > 0).map(([k, n]) => h("span", { class: `tag kind-${k}` }, `${n} ${LABEL[k]}`))),
    changes.length ? h(
      "table",
      { class: "grid" },
      h("thead", {}, h("tr", {}, ["change", "instance", "dtype", "shape", "baseline", "this commit", "\u0394 time"].map((t) => h("th", {}, t)))),
      h("tbody", {}, changes.map(changeRow))
    ) : h("p", { class: "muted" }, "No changes."),
    g.truncated ? h("p", { class: "muted" }, "Showing the first changes only.") : null
  );
}
function pipelinesBox(page) {
  if (!page || !page.items.length) return h("p", { class: "muted" }, "No pipeline validated this commit.");
  return h(
    "table",
    { class: "grid", id: "commit-pipelines" },
    h("thead", {}, h("tr", {}, ["pipeline", "state", "reason", "jobs", "created"].map((t) => h("th", {}, t)))),
    h("tbody", {}, page.items.map((p) => h(
      "tr",
      { dataset: { id: p.id } },
      h("td", { class: "num" }, pageLink(`/pipeline/${p.id}`, null, `#${p.id}`)),
      h("td", {}, h("span", { class: `tag st-${p.status}` }, p.status)),
      h("td", {}, p.reason, p.ref ? h("span", { class: "muted" }, ` ${p.ref}`) : null),
      h("td", { class: "num" }, `${p.jobs_done}/${p.jobs_total}`),
      h("td", { class: "muted" }, fmtTime(p.created))
    )))
  );
}
async function render3(root2, route) {
  const sha = route.arg;
  let kind = route.params.get("kind") || "";
  const pipelines = api.pipelines({ commit: sha, limit: 20 }).catch(() => null);
  let data = await (route.first || api.commit(sha));
  const groupsEl = h("div", { id: "groups" });
  const filter = h(
    "select",
    { id: "kind", onchange: () => {
      kind = filter.value;
      replaceParams({ kind });
      paint2();
    } },
    h("option", { value: "" }, "every change"),
    KINDS.map((k) => h("option", { value: k, selected: k === kind }, LABEL[k]))
  );
  const paint2 = () => fill(groupsEl, data.groups.length ? data.groups.map((g) => group(g, kind)) : h("p", { class: "muted" }, "No results for this commit yet."));
  const verdictEl = h("div", { id: "verdict-box" }, verdictBox(data.verdict));
  const pipelinesEl = h("div", { id: "pipelines-box" }, pipelinesBox(await pipelines));
  const fresh = pendingBadge("result", async () => {
    data = await api.commit(sha);
    fill(verdictEl, verdictBox(data.verdict));
    paint2();
  });
  const c = data.commit;
  const t = data.totals;
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, "Commit ", h("code", {}, shortSha(c.sha))),
    h("pre", { class: "message", id: "commit-message" }, c.message || ""),
    h(
      "p",
      { class: "summary" },
      `${c.author || "unknown author"} \xB7 ${fmtTime(c.time)} \xB7 parent `,
      data.parent ? pageLink(`/commit/${data.parent}`, null, h("code", {}, shortSha(data.parent))) : "none",
      ` \xB7 ${data.results} result keys here, ${data.baseline_results} on the baseline`
    ),
    verdictEl,
    h("h2", {}, "Pipelines"),
    pipelinesEl,
    bisectionsBox(data.bisections, c.sha),
    h("p", { class: "counts", id: "totals" }, KINDS.map((k) => h("span", { class: `tag kind-${k}` }, `${t[k]} ${LABEL[k]}`))),
    h("p", {}, h("label", {}, "Show ", filter), " ", fresh.el, h("span", { class: "muted" }, ` Rule: ${data.rule}.`)),
    groupsEl
  );
  paint2();
  const refreshPipelines = coalesce(async () => fill(pipelinesEl, pipelinesBox(await api.pipelines({ commit: sha, limit: 20 }))), 600);
  return {
    onEvent(ev, payload) {
      if (ev === "results") fresh.add(payload.ids ? payload.ids.length : 1);
      if (ev === "job" || ev === "pipeline") refreshPipelines(ev);
    }
  };
}
var KINDS, LABEL, REASON, BISECT;
var init_commit = __esm({
  "js/pages/commit.js"() {
    init_dom();
    init_api();
    init_router();
    init_live();
    KINDS = ["new_failure", "regressed", "fixed", "improved", "unstable", "insufficient_data", "still_failing"];
    LABEL = {
      new_failure: "new failure",
      regressed: "regressed",
      fixed: "fixed",
      improved: "improved",
      unstable: "unstable",
      insufficient_data: "too little history",
      still_failing: "still failing",
      unchanged: "unchanged",
      added: "new key",
      dropped: "not rerun"
    };
    REASON = {
      build_failure: "build failure",
      job_failure: "job failure",
      numerics_failure: "numerics failure",
      perf_regression: "slower",
      resource_regression: "resources"
    };
    BISECT = { perf_regression: "slowdown", numerics_failure: "numerics failure", build_failure: "build failure" };
  }
});

// js/pages/kernel.js
var kernel_exports = {};
__export(kernel_exports, {
  render: () => render4
});
function pointAt(s, i) {
  return Object.fromEntries(Object.entries(s.points).map(([key, column]) => [key, column[i]]));
}
function charts(container, data, lineChart) {
  container.replaceChildren();
  const times = [...new Set(data.series.flatMap((s) => s.points.time_ms))].sort((a, b) => a - b);
  const at = (s, key) => {
    const byTime = new Map(s.points.time_ms.map((t, i) => [t, s.points[key][i]]));
    return times.map((t) => byTime.has(t) ? byTime.get(t) : null);
  };
  const x = times.map((t) => t / 1e3);
  const shareEl = h("div", { class: "chart", id: "chart-share" });
  const ratioEl = h("div", { class: "chart", id: "chart-ratio" });
  const timeEl = h("div", { class: "chart", id: "chart-time" });
  container.append(shareEl, ratioEl, timeEl);
  const unit = data.series[0] ? data.series[0].unit : "";
  lineChart(shareEl, {
    title: `Share of the GPU's measured peak ${unit}`,
    yLabel: "share",
    x,
    series: data.series.map((s) => ({ label: s.gpu_model, values: at(s, "share"), low: at(s, "share_low"), high: at(s, "share_high") }))
  });
  if (data.series.some((s) => s.points.ratio.some((r) => r != null))) {
    lineChart(ratioEl, {
      title: "Ratio to the vendor baseline (higher is faster)",
      yLabel: "ratio",
      x,
      series: data.series.map((s) => ({ label: s.gpu_model, values: at(s, "ratio") }))
    });
  } else {
    ratioEl.classList.add("empty");
    fill(ratioEl, h("p", { class: "muted" }, "No vendor baseline was timed beside this configuration: no ratio to show."));
  }
  lineChart(timeEl, {
    title: "Median time with noise band (\xB5s)",
    yLabel: "\xB5s",
    x,
    series: data.series.map((s) => ({ label: s.gpu_model, values: at(s, "median_us"), low: at(s, "low_us"), high: at(s, "high_us") }))
  });
}
function table(data) {
  return h(
    "table",
    { class: "grid", id: "latest" },
    h("thead", {}, h("tr", {}, ["GPU", "measured peak", "latest commit", "median \xB5s", "band \xB5s", "share of peak", "ratio", "points"].map((t) => h("th", {}, t)))),
    h("tbody", {}, data.series.map((s) => {
      const n = s.points.time_ms.length;
      const p = pointAt(s, n - 1);
      return h(
        "tr",
        { dataset: { gpu: s.gpu_model } },
        h("td", {}, s.gpu_model),
        h("td", { class: "num" }, s.peak != null ? `${fmtNum(s.peak)} ${s.unit}` : "\u2014"),
        h("td", {}, h("a", { href: hashFor(`/commit/${p.commit}`) }, h("code", {}, shortSha(p.commit)))),
        h("td", { class: "num" }, h("a", { href: hashFor(`/result/${p.result}`) }, fmtNum(p.median_us))),
        h("td", { class: "num" }, `${fmtNum(p.low_us)}\u2013${fmtNum(p.high_us)}`),
        h("td", { class: "num" }, fmtPct(p.share)),
        h("td", { class: "num" }, p.ratio != null ? `\xD7${fmtNum(p.ratio)}` : "\u2014"),
        h("td", { class: "num" }, String(n))
      );
    }))
  );
}
function noiseTable(data) {
  if (!data.noise || !data.noise.length) return h("p", { class: "muted" }, "No A/A history of this configuration yet.");
  return h(
    "table",
    { class: "grid", id: "noise" },
    h("thead", {}, h("tr", {}, ["GPU", "driver", "A/A \u03C3", "detects (MDE)", "A/A degrees", "figures"].map((t) => h("th", {}, t)))),
    h("tbody", {}, data.noise.map((n) => h(
      "tr",
      { dataset: { gpu: n.gpu_model, status: n.status } },
      h("td", {}, n.gpu_model),
      h("td", {}, n.driver),
      h("td", { class: "num" }, n.sigma != null ? fmtPct(n.sigma) : "\u2014"),
      h("td", { class: "num" }, n.mde != null ? fmtPct(n.mde) : `insufficient data (${n.needed} more)`),
      h("td", { class: "num" }, String(n.degrees)),
      h("td", { class: "num" }, String(n.figures))
    )))
  );
}
function libraryLine(instance, data) {
  const others = (data.libraries || []).filter((r) => r !== data.repo);
  const name = (r) => r || "(no library)";
  return [
    data.repo ? h(
      "span",
      { id: "library" },
      "library ",
      h("a", { href: hashFor(`/kernel/${instance}`, { repo: data.repo, dtype: data.dtype, shape: data.shape }) }, h("strong", {}, data.repo)),
      " \xB7 "
    ) : null,
    others.length ? h(
      "span",
      { id: "other-libraries" },
      "also published by: ",
      others.map((r, i) => [i ? ", " : "", h("a", { href: hashFor(`/kernel/${instance}`, { repo: r }), dataset: { repo: r } }, name(r))]),
      " \xB7 "
    ) : null
  ];
}
async function render4(root2, route) {
  const instance = route.arg;
  const asked = route.params.get("repo") || "";
  let data = await (route.first || api.kernel(instance, route.params.get("dtype"), route.params.get("shape"), asked));
  const chartsEl = h("div", { id: "charts" });
  const tableEl = h("div");
  const choose = h("select", { id: "config", onchange: () => {
    const [dtype, shape] = choose.value.split("|");
    window.location.hash = hashFor(`/kernel/${instance}`, { repo: asked || data.repo, dtype, shape });
  } }, data.configs.map((c) => h("option", { value: `${c.dtype}|${c.shape}`, selected: c.dtype === data.dtype && c.shape === data.shape }, `${c.dtype} \xB7 ${c.shape}`)));
  const noiseEl = h("div");
  const paint2 = () => {
    fill(tableEl, data.series.length ? table(data) : h("p", { class: "muted" }, "No passing measurement of this configuration yet."));
    fill(noiseEl, noiseTable(data));
    const shown = data;
    if (data.series.length) afterPaint(() => import("/static/js/chart.js").then(({ lineChart }) => charts(chartsEl, shown, lineChart)));
  };
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, `Kernel ${instance}`),
    h("p", { class: "summary" }, ...libraryLine(instance, data), `${data.family} \xB7 variant ${data.variant} \xB7 `, h("label", {}, "configuration ", choose)),
    tableEl,
    h("h2", {}, "Noise and minimum detectable effect"),
    noiseEl,
    chartsEl,
    h("p", { class: "muted" }, `Peak: ${data.peak_rule}. Band: median \xB1 standard deviation of the results at that commit.`)
  );
  paint2();
  const refresh = coalesce(async () => {
    data = await api.kernel(instance, data.dtype, data.shape, asked || data.repo);
    paint2();
  }, 1e3);
  return { onEvent(ev) {
    if (ev === "results") refresh(ev);
  } };
}
var init_kernel = __esm({
  "js/pages/kernel.js"() {
    init_dom();
    init_api();
    init_live();
  }
});

// js/pages/runners.js
var runners_exports = {};
__export(runners_exports, {
  render: () => render5
});
function row(r) {
  const c = r.capabilities;
  const job = r.job;
  return h(
    "tr",
    { dataset: { id: r.id }, class: r.online ? "online" : "offline" },
    h("td", {}, r.name),
    h("td", {}, r.role),
    h("td", {}, h("span", { class: `tag ${r.online ? "st-succeeded" : "st-failed"}` }, r.online ? "online" : r.deregistered ? "left" : "offline")),
    h("td", {}, r.role === "gpu" ? c.gpu_model : `${c.cores || "?"} cores`),
    h("td", {}, r.role === "gpu" ? c.arch : (c.targets || []).join(" ")),
    h("td", {}, r.role === "gpu" ? c.driver : c.toolkit ? `CUDA ${c.toolkit}` : ""),
    h("td", {}, job ? [pageLink(`/job/${job.id}`, null, `#${job.id}`), ` ${job.kind} ${job.target} `, pageLink(`/commit/${job.commit}`, null, h("code", {}, shortSha(job.commit))), ` (${job.status})`] : h("span", { class: "muted" }, "idle")),
    h("td", { class: "muted" }, fmtTime(r.last_heartbeat))
  );
}
async function render5(root2, route) {
  const all = route.params.get("all") === "1";
  let data = await (route.first || api.runners(all));
  const body = h("tbody");
  const paint2 = () => fill(body, data.items.length ? data.items.map(row) : h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No runners registered.")));
  paint2();
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, "Runners"),
    h(
      "p",
      { class: "summary" },
      `${data.items.filter((r) => r.online).length} online of ${data.items.length} \xB7 `,
      h("a", { href: all ? "#/runners" : "#/runners?all=1" }, all ? "hide runners that left" : "include runners that left")
    ),
    h(
      "table",
      { class: "grid", id: "runners" },
      h("thead", {}, h("tr", {}, ["name", "role", "state", "GPU / cores", "arch / targets", "driver / toolkit", "current job", "last heard"].map((t) => h("th", {}, t)))),
      body
    )
  );
  const refresh = coalesce(async () => {
    data = await api.runners(all);
    paint2();
  }, 500);
  return { onEvent(ev) {
    if (ev === "runner" || ev === "job" || ev === "expired") refresh(ev);
  } };
}
var init_runners = __esm({
  "js/pages/runners.js"() {
    init_dom();
    init_api();
    init_live();
  }
});

// js/pages/best.js
var best_exports = {};
__export(best_exports, {
  render: () => render6
});
function heading(a) {
  if (a.best) return h("h2", {}, [
    a.kind === "measured" ? "Best: " : "Provisional best: ",
    pageLink(`/kernel/${a.best}`, { repo: a.query.repo, dtype: a.query.dtype, shape: a.matched_shape || a.query.shape }, a.best)
  ]);
  return h("h2", {}, a.kind === "unranked" ? "No best yet: unranked" : "No answer");
}
function answer(a) {
  const ev = a.evidence;
  const moved = a.ranked_by === "estimate_us";
  return [
    heading(a),
    h(
      "p",
      { class: "summary" },
      h("span", { class: `tag ${KIND_TAG[a.kind] || "st-queued"}` }, a.kind),
      a.ranked_by ? ` ${rankedBy(a)}.` : "",
      a.reason ? ` ${a.reason}` : ""
    ),
    h(
      "p",
      { class: "muted" },
      a.query.repo ? h("span", { id: "answer-library" }, `library ${a.query.repo} \xB7 `) : "",
      `shape ${a.matched_shape || "\u2014"}${a.matched_shape ? a.exact_shape ? " (exact)" : " (nearest measured)" : ""}`,
      ev ? ` \xB7 evidence from ${ev.gpu_model}, commit ` : "",
      ev ? pageLink(`/commit/${ev.commit}`, null, h("code", {}, shortSha(ev.commit))) : "",
      ev ? ` \xB7 driver ${ev.driver} \xB7 ${ev.samples} samples \xB7 ${fmtTime(ev.measured)}` : "",
      a.candidates_from ? ` \xB7 candidates: instances that ${a.candidates_from}` : "",
      a.tied.length > 1 ? ` \xB7 tied: ${a.tied.join(", ")}` : ""
    ),
    a.notes.length ? h("ul", { class: "notes", id: "answer-notes" }, a.notes.map((n) => h("li", {}, n))) : "",
    h(
      "table",
      { class: "grid", id: "ranking" },
      h("thead", {}, h("tr", {}, [
        "rank",
        "instance",
        "variant",
        "tie",
        "slowdown",
        ...moved ? ["estimate \xB5s here", "median \xB5s there"] : ["median \xB5s"],
        "vs baseline",
        "samples",
        "GPU",
        "commit",
        "measured",
        "evidence"
      ].map((t) => h("th", {}, t)))),
      h("tbody", {}, a.ranking.map((r, i) => {
        const e = r.evidence;
        return h(
          "tr",
          {},
          h("td", { class: "num" }, r.ranked ? String(i + 1) : "\u2014"),
          h("td", {}, r.instance),
          h("td", {}, r.variant),
          h("td", {}, r.tie_with_best ? "tie" : ""),
          h("td", { class: "num" }, r.ranked ? `\xD7${fmtNum(r.slowdown)}` : "\u2014"),
          moved ? h("td", { class: "num estimate" }, r.estimate_us != null ? fmtNum(r.estimate_us) : "\u2014") : null,
          h("td", { class: "num" }, e && e.median_us ? `${fmtNum(e.median_us)} \xB1 ${fmtNum(e.stddev_us)}${e.unstable ? " (unstable)" : ""}` : "\u2014"),
          h("td", { class: "num" }, e && e.ratio ? `\xD7${fmtNum(e.ratio)}` : "\u2014"),
          h("td", { class: "num" }, e ? String(e.samples) : "\u2014"),
          h("td", {}, e ? e.gpu_model : "\u2014"),
          h("td", {}, e ? pageLink(`/commit/${e.commit}`, null, h("code", {}, shortSha(e.commit))) : "\u2014"),
          h("td", {}, e ? fmtTime(e.measured) : "\u2014"),
          h("td", {}, e ? pageLink(`/result/${e.result}`, null, `result #${e.result}`) : "not measured")
        );
      }))
    ),
    a.excluded.length ? [
      h("h3", {}, "Out of the ranking"),
      h(
        "table",
        { class: "grid", id: "excluded" },
        h("thead", {}, h("tr", {}, ["instance", "why", "evidence"].map((t) => h("th", {}, t)))),
        h("tbody", {}, a.excluded.map((x) => h(
          "tr",
          {},
          h("td", {}, x.instance),
          h("td", {}, x.reason),
          h("td", {}, x.evidence ? pageLink(`/result/${x.evidence.result}`, null, `result #${x.evidence.result}`) : "\u2014")
        )))
      )
    ] : ""
  ];
}
async function render6(root2, route) {
  const p = route.params;
  const [gpus, first2, known] = await (route.first || Promise.all([
    api.gpus(),
    bestQuery(p) ? api.best(bestQuery(p)).catch((e) => e) : null,
    api.families()
  ]));
  const families = known.families;
  const familyOf = (name) => families.find((f) => f.name === name);
  const out = h("div", { id: "answer" });
  const field = (label, input) => h("label", {}, h("span", {}, label), input);
  const gpu = h("select", { name: "gpu" }, gpus.items.map((g) => h("option", { value: g.name, selected: g.name === p.get("gpu") }, `${g.name} (${g.arch})`)));
  const op = h("select", { name: "op" }, families.map((f) => h("option", { value: f.name, selected: f.name === p.get("op"), title: f.description }, f.name)));
  const dtypeOptions = (f, want) => (f ? f.dtypes : []).map((d) => h("option", { value: d, selected: d === want }, d));
  const dtype = h("select", { name: "dtype" }, dtypeOptions(familyOf(op.value), p.get("dtype")));
  const shape = h("input", { name: "shape", size: 36, value: p.get("shape") || exampleShape(familyOf(op.value)), required: true });
  const repo = h("input", { name: "repo", size: 16, value: p.get("repo") || "", placeholder: "any" });
  op.addEventListener("change", () => {
    const f = familyOf(op.value);
    fill(dtype, dtypeOptions(f, dtype.value));
    shape.value = exampleShape(f);
  });
  const ask = async () => {
    const q = { gpu: gpu.value, op: op.value, dtype: dtype.value, shape: shape.value.trim() };
    if (repo.value.trim()) q.repo = repo.value.trim();
    replaceParams(q);
    try {
      fill(out, answer(await api.best(q)));
    } catch (err) {
      fill(out, h("p", { class: "error" }, err.message));
    }
  };
  const stale = pendingBadge("result", ask);
  const form = h(
    "form",
    { class: "form", id: "best-form", onsubmit: (e) => {
      e.preventDefault();
      ask();
    } },
    field("GPU", gpu),
    field("op", op),
    field("dtype", dtype),
    field("shape", shape),
    field("library", repo),
    h("button", { type: "submit" }, "Ask")
  );
  fill(root2, h("h1", { elementtiming: "kport-data" }, "Best kernel"), form, stale.el, out);
  if (first2) {
    fill(out, first2 instanceof Error ? h("p", { class: "error" }, first2.message) : answer(first2));
  } else fill(out, h("p", { class: "muted" }, "Pick a GPU, op, dtype and shape."));
  return { onEvent(ev, payload) {
    if (ev === "results" && out.querySelector("table")) stale.add(payload.ids ? payload.ids.length : 1);
  } };
}
var exampleShape, KIND_TAG, RANKED_BY, MOVED_BY, rankedBy;
var init_best = __esm({
  "js/pages/best.js"() {
    init_dom();
    init_api();
    init_router();
    init_prefetch();
    exampleShape = (f) => f ? f.example || f.dims.map((d) => `${d.name}=${d.default ?? ""}`).join(",") : "";
    KIND_TAG = { measured: "st-succeeded", provisional: "st-queued", unranked: "st-failed" };
    RANKED_BY = { median_us: "ranked by measured median", ratio_to_baseline: "ranked by time relative to the vendor baseline" };
    MOVED_BY = {
      wave_model: "ranked by each figure moved to this shape by its waves of tiles",
      problem_size: "ranked by each figure moved to this shape by its problem size"
    };
    rankedBy = (a) => a.ranked_by === "estimate_us" ? MOVED_BY[a.confidence && a.confidence.method] || "ranked by each figure moved to this shape" : RANKED_BY[a.ranked_by] || a.ranked_by;
  }
});

// js/pages/deliveries.js
var deliveries_exports = {};
__export(deliveries_exports, {
  render: () => render7
});
function connectionRow(c) {
  return h(
    "tr",
    { class: c.state },
    h("td", {}, c.repo),
    h("td", {}, `${c.kind} (${c.mode})`),
    h("td", {}, h("code", {}, c.api_url)),
    h("td", {}, c.project),
    h("td", { class: "auth" }, c.auth === "github_app" ? [`GitHub App ${c.app_id}, installation ${c.installation_id}, key `, h("code", {}, c.private_key_file)] : ["token file ", h("code", {}, c.token_file)]),
    h(
      "td",
      {},
      h("span", { class: `tag ${c.state === "ok" ? "st-succeeded" : "st-failed"}` }, c.state),
      c.broken_reason ? h("span", { class: "reason" }, c.broken_reason) : null
    )
  );
}
function deliveryRow(d) {
  const when = d.state === "pending" ? `next ${fmtTime(d.next_attempt_at)}` : fmtTime(d.finished_at);
  return h(
    "tr",
    { dataset: { id: d.id } },
    h("td", {}, `#${d.id}`),
    h("td", {}, d.kind),
    h("td", {}, d.event, d.pipeline ? [" \xB7 ", pageLink(`/pipeline/${d.pipeline}`, null, `pipeline #${d.pipeline}`)] : null),
    h("td", {}, d.commit ? pageLink(`/commit/${d.commit}`, null, h("code", {}, shortSha(d.commit))) : ""),
    h("td", {}, h("span", { class: `tag ${TAG[d.state] || ""}` }, d.state)),
    h("td", {}, `${d.attempts} / ${d.max_attempts}`),
    h("td", {}, d.last_status === null ? "" : String(d.last_status)),
    h("td", { class: "error-text" }, d.last_error),
    h("td", { class: "muted" }, when)
  );
}
async function render7(root2, route) {
  const state = route.params.get("state") || "";
  let [forges, page] = await (route.first || Promise.all([api.forges(), api.deliveries(state)]));
  const conns = h("tbody");
  const rows = h("tbody");
  const paint2 = () => {
    fill(conns, forges.items.length ? forges.items.map(connectionRow) : h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No forge connections: PUT /api/v1/repositories/{name}/forge.")));
    fill(rows, page.items.length ? page.items.map(deliveryRow) : h("tr", {}, h("td", { colspan: 9, class: "muted" }, "No deliveries.")));
  };
  paint2();
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, "Deliveries"),
    h("p", { class: "summary" }, "Show: ", ...STATES.map((s) => [
      s === state ? h("b", {}, s || "all") : h("a", { href: s ? `#/deliveries?state=${s}` : "#/deliveries" }, s || "all"),
      " "
    ])),
    h("h2", {}, "Forge connections"),
    h(
      "table",
      { class: "grid", id: "forges" },
      h("thead", {}, h("tr", {}, ["repository", "forge", "API", "project", "credentials", "state"].map((t) => h("th", {}, t)))),
      conns
    ),
    h("h2", {}, "Outgoing calls"),
    h(
      "table",
      { class: "grid", id: "deliveries" },
      h("thead", {}, h("tr", {}, ["id", "kind", "event", "commit", "state", "attempts", "last status", "last error", "when"].map((t) => h("th", {}, t)))),
      rows
    )
  );
  const refresh = coalesce(async () => {
    [forges, page] = await Promise.all([api.forges(), api.deliveries(state)]);
    paint2();
  }, 1e3);
  return { onEvent(ev) {
    if (ev === "delivery") refresh(ev);
  } };
}
var STATES, TAG;
var init_deliveries = __esm({
  "js/pages/deliveries.js"() {
    init_dom();
    init_api();
    init_live();
    STATES = ["", "pending", "delivered", "failed"];
    TAG = { pending: "st-queued", delivered: "st-succeeded", failed: "st-failed" };
  }
});

// js/admin.js
function tokenField() {
  const input = h("input", {
    type: "password",
    id: "admin-token",
    autocomplete: "off",
    placeholder: "kpa_\u2026",
    value: adminToken(),
    onchange: () => adminToken(input.value.trim())
  });
  return h(
    "details",
    { class: "admin", open: adminToken() ? null : true },
    h("summary", {}, "Admin token"),
    h("label", {}, "Re-run and cancel need it: ", input)
  );
}
function actionButton(label, path, status, done, attrs = {}) {
  const button = h("button", { type: "button", class: "action", ...attrs });
  button.textContent = label;
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.className = "action-status muted";
    status.textContent = `${label}\u2026`;
    try {
      const answer2 = await postAdmin(path);
      status.className = "action-status";
      status.textContent = `${label}: done`;
      await done(answer2);
    } catch (err) {
      status.className = "action-status error";
      status.textContent = `${label}: ${err.message || err}`;
    } finally {
      button.disabled = false;
    }
  });
  return button;
}
var FINISHED;
var init_admin = __esm({
  "js/admin.js"() {
    init_dom();
    init_api();
    FINISHED = /* @__PURE__ */ new Set(["succeeded", "failed", "cancelled"]);
  }
});

// js/pages/pipeline.js
var pipeline_exports = {};
__export(pipeline_exports, {
  fmtDuration: () => fmtDuration,
  render: () => render8
});
function fmtDuration(ms) {
  if (ms === null || ms === void 0) return "\u2014";
  const s = Math.round(ms / 1e3);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor(s % 3600 / 60)}m`;
}
function where(j) {
  if (j.kind === "build") return j.target;
  const part = shardText(j);
  return `${j.target} on arch ${j.arch}${j.gpu_model ? ` (${j.gpu_model})` : ""}${part ? ` \xB7 ${part}` : ""}`;
}
function jobRow(j, status, refresh) {
  const actions = [];
  if (j.status === "failed" || j.status === "cancelled")
    actions.push(actionButton("Re-run", `/api/v1/jobs/${j.id}/rerun`, status, refresh, { dataset: { rerun: j.id } }));
  if (!FINISHED.has(j.status))
    actions.push(actionButton("Cancel", `/api/v1/jobs/${j.id}/cancel`, status, refresh, { dataset: { cancel: j.id } }));
  const why = j.wait || (j.cancel_requested && !FINISHED.has(j.status) ? "cancel requested; the runner stops at its next heartbeat" : j.failure_reason);
  return h(
    "tr",
    { dataset: { id: j.id, status: j.status } },
    h("td", { class: "num" }, pageLink(`/job/${j.id}`, null, `#${j.id}`)),
    h("td", {}, j.kind),
    h("td", {}, where(j)),
    h("td", {}, h("span", { class: `tag st-${j.status}` }, j.status.replace("_", " "))),
    h("td", { class: "num" }, `${j.attempt} / ${j.max_attempts}`),
    h("td", {}, j.runner_name || h("span", { class: "muted" }, "\u2014")),
    h("td", { class: "muted" }, fmtTime(j.started)),
    h("td", { class: "num" }, fmtDuration(j.duration_ms)),
    h("td", { class: j.wait ? "wait" : "muted" }, why || ""),
    h("td", {}, actions)
  );
}
function verdictLine(v, sha) {
  const reasons = v.reasons || [];
  return h(
    "section",
    { class: `verdict verdict-${v.status}`, id: "verdict", dataset: { status: v.status } },
    h(
      "h2",
      {},
      "Commit verdict: ",
      h("span", { class: `tag verdict-${v.status}`, id: "verdict-status" }, v.status),
      " ",
      pageLink(`/commit/${sha}`, null, "the commit page")
    ),
    reasons.length ? h("ul", { class: "reasons" }, reasons.slice(0, 10).map((r) => h("li", {}, r.message))) : null,
    reasons.length > 10 ? h("p", { class: "muted" }, `and ${reasons.length - 10} more on the commit page`) : null,
    (v.waiting || []).length ? h("p", { class: "muted" }, `waiting: ${v.waiting.join("; ")}`) : null
  );
}
function deliveryRow2(d) {
  return h(
    "tr",
    { dataset: { id: d.id } },
    h("td", {}, `#${d.id}`),
    h("td", {}, d.kind),
    h("td", {}, d.event),
    h("td", {}, h("span", { class: `tag st-${d.state === "delivered" ? "succeeded" : d.state === "failed" ? "failed" : "queued"}` }, d.state)),
    h("td", { class: "num" }, `${d.attempts} / ${d.max_attempts}`),
    h("td", { class: "muted" }, d.last_error)
  );
}
async function render8(root2, route) {
  const id = route.arg;
  let data = await (route.first || api.pipeline(id));
  const head = h("div");
  const verdictEl = h("div");
  const jobs = h("tbody");
  const sent = h("div");
  const status = h("p", { class: "action-status muted", id: "action-status" });
  const actions = h("p", { class: "actions", id: "pipeline-actions" });
  const refresh = async () => {
    data = await api.pipeline(id);
    paint2();
  };
  const paint2 = () => {
    const p = data.pipeline;
    const c = data.commit;
    fill(
      head,
      h("h1", { elementtiming: "kport-data" }, `Pipeline #${p.id} `, h("span", { class: `tag st-${p.status}`, id: "pipeline-status" }, p.status)),
      h(
        "p",
        { class: "summary" },
        `${p.reason} \xB7 ${p.repo || "no repository"} ${p.ref || ""} \xB7 commit `,
        pageLink(`/commit/${p.commit}`, null, h("code", {}, shortSha(p.commit))),
        c && c.message ? ` \u201C${c.message.split("\n")[0]}\u201D` : "",
        ` \xB7 ${p.jobs_done}/${p.jobs_total} jobs done \xB7 created ${fmtTime(p.created)}`
      ),
      p.note ? h("p", { class: "muted" }, p.note) : null
    );
    fill(verdictEl, verdictLine(data.verdict, p.commit));
    fill(jobs, data.jobs.length ? data.jobs.map((j) => jobRow(j, status, refresh)) : h("tr", {}, h("td", { colspan: 10, class: "muted" }, "No jobs.")));
    const anyRerun = data.jobs.some((j) => j.status === "failed" || j.status === "cancelled");
    const anyOpen = data.jobs.some((j) => !FINISHED.has(j.status));
    fill(
      actions,
      anyRerun ? actionButton("Re-run failed and cancelled jobs", `/api/v1/pipelines/${p.id}/rerun`, status, refresh, { id: "rerun-pipeline" }) : null,
      anyOpen ? actionButton("Cancel pipeline", `/api/v1/pipelines/${p.id}/cancel`, status, refresh, { id: "cancel-pipeline" }) : null
    );
    fill(sent, data.deliveries.length ? h(
      "table",
      { class: "grid", id: "reported" },
      h("thead", {}, h("tr", {}, ["id", "kind", "event", "state", "attempts", "last error"].map((t) => h("th", {}, t)))),
      h("tbody", {}, data.deliveries.map(deliveryRow2))
    ) : h("p", { class: "muted" }, "Nothing reported: only push pipelines are reported to a forge."));
  };
  paint2();
  fill(
    root2,
    head,
    verdictEl,
    h("h2", {}, "Jobs"),
    h(
      "table",
      { class: "grid", id: "jobs" },
      h("thead", {}, h("tr", {}, ["job", "kind", "target", "state", "attempts", "runner", "started", "took", "why", ""].map((t) => h("th", {}, t)))),
      jobs
    ),
    tokenField(),
    actions,
    status,
    h("h2", {}, "Reported to the forge and webhooks"),
    sent
  );
  const later = coalesce(() => refresh().catch(() => {
  }), 500);
  const timer = setInterval(() => {
    if (data.pipeline.status === "queued" || data.pipeline.status === "running") later("tick");
  }, 5e3);
  return {
    onEvent(ev) {
      if (["job", "pipeline", "runner", "expired", "delivery", "results"].includes(ev)) later(ev);
    },
    dispose() {
      clearInterval(timer);
    }
  };
}
var init_pipeline = __esm({
  "js/pages/pipeline.js"() {
    init_dom();
    init_api();
    init_live();
    init_admin();
    init_shared();
  }
});

// js/pages/job.js
var job_exports = {};
__export(job_exports, {
  render: () => render9
});
async function render9(root2, route) {
  const id = route.arg;
  let data = await (route.first || api.job(id));
  const facts2 = h("dl", { class: "facts", id: "job-facts" });
  const head = h("div");
  const status = h("p", { class: "action-status muted", id: "action-status" });
  const actions = h("p", { class: "actions", id: "job-actions" });
  const log = h("pre", { class: "log", id: "log" });
  const follow = h("input", { type: "checkbox", id: "follow", checked: true });
  const logState = h("span", { class: "muted", id: "log-state" });
  let after = 0;
  let attempt = null;
  let stopped = false;
  let timer = null;
  const refresh = async () => {
    data = await api.job(id);
    paint2();
  };
  const paint2 = () => {
    const j = data.job;
    const p = data.pipeline;
    fill(
      head,
      h(
        "h1",
        { elementtiming: "kport-data" },
        `Job #${j.id}: ${j.kind} ${j.target} `,
        h("span", { class: `tag st-${j.status}`, id: "job-status" }, j.status.replace("_", " "))
      ),
      h(
        "p",
        { class: "summary" },
        "pipeline ",
        p ? pageLink(`/pipeline/${p.id}`, null, `#${p.id}`) : `#${j.pipeline}`,
        " \xB7 commit ",
        pageLink(`/commit/${j.commit}`, null, h("code", {}, shortSha(j.commit)))
      )
    );
    const row2 = (k, v) => [h("dt", {}, k), h("dd", {}, v)];
    fill(
      facts2,
      row2("state", j.status + (j.cancel_requested && !FINISHED.has(j.status) ? " (cancel requested)" : "")),
      row2("attempts", `${j.attempt} of ${j.max_attempts}`),
      j.kind === "check" ? row2("runs on", `arch ${j.arch}${j.gpu_model ? `, ${j.gpu_model}` : ""}`) : row2("target", j.target),
      shardText(j) ? row2("checks", shardText(j)) : null,
      j.depends_on ? row2("after", pageLink(`/job/${j.depends_on}`, null, `build job #${j.depends_on}`)) : null,
      row2("runner", j.runner_name || "\u2014"),
      row2("created", fmtTime(j.created)),
      row2("started", fmtTime(j.started)),
      row2("finished", fmtTime(j.finished)),
      row2("took", fmtDuration(j.duration_ms)),
      j.wait ? row2("waiting", h("span", { id: "job-wait" }, j.wait)) : null,
      j.failure_reason ? row2("reason", h("span", { id: "job-reason" }, j.failure_reason)) : null
    );
    fill(
      actions,
      j.status === "failed" || j.status === "cancelled" ? actionButton("Re-run", `/api/v1/jobs/${j.id}/rerun`, status, refresh, { id: "rerun-job" }) : null,
      FINISHED.has(j.status) ? null : actionButton("Cancel", `/api/v1/jobs/${j.id}/cancel`, status, refresh, { id: "cancel-job" })
    );
  };
  const pull = async () => {
    for (; ; ) {
      const page = await api.jobLog(id, after);
      for (const c of page.chunks) {
        if (c.attempt !== attempt) {
          attempt = c.attempt;
          log.appendChild(h("span", { class: "attempt", dataset: { attempt: c.attempt } }, `\u2500\u2500 attempt ${c.attempt} \u2500\u2500
`));
        }
        log.appendChild(document.createTextNode(c.text));
        after = c.seq;
      }
      if (page.chunks.length < 1e3) break;
    }
    if (!log.childNodes.length) log.textContent = "";
    logState.textContent = FINISHED.has(data.job.status) ? " \xB7 the job ended; the log is complete" : " \xB7 following";
    if (follow.checked) log.scrollTop = log.scrollHeight;
  };
  const tick = async () => {
    timer = null;
    if (stopped) return;
    const wasDone = FINISHED.has(data.job.status);
    try {
      await pull();
      if (!wasDone) await refresh();
    } catch (err) {
      logState.textContent = ` \xB7 ${err.message || err}`;
    }
    if (!stopped && (!wasDone || !FINISHED.has(data.job.status))) timer = setTimeout(tick, POLL_MS);
  };
  paint2();
  await pull();
  fill(
    root2,
    head,
    facts2,
    tokenField(),
    actions,
    status,
    h("h2", {}, "Log ", h("label", { class: "muted" }, follow, " follow"), logState),
    log
  );
  if (!FINISHED.has(data.job.status)) timer = setTimeout(tick, POLL_MS);
  const later = coalesce(async () => {
    const wasDone = FINISHED.has(data.job.status);
    await refresh();
    if (wasDone && !FINISHED.has(data.job.status) && !timer) timer = setTimeout(tick, POLL_MS);
    else if (wasDone !== FINISHED.has(data.job.status)) await pull();
  }, 300);
  return {
    onEvent(ev) {
      if (ev === "job" || ev === "expired" || ev === "runner") later(ev);
    },
    dispose() {
      stopped = true;
      clearTimeout(timer);
    }
  };
}
var POLL_MS;
var init_job = __esm({
  "js/pages/job.js"() {
    init_dom();
    init_api();
    init_live();
    init_admin();
    init_shared();
    init_pipeline();
    POLL_MS = 1e3;
  }
});

// js/pages/result.js
var result_exports = {};
__export(result_exports, {
  render: () => render10
});
function numericsBox(r) {
  const n = r.numerics || {};
  const within = n.normwise_rel_err != null && n.tolerance != null ? n.normwise_rel_err <= n.tolerance : null;
  const extra = Object.entries(n).filter(([k]) => !["max_abs_err", "max_rel_err", "normwise_rel_err", "tolerance", "nan_inf_count", "seed"].includes(k));
  return [
    h(
      "p",
      { class: "summary", id: "numerics-verdict" },
      h("span", { class: `tag st-${r.status}` }, r.status),
      " ",
      within === null ? "no error norms recorded" : `normwise relative error ${fmtNum(n.normwise_rel_err, 6)} ${within ? "\u2264" : ">"} tolerance ${fmtNum(n.tolerance, 6)}`
    ),
    r.message ? h("pre", { class: "log", id: "result-message" }, r.message) : null,
    h(
      "table",
      { class: "grid", id: "numerics" },
      h("thead", {}, h("tr", {}, ["max abs error", "max rel error", "normwise rel error", "tolerance", "NaN/Inf", "seed"].map((t) => h("th", {}, t)))),
      h("tbody", {}, h(
        "tr",
        {},
        h("td", { class: "num" }, fmtNum(n.max_abs_err, 6)),
        h("td", { class: "num" }, fmtNum(n.max_rel_err, 6)),
        h("td", { class: "num" }, fmtNum(n.normwise_rel_err, 6)),
        h("td", { class: "num" }, fmtNum(n.tolerance, 6)),
        h("td", { class: "num" }, n.nan_inf_count ?? "\u2014"),
        h("td", { class: "num" }, n.seed ?? "\u2014")
      ))
    ),
    extra.length ? h("dl", { class: "facts" }, extra.map(([k, v]) => [h("dt", {}, k.replace(/_/g, " ")), h("dd", {}, v == null ? "\u2014" : String(v))])) : null
  ];
}
function roundsTable(rounds) {
  return h(
    "table",
    { class: "grid", id: "rounds" },
    h("thead", {}, h("tr", {}, ["round", "median \xB5s", "stddev \xB5s", "samples", "kept"].map((t) => h("th", {}, t)))),
    h("tbody", {}, rounds.map((x, i) => {
      const o = obj(x) || { median_ms: x };
      return h(
        "tr",
        { class: o.outlier ? "outlier" : "" },
        h("td", { class: "num" }, String(i + 1)),
        h("td", { class: "num" }, fmtNum(us(o.median_ms), 3)),
        h("td", { class: "num" }, fmtNum(us(o.stddev_ms), 3)),
        h("td", { class: "num" }, o.samples ?? "\u2014"),
        h("td", {}, o.outlier ? "outlier, left out" : "kept")
      );
    }))
  );
}
function pairedBox(p) {
  const medians = Array.isArray(p.round_medians_ms) ? p.round_medians_ms : [];
  return h(
    "section",
    { class: "verdict", id: "paired" },
    h("h3", {}, "Baseline timed interleaved (A/B/A/B)"),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "baseline commit"),
      h("dd", {}, p.commit ? pageLink(`/commit/${p.commit}`, null, h("code", {}, shortSha(p.commit))) : "\u2014"),
      h("dt", {}, "median"),
      h("dd", { id: "paired-median" }, `${fmtNum(us(p.median_ms), 3)} \xB5s \xB1 ${fmtNum(us(p.stddev_ms), 3)}`),
      h("dt", {}, "samples"),
      h("dd", {}, p.samples ?? "\u2014"),
      h("dt", {}, "rounds"),
      h("dd", {}, `${p.rounds ?? medians.length}${p.order ? ` (${p.order})` : ""}`),
      h("dt", {}, "round medians"),
      h("dd", {}, medians.length ? medians.map((m) => `${fmtNum(us(m), 3)} \xB5s`).join(" \xB7 ") : "\u2014"),
      h("dt", {}, "stable"),
      h("dd", {}, p.unstable ? "no: its rounds disagreed, so it does not count" : "yes"),
      p.harness_sha256 ? [h("dt", {}, "harness"), h("dd", {}, h("code", {}, p.harness_sha256))] : null
    )
  );
}
function timingBox(r) {
  const t = r.timing || {};
  const et = obj(obj(r.env) && r.env.timing) || {};
  if (t.median_us == null && !Object.keys(et).length) return h("p", { class: "muted" }, "Not timed: only a passing check is timed.");
  const rows = [
    ["median", h("span", { id: "median" }, `${fmtNum(t.median_us, 3)} \xB5s`)],
    ["stddev", `${fmtNum(t.stddev_us, 3)} \xB5s`],
    ["samples", `${t.samples ?? "\u2014"}${t.samples_dropped ? ` (${t.samples_dropped} dropped)` : ""}`],
    t.tflops != null ? ["throughput", `${fmtNum(t.tflops)} TFLOP/s`] : null,
    t.gbps != null ? ["bandwidth", `${fmtNum(t.gbps)} GB/s`] : null,
    ["baseline", t.baseline ? `${t.baseline}: ${fmtNum(t.baseline_median_us, 3)} \xB5s` : "\u2014"],
    ["ratio to baseline", t.ratio != null ? `\xD7${fmtNum(t.ratio)} (higher is faster)` : "\u2014"],
    ["stable", t.unstable ? `no: the rounds disagreed${et.unstable_reason ? ` (${et.unstable_reason})` : ""}` : "yes"],
    et.precision ? ["precision", String(et.precision)] : null,
    obj(et.screen) ? ["screen", `${fmtNum(us(et.screen.median_ms), 3)} \xB5s over ${et.screen.samples ?? "\u2014"} samples`] : null,
    et.round_spread != null ? ["round spread", `${fmtNum(et.round_spread * 100)}%`] : null
  ].filter(Boolean);
  const rounds = Array.isArray(et.rounds) ? et.rounds : [];
  return [
    h("dl", { class: "facts", id: "timing" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    rounds.length ? [h("h3", {}, `Rounds (${rounds.length})`), roundsTable(rounds)] : null,
    obj(et.paired) ? pairedBox(et.paired) : null
  ];
}
function clockText(c) {
  if (!obj(c)) return null;
  const parts = [c.sm_mhz != null ? `SM ${c.sm_mhz} MHz` : "SM clock not read"];
  if (c.temperature_c != null) parts.push(`${c.temperature_c} \xB0C`);
  if (c.power_w != null) parts.push(`${fmtNum(c.power_w)} W`);
  if (c.source) parts.push(`from ${c.source}`);
  return parts.join(" \xB7 ");
}
function clocksBox(r) {
  const env = obj(r.env) || {};
  const et = obj(env.timing) || {};
  const after = obj(et.sm_mhz_after_samples);
  const rows = [
    r.sm_clock_mhz != null ? ["SM clock", `${r.sm_clock_mhz} MHz`] : null,
    r.timing && r.timing.sm_clock_mhz_min != null ? ["lowest SM clock while timed", `${r.timing.sm_clock_mhz_min} MHz`] : null,
    after ? ["SM clock after samples", ["min", "median", "max"].filter((k) => after[k] != null).map((k) => `${k} ${after[k]} MHz`).join(" \xB7 ")] : null,
    et.discarded_throttled != null ? ["samples dropped as throttled", String(et.discarded_throttled)] : null,
    clockText(env.clock_before) ? ["before timing", clockText(env.clock_before)] : null,
    clockText(env.clock_after) ? ["after timing", clockText(env.clock_after)] : null
  ].filter(Boolean);
  if (!rows.length) return h("p", { class: "muted" }, "No clock or telemetry was recorded with this result.");
  return h("dl", { class: "facts", id: "clocks" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}
function reproduceBox(p) {
  if (!p) return h("p", { class: "muted" }, "No reproduce command.");
  return [
    h("p", {}, "Check (numerics):"),
    h("pre", { class: "cmd", id: "reproduce-check" }, withOrigin(p.check)),
    p.bench ? [h("p", {}, "Bench (timing):"), h("pre", { class: "cmd", id: "reproduce-bench" }, withOrigin(p.bench))] : null,
    p.harness_sha256 ? h("p", { class: "muted" }, `harness ${p.harness || ""} sha256 `, h("code", {}, p.harness_sha256)) : null,
    (p.missing || []).length ? h("ul", { class: "notes", id: "reproduce-missing" }, p.missing.map((m) => h("li", { class: "muted" }, `not exact: ${m}`))) : null
  ];
}
async function render10(root2, route) {
  const id = route.arg;
  let r;
  try {
    r = await (route.first || api.result(id));
  } catch (err) {
    return missing(root2, `Result #${id}`, err);
  }
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, `Result #${r.id} `, h("span", { class: `tag st-${r.status}`, id: "result-status" }, r.status)),
    h(
      "p",
      { class: "summary" },
      pageLink(`/kernel/${r.instance}`, { repo: r.repo, dtype: r.dtype, shape: r.shape }, r.instance),
      ` \xB7 ${r.dtype} \xB7 `,
      h("code", {}, r.shape),
      " \xB7 on ",
      pageLink(`/target/${r.target}`, null, r.target),
      ` / ${r.gpu_model} \xB7 commit `,
      pageLink(`/commit/${r.commit}`, null, h("code", {}, shortSha(r.commit))),
      ` \xB7 ${fmtTime(r.created)}`
    ),
    facts("result-facts", [
      ["instance", pageLink(`/kernel/${r.instance}`, { repo: r.repo, dtype: r.dtype, shape: r.shape }, r.instance)],
      r.repo ? ["library", h("span", { id: "result-library" }, r.repo)] : null,
      ["family / variant", `${r.family} \xB7 ${r.variant}`],
      ["dtype", r.dtype],
      ["shape", h("code", {}, r.shape)],
      ["target", [pageLink(`/target/${r.target}`, null, r.target), ` (toolkit ${r.toolkit || "\u2014"})`]],
      ["GPU", `${r.gpu_model} \xB7 arch ${r.arch || "\u2014"} \xB7 ${r.gpu_uuid || "\u2014"}`],
      ["driver", r.driver || "\u2014"],
      ["commit", pageLink(`/commit/${r.commit}`, null, h("code", {}, r.commit))],
      ["job", r.job ? [pageLink(`/job/${r.job}`, null, `#${r.job}`), ` attempt ${r.attempt}`] : "\u2014"],
      ["measured", fmtTime(r.created)]
    ]),
    h("h2", {}, "Numerics"),
    numericsBox(r),
    h("h2", {}, "Timing"),
    timingBox(r),
    h("h2", {}, "Clocks and telemetry"),
    clocksBox(r),
    h("h2", {}, "Reproduce"),
    reproduceBox(r.reproduce),
    rawLink(`/api/v1/results/${r.id}`)
  );
  return null;
}
var us, obj;
var init_result = __esm({
  "js/pages/result.js"() {
    init_dom();
    init_api();
    init_shared();
    us = (ms) => typeof ms === "number" ? ms * 1e3 : null;
    obj = (v) => v && typeof v === "object" && !Array.isArray(v) ? v : null;
  }
});

// js/pages/bisection.js
var bisection_exports = {};
__export(bisection_exports, {
  render: () => render11
});
async function figures(b) {
  const cases = b.cases.slice(0, MAX_CASES);
  const out = /* @__PURE__ */ new Map();
  await Promise.all(b.commits.flatMap((sha) => cases.map(async (c) => {
    let rec = null;
    try {
      if (b.kind === "build_failure") {
        const page = await api.builds({ commit: sha, target: b.target, family: c.family, variant: c.variant, limit: 1 });
        rec = page.items[0] ? { build: page.items[0] } : null;
      } else {
        const page = await api.results({
          commit: sha,
          target: b.target,
          gpu: b.gpu_model,
          instance: c.instance,
          dtype: c.dtype,
          shape: c.shape,
          limit: 1
        });
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
  if (!rec) return h("span", { class: "muted" }, "not measured");
  if (rec.build) {
    const r2 = rec.build;
    return pageLink(`/build/${r2.id}`, null, h("span", { class: `tag st-${r2.status === "ok" ? "succeeded" : "failed"}` }, r2.status));
  }
  const r = rec.result;
  const t = r.timing || {};
  const text = r.status === "passed" && t.median_us != null ? `${fmtNum(t.median_us, 3)} \xB5s \xB1 ${fmtNum(t.stddev_us, 3)}` : r.status;
  return pageLink(`/result/${r.id}`, null, h("span", { class: `tag st-${r.status}` }, text));
}
function commitsTable(b, figs) {
  const judged = new Map((b.judged || []).map((j) => [j.commit, j.outcome]));
  const probes = /* @__PURE__ */ new Map();
  for (const p of b.probes) {
    if (!probes.has(p.commit)) probes.set(p.commit, []);
    probes.get(p.commit).push(p);
  }
  const suspects = new Set(b.suspects || []);
  const cases = b.cases.slice(0, MAX_CASES);
  const role = (sha) => {
    const r = [];
    if (sha === b.good) r.push("good end");
    if (sha === b.bad) r.push("bad end");
    if (sha === b.last_good) r.push("last good");
    if (sha === b.first_bad) r.push("first bad");
    else if (suspects.has(sha)) r.push("could be it");
    return r.join(", ");
  };
  return h(
    "table",
    { class: "grid", id: "commits" },
    h("thead", {}, h("tr", {}, ["#", "commit", "role", "outcome", "probe pipelines", ...cases.map((c) => c.key)].map((t) => h("th", {}, t)))),
    h("tbody", {}, b.commits.map((sha, i) => {
      const outcome = judged.get(sha) || (sha === b.good ? "good" : sha === b.bad ? "bad" : probes.has(sha) ? "pending" : "");
      return h(
        "tr",
        { dataset: { commit: sha, outcome }, class: sha === b.first_bad ? "first-bad" : "" },
        h("td", { class: "num" }, String(i)),
        h("td", {}, commitLink(sha)),
        h("td", {}, role(sha)),
        h("td", {}, outcome ? h("span", { class: `tag ${OUTCOME_TAG[outcome] || "st-queued"}` }, outcome) : h("span", { class: "muted" }, "not probed")),
        h("td", {}, (probes.get(sha) || []).map((p) => h(
          "span",
          { class: "probe" },
          pageLink(`/pipeline/${p.pipeline}`, null, `#${p.pipeline}`),
          " ",
          h("span", { class: `tag st-${p.status}` }, p.status),
          " "
        ))),
        cases.map((c) => h("td", { class: "num" }, figureCell(figs.get(`${sha}|${c.key}`))))
      );
    }))
  );
}
function casesTable(b) {
  const perf = b.kind === "perf_regression";
  return h(
    "table",
    { class: "grid", id: "cases" },
    h("thead", {}, h("tr", {}, ["case", "instance", "dtype", "shape", ...perf ? ["good \xB5s", "bad \xB5s", "noise \u03C3"] : []].map((t) => h("th", {}, t)))),
    h("tbody", {}, b.cases.map((c) => h(
      "tr",
      {},
      h("td", {}, h("code", {}, c.key)),
      h("td", {}, c.instance ? pageLink(`/kernel/${c.instance}`, { repo: b.repo, dtype: c.dtype, shape: c.shape }, c.instance) : `${c.family}.${c.variant}`),
      h("td", {}, c.dtype || "\u2014"),
      h("td", {}, c.shape ? h("code", {}, c.shape) : "\u2014"),
      perf ? [h("td", { class: "num" }, fmtNum(c.good_us, 3)), h("td", { class: "num" }, fmtNum(c.bad_us, 3)), h("td", { class: "num" }, fmtPct(c.sigma))] : null
    )))
  );
}
function effectsTable(list) {
  if (!list || !list.length) return null;
  return [h("h2", {}, "Effect per case"), h(
    "table",
    { class: "grid", id: "effects" },
    h("thead", {}, h("tr", {}, ["case", "last good \xB5s", "first bad \xB5s", "effect"].map((t) => h("th", {}, t)))),
    h("tbody", {}, list.map((e) => h(
      "tr",
      {},
      h("td", {}, h("code", {}, e.case)),
      h("td", { class: "num" }, fmtNum(e.good_us, 3)),
      h("td", { class: "num" }, fmtNum(e.bad_us, 3)),
      h("td", { class: "num" }, `${e.effect > 0 ? "+" : ""}${fmtPct(e.effect)} \xB1 ${fmtPct(e.uncertainty)}`)
    )))
  )];
}
function paint(root2, b, figs) {
  fill(
    root2,
    h("h1", { elementtiming: "kport-data" }, `Bisection #${b.id} `, h("span", { class: `tag ${STATE_TAG[b.state] || "st-queued"}`, id: "bisection-state" }, b.state)),
    h(
      "p",
      { class: "summary" },
      `${KIND[b.kind] || b.kind} on `,
      pageLink(`/target/${b.target}`, null, b.target),
      b.gpu_model ? ` / ${b.gpu_model}` : "",
      ` \xB7 ${ORIGIN[b.origin] || `started by ${b.origin}`} \xB7 ${b.repo}`,
      ` \xB7 ${b.commits.length} commits, ${b.probes.length} probes`
    ),
    h("p", { class: "summary", id: "bisection-summary" }, b.summary),
    facts("bisection-facts", [
      ["good end", commitLink(b.good)],
      ["bad end", commitLink(b.bad)],
      ["first bad commit", h("span", { id: "first-bad" }, b.first_bad ? commitLink(b.first_bad) : "not found yet")],
      b.last_good ? ["last good commit", commitLink(b.last_good)] : null,
      (b.suspects || []).length > 1 ? ["could also be", b.suspects.filter((s) => s !== b.first_bad).map((s) => [commitLink(s), " "])] : null,
      ["effect", h("span", { id: "effect" }, b.effect != null ? `${b.effect > 0 ? "+" : ""}${fmtPct(b.effect)} \xB1 ${fmtPct(b.uncertainty)}` : "\u2014")],
      ["cause", b.cause ? h("span", { class: `tag cause-${b.cause}`, id: "cause" }, b.cause) : "\u2014"],
      ["created", fmtTime(b.created)],
      ["updated", fmtTime(b.updated)],
      ["finished", fmtTime(b.finished)]
    ]),
    h("h2", {}, "Commits and probes"),
    h("p", { class: "muted" }, "From the good end (first) to the bad end (last), first parents only. A figure links to its record."),
    commitsTable(b, figs),
    effectsTable(b.effects),
    h("h2", {}, "Cases"),
    casesTable(b),
    rawLink(`/api/v1/bisections/${b.id}`)
  );
}
async function render11(root2, route) {
  const id = route.arg;
  let b;
  try {
    b = await (route.first || api.bisection(id));
  } catch (err) {
    return missing(root2, `Bisection #${id}`, err);
  }
  paint(root2, b, await figures(b));
  const refresh = coalesce(async () => {
    b = await api.bisection(id);
    paint(root2, b, await figures(b));
  }, 800);
  return {
    onEvent(ev) {
      if (b.state === "running" && ["job", "pipeline", "results"].includes(ev)) refresh(ev);
    }
  };
}
var KIND, OUTCOME_TAG, STATE_TAG, ORIGIN, MAX_CASES, commitLink;
var init_bisection = __esm({
  "js/pages/bisection.js"() {
    init_dom();
    init_api();
    init_live();
    init_shared();
    KIND = { perf_regression: "slowdown", numerics_failure: "numerics failure", build_failure: "build failure" };
    OUTCOME_TAG = { good: "st-succeeded", bad: "st-failed", ambiguous: "st-running", pending: "st-queued", skipped: "st-queued" };
    STATE_TAG = { done: "st-succeeded", failed: "st-failed", running: "st-running" };
    ORIGIN = { verdict: "started by a verdict", manual: "started by hand" };
    MAX_CASES = 4;
    commitLink = (sha) => sha ? pageLink(`/commit/${sha}`, null, h("code", {}, shortSha(sha))) : "\u2014";
  }
});

// js/pages/build.js
var build_exports = {};
__export(build_exports, {
  render: () => render12
});
function resourcesTable(r) {
  return h(
    "table",
    { class: "grid", id: "resources" },
    h("thead", {}, h("tr", {}, ["registers", "spill stores", "spill loads", "shared memory", "stack frame", "constant memory"].map((t) => h("th", {}, t)))),
    h("tbody", {}, h(
      "tr",
      {},
      h("td", { class: "num" }, r.registers ?? "\u2014"),
      h("td", { class: "num" }, bytes(r.spill_stores_bytes)),
      h("td", { class: "num" }, bytes(r.spill_loads_bytes)),
      h("td", { class: "num" }, bytes(r.shared_mem_bytes)),
      h("td", { class: "num" }, bytes(r.stack_frame_bytes)),
      h("td", { class: "num" }, bytes(r.constant_mem_bytes))
    ))
  );
}
function auditRow(name, a) {
  if (!a || typeof a !== "object") return null;
  const counts = a.counts && typeof a.counts === "object" ? Object.entries(a.counts) : [];
  const missingList = Array.isArray(a.missing) ? a.missing : [];
  const ran = a.audited !== false;
  const verdict = !ran ? "not audited" : missingList.length ? `missing ${missingList.join(", ")}` : a.passed === false ? "failed" : "passed";
  return h(
    "tr",
    { dataset: { audit: name } },
    h("th", { scope: "row" }, name),
    h("td", {}, h("span", { class: `tag ${!ran ? "st-queued" : missingList.length || a.passed === false ? "st-failed" : "st-succeeded"}` }, verdict)),
    h("td", {}, Array.isArray(a.required) && a.required.length ? a.required.join(", ") : "\u2014"),
    h("td", {}, counts.length ? counts.map(([k, v]) => `${k} ${v}`).join(" \xB7 ") : "\u2014"),
    h("td", { class: "muted" }, a.tool || a.source || "")
  );
}
function auditBox(audit) {
  if (!audit || typeof audit !== "object" || !Object.keys(audit).length) return h("p", { class: "muted" }, "No instruction audit ran for this build.");
  const parts = audit.ptx || audit.sass ? [["PTX", audit.ptx], ["SASS", audit.sass]] : [["PTX", audit]];
  return h(
    "table",
    { class: "grid", id: "audit" },
    h("thead", {}, h("tr", {}, ["audit", "verdict", "required", "counts", "by"].map((t) => h("th", {}, t)))),
    h("tbody", {}, parts.map(([n, a]) => auditRow(n, a)))
  );
}
function historyTable(list, current2) {
  if (!list.length) return null;
  return [h("h2", {}, "Records of this target and variant"), h(
    "table",
    { class: "grid", id: "history" },
    h("thead", {}, h("tr", {}, ["record", "commit", "status", "registers", "spills", "created"].map((t) => h("th", {}, t)))),
    h("tbody", {}, list.map((b) => h(
      "tr",
      { dataset: { id: b.id }, class: b.id === current2 ? "selected" : "" },
      h("td", { class: "num" }, b.id === current2 ? `#${b.id}` : pageLink(`/build/${b.id}`, null, `#${b.id}`)),
      h("td", {}, pageLink(`/commit/${b.commit}`, null, h("code", {}, shortSha(b.commit)))),
      h("td", {}, h("span", { class: `tag ${STATUS_TAG[b.status] || "st-queued"}` }, b.status)),
      h("td", { class: "num" }, b.registers ?? "\u2014"),
      h("td", { class: "num" }, bytes((b.spill_stores_bytes || 0) + (b.spill_loads_bytes || 0))),
      h("td", { class: "muted" }, fmtTime(b.created))
    )))
  )];
}
async function render12(root2, route) {
  const id = route.arg;
  let b;
  try {
    b = await (route.first || api.build(id));
  } catch (err) {
    return missing(root2, `Build record #${id}`, err);
  }
  const others = await api.builds({ target: b.target, family: b.family, variant: b.variant, limit: 20 }).catch(() => ({ items: [] }));
  const source2 = b.source_path ? `${b.source_path}${b.source_line ? `:${b.source_line}` : ""}` : null;
  fill(
    root2,
    h(
      "h1",
      { elementtiming: "kport-data" },
      `Build record #${b.id}: ${b.family}.${b.variant} for ${b.target} `,
      h("span", { class: `tag ${STATUS_TAG[b.status] || "st-queued"}`, id: "build-status" }, b.status)
    ),
    h(
      "p",
      { class: "summary" },
      "commit ",
      pageLink(`/commit/${b.commit}`, null, h("code", {}, shortSha(b.commit))),
      " \xB7 target ",
      pageLink(`/target/${b.target}`, { cell: `${b.family}.${b.variant}:build` }, b.target),
      b.job ? [" \xB7 ", pageLink(`/job/${b.job}`, null, `build job #${b.job} and its log`)] : null,
      ` \xB7 ${fmtTime(b.created)}`
    ),
    facts("build-facts", [
      ["status", b.status],
      ["variant", `${b.family}.${b.variant}`],
      ["target", pageLink(`/target/${b.target}`, null, b.target)],
      ["commit", pageLink(`/commit/${b.commit}`, null, h("code", {}, b.commit))],
      ["job", b.job ? [pageLink(`/job/${b.job}`, null, `#${b.job}`), ` attempt ${b.attempt}`] : "\u2014"],
      ["kernel source", source2 ? h("code", { id: "source" }, source2) : "\u2014"],
      ["harness", b.artifact ? h("a", { href: `/api/v1/artifacts/${b.artifact}` }, h("code", {}, b.artifact)) : "not in a harness"]
    ]),
    h("h2", {}, "Diagnostics"),
    b.message ? h("pre", { class: "log", id: "diagnostics" }, b.message) : h("p", { class: "muted", id: "diagnostics" }, "The compiler said nothing."),
    h("h2", {}, "Resources"),
    resourcesTable(b),
    h("h2", {}, "Instruction audit"),
    auditBox(b.instruction_audit),
    historyTable(others.items, b.id),
    rawLink(`/api/v1/builds/${b.id}`)
  );
  return null;
}
var STATUS_TAG, bytes;
var init_build = __esm({
  "js/pages/build.js"() {
    init_dom();
    init_api();
    init_shared();
    STATUS_TAG = { ok: "st-succeeded", not_applicable: "st-queued", compile_error: "st-failed", timeout: "st-timeout" };
    bytes = (v) => v == null ? "\u2014" : `${v} B`;
  }
});

// js/main.js
init_dom();
init_router();
init_live();
init_prefetch();
var pages = {
  overview: () => Promise.resolve().then(() => (init_overview(), overview_exports)),
  target: () => Promise.resolve().then(() => (init_target(), target_exports)),
  commit: () => Promise.resolve().then(() => (init_commit(), commit_exports)),
  kernel: () => Promise.resolve().then(() => (init_kernel(), kernel_exports)),
  runners: () => Promise.resolve().then(() => (init_runners(), runners_exports)),
  best: () => Promise.resolve().then(() => (init_best(), best_exports)),
  deliveries: () => Promise.resolve().then(() => (init_deliveries(), deliveries_exports)),
  pipeline: () => Promise.resolve().then(() => (init_pipeline(), pipeline_exports)),
  job: () => Promise.resolve().then(() => (init_job(), job_exports)),
  result: () => Promise.resolve().then(() => (init_result(), result_exports)),
  bisection: () => Promise.resolve().then(() => (init_bisection(), bisection_exports)),
  build: () => Promise.resolve().then(() => (init_build(), build_exports))
};
var root = null;
var current = null;
var generation = 0;
async function show(early2) {
  const route = early2 || parseHash();
  const load = pages[route.page];
  const mine = ++generation;
  if (current && current.dispose) current.dispose();
  current = null;
  document.body.dataset.ready = "";
  for (const a of document.querySelectorAll("[data-nav]")) a.classList.toggle("active", a.dataset.nav === route.page);
  if (!load) {
    fill(root, h("p", { class: "error" }, `No page "${route.page}". `, h("a", { href: "#/" }, "Overview")));
    return;
  }
  if (!early2) route.first = prefetch(route);
  try {
    const mod = await load();
    const view = document.createElement("section");
    const page = await mod.render(view, route);
    if (mine !== generation) {
      if (page && page.dispose) page.dispose();
      return;
    }
    fill(root, view);
    current = page;
  } catch (err) {
    if (mine !== generation) return;
    fill(root, h("p", { class: "error" }, String(err.message || err)));
  }
  if (mine !== generation) return;
  performance.mark("kport:rendered");
  requestAnimationFrame(() => setTimeout(() => {
    if (mine !== generation) return;
    performance.mark("kport:painted");
    document.body.dataset.ready = route.page;
  }, 0));
}
var early = parseHash();
var booted = window.kportFirst;
window.kportFirst = null;
early.first = booted && booted.hash === window.location.hash ? booted.data : prefetch(early);
function start() {
  root = document.getElementById("app");
  window.addEventListener("hashchange", () => show());
  subscribe((name, data) => {
    if (current && current.onEvent) current.onEvent(name, data);
  });
  show(early).finally(() => afterPaint(() => connect(document.getElementById("live"))));
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
