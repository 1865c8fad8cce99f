// Building DOM from data. Every string goes in as a text node or an attribute value,
// never as markup, so commit messages, logs and runner names cannot inject anything.

// h('a', {href: '#/x', class: 'y'}, 'text', child, [more]) -> Element
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

// Replaces an element's children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Sets text only when it changed, so live updates do not disturb a reader's selection.
export function setText(el, text) {
  const s = String(text);
  if (el.textContent !== s) el.textContent = s;
}

export function fmtNum(v, digits = 2) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(1);
  return Number(v.toFixed(digits)).toString();
}

export function fmtPct(v) {
  return v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`;
}

export function fmtTime(msOrIso) {
  if (!msOrIso) return '—';
  const d = new Date(msOrIso);
  return Number.isNaN(d.getTime()) ? String(msOrIso) : d.toISOString().replace('T', ' ').slice(0, 16) + 'Z';
}

export function shortSha(sha) {
  return sha ? String(sha).slice(0, 10) : '—';
}

// A link to a page of this dashboard; params become the hash's query.
export function pageLink(path, params, ...children) {
  return h('a', { href: hashFor(path, params) }, ...children);
}

export function hashFor(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const qs = q.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

// A "N new" button that holds live changes until the reader asks for them, so the
// page never moves under someone reading it.
export function pendingBadge(label, onApply) {
  let count = 0;
  const el = h('button', { class: 'pending', hidden: true, type: 'button' });
  el.addEventListener('click', () => {
    count = 0;
    el.hidden = true;
    onApply();
  });
  return {
    el,
    add(n = 1) {
      count += n;
      el.textContent = `${count} new ${label}${count === 1 ? '' : 's'} — show`;
      el.hidden = false;
    },
    get count() { return count; },
  };
}

// Runs fn once the frame holding what was just inserted has been painted: work that can
// wait (charts, their library) then never delays a page's first paint.
export function afterPaint(fn) {
  requestAnimationFrame(() => setTimeout(fn, 0));
}
