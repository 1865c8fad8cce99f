// Live updates: one EventSource on /api/v1/events for the whole app. Pages subscribe to
// event names; bursts are coalesced so a runner uploading a thousand results causes one
// refresh, not a thousand.
const listeners = new Set();
let source = null;

export function connect(statusEl) {
  if (source) return;
  source = new EventSource('/api/v1/events?topics=results,jobs,pipelines,runners,deliveries');
  const set = (on, text) => {
    statusEl.textContent = text;
    statusEl.classList.toggle('off', !on);
  };
  source.addEventListener('open', () => set(true, 'live'));
  source.addEventListener('error', () => set(false, 'reconnecting'));
  for (const name of ['pipeline', 'job', 'results', 'runner', 'expired', 'delivery']) {
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

// fn(name, data) for every event until the returned function is called.
export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// Calls fn at most once per `ms`, with everything queued since the last call.
export function coalesce(fn, ms = 400) {
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
