// The dashboard's entry: routes the hash to a page module, keeps one live connection,
// and marks when a page's data has painted: each page's heading carries
// elementtiming="kport-data", whose render time the benchmark reads.
import { h, fill, afterPaint } from './dom.js';
import { parseHash } from './router.js';
import { connect, subscribe } from './live.js';
import { prefetch } from './prefetch.js';

const pages = {
  overview: () => import('./pages/overview.js'),
  target: () => import('./pages/target.js'),
  commit: () => import('./pages/commit.js'),
  kernel: () => import('./pages/kernel.js'),
  runners: () => import('./pages/runners.js'),
  best: () => import('./pages/best.js'),
  deliveries: () => import('./pages/deliveries.js'),
  pipeline: () => import('./pages/pipeline.js'),
  job: () => import('./pages/job.js'),
  result: () => import('./pages/result.js'),
  bisection: () => import('./pages/bisection.js'),
  build: () => import('./pages/build.js'),
};

let root = null;
let current = null;
let generation = 0;

// `early` is a route whose first request already left (see the end of this file).
async function show(early) {
  const route = early || parseHash();
  const load = pages[route.page];
  const mine = ++generation;
  if (current && current.dispose) current.dispose();
  current = null;
  document.body.dataset.ready = '';
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', a.dataset.nav === route.page);
  if (!load) {
    fill(root, h('p', { class: 'error' }, `No page "${route.page}". `, h('a', { href: '#/' }, 'Overview')));
    return;
  }
  if (!early) route.first = prefetch(route);
  try {
    const mod = await load();
    const view = document.createElement('section');
    const page = await mod.render(view, route);
    if (mine !== generation) {
      if (page && page.dispose) page.dispose();
      return;
    }
    fill(root, view);
    current = page;
  } catch (err) {
    if (mine !== generation) return;
    fill(root, h('p', { class: 'error' }, String(err.message || err)));
  }
  if (mine !== generation) return;
  // Right after the next frame (the one holding the data) the page counts as ready.
  performance.mark('kport:rendered');
  requestAnimationFrame(() => setTimeout(() => {
    if (mine !== generation) return;
    performance.mark('kport:painted');
    document.body.dataset.ready = route.page;
  }, 0));
}

// The first page's request left from boot.js, before this script arrived; where it did
// not (another hash by now), it leaves here. index.html loads this script async, so it
// may run before the body is parsed: the page is rendered once the document is there.
const early = parseHash();
const booted = window.kportFirst;
window.kportFirst = null;  // the page keeps the answer as long as it needs it
early.first = booted && booted.hash === window.location.hash ? booted.data : prefetch(early);

function start() {
  root = document.getElementById('app');
  window.addEventListener('hashchange', () => show());
  subscribe((name, data) => {
    if (current && current.onEvent) current.onEvent(name, data);
  });
  // The live connection opens once the first page has painted, so that page's request,
  // rendering and paint do not share the browser's time with it. Nothing is lost: a
  // page listens to events only once it has rendered.
  show(early).finally(() => afterPaint(() => connect(document.getElementById('live'))));
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true });
else start();
