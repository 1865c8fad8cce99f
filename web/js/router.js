// Page state lives in the URL hash ("#/target/sm_90a?cell=gemm.simt.numerics"), so
// every view can be linked to. parseHash() splits it into a route and its parameters.
export function parseHash(hash = window.location.hash) {
  const raw = hash.replace(/^#/, '') || '/';
  const [path, query = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] || 'overview', arg: parts.slice(1).join('/'), params: new URLSearchParams(query) };
}

// Rewrites the hash's query without adding a history entry or re-rendering the page.
export function replaceParams(params) {
  const { page, arg } = parseHash();
  const path = page === 'overview' ? '/' : `/${page}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const qs = q.toString();
  history.replaceState(null, '', `#${path}${qs ? `?${qs}` : ''}`);
}
