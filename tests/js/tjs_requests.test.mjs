// tjs_requests.test.mjs — what transformers.js 4.3.1 sends while it runs a package (transformersModel):
// nothing to any host but the package's own URL, and no byte of that URL twice.
// Every request that leaves the process is recorded: in Node.js globalThis.fetch is wrapped before
// transformers.js loads (its env.fetch is that function) and every TCP connection is recorded at
// net.Socket's connect (what undici, node:http and node:https all use); nginx's access log is the server's
// side. In chromium, playwright's page.on('request') sees every request of the page. transformers.js's
// env is left at its defaults (the Hub as remoteHost, remote models allowed), as a user has it.
// Sources: a path, bytes, a Blob, a URL (nginx) in Node.js; a URL, a File and bytes in chromium; each with
// and without a progress_callback, over make_tjs_repos.py's bert (weights inline), gpt2 (a data file,
// onnx/model.onnx_data) and make_repos.py's llama (two data chunks; a non-default fp16 model too).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launch, unavailable } from './browser/chromium.mjs';
import { NGINX, startNginx } from './browser/nginx.mjs';
import * as h from './helpers.mjs';

// ---- the recorders, installed before transformers.js is imported (it binds globalThis.fetch at load)
const sent = [];  // {via: 'fetch'|'socket', to: URL or host:port}
let allowedOrigin = null;  // the nginx serving the packages: http://127.0.0.1:PORT
const plainFetch = globalThis.fetch;
globalThis.fetch = function recordedFetch(input, init) {
  const u = new URL(input instanceof Request ? input.url : String(input));
  sent.push({ via: 'fetch', to: u.href });
  // anything else is refused here (recorded above): the test never reaches a real host
  if (u.origin !== allowedOrigin) return Promise.reject(new TypeError(`test: no request to ${u.origin}`));
  return plainFetch(input, init);
};
const plainConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function recordedConnect(...args) {
  const o = Array.isArray(args[0]) ? args[0][0] : args[0];
  const to = typeof o === 'object' && o !== null ? (o.path ?? `${o.host ?? 'localhost'}:${o.port}`)
    : typeof o === 'string' && !/^\d+$/.test(o) ? o : `${typeof args[1] === 'string' ? args[1] : 'localhost'}:${o}`;
  sent.push({ via: 'socket', to: String(to) });
  return plainConnect.apply(this, args);
};
const { env, pipeline } = await import('@huggingface/transformers');

const oz = await h.loadPackage();
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON || path.join(h.REPO, 'build-test', 'pyvenv', 'bin', 'python');
const PROMPT = 'the quick brown fox';
const REQUIRED = process.env.ONNXZIP_JS_REQUIRED === '1';
// [package, task, pipeline options]: weights inline, a data file, two data chunks (and a non-default model)
const LAYOUTS = [['bert', 'feature-extraction', {}], ['gpt2', 'text-generation', {}],
  ['llama', 'text-generation', {}], ['llama', 'text-generation', { dtype: 'fp16' }]];
let dir, srv;

function made(...args) {
  assert.ok(fs.existsSync(PYTHON), `${PYTHON} absent: the pinned venv is made by tests/python/venv.sh BUILD/pyvenv`);
  const r = spawnSync(PYTHON, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

before(async () => {
  dir = h.scratch('oz-tjs-req-');
  for (const d of ['repos', 'data']) fs.mkdirSync(path.join(dir, d));
  made(path.join(h.REPO, 'tests/js/make_tjs_repos.py'), path.join(dir, 'repos'));
  made(path.join(h.REPO, 'tests/packages/make_repos.py'), 'transformers_js', path.join(dir, 'repos', 'llama'));
  for (const name of ['bert', 'gpt2', 'llama']) {
    h.cliOk('pack', path.join(dir, 'repos', name), '-o', path.join(dir, 'data', `${name}.onnxzip`), '-q');
  }
  const require = createRequire(import.meta.url);
  const tjsDist = path.dirname(require.resolve('@huggingface/transformers'));
  srv = await startNginx({ page: path.join(h.REPO, 'tests/js/browser'), pkg: h.PACKAGE_DIR, tjs: tjsDist,
    tortweb: path.dirname(createRequire(tjsDist + '/').resolve('onnxruntime-web')), data: path.join(dir, 'data') });
  allowedOrigin = new URL(srv.baseUrl).origin;
});
after(async () => {
  await srv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const pkgFile = (name) => path.join(dir, 'data', `${name}.onnxzip`);

// A model id per run ("node/gpt2_blob_cb").
const idOf = (where, layout, kind, withCallback) =>
  `${where}/${layout.replace(' ', '_')}_${kind.toLowerCase()}_${withCallback ? 'cb' : 'nocb'}`;

// Runs the pipeline of a layout once on a package, the progress events counted.
async function runOnce(pkg, task, extra, withCallback) {
  const events = [];
  const o = pkg.pipelineOptions({ ...extra, ...(withCallback ? { progress_callback: (e) => events.push(e) } : {}) });
  const p = await pipeline(task, pkg.id, o);
  try {
    if (task === 'feature-extraction') await p(PROMPT);
    else await p.model.generate({ ...p.tokenizer(PROMPT), max_new_tokens: 2, do_sample: false });
  } finally {
    await p.dispose();
  }
  if (withCallback) assert.ok(events.some((e) => e.status === 'ready'), `no 'ready' event: ${JSON.stringify(events)}`);
}

// The byte ranges of nginx's log entries ([from, to) by the file's size): none may overlap another.
function assertEachByteOnce(log, size, what) {
  const spans = log.map((e) => {
    const m = /^bytes=(\d*)-(\d*)$/.exec(e.range ?? '');
    assert.ok(m && e.status === 206, `${what}: not a range request answered 206: ${JSON.stringify(e)}`);
    return m[1] === '' ? [size - Number(m[2]), size] : [Number(m[1]), Number(m[2]) + 1];
  }).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) {
    assert.ok(spans[i][0] >= spans[i - 1][1], `${what}: bytes ${spans[i][0]}-${Math.min(spans[i][1], spans[i - 1][1]) - 1} ` +
      `requested twice (ranges ${JSON.stringify(spans)})`);
  }
}

describe('node', () => {
  const sources = (name) => {
    const bytes = new Uint8Array(fs.readFileSync(pkgFile(name)));
    return [['path', pkgFile(name)], ['bytes', bytes], ['Blob', new Blob([bytes])], ['URL', srv.url('data', `${name}.onnxzip`)]];
  };

  for (const [name, task, extra] of LAYOUTS) {
    const layout = `${name}${extra.dtype ? ` ${extra.dtype}` : ''}`;
    test(`${layout}: path, bytes, Blob, URL, with and without a progress_callback: only the package's URL is asked`, async () => {
      for (const withCallback of [false, true]) {
        for (const [kind, src] of sources(name)) {
          const what = `${layout} from ${kind}${withCallback ? ', progress_callback' : ''}`;
          sent.length = 0;
          srv.clearLog();
          // an id of its own: transformers.js memoizes what it learnt of an id (get_file_metadata)
          const pkg = (await oz.transformersModel(src, { id: idOf('node', layout, kind, withCallback) })).install(env);
          try {
            await runOnce(pkg, task, extra, withCallback);
          } finally {
            await pkg.close();
          }
          const elsewhere = sent.filter((s) => (s.via === 'fetch' ? !s.to.startsWith(srv.url('data', `${name}.onnxzip`))
            : s.to !== new URL(srv.baseUrl).host));
          assert.deepEqual(elsewhere, [], `${what}: requests to other hosts or URLs`);
          const log = await srv.requests('/');
          assert.ok(log.every((e) => e.path === `/data/${name}.onnxzip`), `${what}: nginx logged ${JSON.stringify(log)}`);
          if (kind === 'URL') {
            assert.ok(log.length >= 2, `${what}: nginx logged ${log.length} requests`);
            assertEachByteOnce(log, fs.statSync(pkgFile(name)).size, what);
          } else assert.deepEqual(log, [], what);
        }
      }
    });
  }
});

const skip = unavailable() ?? (fs.existsSync(NGINX) ? null : `${NGINX} absent (Debian: apt-get install nginx)`);
if (skip && REQUIRED) throw new Error(`browser test required: ${skip}`);

describe('chromium', { skip: skip ?? false }, () => {
  let browser, page;
  const requested = [];
  before(async () => {
    browser = await launch();
    page = await browser.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e}`));
    page.on('request', (r) => requested.push(r.url()));
    // nothing reaches another host (each request is recorded above first)
    await page.route((u) => u.origin !== allowedOrigin, (route) => route.abort());
    await page.goto(srv.url('page', 'tjs_requests.html'));
    await page.waitForFunction(() => document.getElementById('status').textContent !== 'loading', null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.getElementById('status').textContent), 'ready');
  });
  after(async () => { await browser?.close(); });

  for (const [name, task, extra] of LAYOUTS) {
    const layout = `${name}${extra.dtype ? ` ${extra.dtype}` : ''}`;
    test(`${layout}: URL, File, bytes, with and without a progress_callback: only the package's URL is asked`, async () => {
      await page.setInputFiles('#file', pkgFile(name));
      for (const withCallback of [false, true]) {
        for (const kind of ['URL', 'File', 'bytes']) {
          const what = `${layout} from ${kind}${withCallback ? ', progress_callback' : ''}`;
          requested.length = 0;
          srv.clearLog();
          const r = await page.evaluate((a) => window.tjsRequests.run(...a),
            [kind === 'URL' ? `/data/${name}.onnxzip` : kind, idOf('page', layout, kind, withCallback), task, extra, withCallback]);
          assert.ok(r.ok, `${what}: in the page: ${r.error}`);
          // the package's URL, and ORT's wasm where the page put it (env.backends.onnx.wasm.wasmPaths)
          const pkgUrl = srv.url('data', `${name}.onnxzip`), ortWasm = srv.url('tortweb');
          assert.deepEqual(requested.filter((u) => u !== pkgUrl && !u.startsWith(ortWasm)), [],
            `${what}: requests of the page to other URLs`);
          assert.ok(requested.some((u) => u === pkgUrl) === (kind === 'URL'), `${what}: ${JSON.stringify(requested)}`);
          const log = (await srv.requests('/')).filter((e) => !e.path.startsWith('/tortweb/'));
          assert.ok(log.every((e) => e.path === `/data/${name}.onnxzip`), `${what}: nginx logged ${JSON.stringify(log)}`);
          if (kind === 'URL') assertEachByteOnce(log, fs.statSync(pkgFile(name)).size, what);
        }
      }
    });
  }
});
