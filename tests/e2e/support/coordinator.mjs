// Starts a real kport-coordinator on 127.0.0.1 with a temp database and the dashboard's
// files, and talks to its API the way operators and runners do.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export async function startCoordinator({ binary, web, db, keepDir = false, logLevel = 'warn' }) {
  const dir = mkdtempSync(join(tmpdir(), 'kport-e2e-'));
  const portFile = join(dir, 'port');
  const admin = 'kpa_e2e_admin_token';
  const registration = 'kpreg_e2e_registration_token';
  const log = openSync(join(dir, 'coordinator.log'), 'a');
  const child = spawn(binary, ['--listen', '127.0.0.1:0', '--db', db || join(dir, 'kport.db'), '--web', web,
    '--port-file', portFile, '--admin-token', admin, '--registration-token', registration,
    '--log-level', logLevel], { stdio: ['ignore', log, log] });
  let exited = null;
  child.on('exit', (code) => { exited = code; });
  for (let i = 0; i < 300 && !existsSync(portFile); i++) {
    if (exited !== null) break;
    await sleep(50);
  }
  const port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8').trim()) : 0;
  if (!port) {
    child.kill('SIGKILL');
    throw new Error(`kport-coordinator did not start; log:\n${readFileSync(join(dir, 'coordinator.log'), 'utf8')}`);
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url, admin, registration, dir,
    client: new Client(url),
    async stop() {
      if (exited === null) {
        child.kill('SIGTERM');
        for (let i = 0; i < 200 && exited === null; i++) await sleep(25);
        if (exited === null) child.kill('SIGKILL');
      }
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export class Client {
  constructor(url) { this.url = url; }

  async call(method, path, { token, body, expect } = {}) {
    const res = await fetch(this.url + path, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const data = text ? JSON.parse(text) : null;
    const ok = expect ? expect.includes(res.status) : res.ok;
    if (!ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
    return data;
  }
}
