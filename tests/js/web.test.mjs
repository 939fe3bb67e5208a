// tools/web (the page a user drops an archive on) in Debian's chromium,
// headless, served as it is by a private nginx (tests/js/browser/nginx.mjs)
// with the package under test and onnxruntime-web (?pkg= and ?ort= of its
// CONFIG). Files are chosen through the page's file input, as a user does.
// Data: tests/packages/make_repos.py's encoder_decoder repository (two
// models, a default and another, plain files) plus three files added here
// (markup, binary, large text), packed by the CLI; a model with long tensor
// names and one that runs only with edited shapes (web_models.py). Oracles:
// the folder (its models, its files' bytes), the CLI's ls --json (default
// model, tensors), onnxruntime-node on the folder's (or the classic) model
// with the inputs the page fed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launch, unavailable } from './browser/chromium.mjs';
import { difference, run } from './browser/fixtures.mjs';
import { NGINX, startNginx } from './browser/nginx.mjs';
import { CLI, PACKAGE_DIR, REPO, scratch, walk } from './helpers.mjs';

const require = createRequire(import.meta.url);
const ORT_WEB_DIST = path.dirname(require.resolve('onnxruntime-web'));
const PYTHON = process.env.ONNXZIP_PYTHON || '/usr/bin/python3'; // Debian's, with python3-onnx
// make_repos.py needs the `tokenizers` package: the build's pinned venv (tests/python/venv.sh)
const PYVENV_PYTHON = process.env.ONNXZIP_PYVENV_PYTHON || path.join(REPO, 'build-test', 'pyvenv', 'bin', 'python');
const ENCODER = 'onnx/encoder_model.onnx'; // not the package's default model
const WIDTH = 1280;

const skip = unavailable() ?? (fs.existsSync(NGINX) ? null : `${NGINX} absent (Debian: apt-get install nginx)`)
  ?? (fs.existsSync(PYVENV_PYTHON) ? null : `${PYVENV_PYTHON} absent (tests/python/venv.sh BUILD/pyvenv)`);
if (skip && process.env.ONNXZIP_JS_REQUIRED === '1') throw new Error(`web test required: ${skip}`);

let dir, repo, srv, browser, page;

function pageUrl(params = {}) {
  const url = new URL(srv.url('web', 'index.html'));
  url.searchParams.set('pkg', '/pkg/index.js');
  url.searchParams.set('ort', '/ort/');
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url;
}

async function openPage() {
  page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
  page.on('pageerror', (e) => console.error(`page error: ${e}`));
  await page.goto(pageUrl().href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
}

async function choose(file) {
  await page.evaluate(() => { document.getElementById('summary').hidden = true; }); // shown again once `file` is open
  await page.setInputFiles('#file', file);
  await page.waitForFunction(() => !document.getElementById('summary').hidden &&
    !document.getElementById('status').textContent.startsWith('opening'), null, { timeout: 30000 });
}

// the rows of a section's table as arrays of cell texts
const rows = (section) => page.$$eval(`#${section} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
const text = (id) => page.$eval(`#${id}`, (e) => e.textContent);
const field = (input, dim) => `#inputs input[data-input="${input}"][data-dim="${dim}"]`;

async function chooseModel(model) {
  await page.selectOption('#model', model);
  await page.waitForFunction((m) => document.querySelector('#summary')?.textContent.includes(`${m}:`), model, { timeout: 30000 });
  await page.waitForSelector('#inputs:not([hidden])');
}

async function runPage() {
  await page.evaluate(() => { delete window.onnxzipWeb; document.getElementById('run-result').textContent = ''; });
  await page.click('#run');
  await page.waitForFunction(() => /^(session|run failed|not run)/.test(document.getElementById('run-result').textContent),
    null, { timeout: 60000 });
  return text('run-result');
}

// what the page fed and got in its last run, as {name: {type, dims, b64}}
function lastRun() {
  return page.evaluate(() => {
    const form = (m) => Object.fromEntries(Object.entries(m).map(([k, t]) => {
      const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      return [k, { type: t.type, dims: [...t.dims], b64: btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join('')) }];
    }));
    const r = window.onnxzipWeb?.lastRun;
    return r ? { model: r.model, inputs: form(r.inputs), outputs: form(r.outputs) } : null;
  });
}

const ARRAYS = { float32: Float32Array, int64: BigInt64Array, float16: Uint16Array };

async function nodeRun(model, inputs) {
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(model, { logSeverityLevel: 3 });
  const feeds = Object.fromEntries(Object.entries(inputs).map(([k, t]) => {
    const buf = Buffer.from(t.b64, 'base64');
    const Arr = ARRAYS[t.type];
    return [k, new ort.Tensor(t.type, new Arr(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)), t.dims)];
  }));
  const out = await session.run(feeds);
  await session.release();
  return Object.fromEntries(Object.entries(out).map(([k, t]) =>
    [k, { type: t.type, dims: [...t.dims], b64: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('base64') }]));
}

describe('tools/web', { skip: skip ?? false }, () => {
  before(async () => {
    dir = scratch('oz-web-');
    repo = path.join(dir, 'repo');
    fs.mkdirSync(path.join(dir, 'data'));
    run(PYVENV_PYTHON, [path.join(REPO, 'tests/packages/make_repos.py'), 'encoder_decoder', repo]);
    // files the page must not render as markup, must show as binary, must truncate
    fs.writeFileSync(path.join(repo, 'notes.html'), '<img src=x onerror="window.pwned=1"><b>bold</b> & more\n');
    fs.writeFileSync(path.join(repo, 'blob.bin'), Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37) & 255)));
    fs.writeFileSync(path.join(repo, 'large.txt'), 'a line of text, repeated to 300 KiB\n'.repeat(8534));
    run(CLI, ['pack', repo, '-o', path.join(dir, 'data', 'repo.onnxzip'), '-q']);
    run(PYTHON, [path.join(REPO, 'tests/js/web_models.py'), dir]);
    for (const m of ['long_names', 'shapes', 'image']) run(CLI, ['pack', path.join(dir, `${m}.onnx`), '-o', path.join(dir, 'data', `${m}.onnxzip`), '-q']);
    run(CLI, ['pack', path.join(dir, 'image_repo'), '-o', path.join(dir, 'data', 'image_repo.onnxzip'), '-q']);
    srv = await startNginx({ web: path.join(REPO, 'tools/web'), pkg: PACKAGE_DIR, ort: ORT_WEB_DIST, data: path.join(dir, 'data') });
    browser = await launch();
    await openPage();
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a package: its models (default selected) and files listed, as the folder and the CLI have them', async () => {
    const pkg = path.join(dir, 'data', 'repo.onnxzip');
    await choose(pkg);
    const ls = JSON.parse(run(CLI, ['ls', '--json', pkg]).toString());
    const options = await page.$$eval('#model option', (os) => os.map((o) => ({ value: o.value, selected: o.selected, text: o.textContent })));
    const folderModels = walk(repo, (n) => n.endsWith('.onnx')).map((p) => path.relative(repo, p).split(path.sep).join('/'));
    assert.deepEqual(options.map((o) => o.value).sort(), folderModels.sort());
    assert.deepEqual(options.filter((o) => o.selected).map((o) => o.value), [ls.default_model]);
    assert.match(options.find((o) => o.selected).text, /default/);
    const folderFiles = walk(repo, () => true).map((p) => path.relative(repo, p).split(path.sep).join('/'))
      .filter((p) => !p.endsWith('.onnx') && !/\.onnx_data(_\d+)?$/.test(p));
    const listed = await rows('files');
    assert.deepEqual(listed.map((r) => r[0]).sort(), folderFiles.sort());
    for (const [p, size] of listed) assert.equal(Number(size), fs.statSync(path.join(repo, p)).size, p);
    assert.match(await text('summary'), new RegExp(`package of ${folderModels.length} models and ${folderFiles.length} files`));
  });

  test('a plain file shown: config.json pretty-printed, markup as text, binary in hex, large text cut', async () => {
    await choose(path.join(dir, 'data', 'repo.onnxzip'));
    const show = async (p) => {
      await page.click(`#files button[data-path="${p}"]`);
      await page.waitForFunction(() => document.getElementById('file-note').textContent !== 'reading …');
      return { note: await text('file-note'), content: await text('file-content'), path: await text('file-path') };
    };
    const config = await show('config.json');
    assert.equal(config.path, 'config.json');
    assert.equal(config.content, JSON.stringify(JSON.parse(fs.readFileSync(path.join(repo, 'config.json'), 'utf8')), null, 2));
    assert.match(config.note, new RegExp(`^JSON, ${fs.statSync(path.join(repo, 'config.json')).size} bytes`));

    const notes = await show('notes.html');
    assert.equal(notes.content, fs.readFileSync(path.join(repo, 'notes.html'), 'utf8'));
    assert.equal(await page.$$eval('#file-content *', (es) => es.length), 0, 'the file became markup');
    assert.equal(await page.evaluate(() => window.pwned), undefined);

    const blob = await show('blob.bin');
    assert.match(blob.note, /^binary, 3000 bytes .*: the first 512 bytes in hex$/);
    const lines = blob.content.split('\n');
    assert.equal(lines.length, 32);
    const bytes = fs.readFileSync(path.join(repo, 'blob.bin'));
    assert.equal(lines[1].slice(0, 57), `00000010  ${Array.from(bytes.subarray(16, 32), (b) => b.toString(16).padStart(2, '0')).join(' ')}`);

    const large = await show('large.txt');
    const want = fs.readFileSync(path.join(repo, 'large.txt'), 'utf8');
    assert.match(large.note, new RegExp(`^text, ${want.length} bytes .*: the first ${256 * 1024} bytes shown$`));
    assert.equal(large.content, want.slice(0, 256 * 1024));
  });

  test('a non-default model chosen: its tensors, its inputs with their symbolic dimensions', async () => {
    const pkg = path.join(dir, 'data', 'repo.onnxzip');
    await choose(pkg);
    await chooseModel(ENCODER);
    const ls = JSON.parse(run(CLI, ['ls', '--json', '--model', ENCODER, pkg]).toString());
    assert.deepEqual((await rows('tensors')).map((r) => r[0]), ls.tensors.map((t) => t.name));
    assert.equal(await page.$eval('#model', (s) => s.value), ENCODER);
    const inputs = await page.$$eval('#inputs tbody tr', (trs) => trs.map((tr) => ({
      name: tr.cells[0].textContent, type: tr.cells[1].textContent,
      dims: [...tr.querySelectorAll('label.dim')].map((l) => [l.querySelector('span').textContent, l.querySelector('input').value]),
    })));
    // the encoder's graph: input_ids int64 [1, encoder_sequence_length]
    assert.deepEqual(inputs, [{ name: 'input_ids', type: 'int64', dims: [['', '1'], ['encoder_sequence_length', '1']] }]);
  });

  test('an edited shape runs: outputs = onnxruntime-node on the folder\'s model with the page\'s inputs', async () => {
    await choose(path.join(dir, 'data', 'repo.onnxzip'));
    await chooseModel(ENCODER);
    await page.fill(field('input_ids', 1), '7');
    const result = await runPage();
    assert.match(result, /^session /, result);
    const r = await lastRun();
    assert.equal(r.model, ENCODER);
    assert.deepEqual(r.inputs.input_ids.dims, [1, 7]);
    assert.deepEqual(r.outputs.last_hidden_state.dims, [1, 7, 64]);
    assert.deepEqual(await rows('outputs').then((o) => o.map((x) => x.slice(0, 3))), [['last_hidden_state', 'float32', '[1, 7, 64]']]);
    const want = await nodeRun(path.join(repo, ENCODER), r.inputs);
    const d = difference(r.outputs, want);
    // MatMul: wasm SIMD and MLAS kernels may differ in the last bits (browser/fixtures.mjs KERNEL_DIFFERS)
    assert.ok(d === null || (d.maxAbs !== undefined && d.maxAbs < 1e-5), d?.detail);
  });

  test('bad shapes: refused before Run with the field named; a fixed dimension is not editable, its title says so', async () => {
    await choose(path.join(dir, 'data', 'repo.onnxzip'));
    await chooseModel(ENCODER);
    for (const bad of ['0', '-3', '2.5', 'abc', '']) {
      await page.fill(field('input_ids', 1), bad);
      const result = await runPage();
      assert.equal(result, `not run: input input_ids, dimension 1 (encoder_sequence_length): "${bad}" is not a positive integer`);
      assert.equal(await page.$eval(field('input_ids', 1), (f) => f.classList.contains('invalid')), true);
      assert.equal(await lastRun(), null);
    }
    await page.fill(field('input_ids', 1), '3');
    assert.match(await runPage(), /^session /);
    assert.equal(await page.$eval(field('input_ids', 1), (f) => f.classList.contains('invalid')), false);
    // fixed 1 in the model: shown, not editable (a disabled field), its title says why
    const fixed = await page.$eval(field('input_ids', 0),
      (f) => ({ disabled: f.disabled, title: f.title, value: f.value, editable: f.matches(':read-write') }));
    assert.deepEqual(fixed, { disabled: true, title: 'fixed in the model: 1', value: '1', editable: false });
    const symbolic = await page.$eval(field('input_ids', 1), (f) => ({ disabled: f.disabled, editable: f.matches(':read-write') }));
    assert.deepEqual(symbolic, { disabled: false, editable: true });
  });

  test('every kind of input shape: symbolic, scalar, unknown rank; a run that needs edited shapes = onnxruntime-node', async () => {
    await choose(path.join(dir, 'data', 'shapes.onnxzip'));
    const inputs = await page.$$eval('#inputs tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[2].textContent,
      [...tr.querySelectorAll('input')].map((f) => [f.dataset.dim, f.dataset.symbol ?? null, f.value])]));
    assert.deepEqual(inputs, [
      ['X', 'heightwidth', [['0', null, '1'], ['1', null, '3'], ['2', 'height', '1'], ['3', 'width', '1']]],
      ['scale', 'scalar', []],
      ['bias', 'shape', [['all', null, '1']]],
      ['half', '', [['0', null, '2']]],
    ]);
    // as filled: X [1, 3, 1, 1] cannot be reshaped to [1, 3, 4, 8]: ORT's error, shown
    assert.match(await runPage(), /^run failed: .*Reshape/i);
    for (const d of [0, 1]) assert.equal(await page.$eval(field('X', d), (f) => f.disabled), true, `X dimension ${d} is fixed`);
    await page.fill(field('X', 2), '4');
    await page.fill(field('X', 3), '8');
    await page.fill(field('bias', 'all'), '1, 8');
    const result = await runPage();
    assert.match(result, /^session /, result);
    const r = await lastRun();
    assert.deepEqual(Object.fromEntries(Object.entries(r.inputs).map(([k, t]) => [k, t.dims])), { X: [1, 3, 4, 8], scale: [], bias: [1, 8], half: [2] });
    // Reshape, Mul, Add: exact in both runtimes
    assert.equal(difference(r.outputs, await nodeRun(path.join(dir, 'shapes.onnx'), r.inputs))?.detail, undefined);
    await page.fill(field('bias', 'all'), '1, x');
    assert.equal(await runPage(), 'not run: input bias, shape: "x" is not a positive integer');
  });

  test(`tables fit a ${WIDTH} px window: long names wrap (full name in the title), shapes on one line`, async () => {
    await choose(path.join(dir, 'data', 'long_names.onnxzip'));
    assert.match(await runPage(), /^session /);
    const layout = await page.evaluate(() => {
      const lines = (td) => { const r = document.createRange(); r.selectNodeContents(td); return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size; };
      return {
        page: document.documentElement.scrollWidth,
        tables: [...document.querySelectorAll('table')].filter((t) => t.checkVisibility()).map((t) => ({
          id: t.parentElement.id, scrollWidth: t.scrollWidth, right: t.getBoundingClientRect().right,
          lastHeader: t.tHead.rows[0].cells[t.tHead.rows[0].cells.length - 1].getBoundingClientRect().right,
        })),
        names: [...document.querySelectorAll('#tensors tbody tr')].map((tr) => [tr.cells[0].textContent, tr.cells[0].title]),
        shapeLines: [...document.querySelectorAll('#tensors tbody tr, #outputs tbody tr')].map((tr) => lines(tr.cells[2])),
      };
    });
    for (const t of layout.tables) {
      assert.ok(t.scrollWidth <= WIDTH && t.right <= WIDTH && t.lastHeader <= WIDTH, `#${t.id}: ${JSON.stringify(t)}`);
    }
    assert.ok(layout.page <= WIDTH, `the page is ${layout.page} px wide`);
    assert.deepEqual(layout.tables.map((t) => t.id).sort(), ['entries', 'inputs', 'outputs', 'tensors']);
    assert.equal(layout.names.length, 3);
    for (const [name, title] of layout.names) {
      assert.ok(name.length > 100, name);
      assert.equal(title, name);
    }
    assert.deepEqual(layout.shapeLines, [1, 1, 1, 1]);
  });
  test('symbolic dimensions start at what the model says: its metadata (imgsz), its package\'s preprocessor_config.json; batch 1', async () => {
    for (const [file, source] of [['image.onnxzip', /the image (height|width) from the model's metadata \(imgsz\)/],
      ['image_repo.onnxzip', /the image (height|width) from preprocessor_config.json \(crop_size\)/]]) {
      await choose(path.join(dir, 'data', file));
      const fields = await page.$$eval('#inputs input', (fs) => fs.map((f) => [f.dataset.dim, f.dataset.symbol ?? null, f.value, f.title]));
      assert.deepEqual(fields.map((f) => f.slice(0, 3)), [['0', 'batch', '1'], ['1', null, '3'], ['2', 'height', '4'], ['3', 'width', '8']], file);
      assert.match(fields[0][3], /a batch of one/);
      assert.match(fields[2][3], source);
      assert.match(fields[3][3], source);
      const result = await runPage(); // no field touched: runs as the model needs
      assert.match(result, /^session /, `${file}: ${result}`);
      assert.deepEqual((await lastRun()).inputs.X.dims, [1, 3, 4, 8]);
    }
  });

  test('a run ORT refuses: one short line naming the node and the dimensions to set, ORT\'s message behind a toggle without build paths', async () => {
    await choose(path.join(dir, 'data', 'shapes.onnxzip'));
    const result = await runPage();
    assert.match(result, new RegExp('^run failed: ONNX Runtime\'s Reshape node( "[^"]+")? failed on these inputs: ' +
      'set the dimensions the model leaves open \\(input X: dimension 2 \\(height\\), dimension 3 \\(width\\); input bias: its shape: a guessed 1\\)$'), result);
    assert.ok(!result.includes('\n') && result.length < 300, result);
    const details = await page.$eval('#run-details', (d) => ({
      hidden: d.hidden, open: d.open, summary: d.querySelector('summary').textContent, text: d.querySelector('pre').textContent,
    }));
    assert.deepEqual([details.hidden, details.open, details.summary], [false, false, "ONNX Runtime's message"]);
    assert.match(details.text, /Reshape/);
    assert.match(details.text, /requested shape/i);
    assert.doesNotMatch(details.text, /\.(cc|h|cpp):\d+|onnxruntime_src|onnxruntime::/, details.text);
    const marked = await page.$$eval('#inputs input.guessed', (fs) => fs.map((f) => `${f.dataset.input}/${f.dataset.dim}`));
    assert.deepEqual(marked, ['X/2', 'X/3', 'bias/all']);
    await page.fill(field('X', 2), '4');
    await page.fill(field('X', 3), '8');
    assert.match(await runPage(), /^session /);
    assert.equal(await page.$eval('#run-details', (d) => d.hidden), true);
  });

  test('shapes typed in are kept per model: switching models and back keeps them', async () => {
    await choose(path.join(dir, 'data', 'repo.onnxzip'));
    const ls = JSON.parse(run(CLI, ['ls', '--json', path.join(dir, 'data', 'repo.onnxzip')]).toString());
    await chooseModel(ENCODER);
    await page.fill(field('input_ids', 1), '7');
    await chooseModel(ls.default_model);
    await chooseModel(ENCODER);
    assert.equal(await page.$eval(field('input_ids', 1), (f) => f.value), '7');
    assert.match(await runPage(), /^session /);
    assert.deepEqual((await lastRun()).inputs.input_ids.dims, [1, 7]);
    await choose(path.join(dir, 'data', 'repo.onnxzip')); // another choice of the file starts afresh
    await chooseModel(ENCODER);
    assert.equal(await page.$eval(field('input_ids', 1), (f) => f.value), '1');
  });

  test('the model menu gives each model\'s size: its graph and its tensors\' bytes, as the CLI lists them', async () => {
    const pkg = path.join(dir, 'data', 'repo.onnxzip');
    await choose(pkg);
    const options = await page.$$eval('#model option', (os) => os.map((o) => [o.value, o.textContent, o.title]));
    const ls = JSON.parse(run(CLI, ['ls', '--json', pkg]).toString());
    assert.equal(options.length, ls.models.length);
    for (const m of ls.models) {
      const tensors = JSON.parse(run(CLI, ['ls', '--json', '--model', m.path, pkg]).toString()).tensors.filter((t) => t.storage === 'entry');
      const weights = tensors.reduce((n, t) => n + t.nbytes, 0);
      const total = m.size + weights;
      assert.ok(weights > 10 * m.size, `${m.path}: a model whose weights dwarf its graph`);
      const [, textContent, title] = options.find((o) => o[0] === m.path);
      // the page's own formatting (its module, imported in the page: Node.js 18 would load the .js as CommonJS)
      const shown = await page.evaluate(async (n) => (await import('./file_view.js')).fmtBytes(n), total);
      assert.match(shown, /^\d+(\.\d+)? (B|KiB|MiB)$/);
      assert.equal(textContent, `${m.path} (${shown}${m.default ? ', default' : ''})`);
      assert.equal(title, `${m.size} bytes of graph + ${weights} bytes of ${tensors.length} tensors = ${total} bytes`);
    }
  });

  test('the element limit marks the input\'s fields it can change', async () => {
    await choose(path.join(dir, 'data', 'shapes.onnxzip'));
    await page.fill(field('X', 2), '10000');
    await page.fill(field('X', 3), '10000');
    const result = await runPage();
    assert.match(result, /^not run: input X: \[1, 3, 10000, 10000\] is 300000000 elements; the page makes at most 33554432/, result);
    const invalid = await page.$$eval('#inputs input.invalid', (fs) => fs.map((f) => `${f.dataset.input}/${f.dataset.dim}`));
    assert.deepEqual(invalid, ['X/2', 'X/3']);
    await page.fill(field('X', 2), '4');
    await page.fill(field('X', 3), '8');
    await page.fill(field('bias', 'all'), '1, 8');
    assert.match(await runPage(), /^session /);
    assert.equal(await page.$$eval('#inputs input.invalid', (fs) => fs.length), 0);
  });

  test('the buttons stay put after Verify and Run', async () => {
    await choose(path.join(dir, 'data', 'repo.onnxzip'));
    const box = () => page.$eval('#run', (b) => { const r = b.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; });
    const before = await box();
    await page.click('#verify');
    await page.waitForSelector('#verify-result.good', { timeout: 30000 });
    assert.deepEqual(await box(), before, 'Run moved after Verify');
    assert.match(await runPage(), /^session /);
    assert.deepEqual(await box(), before, 'Run moved after Run');
  });

  test('progress shows while a file opens and while the session is made', async () => {
    // every state the page shows, recorded as it changes
    const record = () => page.evaluate(() => {
      window.states = [];
      const seen = () => {
        const visible = (id) => document.getElementById(id).checkVisibility();
        window.states.push({ status: document.getElementById('status').textContent, busy: visible('busy'),
          run: document.getElementById('run-result').textContent, runBusy: visible('run-progress') });
      };
      new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await record();
    await choose(path.join(dir, 'data', 'repo.onnxzip'));
    const opening = (await page.evaluate(() => window.states)).filter((s) => s.status.startsWith('opening'));
    assert.ok(opening.length > 0 && opening.every((s) => s.busy), JSON.stringify(opening));
    assert.equal(await page.$eval('#busy', (b) => b.checkVisibility()), false);
    await record();
    assert.match(await runPage(), /^session /);
    const making = (await page.evaluate(() => window.states)).filter((s) => s.run.startsWith('creating the session'));
    assert.ok(making.length > 0 && making.every((s) => s.runBusy), JSON.stringify(making));
    assert.match(making[0].run, /^creating the session \(reading [\d.]+ KiB of weights\) … \d+\.\d s$/);
    assert.equal(await page.$eval('#run-progress', (b) => b.checkVisibility()), false);
  });

  test('?pkg= or ?ort= refused or missing: the status says the true cause, and a file chosen then is refused saying so', async () => {
    const other = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
    try {
      const foreign = (p) => { const u = new URL(p, pageUrl()); u.hostname = 'localhost'; return u.href; };
      const origin = (param) => new RegExp(`^\\?${param}= must be on this page's origin .*: the page imports no script from another site$`);
      for (const [param, value, cause, not] of [
        ['pkg', foreign('/pkg/index.js'), origin('pkg'), /build first|install-deps/],
        ['ort', foreign('/ort/'), origin('ort'), /build first|install-deps/],
        ['pkg', '/pkg/missing.js', /^could not load the onnxzip package http:\/\/[^ ]*\/pkg\/missing\.js: .*\(build first: /,
          /origin|install-deps/],
        ['ort', '/ort/missing/',
          /^could not load onnxruntime-web http:\/\/[^ ]*\/ort\/missing\/ort\.\w+\.min\.mjs: .*\(its npm package: \.ci\/install-deps/,
          /origin|build first/]]) {
        await other.goto(pageUrl({ [param]: value }).href);
        await other.waitForFunction(() => document.getElementById('status').className === 'error', null, { timeout: 30000 });
        const status = await other.$eval('#status', (e) => e.textContent);
        // a file chosen now: refused at once, saying why (it hung on "opening …")
        await other.setInputFiles('#file', path.join(dir, 'data', 'shapes.onnxzip'));
        await other.waitForFunction(() => document.getElementById('status').textContent.startsWith('cannot open'), null, { timeout: 10000 });
        const refused = await other.$eval('#status', (e) => ({ text: e.textContent, cls: e.className }));
        assert.equal(refused.cls, 'error');
        assert.equal(refused.text, `cannot open shapes.onnxzip: ${status}`);
        assert.equal(await other.$eval('#busy', (b) => b.checkVisibility()), false);
        assert.match(status, cause, `?${param}=${value}`);
        assert.doesNotMatch(status, not, `?${param}=${value}`);
      }
    } finally {
      await other.close();
    }
  });

  test('?pkg= and ?ort= of another origin are refused: a link cannot make the page run a foreign script', async () => {
    const other = await browser.newPage();
    try {
      for (const param of ['pkg', 'ort']) {
        const url = new URL(srv.url('web', 'index.html'));
        url.searchParams.set('pkg', '/pkg/index.js');
        url.searchParams.set('ort', '/ort/');
        // the same server under another name: another origin, whose script the import would fetch
        const foreign = new URL(param === 'pkg' ? '/pkg/index.js' : '/ort/', url);
        foreign.hostname = 'localhost';
        url.searchParams.set(param, foreign.href);
        await other.goto(url.href);
        await other.waitForFunction(() => document.getElementById('status').className === 'error', null, { timeout: 30000 });
        const status = await other.evaluate(() => document.getElementById('status').textContent);
        assert.match(status, new RegExp(`\\?${param}= must be on this page's origin`), status);
        assert.equal(await other.evaluate(() => document.body.dataset.ready ?? null), null);
      }
    } finally {
      await other.close();
    }
  });
});
