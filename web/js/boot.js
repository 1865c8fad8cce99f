// The first script the browser runs: a plain script at the top of index.html, so the
// page's data is asked for before the dashboard's own script has arrived and while the
// browser lays out its first frame. main.js takes the answer over (window.kportFirst).
import { parseHash } from './router.js';
import { prefetch } from './prefetch.js';

window.kportFirst = { hash: window.location.hash, data: prefetch(parseHash()) };
