// tools/web/app.js — the page's logic: open a dropped or chosen file with the
// onnxzip package (an archive: entries, tensors, verify; a package: its
// models, one of them chosen, and its files shown) and run it with
// onnxruntime-web's wasm backend on random inputs of shapes the user can
// edit. A classic .onnx model is given to onnxruntime-web as it is.
import { PREVIEW_BYTES, READ_LIMIT, describeFile, fmtBytes } from './file_view.js';
import { guessedFields, randomFeeds, readShapes, renderInputs } from './inputs.js';
import { modelInputs, modelMetadata } from './model_inputs.js';
import { ortDetails, ortSummary } from './ort_errors.js';
import { imageSize } from './shape_defaults.js';

// Where the package and onnxruntime-web are, relative to this page: the
// repository's build directory and tests/js's npm packages (.ci/install-deps).
// Another build directory: ?pkg=../../build-test/src/js/package/index.js
const params = new URLSearchParams(location.search);
const CONFIG = {
  package: params.get('pkg') ?? '../../build/src/js/package/index.js',
  ortDist: params.get('ort') ?? '../../tests/js/node_modules/onnxruntime-web/dist/',
};

const $ = (id) => document.getElementById(id);
// busy: an indeterminate progress bar beside the text while work goes on
const status = (text, error = false, busy = false) => {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
  $('busy').hidden = !busy;
};

let oz, ort;
let current = null; // {file, archive | bytes (a classic model's), inputs} of the file shown
// the chosen file's state kept across its models: {file, saved: Map(model path ->
// {"input/dim": text typed}), totals: Map(model path -> sizes) or null}
let opened = null;

// A script URL of this page's own origin: ?pkg= and ?ort= must not let a link
// make the page import (run) a script from another site.
function ownScript(value, param) {
  const url = new URL(value, location.href);
  if (url.origin !== location.origin) {
    throw new Error(`?${param}= must be on this page's origin (${location.origin}), not ${url.origin}: ` +
      'the page imports no script from another site');
  }
  return url.href;
}

// rejects with the true cause: the origin rule, or which script could not be
// imported (a missing build, or missing npm packages)
async function load() {
  // JSPI builds read a File's tensors one at a time (onnxruntime PR 29477);
  // the plain wasm build reads the whole File first
  const build = 'Suspending' in WebAssembly ? 'ort.jspi.min.mjs' : 'ort.wasm.min.mjs';
  const pkg = ownScript(CONFIG.package, 'pkg'), ortDist = ownScript(CONFIG.ortDist, 'ort');
  const [p, o] = await Promise.allSettled([import(pkg), import(ortDist + build)]);
  if (p.status === 'rejected') {
    throw new Error(`could not load the onnxzip package ${pkg}: ${errorText(p.reason)} ` +
      '(build first: meson setup build && meson compile -C build; another build: ?pkg=)');
  }
  if (o.status === 'rejected') {
    throw new Error(`could not load onnxruntime-web ${ortDist + build}: ${errorText(o.reason)} ` +
      '(its npm package: .ci/install-deps; another copy: ?ort=)');
  }
  [oz, ort] = [p.value, o.value];
  ort.env.wasm.wasmPaths = ortDist;
  if (!globalThis.crossOriginIsolated) ort.env.wasm.numThreads = 1; // no SharedArrayBuffer
}
const loaded = load();

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
  for (const id of ['progress', 'run-progress', 'run-details']) $(id).hidden = true;
}

function errorText(e) {
  return String(e?.message ?? e);
}

// model: a package's model to open (null: its default)
async function show(file, model = null) {
  reset();
  try {
    await loaded;
  } catch (e) {
    status(`cannot open ${file.name}: ${errorText(e)}`, true);
    return;
  }
  if (opened?.file !== file) opened = { file, saved: new Map(), totals: null };
  const opening = `opening ${file.name}${model ? ` (${model})` : ''} …`;
  status(opening, false, true);
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
      if (archive.models.size) {
        if (!opened.totals) status(`${opening} sizing its ${archive.models.size} models`, false, true);
        await showPackage(archive);
      }
      modelBytes = archive.modelBytes();
    }
    await showInputs(modelBytes);
    $('verify').disabled = !current.archive;
    $('verify').title = current.archive ? '' : 'a classic .onnx has no checksums to verify';
    $('actions').hidden = false;
    status('');
  } catch (e) {
    status(e instanceof oz.OnnxzipError ? e.message : `${file.name}: ${errorText(e)}`, true);  // its message names the file
  }
}

// the text of the package's preprocessor_config.json, or null
async function preprocessorConfig(archive) {
  const name = 'preprocessor_config.json';
  if (!archive?.files.has(name) || archive.files.get(name).size > 1 << 20) return null;
  return new TextDecoder().decode(await archive.readFile(name));
}

async function showInputs(modelBytes) {
  current.inputs = null;
  let image = null;
  try {
    current.inputs = modelInputs(modelBytes);
    image = imageSize(modelMetadata(modelBytes), await preprocessorConfig(current.archive));
  } catch (e) {
    current.inputsError = `could not read the model's inputs: ${errorText(e)}`;
  }
  renderInputs($('inputs').querySelector('tbody'), current.inputs ?? [], image, savedShapes());
  $('inputs-error').textContent = current.inputsError ?? '';
  $('inputs-error').className = current.inputsError ? 'bad' : '';
  $('inputs').hidden = false;
}

// the bytes of the tensors the model keeps in entries of their own
function weightBytes(a) {
  return a.tensors.filter((t) => t.storage === 'entry').reduce((s, t) => s + t.byteLength, 0);
}

function showArchive(a) {
  const weights = weightBytes(a);
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

// what was typed into the shape fields of the model shown, by "input/dim"
function savedShapes() {
  const key = current.archive?.modelPath ?? '';
  if (!opened.saved.has(key)) opened.saved.set(key, {});
  return opened.saved.get(key);
}

// {graph, weights, tensors}: a model's bytes are its graph's and those of
// the tensors it keeps in entries (inline ones are in the graph)
function modelSize(a, m) {
  return { graph: m.size, weights: weightBytes(a), tensors: a.tensors.filter((t) => t.storage === 'entry').length };
}

// each model of the package opened once per file (its graph only: no weight is read)
async function modelTotals(a) {
  if (opened.totals) return opened.totals;
  const totals = new Map();
  for (const m of a.models.values()) {
    const other = m.path === a.modelPath ? a : await oz.open(opened.file, { model: m.path });
    try {
      totals.set(m.path, modelSize(other, m));
    } finally {
      if (other !== a) other.close();
    }
  }
  opened.totals = totals;
  return totals;
}

// a package: the model choice (each with its graph and weights) and its files, each with a button to show it
async function showPackage(a) {
  const totals = await modelTotals(a);
  $('model').replaceChildren(...[...a.models.values()].map((m) => {
    const { graph, weights, tensors } = totals.get(m.path);
    return Object.assign(document.createElement('option'), {
      value: m.path, selected: m.path === a.modelPath,
      textContent: `${m.path} (${fmtBytes(graph + weights)}${m.default ? ', default' : ''})`,
      title: `${graph} bytes of graph + ${weights} bytes of ${tensors} tensors = ${graph + weights} bytes`,
    });
  }));
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
  $('progress').value = 0;
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
    $('progress').hidden = true;
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
  $('run-details').hidden = true;
  const t0 = performance.now();
  let stage = 'session';
  // what is going on, with the seconds so far (a large model's session takes a while)
  const tell = () => {
    const reading = shown.archive ? ` (reading ${fmtBytes(weightBytes(shown.archive))} of weights)` : '';
    const what = stage === 'session' ? `creating the session${reading}` : 'running';
    $('run-result').textContent = `${what} … ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  };
  tell();
  const ticker = setInterval(tell, 250);
  $('run-progress').hidden = false;
  try {
    const session = shown.archive
      ? await oz.createSession(ort, shown.archive)
      : await ort.InferenceSession.create(shown.bytes);
    const t1 = performance.now();
    let out, feeds;
    try {
      sameInputs(session, shown.inputs);
      feeds = randomFeeds(ort, shown.inputs, shapes);
      stage = 'run';
      tell();
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
    const message = errorText(e);
    const guessed = stage === 'run' ? guessedFields($('inputs').querySelector('tbody')) : null;
    $('run-result').textContent = `run failed: ${ortSummary(message, stage, guessed)}`;
    $('run-result').className = 'bad';
    $('run-details').querySelector('pre').textContent = ortDetails(message);
    $('run-details').hidden = false;
  } finally {
    clearInterval(ticker);
    $('run-progress').hidden = true;
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
  // a shape typed in is kept for this model of this file (switching models and back keeps it)
  $('inputs').addEventListener('input', (e) => {
    const f = e.target;
    if (!current || !f.dataset?.input) return;
    savedShapes()[`${f.dataset.input}/${f.dataset.dim}`] = f.value;
    delete f.dataset.guess;
    f.classList.remove('guessed');
  });
}

wire();
status('loading onnxzip and onnxruntime-web …', false, true);
try {
  await loaded;
  status('');
  document.body.dataset.ready = '1';
} catch (e) {
  status(errorText(e), true);
}
