// The operator's controls shared by the pipeline and job pages: a field for the admin
// token (kept in this tab's session storage) and buttons that call the API with it,
// reporting what came back in one status line.
import { h } from './dom.js';
import { adminToken, postAdmin } from './api.js';

export function tokenField() {
  const input = h('input', { type: 'password', id: 'admin-token', autocomplete: 'off', placeholder: 'kpa_…',
    value: adminToken(), onchange: () => adminToken(input.value.trim()) });
  return h('details', { class: 'admin', open: adminToken() ? null : true },
    h('summary', {}, 'Admin token'), h('label', {}, 'Re-run and cancel need it: ', input));
}

// A button that POSTs `path`; `done(answer)` runs on success. Errors land in `status`.
export function actionButton(label, path, status, done, attrs = {}) {
  const button = h('button', { type: 'button', class: 'action', ...attrs });
  button.textContent = label;
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.className = 'action-status muted';
    status.textContent = `${label}…`;
    try {
      const answer = await postAdmin(path);
      status.className = 'action-status';
      status.textContent = `${label}: done`;
      await done(answer);
    } catch (err) {
      status.className = 'action-status error';
      status.textContent = `${label}: ${err.message || err}`;
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

export const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);
