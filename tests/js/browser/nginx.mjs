// A private nginx on 127.0.0.1 for the browser test and the browser
// benchmark (the JavaScript twin of tests/remote/servers.py's Nginx):
// static locations with byte ranges, a strong ETag and Last-Modified,
// responses the browser may not cache (so every read reaches the log), and
// an access log of every request with its Range header and the body bytes
// sent, which requests() parses.
//
//   const srv = await startNginx({ page: dir, pkg: dir, ... });
//   srv.baseUrl                      // "http://127.0.0.1:PORT"
//   srv.url('pkg', 'index.js')       // baseUrl + "/pkg/index.js"
//   await srv.requests('/data/')     // [{path, status, bytes, range, ...}]
//   await srv.stop()
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const NGINX = '/usr/sbin/nginx';
const HOST = '127.0.0.1';
const LOG = '$msec\\t$request\\t$status\\t$body_bytes_sent\\t$http_range\\t$http_if_match\\t$bytes_sent';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, HOST, () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

function config(prefix, port, locations) {
  let user = '';
  if (process.getuid?.() === 0) user = 'user root root;'; // the worker reads root's 0700 dirs
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((k) => `    ${k}_temp_path ${prefix}/${k};`).join('\n');
  const locs = Object.entries(locations).map(([name, dir]) => {
    const root = path.resolve(dir);
    if (!/^[A-Za-z0-9_-]+$/.test(name) || /["$\\\n;{}]/.test(root)) {
      throw new Error(`location unusable in nginx.conf: ${name} -> ${root}`);
    }
    return `        location /${name}/ { alias "${root}/"; }`;
  }).join('\n');
  return `daemon off;
master_process on;
worker_processes 1;
${user}
pid ${prefix}/nginx.pid;
lock_file ${prefix}/nginx.lock;
error_log ${prefix}/error.log info;
events { worker_connections 256; }
http {
    types {
        text/html html;
        text/css css;
        text/javascript js mjs;
        application/wasm wasm;
        application/json json map;
        image/png png;
    }
    default_type application/octet-stream;
${temps}
    log_format oz "${LOG}";
    access_log ${prefix}/access.log oz;
    keepalive_timeout 30s;
    sendfile on;
    etag on;
    add_header Cache-Control "no-store" always;
    server {
        listen ${HOST}:${port};
        server_name localhost;
${locs}
        location / { return 404; }
    }
}
`;
}

function listening(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, HOST, () => { s.end(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts nginx serving each `locations` entry (name -> directory) under
 * /name/. Rejects with nginx's error log when it does not listen in 10 s. */
export async function startNginx(locations) {
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'oz-nginx-js-'));
  for (let attempt = 0; ; attempt++) { // the free port may be taken meanwhile
    const port = await freePort();
    const conf = path.join(prefix, 'nginx.conf');
    fs.writeFileSync(conf, config(prefix, port, locations));
    const out = fs.openSync(path.join(prefix, 'stderr.log'), 'a');
    const proc = spawn(NGINX, ['-p', prefix, '-c', conf, '-e', path.join(prefix, 'error.log')],
      { stdio: ['ignore', out, out], detached: true });
    fs.closeSync(out);
    let exited = false;
    proc.on('exit', () => { exited = true; });
    const deadline = Date.now() + 10000;
    while (!exited && Date.now() < deadline && !(await listening(port))) await sleep(20);
    if (!exited && await listening(port)) return server(prefix, port, proc);
    kill(proc);
    const log = errorLog(prefix);
    if (!/address already in use/i.test(log) || attempt === 2) {
      fs.rmSync(prefix, { recursive: true, force: true });
      throw new Error(`nginx did not start:\n${log}`);
    }
  }
}

function errorLog(prefix) {
  return ['error.log', 'stderr.log'].map((n) => {
    try { return fs.readFileSync(path.join(prefix, n), 'utf8'); } catch { return ''; }
  }).join('');
}

function kill(proc) {
  try { process.kill(-proc.pid, 'SIGKILL'); } catch { /* gone */ }
}

function parseLog(text) {
  const opt = (v) => (v === '-' ? null : v);
  return text.split('\n').filter(Boolean).map((raw) => {
    const line = raw.replace(/\\x([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
    const [t, request, status, bytes, range, ifMatch, sent] = line.split('\t');
    const [method, ...rest] = request.split(' ');
    const reqPath = rest.length > 1 ? rest.slice(0, -1).join(' ') : rest.join(' ');
    return { time: Number(t), request, method, path: reqPath, status: Number(status),
             bytes: Number(bytes), sent: Number(sent), range: opt(range), ifMatch: opt(ifMatch) };
  });
}

function server(prefix, port, proc) {
  const baseUrl = `http://${HOST}:${port}`;
  const logFile = path.join(prefix, 'access.log');
  let stopped = false;
  return {
    baseUrl,
    prefix,
    url: (location, name = '') => `${baseUrl}/${location}/${name}`,
    errorLog: () => errorLog(prefix),
    /** Access-log entries, oldest first, whose path starts with `pathPrefix`.
     * nginx logs a request once it has finished: waits up to `timeout` ms
     * for `waitFor` entries. */
    async requests(pathPrefix = '', { waitFor = 0, timeout = 2000 } = {}) {
      const deadline = Date.now() + timeout;
      for (;;) {
        let text = '';
        try { text = fs.readFileSync(logFile, 'utf8'); } catch { /* none yet */ }
        const all = parseLog(text).filter((r) => r.path.startsWith(pathPrefix));
        if (all.length >= waitFor || Date.now() >= deadline) return all;
        await sleep(20);
      }
    },
    /** Empties the access log (nginx keeps appending to the same file). */
    clearLog() { fs.truncateSync(logFile, 0); },
    async stop() {
      if (stopped) return;
      stopped = true;
      const done = new Promise((r) => (proc.exitCode !== null ? r() : proc.on('exit', r)));
      try { process.kill(-proc.pid, 'SIGTERM'); } catch { /* gone */ }
      await Promise.race([done, sleep(5000)]);
      kill(proc);
      fs.rmSync(prefix, { recursive: true, force: true });
    },
  };
}
