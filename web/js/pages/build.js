// Build record page: one variant built for one target at one commit. Its status and the
// compiler's diagnostics, the resources the kernel uses, the PTX and machine-code
// instruction audits, where its kernel source is (source_path:line), the harness it went
// into, and the other records of the same target and variant, newest first.
// State: #/build/<id>
import { h, fill, fmtTime, shortSha, pageLink } from '../dom.js';
import { api } from '../api.js';
import { facts, missing, rawLink } from './shared.js';

const STATUS_TAG = { ok: 'st-succeeded', not_applicable: 'st-queued', compile_error: 'st-failed', timeout: 'st-timeout' };
const bytes = (v) => (v == null ? '—' : `${v} B`);

function resourcesTable(r) {
  return h('table', { class: 'grid', id: 'resources' },
    h('thead', {}, h('tr', {}, ['registers', 'spill stores', 'spill loads', 'shared memory', 'stack frame', 'constant memory'].map((t) => h('th', {}, t)))),
    h('tbody', {}, h('tr', {},
      h('td', { class: 'num' }, r.registers ?? '—'),
      h('td', { class: 'num' }, bytes(r.spill_stores_bytes)), h('td', { class: 'num' }, bytes(r.spill_loads_bytes)),
      h('td', { class: 'num' }, bytes(r.shared_mem_bytes)), h('td', { class: 'num' }, bytes(r.stack_frame_bytes)),
      h('td', { class: 'num' }, bytes(r.constant_mem_bytes)))));
}

// One audit (PTX or SASS): passed or what is missing, the required instructions and counts.
function auditRow(name, a) {
  if (!a || typeof a !== 'object') return null;
  const counts = a.counts && typeof a.counts === 'object' ? Object.entries(a.counts) : [];
  const missingList = Array.isArray(a.missing) ? a.missing : [];
  const ran = a.audited !== false;
  const verdict = !ran ? 'not audited' : missingList.length ? `missing ${missingList.join(', ')}` : a.passed === false ? 'failed' : 'passed';
  return h('tr', { dataset: { audit: name } },
    h('th', { scope: 'row' }, name),
    h('td', {}, h('span', { class: `tag ${!ran ? 'st-queued' : missingList.length || a.passed === false ? 'st-failed' : 'st-succeeded'}` }, verdict)),
    h('td', {}, Array.isArray(a.required) && a.required.length ? a.required.join(', ') : '—'),
    h('td', {}, counts.length ? counts.map(([k, v]) => `${k} ${v}`).join(' · ') : '—'),
    h('td', { class: 'muted' }, a.tool || a.source || ''));
}

function auditBox(audit) {
  if (!audit || typeof audit !== 'object' || !Object.keys(audit).length) return h('p', { class: 'muted' }, 'No instruction audit ran for this build.');
  // Records from before the machine-code audit hold the PTX audit alone, at the top level.
  const parts = audit.ptx || audit.sass ? [['PTX', audit.ptx], ['SASS', audit.sass]] : [['PTX', audit]];
  return h('table', { class: 'grid', id: 'audit' },
    h('thead', {}, h('tr', {}, ['audit', 'verdict', 'required', 'counts', 'by'].map((t) => h('th', {}, t)))),
    h('tbody', {}, parts.map(([n, a]) => auditRow(n, a))));
}

function historyTable(list, current) {
  if (!list.length) return null;
  return [h('h2', {}, 'Records of this target and variant'), h('table', { class: 'grid', id: 'history' },
    h('thead', {}, h('tr', {}, ['record', 'commit', 'status', 'registers', 'spills', 'created'].map((t) => h('th', {}, t)))),
    h('tbody', {}, list.map((b) => h('tr', { dataset: { id: b.id }, class: b.id === current ? 'selected' : '' },
      h('td', { class: 'num' }, b.id === current ? `#${b.id}` : pageLink(`/build/${b.id}`, null, `#${b.id}`)),
      h('td', {}, pageLink(`/commit/${b.commit}`, null, h('code', {}, shortSha(b.commit)))),
      h('td', {}, h('span', { class: `tag ${STATUS_TAG[b.status] || 'st-queued'}` }, b.status)),
      h('td', { class: 'num' }, b.registers ?? '—'),
      h('td', { class: 'num' }, bytes((b.spill_stores_bytes || 0) + (b.spill_loads_bytes || 0))),
      h('td', { class: 'muted' }, fmtTime(b.created))))))];
}

export async function render(root, route) {
  const id = route.arg;
  let b;
  try {
    b = await (route.first || api.build(id));
  } catch (err) {
    return missing(root, `Build record #${id}`, err);
  }
  const others = await api.builds({ target: b.target, family: b.family, variant: b.variant, limit: 20 }).catch(() => ({ items: [] }));
  const source = b.source_path ? `${b.source_path}${b.source_line ? `:${b.source_line}` : ''}` : null;
  fill(root,
    h('h1', { elementtiming: 'kport-data' }, `Build record #${b.id}: ${b.family}.${b.variant} for ${b.target} `,
      h('span', { class: `tag ${STATUS_TAG[b.status] || 'st-queued'}`, id: 'build-status' }, b.status)),
    h('p', { class: 'summary' }, 'commit ', pageLink(`/commit/${b.commit}`, null, h('code', {}, shortSha(b.commit))),
      ' · target ', pageLink(`/target/${b.target}`, { cell: `${b.family}.${b.variant}:build` }, b.target),
      b.job ? [' · ', pageLink(`/job/${b.job}`, null, `build job #${b.job} and its log`)] : null, ` · ${fmtTime(b.created)}`),
    facts('build-facts', [
      ['status', b.status],
      ['variant', `${b.family}.${b.variant}`],
      ['target', pageLink(`/target/${b.target}`, null, b.target)],
      ['commit', pageLink(`/commit/${b.commit}`, null, h('code', {}, b.commit))],
      ['job', b.job ? [pageLink(`/job/${b.job}`, null, `#${b.job}`), ` attempt ${b.attempt}`] : '—'],
      ['kernel source', source ? h('code', { id: 'source' }, source) : '—'],
      ['harness', b.artifact ? h('a', { href: `/api/v1/artifacts/${b.artifact}` }, h('code', {}, b.artifact)) : 'not in a harness'],
    ]),
    h('h2', {}, 'Diagnostics'),
    b.message ? h('pre', { class: 'log', id: 'diagnostics' }, b.message) : h('p', { class: 'muted', id: 'diagnostics' }, 'The compiler said nothing.'),
    h('h2', {}, 'Resources'), resourcesTable(b),
    h('h2', {}, 'Instruction audit'), auditBox(b.instruction_audit),
    historyTable(others.items, b.id),
    rawLink(`/api/v1/builds/${b.id}`));
  return null;
}
