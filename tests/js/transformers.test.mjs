// transformers.test.mjs — transformers.js (@huggingface/transformers, pinned in package.json) running a
// package through transformersModel (src/js/lib/transformers.js), in Node.js (onnxruntime-node) and in
// Debian's chromium (onnxruntime-web, the page tests/js/browser/transformers_page.mjs from a private nginx).
// Models: make_tjs_repos.py's BERT-style encoder (pipeline 'feature-extraction') and GPT-2-style decoder
// with past key values (pipeline 'text-generation', greedy), make_repos.py's transformers_js repository
// (a llama decoder in two data chunks, fp32, fp16 and q4 models), packed by the CLI.
// Oracle: the same pipeline on the same repository as a plain folder, transformers.js's own loader
// (env.localModelPath in Node.js; the folder served by nginx in chromium): embeddings bit for bit,
// generated token ids equal.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { AutoTokenizer, env, pipeline } from '@huggingface/transformers';
import { launch, unavailable } from './browser/chromium.mjs';
import { NGINX, startNginx } from './browser/nginx.mjs';
import * as h from './helpers.mjs';

const oz = await h.loadPackage();
// make_repos.py needs `tokenizers`: the pinned venv's interpreter (tests/python/venv.sh makes it)
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON || path.join(h.REPO, 'build-test', 'pyvenv', 'bin', 'python');
const PROMPT = 'the quick brown fox';
let dir;

env.allowRemoteModels = false;
env.useFSCache = false;  // nothing written under node_modules

function made(...args) {
  assert.ok(fs.existsSync(PYTHON), `${PYTHON} absent: the pinned venv is made by tests/python/venv.sh BUILD/pyvenv`);
  const r = spawnSync(PYTHON, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

before(() => {
  dir = h.scratch('oz-tjs-');
  for (const d of ['repos', 'data']) fs.mkdirSync(path.join(dir, d));
  made(path.join(h.REPO, 'tests/js/make_tjs_repos.py'), path.join(dir, 'repos'));
  made(path.join(h.REPO, 'tests/packages/make_repos.py'), 'transformers_js', path.join(dir, 'repos', 'llama'));
  made(path.join(h.REPO, 'tests/packages/make_repos.py'), 'encoder_decoder', path.join(dir, 'repos', 't5'));
  for (const name of ['bert', 'gpt2', 'llama', 't5']) {
    h.cliOk('pack', path.join(dir, 'repos', name), '-o', path.join(dir, 'data', `${name}.onnxzip`), '-q');
  }
  env.localModelPath = path.join(dir, 'repos') + '/';
});
after(() => { if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

const pkgPath = (name) => path.join(dir, 'data', `${name}.onnxzip`);

async function embed(id, options) {
  const p = await pipeline('feature-extraction', id, options);
  try {
    const out = await p(PROMPT);
    return { dims: out.dims, bytes: Buffer.from(out.data.buffer, out.data.byteOffset, out.data.byteLength) };
  } finally {
    await p.dispose();
  }
}

async function generate(id, options, n = 12, task = 'text-generation') {
  const p = await pipeline(task, id, options);
  try {
    const out = await p.model.generate({ ...p.tokenizer(PROMPT), max_new_tokens: n, do_sample: false });
    return Array.from(out.data, Number);
  } finally {
    await p.dispose();
  }
}

// Runs `use(id, options)` on a package of `source`, installed as env.customCache, then closes it.
async function onPackage(source, use, options = {}) {
  const pkg = (await oz.transformersModel(source, { id: 'pkg/test' })).install(env);
  try {
    return await use(pkg.id, pkg.pipelineOptions(options));
  } finally {
    await pkg.close();
  }
}

describe('node', () => {
  let server;
  before(async () => { server = await h.rangeServer(); });
  after(async () => { await server?.close(); });

  // the package from every kind of source: a path, a file: URL, bytes, a Blob, an http URL
  const sources = (name) => {
    const bytes = new Uint8Array(fs.readFileSync(pkgPath(name)));
    return [['path', pkgPath(name)], ['bytes', bytes], ['Blob', new Blob([bytes])],
      ['http URL', server.serve(`${name}.onnxzip`, pkgPath(name))]];
  };

  test('feature-extraction (BERT-style): embeddings bit for bit those of the folder', async () => {
    const want = await embed('bert');
    assert.deepEqual(want.dims, [1, 5, 64]);
    for (const [kind, src] of sources('bert')) {
      const got = await onPackage(src, embed);
      assert.deepEqual(got.dims, want.dims, kind);
      assert.ok(got.bytes.equals(want.bytes), `${kind}: embeddings differ from the folder's`);
    }
  });

  test('text-generation (GPT-2-style, past key values, data file): token ids of the folder', async () => {
    const want = await generate('gpt2');
    assert.equal(want.length, 5 + 12);
    assert.ok(new Set(want.slice(5)).size > 1, `a degenerate generation: ${want}`);
    for (const [kind, src] of sources('gpt2')) {
      assert.deepEqual(await onPackage(src, generate), want, kind);
    }
    // with a progress_callback transformers.js reads each file's body as a stream (a Blob: data served as bytes)
    const progress = [];
    const withProgress = await onPackage(new Blob([fs.readFileSync(pkgPath('gpt2'))]), generate, { progress_callback: (p) => progress.push(p) });
    assert.deepEqual(withProgress, want, 'progress_callback');
    assert.ok(progress.some((p) => p.status === 'done' && p.file === 'onnx/model.onnx_data'), JSON.stringify(progress));
  });

  test('a llama repository in two data chunks, fp32, fp16 and q4 models: token ids of the folder', async () => {
    for (const dtype of ['fp32', 'fp16', 'q4']) {
      const want = await generate('llama', { dtype });
      for (const [kind, src] of sources('llama')) {
        assert.deepEqual(await onPackage(src, (id, o) => generate(id, o), { dtype }), want, `${dtype} from ${kind}`);
      }
    }
  });

  test('a URL: the fp32 model of a package of three reads no byte of the fp16 model\'s tensors', async () => {
    const url = server.serve('llama-ranges.onnxzip', pkgPath('llama'));
    const ranges = [];
    const counting = (u, init) => {
      ranges.push(new Headers(init?.headers).get('range'));
      return fetch(u, init);
    };
    const want = await generate('llama', { dtype: 'fp32' });
    const pkg = (await oz.transformersModel(url, { fetch: counting })).install(env);
    try {
      assert.deepEqual(await generate(pkg.id, pkg.pipelineOptions({ dtype: 'fp32' })), want);
    } finally {
      await pkg.close();
    }
    const size = fs.statSync(pkgPath('llama')).size;
    const spans = ranges.map((r) => {
      const m = /^bytes=(\d*)-(\d*)$/.exec(r ?? '');
      assert.ok(m, `not a single range: ${r}`);
      return m[1] === '' ? [size - Number(m[2]), size, 'tail'] : [Number(m[1]), Number(m[2]) + 1];
    });
    assert.equal(spans.filter((x) => x[2]).length, 1, `one open, one tail: ${ranges}`);
    // the oracle: the CLI's listing of each model's tensors
    const entries = (model) => JSON.parse(h.cliOk('ls', '--json', '--model', model, pkgPath('llama')).toString())
      .tensors.filter((t) => t.storage === 'entry').map((t) => [t.offset, t.offset + t.nbytes]);
    const fp32 = entries('onnx/model.onnx');
    for (const [a, b] of entries('onnx/model_fp16.onnx')) {
      // the open's 64 KiB tail (of a 0.4 MB package) reaches into the last tensors, the others must not
      for (const [x, y] of spans.filter((sp) => !sp[2])) {
        assert.ok(y <= a || x >= b, `fetched [${x}, ${y}) overlaps an fp16 tensor at [${a}, ${b})`);
      }
    }
    for (const [a, b] of fp32) assert.ok(spans.some(([x, y]) => x <= a && y >= b), `fp32 tensor [${a}, ${b}) not fetched`);
  });

  test('text2text-generation (T5-style encoder and decoder, a tied embedding stored once): the folder\'s ids', async () => {
    const t2t = (id, o) => generate(id, o, 8, 'text2text-generation');
    const want = await t2t('t5');
    assert.equal(want.length, 1 + 8);
    for (const [kind, src] of sources('t5')) assert.deepEqual(await onPackage(src, t2t), want, kind);
  });

  test('install() chains a custom cache set before; close() gives it back', async () => {
    const asked = [];
    const before = { match: async (k) => { asked.push(k); return undefined; }, put: async () => {} };
    env.customCache = before;
    env.useCustomCache = true;
    const [fetchBefore, localBefore] = [env.fetch, env.allowLocalModels];
    env.allowLocalModels = false;  // a browser's default
    try {
      const pkg = (await oz.transformersModel(pkgPath('bert'))).install(env);
      assert.equal(pkg.id, 'onnxzip/bert');
      assert.equal(env.customCache, pkg);
      assert.equal(env.allowLocalModels, true);
      // env.fetch answers the package's id (a Range too), passes on the rest
      assert.notEqual(env.fetch, fetchBefore);
      const head = await env.fetch('https://huggingface.co/onnxzip/bert/resolve/main/config.json', { headers: { Range: 'bytes=0-0' } });
      const cfgSize = fs.statSync(path.join(dir, 'repos/bert/config.json')).size;
      assert.deepEqual([head.status, head.headers.get('content-range')], [206, `bytes 0-0/${cfgSize}`]);
      assert.equal((await env.fetch('/models/onnxzip/bert/preprocessor_config.json')).status, 404);
      await assert.rejects(env.fetch('http://127.0.0.1:1/other/model/config.json'));  // the plain fetch: nobody listens
      assert.equal(await pkg.match('other/model/config.json'), undefined);
      assert.deepEqual(asked, ['other/model/config.json']);
      const cfg = await pkg.match(`${env.localModelPath}onnxzip/bert/config.json`);
      assert.deepEqual(JSON.parse(await cfg.text()), JSON.parse(fs.readFileSync(path.join(dir, 'repos/bert/config.json'))));
      const remote = await pkg.match('https://huggingface.co/onnxzip/bert/resolve/main/tokenizer.json');
      assert.ok(Buffer.from(await remote.arrayBuffer()).equals(fs.readFileSync(path.join(dir, 'repos/bert/tokenizer.json'))));
      await pkg.close();
      assert.equal(env.customCache, before);
      assert.equal(env.useCustomCache, true);
      assert.equal(env.allowLocalModels, false);
      assert.equal(env.fetch, fetchBefore);
    } finally {
      env.customCache = null;
      env.useCustomCache = false;
      Object.assign(env, { fetch: fetchBefore, allowLocalModels: localBefore });
    }
  });

  test('a file the package lacks is not fetched from the Hub; a failed read reaches pipeline()', async () => {
    // no tokenizer in the package: with remote models allowed, transformers.js must not ask its host
    const repo = path.join(dir, 'notok');
    fs.cpSync(path.join(dir, 'repos', 'bert'), repo, { recursive: true });
    fs.rmSync(path.join(repo, 'tokenizer.json'));
    const pkgFile = path.join(dir, 'data', 'notok.onnxzip');
    h.cliOk('pack', repo, '-o', pkgFile, '-q');
    const asked = [];
    const hub = http.createServer((req, res) => { asked.push(req.url); res.writeHead(404).end(); });
    await new Promise((resolve) => hub.listen(0, '127.0.0.1', resolve));
    Object.assign(env, { allowRemoteModels: true, remoteHost: `http://127.0.0.1:${hub.address().port}/` });
    const plainFetch = env.fetch;
    try {
      await assert.rejects(onPackage(pkgFile, embed), /tokenizer\.json/);
      // without local_files_only too: install()'s env.fetch answers the package's id itself (404); the
      // tokenizer alone (a pipeline rejects at the first failure and its model's load goes on, past close())
      await assert.rejects(onPackage(pkgFile, (id) => AutoTokenizer.from_pretrained(id)), /tokenizer\.json/);
      assert.deepEqual(asked, [], 'the host was asked for a file of the package\'s id');
      // the oracle of these checks: the same call, env.fetch put back to fetch, does ask the host
      await assert.rejects(onPackage(pkgFile, (id, o) => {
        env.fetch = plainFetch;
        return embed(id, { ...o, local_files_only: false });
      }));
    } finally {
      Object.assign(env, { allowRemoteModels: false, remoteHost: 'https://huggingface.co/', fetch: plainFetch });
      await new Promise((resolve) => hub.close(resolve));
    }
    assert.ok(asked.length >= 1 && asked.every((u) => u.includes('tokenizer')), JSON.stringify(asked));
    assert.equal(asked.filter((u) => u.endsWith('/tokenizer.json')).length, 1, JSON.stringify(asked));
    // the served file changes after open: ONNXZIP_ECHANGED, not "file not found"
    const copy = path.join(dir, 'data', 'changing.onnxzip');
    fs.copyFileSync(pkgPath('bert'), copy);
    const url = server.serve('changing.onnxzip', copy);
    await assert.rejects(onPackage(url, async (id, o) => {
      fs.appendFileSync(copy, 'x');
      return embed(id, o);
    }), (e) => e instanceof oz.OnnxzipError && e.status === 'ONNXZIP_ECHANGED');
  });

  test('a single-model archive is refused, saying what transformers.js needs', async () => {
    const single = path.join(dir, 'data', 'single.onnxzip');
    h.cliOk('pack', path.join(dir, 'repos', 'bert', 'onnx', 'model.onnx'), '-o', single, '-q');
    await assert.rejects(oz.transformersModel(single), (e) => e.status === 'ONNXZIP_EINVAL' && /onnxzip pack DIR/.test(e.message));
    await assert.rejects(oz.transformersModel(pkgPath('bert'), { id: 'a b' }), TypeError);
    await assert.rejects(oz.transformersModel(pkgPath('bert'), { model: 'onnx/model.onnx' }), TypeError);
  });
});

const require = createRequire(import.meta.url);
const TJS_DIST = path.dirname(require.resolve('@huggingface/transformers'));  // its dist/
// the onnxruntime-web transformers.js depends on (its wasm must match the bundle's ORT)
const TJS_ORT = path.dirname(createRequire(TJS_DIST + '/').resolve('onnxruntime-web'));
const skip = unavailable() ?? (fs.existsSync(NGINX) ? null : `${NGINX} absent (Debian: apt-get install nginx)`);
if (skip && process.env.ONNXZIP_JS_REQUIRED === '1') throw new Error(`browser test required: ${skip}`);

describe('chromium', { skip: skip ?? false }, () => {
  let srv, browser, page;
  before(async () => {
    srv = await startNginx({ page: path.join(h.REPO, 'tests/js/browser'), pkg: h.PACKAGE_DIR, tjs: TJS_DIST,
      tortweb: TJS_ORT, repos: path.join(dir, 'repos'), data: path.join(dir, 'data') });
    browser = await launch();
    page = await browser.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e}`));
    await page.goto(srv.url('page', 'transformers.html'));
    await page.waitForFunction(() => document.getElementById('status').textContent === 'ready', null, { timeout: 60000 });
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  async function call(fn, ...args) {
    const r = await page.evaluate(([f, a]) => window.tjsTest[f](...a), [fn, args]);
    if (!r.ok) throw new Error(`in the page: ${r.error.name}: ${r.error.message}`);
    return r.value;
  }

  const strip = ({ loadMs, ...r }) => r;

  test('feature-extraction: a URL and a File give the folder\'s embeddings, bit for bit', async () => {
    const want = strip(await call('embed', 'folder:bert', PROMPT));
    assert.deepEqual(want.dims, [1, 5, 64]);
    assert.deepEqual(strip(await call('embed', 'url:/data/bert.onnxzip', PROMPT)), want, 'URL');
    await page.setInputFiles('#file', pkgPath('bert'));
    assert.deepEqual(strip(await call('embed', 'file', PROMPT)), want, 'File');
  });

  test('text-generation (GPT-2-style, llama in two chunks): the folder\'s token ids; a URL read by ranges', async () => {
    for (const name of ['gpt2', 'llama']) {
      const want = (await call('generate', `folder:${name}`, PROMPT, 12)).ids;
      assert.equal(want.length, 5 + 12, name);
      srv.clearLog();
      assert.deepEqual((await call('generate', `url:/data/${name}.onnxzip`, PROMPT, 12)).ids, want, `${name} from a URL`);
      const log = await srv.requests('/data/', { waitFor: 2 });
      assert.ok(log.length >= 2, JSON.stringify(log));
      for (const r of log) assert.ok(r.status === 206 && r.range, `not a range request: ${JSON.stringify(r)}`);
      await page.setInputFiles('#file', pkgPath(name));
      assert.deepEqual((await call('generate', 'file', PROMPT, 12)).ids, want, `${name} from a File`);
    }
  });

  test('text2text-generation (T5-style, two sessions from one package): the folder\'s token ids', async () => {
    // make_repos.py's config does not say the models have data files: in a browser transformers.js then
    // loads none, and the folder cannot run; the pipeline option says it
    const args = [PROMPT, 8, 'text2text-generation', { dtype: 'fp32', use_external_data_format: true }];
    const want = (await call('generate', 'folder:t5', ...args)).ids;
    assert.equal(want.length, 1 + 8);
    assert.deepEqual((await call('generate', 'url:/data/t5.onnxzip', ...args)).ids, want, 'URL');
    await page.setInputFiles('#file', pkgPath('t5'));
    assert.deepEqual((await call('generate', 'file', ...args)).ids, want, 'File');
  });
});
