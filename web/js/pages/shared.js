// What the record pages (result, bisection, build) share: a list of facts, the link to
// the answer the page was made from, and the page an unknown id gets.
import { h, fill } from '../dom.js';

// [[label, value], ...] as the facts list; rows that are null are left out.
export function facts(id, rows) {
  return h('dl', { class: 'facts', id }, rows.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

export function rawLink(path) {
  return h('p', { class: 'muted raw' }, 'The API answer behind this page: ', h('a', { href: path, id: 'raw-json' }, path));
}

// An id the coordinator does not know (404) or cannot read (400) gets a page that says
// so; any other failure is the router's to show.
export function missing(root, what, err) {
  if (err.status !== 404 && err.status !== 400) throw err;
  fill(root,
    h('h1', { elementtiming: 'kport-data', id: 'not-found' }, `${what} not found`),
    h('p', { class: 'error' }, err.message),
    h('p', {}, h('a', { href: '#/' }, 'Back to the overview')));
  return null;
}

// The coordinator writes a placeholder where its own address goes (it cannot know the
// address a browser reached it by); the page knows it.
export function withOrigin(command) {
  return command ? command.split('${KPORT_SERVER:-http://127.0.0.1:8080}').join(window.location.origin) : command;
}

// The part of its arch's check a job is, where a build split the check over several GPUs
// by family (payload "shard"); '' for a whole check.
export function shardText(j) {
  const s = j.payload && j.payload.shard;
  if (!s) return '';
  const named = j.payload.families || [];
  const which = named.length ? named.join(', ') : `every family but ${(j.payload.families_except || []).join(', ')}`;
  return `part ${s.index + 1} of ${s.count}: ${which}`;
}
