// The onnxzip package in a real browser (Debian's chromium, headless, via
// playwright-core): tests/js/browser/page.mjs imports the package and
// onnxruntime-web (wasm backend) from a private nginx (tests/js/browser/
// nginx.mjs: byte ranges, ETag, an access log of every request's Range
// and bytes sent), which also serves archives the CLI packed.
// Oracles: nginx's log (what open() fetched), the CLI (view bytes,
// extract), onnxruntime-node on the classic model (outputs), the same
// page's ORT run on the classic model's bytes (outputs, bit for bit).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launch, unavailable } from './browser/chromium.mjs';
import { CORPUS_MODELS, KERNEL_DIFFERS, difference, makeFixtures, nodeOutputs, run } from './browser/fixtures.mjs';
import { NGINX, startNginx } from './browser/nginx.mjs';
import { CLI, PACKAGE_DIR, REPO, scratch, walk } from './helpers.mjs';

const require = createRequire(import.meta.url);
const ORT_WEB_DIST = path.dirname(require.resolve('onnxruntime-web'));
const PYTHON = process.env.ONNXZIP_PYTHON || '/usr/bin/python3'; // Debian's, with python3-onnx

const skip = unavailable() ?? (fs.existsSync(NGINX) ? null : `${NGINX} absent (Debian: apt-get install nginx)`);
// .ci/run sets ONNXZIP_JS_REQUIRED=1 where the browser must be there (run_test.sh's rule)
if (skip && process.env.ONNXZIP_JS_REQUIRED === '1') throw new Error(`browser test required: ${skip}`);

let dir, models, srv, browser, page;
const byName = (name) => models.find((m) => m.name === name);
const dataUrl = (m) => `/data/${path.basename(m.archive)}`;

// The page's ozTest.fn(...args); its {ok, value|error} unwrapped (an
// error rethrown with the page's message, status and code).
async function call(fn, ...args) {
  const r = await page.evaluate(([f, a]) => window.ozTest[f](...a), [fn, args]);
  if (r.ok) return r.value;
  const e = new Error(`in the page: ${r.error.name}: ${r.error.message}`);
  Object.assign(e, { page: r.error });
  throw e;
}

async function choose(file) {
  await page.setInputFiles('#file', file);
}

// [start, end) of an nginx log entry's Range (bytes=a-b or bytes=-n).
function span(entry, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(entry.range ?? '');
  assert.ok(m, `a request without a single range: ${entry.request} Range: ${entry.range}`);
  if (m[1] === '') return [Math.max(0, size - Number(m[2])), size];
  return [Number(m[1]), m[2] === '' ? size : Number(m[2]) + 1];
}

describe('browser', { skip: skip ?? false }, () => {
  before(async () => {
    dir = scratch('oz-browser-');
    fs.mkdirSync(path.join(dir, 'data'));
    models = makeFixtures(path.join(dir, 'data'), { cli: CLI, python: PYTHON, repo: REPO });
    // a package: tests/js/make_repo.py's repository folder, packed by the CLI
    run(PYTHON, [path.join(REPO, 'tests/js/make_repo.py'), path.join(dir, 'repo'), path.join(dir, 'tensors.json')]);
    run(CLI, ['pack', path.join(dir, 'repo'), '-o', path.join(dir, 'data', 'repo.onnxzip'), '-q']);
    srv = await startNginx({ page: path.join(REPO, 'tests/js/browser'), pkg: PACKAGE_DIR,
                             ort: ORT_WEB_DIST, data: path.join(dir, 'data') });
    browser = await launch();
    page = await browser.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e}`));
    await page.goto(srv.url('page', 'index.html'));
    await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('ready'));
    assert.ok(await page.evaluate(() => window.ozTest.hasPackage()), `the package did not load from ${PACKAGE_DIR}`);
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('open(url) fetches the tail only: no weight byte', async () => {
    const m = byName('embed.onnx');
    const size = fs.statSync(m.archive).size;
    srv.clearLog();
    const info = await call('open', 'url', dataUrl(m));
    assert.equal(info.name, 'embed.onnxzip');
    assert.equal(info.size, size);
    const log = await srv.requests('/data/', { waitFor: 1 });
    assert.equal(log.length, 1, JSON.stringify(log));
    assert.equal(log[0].range, 'bytes=-65536');
    assert.equal(log[0].status, 206);
    assert.equal(log[0].bytes, 65536);
    // the 64 KiB tail reaches into the last weight only (embed.int8)
    for (const e of info.entries.filter((x) => x.name === 'embed_float' || x.name === 'embed_half')) {
      assert.ok(e.dataOffset + e.size <= size - 65536, `${e.name} inside the tail`);
    }
  });

  test('open(url, {tailBytes: 256}): tail, then the directory and model, no weight byte', async () => {
    const m = byName('embed.onnx');
    const size = fs.statSync(m.archive).size;
    srv.clearLog();
    const info = await call('open', 'url', dataUrl(m), { tailBytes: 256 });
    const log = await srv.requests('/data/', { waitFor: 2 });
    assert.ok(log.length >= 2 && log.length <= 4, JSON.stringify(log));
    assert.equal(log[0].range, 'bytes=-256');
    const weights = info.entries.filter((e) => e.name !== '__MODEL_PROTO');
    assert.equal(weights.length, 3);
    for (const entry of log) {
      const [a, b] = span(entry, size);
      assert.equal(entry.status, 206, entry.request);
      assert.equal(entry.bytes, b - a);
      for (const w of weights) {
        assert.ok(b <= w.dataOffset || a >= w.dataOffset + w.size,
          `${entry.range} fetched bytes of ${w.name} [${w.dataOffset}, ${w.dataOffset + w.size})`);
      }
      if (entry !== log[0]) assert.ok(entry.ifMatch?.startsWith('"'), `no If-Match on ${entry.range}`);
    }
    const model = info.entries.find((e) => e.name === '__MODEL_PROTO');
    assert.ok(log.some((e) => span(e, size)[0] <= model.headerOffset), 'the model was not fetched');
  });

  test('entries and tensors = the CLI\'s ls --json (URL and File)', async () => {
    const m = byName('embed.onnx');
    const ls = JSON.parse(run(CLI, ['ls', '--json', m.archive]).toString());
    const fromUrl = await call('open', 'url', dataUrl(m));
    await choose(m.archive);
    const fromFile = await call('open', 'file', null);
    for (const info of [fromUrl, fromFile]) {
      assert.deepEqual(info.entries.map((e) => [e.name, e.headerOffset, e.dataOffset, e.size, e.crc32, e.alignment]),
        ls.entries.map((e) => [e.name, e.header_offset, e.data_offset, e.size, e.crc32, e.alignment]));
      assert.deepEqual(info.tensors.map((t) => [t.name, t.dtype, t.dims, t.offset, t.byteLength]),
        ls.tensors.map((t) => [t.name, t.dtype, t.dims, t.offset, t.nbytes]));
    }
    assert.equal(fromFile.name, 'embed.onnxzip');
  });

  test('view() bytes = onnxzip view\'s (URL and File, thresholds 1K and 0)', async () => {
    for (const m of models) {
      const cliView = fs.readFileSync(m.view).toString('base64');
      assert.equal(await call('view', 'url', dataUrl(m)), cliView, `${m.name}: view(url)`);
      await choose(m.archive);
      assert.equal(await call('view', 'file', null), cliView, `${m.name}: view(File)`);
    }
    const m = byName('embed.onnx');
    const zero = run(CLI, ['view', m.archive, '-o', '-', '--size-threshold', '0']).toString('base64');
    assert.equal(await call('view', 'url', dataUrl(m), { sizeThreshold: 0 }), zero);
  });

  test('tensorData() = onnxzip extract\'s bytes', async () => {
    const m = byName('embed.onnx');
    await choose(m.archive);
    for (const name of ['embed.float', 'embed.half', 'embed.int8', 'bias']) {
      const want = run(CLI, ['extract', m.archive, name, '-o', '-']).toString('base64');
      assert.equal(await call('tensorData', 'url', dataUrl(m), name), want, `${name} (url)`);
      assert.equal(await call('tensorData', 'file', null, name), want, `${name} (File)`);
    }
  });

  test('a package (URL and File): models and files listed, readFile = the folder\'s bytes, one range each', async () => {
    const pkg = path.join(dir, 'data', 'repo.onnxzip');
    const repo = path.join(dir, 'repo');
    const tensors = JSON.parse(fs.readFileSync(path.join(dir, 'tensors.json'), 'utf8'));
    const model = 'text_encoder/model.onnx';  // not the default (onnx/model.onnx: the first by path)
    const wantFiles = walk(repo, () => true).map((p) => path.relative(repo, p).split(path.sep).join('/'))
      .filter((p) => !p.endsWith('.onnx') && !/\.onnx_data(_\d+)?$/.test(p)).sort();
    srv.clearLog();
    const fromUrl = await call('package', 'url', '/data/repo.onnxzip', { model }, Object.keys(tensors[model]));
    const log = await srv.requests('/data/repo.onnxzip', { waitFor: 1 });
    await choose(pkg);
    const fromFile = await call('package', 'file', null, { model }, Object.keys(tensors[model]));
    const { entries } = JSON.parse(run(CLI, ['ls', '--json', pkg]).toString());
    for (const [label, info] of [['url', fromUrl], ['File', fromFile]]) {
      assert.equal(info.modelPath, model, label);
      assert.deepEqual(info.models.map((m) => m.path).sort(), Object.keys(tensors).sort(), label);
      assert.deepEqual(info.models.filter((m) => m.default).map((m) => m.path), ['onnx/model.onnx'], label);
      assert.deepEqual(Object.keys(info.files).sort(), wantFiles, label);
      for (const p of wantFiles) {
        assert.equal(info.files[p], fs.readFileSync(path.join(repo, p)).toString('base64'), `${label}: ${p}`);
      }
      for (const [name, b64] of Object.entries(tensors[model])) assert.equal(info.data[name], b64, `${label}: ${name}`);
    }
    // each file: one request, its local header and its bytes
    for (const p of wantFiles) {
      const e = entries.find((x) => x.name === p);
      const reads = log.filter((r) => r.range === `bytes=${e.header_offset}-${e.data_offset + e.size - 1}`);
      assert.equal(reads.length, 1, `${p}: ${JSON.stringify(log.map((r) => r.range))}`);
      assert.equal(reads[0].status, 206);
      assert.equal(reads[0].bytes, e.data_offset + e.size - e.header_offset);
    }
  });

  test('verify(): passes on a good archive, ONNXZIP_ECRC on one flipped weight bit', async (t) => {
    const good = byName('embed.onnx');
    const size = fs.statSync(good.archive).size;
    const { progress } = await call('verify', 'url', dataUrl(good));
    assert.ok(progress.length > 0, 'no progress reported');
    assert.deepEqual(progress.at(-1), [size, size]);
    await choose(good.archive);
    await call('verify', 'file', null);
    const bad = path.join(path.dirname(good.archive), 'bad.onnxzip');
    for (const [kind, url] of [['url', '/data/bad.onnxzip'], ['file', null]]) {
      if (kind === 'file') await choose(bad);
      await assert.rejects(call('verify', kind, url), (e) => {
        t.diagnostic(`${kind}: ${e.message}`);
        assert.equal(e.page.status, 'ONNXZIP_ECRC', e.message);
        assert.ok(e.page.isOnnxzipError);
        assert.match(e.page.message, /embed_float/);
        return true;
      });
    }
  });

  test('createSession(ort, url | File): outputs = onnxruntime-node\'s on the classic model', async (t) => {
    const ort = require('onnxruntime-node');
    for (const m of models) {
      const shapes = CORPUS_MODELS[m.name] ?? {};
      const { inputs, outputs: want } = await nodeOutputs(ort, m.classic, { shapes, symbolic: m.corpus ? 1 : 3 });
      const fromUrl = await call('runArchive', 'url', dataUrl(m), inputs);
      await choose(m.archive);
      const fromFile = await call('runArchive', 'file', null, inputs);
      // the same runtime on the archive and on the classic bytes: bit for bit
      const webClassic = await runClassic(m, inputs);
      assert.equal(difference(fromUrl.outputs, webClassic.outputs)?.detail, undefined, `${m.name}: url vs classic (web)`);
      assert.equal(difference(fromFile.outputs, webClassic.outputs)?.detail, undefined, `${m.name}: File vs classic (web)`);
      const d = difference(fromUrl.outputs, want);
      if (!KERNEL_DIFFERS[m.name]) {
        assert.equal(d?.detail, undefined, `${m.name}: browser vs onnxruntime-node`);
        t.diagnostic(`${m.name}: bit for bit = onnxruntime-node`);
      } else if (d === null) {
        t.diagnostic(`${m.name}: bit for bit = onnxruntime-node`);
      } else {
        // known kernel difference: reported, and bounded far below any layout error
        t.diagnostic(`${m.name}: vs onnxruntime-node ${d.detail} — ${KERNEL_DIFFERS[m.name]}`);
        assert.ok(d.maxAbs !== undefined && d.maxAbs < 1e-5, `${m.name}: ${d.detail}`);
      }
    }
  });

  // ORT-web fetches a URL given as external data by a plain GET, which would
  // not carry the caller's headers (credentials): with `headers` the package
  // reads the file itself (range requests only) and gives ORT the bytes.
  test('createSession(ort, url, _, {headers}): only the package\'s range requests, outputs = the plain URL run\'s', async () => {
    const m = byName('embed.onnx');
    const size = fs.statSync(m.archive).size;
    const { inputs } = await nodeOutputs(require('onnxruntime-node'), m.classic, { symbolic: 3 });
    const plain = await call('runArchive', 'url', dataUrl(m), inputs);
    srv.clearLog();
    const withHeaders = await call('runArchive', 'url', dataUrl(m), inputs, { headers: { 'X-Onnxzip-Test': '1' } });
    assert.equal(difference(withHeaders.outputs, plain.outputs)?.detail, undefined);
    const log = await srv.requests('/data/', { waitFor: 2 });
    for (const entry of log) {
      const [a, b] = span(entry, size);  // fails on a request without a Range (ORT's GET)
      assert.equal(entry.status, 206, entry.request);
      assert.equal(entry.bytes, b - a);
    }
  });

  // A package's model by URL: the package reads that model's entry and tensors itself (range
  // requests), not ORT's plain GET of the whole package with its other models.
  test('createSession(ort, package url, _, {model}): the folder\'s outputs, no other model\'s byte', async () => {
    const pkg = path.join(dir, 'data', 'repo.onnxzip');
    const model = 'text_encoder/model.onnx';  // not the default
    const size = fs.statSync(pkg).size;
    const ort = require('onnxruntime-node');
    const { inputs, outputs: want } = await nodeOutputs(ort, path.join(dir, 'repo', model), { symbolic: 3 });
    // the page's ORT on the folder's model as onnx loads it (external data read, saved as one file)
    run(PYTHON, ['-c', 'import onnx, sys; onnx.save(onnx.load(sys.argv[1]), sys.argv[2])',
      path.join(dir, 'repo', model), path.join(dir, 'data', 'text_encoder.onnx')]);
    const web = await call('runClassic', '/data/text_encoder.onnx', inputs);
    srv.clearLog();
    const got = await call('runArchive', 'url', '/data/repo.onnxzip', inputs, { model });
    assert.equal(difference(got.outputs, web.outputs)?.detail, undefined, 'the package\'s model vs the folder\'s (web)');
    const d = difference(got.outputs, want);  // onnxruntime-node: its kernels may differ by a few ulp
    assert.ok(d === null || d.maxAbs < 1e-5, d?.detail);
    const { entries } = JSON.parse(run(CLI, ['ls', '--json', pkg]).toString());
    const others = entries.filter((e) => e.name.endsWith('.onnx') && e.name !== model);
    assert.ok(others.length >= 2);
    const log = await srv.requests('/data/repo.onnxzip', { waitFor: 2 });
    for (const entry of log.slice(1)) {  // after the tail: ranges, none in another model's entry
      const [a, b] = span(entry, size);
      for (const e of others) {
        assert.ok(b <= e.header_offset || a >= e.data_offset + e.size, `${entry.range} reads ${e.name}`);
      }
    }
  });
});

// The page's ORT on the classic model's bytes (corpus models copied to /data/ first).
async function runClassic(m, inputs) {
  if (m.corpus) fs.copyFileSync(m.classic, path.join(dir, 'data', m.name));
  return call('runClassic', `/data/${m.name}`, inputs);
}
