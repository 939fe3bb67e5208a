// tools/web/app.js — the page's logic: open a dropped or chosen file with the
// onnxzip package (an archive: entries, tensors, verify) and run it with
// onnxruntime-web's wasm backend on random inputs. A classic .onnx model is
// given to onnxruntime-web as it is.

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
let current = null; // {file, archive?} of the file shown

async function load() {
  // JSPI builds read a File's tensors one at a time (onnxruntime PR 29477);
  // the plain wasm build reads the whole File first
  const build = 'Suspending' in WebAssembly ? 'ort.jspi.min.mjs' : 'ort.wasm.min.mjs';
  const ortDist = new URL(CONFIG.ortDist, location.href).href;
  [oz, ort] = await Promise.all([import(new URL(CONFIG.package, location.href).href), import(ortDist + build)]);
  ort.env.wasm.wasmPaths = ortDist;
  if (!globalThis.crossOriginIsolated) ort.env.wasm.numThreads = 1; // no SharedArrayBuffer
}

function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return `${n.toFixed(n < 10 ? 2 : 1)} ${u[i]}`;
}

function fill(section, rows) {
  const tbody = $(section).querySelector('tbody');
  tbody.replaceChildren(...rows.map((cells) => {
    const tr = document.createElement('tr');
    for (const [text, cls] of cells) {
      const td = document.createElement('td');
      td.textContent = text;
      if (cls) td.className = cls;
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
  for (const id of ['summary', 'actions', 'outputs', 'tensors', 'entries']) $(id).hidden = true;
  for (const id of ['verify-result', 'run-result']) { $(id).textContent = ''; $(id).className = ''; }
  $('progress').hidden = true;
}

function errorText(e) {
  return String(e?.message ?? e);
}

async function show(file) {
  reset();
  status(`opening ${file.name} …`);
  try {
    if (/\.onnx$/i.test(file.name)) {
      current = { file };
      summary([`${file.name}: classic model: ${file.size} bytes (${fmtBytes(file.size)})`]);
    } else {
      const archive = await oz.open(file);
      current = { file, archive };
      showArchive(archive);
    }
    $('verify').hidden = !current.archive;
    $('progress').hidden = true;
    $('actions').hidden = false;
    status('');
  } catch (e) {
    status(e instanceof oz.OnnxzipError ? e.message : `${file.name}: ${errorText(e)}`, true);  // its message names the file
  }
}

function showArchive(a) {
  const weights = a.entries.filter((e) => e.name !== '__MODEL_PROTO').reduce((s, e) => s + e.size, 0);
  const model = a.entries.find((e) => e.name === '__MODEL_PROTO');
  summary([
    `${a.name}: onnxzip archive, ${fmtBytes(a.size)}`,
    `${a.entries.length} entries, ${a.tensors.length} tensors; ${fmtBytes(weights)} of tensor data in place, ` +
      `model ${fmtBytes(model?.size ?? a.modelBytes().length)}`,
  ]);
  fill('tensors', a.tensors.map((t) => [
    [t.name || t.key, 'mono'], [t.dtype], [`[${t.dims.join(', ')}]`, 'mono'], [t.storage + (t.entry ? ` (${t.entry})` : '')],
    [String(t.offset), 'num'], [String(t.byteLength), 'num'], [String(t.alignment), 'num']]));
  fill('entries', a.entries.map((e) => [
    [e.name, 'mono'], [String(e.dataOffset), 'num'], [String(e.size), 'num'],
    [e.crc32.toString(16).padStart(8, '0'), 'mono'], [String(e.alignment), 'num']]));
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

const RANDOM = {
  float32: (n) => Float32Array.from({ length: n }, () => Math.random() * 2 - 1),
  float64: (n) => Float64Array.from({ length: n }, () => Math.random() * 2 - 1),
  int32: (n) => Int32Array.from({ length: n }, () => Math.floor(Math.random() * 10)),
  int64: (n) => BigInt64Array.from({ length: n }, () => BigInt(Math.floor(Math.random() * 10))),
  uint8: (n) => Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256)),
  int8: (n) => Int8Array.from({ length: n }, () => Math.floor(Math.random() * 256) - 128),
  bool: (n) => Uint8Array.from({ length: n }, () => (Math.random() < 0.5 ? 1 : 0)),
};

function randomInputs(session) {
  const feeds = {};
  for (const m of session.inputMetadata) {
    if (!m.isTensor) throw new Error(`input ${m.name} is not a tensor`);
    const dims = m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    const make = RANDOM[m.type];
    if (!make) throw new Error(`input ${m.name}: no random ${m.type} values`);
    feeds[m.name] = new ort.Tensor(m.type, make(dims.reduce((a, b) => a * b, 1)), dims);
  }
  return feeds;
}

function firstValues(t) {
  const v = Array.from(t.data.slice(0, 6), (x) => (typeof x === 'number' && !Number.isInteger(x) ? x.toPrecision(5) : String(x)));
  return v.join(', ') + (t.data.length > 6 ? ', …' : '');
}

async function run() {
  if (!current) return;
  $('run').disabled = true;
  $('run-result').className = '';
  $('run-result').textContent = 'creating the session …';
  try {
    const t0 = performance.now();
    const session = current.archive
      ? await oz.createSession(ort, current.archive)
      : await ort.InferenceSession.create(new Uint8Array(await current.file.arrayBuffer()));
    const t1 = performance.now();
    const out = await session.run(randomInputs(session));
    const t2 = performance.now();
    fill('outputs', session.outputNames.map((name) => {
      const t = out[name];
      return [[name, 'mono'], [t.type], [`[${t.dims.join(', ')}]`, 'mono'], [firstValues(t), 'mono']];
    }));
    await session.release();
    $('run-result').textContent = `session ${((t1 - t0) / 1000).toFixed(2)} s, run ${(t2 - t1).toFixed(1)} ms ` +
      `(onnxruntime-web ${ort.env.versions?.web ?? ''}, wasm, ${ort.env.wasm.numThreads ?? 'default'} thread(s))`;
  } catch (e) {
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
  $('file').addEventListener('change', () => { if ($('file').files[0]) show($('file').files[0]); });
  $('verify').addEventListener('click', verify);
  $('run').addEventListener('click', run);
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
