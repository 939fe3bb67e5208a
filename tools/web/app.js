// tools/web/app.js — the page's logic: open a dropped or chosen file with the
// onnxzip package (an archive: entries, tensors, verify; a package: its
// models, one of them chosen, and its files shown) and run it with
// onnxruntime-web's wasm backend on random inputs of shapes the user can
// edit. A classic .onnx model is given to onnxruntime-web as it is.
import { PREVIEW_BYTES, READ_LIMIT, describeFile, fmtBytes } from './file_view.js';
import { randomFeeds, readShapes, renderInputs } from './inputs.js';
import { modelInputs } from './model_inputs.js';

// Where the package and onnxruntime-web are, relative to this page: the
// repository's build directory and tests/js's npm packages (.ci/install-deps).
// Another build directory: ?pkg=../../build-test/src/js/package/index.js
const params = new URLSearchParams(location.search);
const CONFIG = {
  package: params.get('pkg') ?? '../../build/src/js/package/index.js',
  ortDist: params.get('ort') ?? '../../tests/js/node_modules/onnxruntime-web/dist/',
};

const $ = (id) => document.getElementById(id);
const status = (text, error = false) => { $('status').textContent = text; $('status').className = error ? 'error' : ''; };

let oz, ort;
let current = null; // {file, archive | bytes (a classic model's), inputs} of the file shown

// A script URL of this page's own origin: ?pkg= and ?ort= must not let a link
// make the page import (run) a script from another site.
function ownScript(value, param) {
  const url = new URL(value, location.href);
  if (url.origin !== location.origin) throw new Error(`?${param}= must be on this page's origin (${location.origin}), not ${url.origin}`);
  return url.href;
}

async function load() {
  // JSPI builds read a File's tensors one at a time (onnxruntime PR 29477);
  // the plain wasm build reads the whole File first
  const build = 'Suspending' in WebAssembly ? 'ort.jspi.min.mjs' : 'ort.wasm.min.mjs';
  const ortDist = ownScript(CONFIG.ortDist, 'ort');
  [oz, ort] = await Promise.all([import(ownScript(CONFIG.package, 'pkg')), import(ortDist + build)]);
  ort.env.wasm.wasmPaths = ortDist;
  if (!globalThis.crossOriginIsolated) ort.env.wasm.numThreads = 1; // no SharedArrayBuffer
}

// cells: [text, class] (the full text also its title: long names wrap or are cut)
function fill(section, rows) {
  const tbody = $(section).querySelector('tbody');
  tbody.replaceChildren(...rows.map((cells) => {
    const tr = document.createElement('tr');
    for (const [text, cls] of cells) {
      const td = document.createElement('td');
      td.textContent = text;
      if (cls) td.className = cls;
      if (cls?.includes('name')) td.title = text;
      tr.append(td);
    }
    return tr;
  }));
  $(section).hidden = rows.length === 0;
}

function summary(lines) {
  $('summary').replaceChildren(...lines.map((l) => Object.assign(document.createElement('div'), { textContent: l })));
  $('summary').hidden = false;
}

function reset() {
  current?.archive?.close();
  current = null;
  for (const id of ['summary', 'package', 'file-view', 'inputs', 'actions', 'outputs', 'tensors', 'entries']) $(id).hidden = true;
  for (const id of ['verify-result', 'run-result', 'inputs-error']) { $(id).textContent = ''; $(id).className = ''; }
  $('progress').hidden = true;
}

function errorText(e) {
  return String(e?.message ?? e);
}

// model: a package's model to open (null: its default)
async function show(file, model = null) {
  reset();
  status(`opening ${file.name}${model ? ` (${model})` : ''} …`);
  try {
    let modelBytes;
    if (/\.onnx$/i.test(file.name)) {
      modelBytes = new Uint8Array(await file.arrayBuffer());
      current = { file, bytes: modelBytes };
      summary([`${file.name}: classic model: ${file.size} bytes (${fmtBytes(file.size)})`]);
    } else {
      const archive = await oz.open(file, model ? { model } : undefined);
      current = { file, archive };
      showArchive(archive);
      if (archive.models.size) showPackage(archive);
      modelBytes = archive.modelBytes();
    }
    showInputs(modelBytes);
    $('verify').hidden = !current.archive;
    $('actions').hidden = false;
    status('');
  } catch (e) {
    status(e instanceof oz.OnnxzipError ? e.message : `${file.name}: ${errorText(e)}`, true);  // its message names the file
  }
}

function showInputs(modelBytes) {
  current.inputs = null;
  try {
    current.inputs = modelInputs(modelBytes);
  } catch (e) {
    current.inputsError = `could not read the model's inputs: ${errorText(e)}`;
  }
  renderInputs($('inputs').querySelector('tbody'), current.inputs ?? []);
  $('inputs-error').textContent = current.inputsError ?? '';
  $('inputs-error').className = current.inputsError ? 'bad' : '';
  $('inputs').hidden = false;
}

function showArchive(a) {
  const weights = a.tensors.filter((t) => t.storage === 'entry').reduce((s, t) => s + t.byteLength, 0);
  summary([
    `${a.name}: onnxzip ${a.models.size ? `package of ${a.models.size} models and ${a.files.size} files` : 'archive'}, ${fmtBytes(a.size)}`,
    `${a.modelPath ? `${a.modelPath}: ` : ''}${a.tensors.length} tensors; ${fmtBytes(weights)} of tensor data in place, ` +
      `model ${fmtBytes(a.modelBytes().length)}; ${a.entries.length} zip entries`,
  ]);
  fill('tensors', a.tensors.map((t) => [
    [t.name || t.key, 'mono name'], [t.dtype], [`[${t.dims.join(', ')}]`, 'mono shape'], [t.storage + (t.entry ? ` (${t.entry})` : ''), 'name'],
    [String(t.offset), 'num'], [String(t.byteLength), 'num'], [String(t.alignment), 'num']]));
  fill('entries', a.entries.map((e) => [
    [e.name, 'mono name'], [String(e.dataOffset), 'num'], [String(e.size), 'num'],
    [e.crc32.toString(16).padStart(8, '0'), 'mono'], [String(e.alignment), 'num']]));
}

// a package: the model choice and its files, each with a button to show it
function showPackage(a) {
  $('model').replaceChildren(...[...a.models.values()].map((m) => Object.assign(document.createElement('option'), {
    value: m.path, selected: m.path === a.modelPath,
    textContent: `${m.path} (${fmtBytes(m.size)}${m.default ? ', default' : ''})`,
  })));
  const tbody = $('files').querySelector('tbody');
  tbody.replaceChildren(...[...a.files.values()].map((f) => {
    const tr = document.createElement('tr');
    const button = Object.assign(document.createElement('button'), { className: 'link mono', textContent: f.path, title: f.path });
    button.dataset.path = f.path;
    button.addEventListener('click', () => showFile(f.path));
    const size = Object.assign(document.createElement('td'), { className: 'num', textContent: String(f.size) });
    tr.append(Object.assign(document.createElement('td'), { className: 'name' }), size);
    tr.firstChild.append(button);
    return tr;
  }));
  $('files').hidden = a.files.size === 0;
  $('package').hidden = false;
}

async function showFile(path) {
  const shown = current;
  const { size } = shown.archive.files.get(path);
  $('file-path').textContent = path;
  $('file-note').textContent = 'reading …';
  $('file-note').className = '';
  $('file-content').textContent = '';
  $('file-view').hidden = false;
  try {
    const bytes = size > READ_LIMIT ? null : (await shown.archive.readFile(path)).subarray(0, PREVIEW_BYTES);
    if (current !== shown) return; // another file was opened meanwhile
    const { note, text } = describeFile(path, size, bytes);
    $('file-note').textContent = note;
    $('file-content').textContent = text;
  } catch (e) {
    if (current !== shown) return;
    $('file-note').textContent = `could not read ${path}: ${errorText(e)}`;
    $('file-note').className = 'bad';
  }
}

async function verify() {
  const a = current?.archive;
  if (!a) return;
  $('verify').disabled = true;
  $('progress').hidden = false;
  $('verify-result').className = '';
  $('verify-result').textContent = 'verifying …';
  const t0 = performance.now();
  try {
    await a.verify({ onProgress: (done, total) => { $('progress').max = total; $('progress').value = done; } });
    $('verify-result').textContent = `verified: every CRC-32 and XXH3 matches (${((performance.now() - t0) / 1000).toFixed(2)} s)`;
    $('verify-result').className = 'good';
  } catch (e) {
    $('verify-result').textContent = `verify failed: ${errorText(e)}`;
    $('verify-result').className = 'bad';
  } finally {
    $('verify').disabled = false;
  }
}

function firstValues(t) {
  const v = Array.from(t.data.slice(0, 6), (x) => (typeof x === 'number' && !Number.isInteger(x) ? x.toPrecision(5) : String(x)));
  return v.join(', ') + (t.data.length > 6 ? ', …' : '');
}

// the inputs as the model lists them, their shapes checked: before any session
function checkedShapes(shown) {
  if (!shown.inputs) throw new Error(shown.inputsError);
  return readShapes($('inputs').querySelector('tbody'), shown.inputs);
}

function sameInputs(session, inputs) {
  const want = inputs.map((i) => i.name).sort().join(', '), got = [...session.inputNames].sort().join(', ');
  if (want !== got) throw new Error(`the session's inputs (${got}) are not the model's graph inputs (${want})`);
}

async function run() {
  const shown = current; // another file or model may be opened while this runs
  if (!shown) return;
  $('outputs').hidden = true;
  $('run-result').className = '';
  let shapes;
  try {
    shapes = checkedShapes(shown);
  } catch (e) {
    $('run-result').textContent = `not run: ${errorText(e)}`;
    $('run-result').className = 'bad';
    return;
  }
  $('run').disabled = true;
  $('run-result').textContent = 'creating the session …';
  try {
    const t0 = performance.now();
    const session = shown.archive
      ? await oz.createSession(ort, shown.archive)
      : await ort.InferenceSession.create(shown.bytes);
    const t1 = performance.now();
    let out, feeds;
    try {
      sameInputs(session, shown.inputs);
      feeds = randomFeeds(ort, shown.inputs, shapes);
      out = await session.run(feeds);
    } finally {
      await session.release();
    }
    const t2 = performance.now();
    if (current !== shown) return;
    fill('outputs', Object.entries(out).map(([name, t]) =>
      [[name, 'mono name'], [t.type], [`[${t.dims.join(', ')}]`, 'mono shape'], [firstValues(t), 'mono']]));
    // what the page fed and got, for tests (tests/js/web.test.mjs)
    window.onnxzipWeb = { lastRun: { model: shown.archive?.modelPath ?? null, inputs: feeds, outputs: out } };
    $('run-result').textContent = `session ${((t1 - t0) / 1000).toFixed(2)} s, run ${(t2 - t1).toFixed(1)} ms ` +
      `(onnxruntime-web ${ort.env.versions?.web ?? ''}, wasm, ${ort.env.wasm.numThreads ?? 'default'} thread(s))`;
    $('run-result').className = 'good';
  } catch (e) {
    if (current !== shown) return;
    $('run-result').textContent = `run failed: ${errorText(e)}`;
    $('run-result').className = 'bad';
  } finally {
    $('run').disabled = false;
  }
}

function wire() {
  const drop = $('drop');
  for (const ev of ['dragenter', 'dragover']) drop.addEventListener(ev, (e) => { e.preventDefault(); drop.classList.add('over'); });
  for (const ev of ['dragleave', 'drop']) drop.addEventListener(ev, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    const f = e.dataTransfer?.files?.[0];
    if (f) show(f);
  });
  $('file').addEventListener('change', () => {
    const f = $('file').files[0];
    $('file').value = ''; // choosing the same file again opens it again
    if (f) show(f);
  });
  $('verify').addEventListener('click', verify);
  $('run').addEventListener('click', run);
  $('model').addEventListener('change', () => { if (current?.archive) show(current.file, $('model').value); });
}

wire();
status('loading onnxzip and onnxruntime-web …');
try {
  await load();
  status('');
  document.body.dataset.ready = '1';
} catch (e) {
  status(`could not load ${CONFIG.package} or onnxruntime-web from ${CONFIG.ortDist}: ${e.message} ` +
    '(build first: meson setup build && meson compile -C build; npm packages: .ci/install-deps)', true);
}
