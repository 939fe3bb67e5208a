// The browser test's side in the page: window.ozTest's functions take and
// return plain JSON (tensor bytes as base64) for playwright's evaluate().
// The package comes from /pkg/ (BUILD/src/js/package), onnxruntime-web's
// wasm backend from /ort/ (its dist directory); ?ort=jspi picks ORT's JSPI
// build, which reads Blob external data one initializer at a time.
const params = new URLSearchParams(location.search);
const ORT_BUILD = params.get('ort') === 'jspi' ? 'ort.jspi.min.mjs' : 'ort.wasm.min.mjs';

const ort = await import(`/ort/${ORT_BUILD}`);
ort.env.wasm.wasmPaths = new URL('/ort/', location.href).href;
ort.env.wasm.numThreads = 1; // no COOP/COEP here: no SharedArrayBuffer, no threads
ort.env.logLevel = 'error';
let oz = null;
try {
  oz = await import('/pkg/index.js');
} catch (e) {
  console.error(`onnxzip package not loaded: ${e}`);
}

function toB64(u8) {
  let s = '';
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(s);
}

function fromB64(b64) {
  const s = atob(b64);
  const u8 = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) u8[i] = s.charCodeAt(i);
  return u8;
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, float16: Uint16Array, bool: Uint8Array,
};

/** {name: {type, dims, b64}} -> {name: ort.Tensor} */
function feeds(inputs) {
  const out = {};
  for (const [name, t] of Object.entries(inputs)) {
    const bytes = fromB64(t.b64);
    const Arr = ARRAYS[t.type];
    out[name] = new ort.Tensor(t.type, new Arr(bytes.buffer, 0, bytes.length / Arr.BYTES_PER_ELEMENT), t.dims);
  }
  return out;
}

async function run(session, inputs) {
  const t0 = performance.now();
  const res = await session.run(feeds(inputs));
  const ms = performance.now() - t0;
  const outputs = {};
  for (const name of session.outputNames) {
    const t = res[name];
    const d = t.data;
    outputs[name] = { type: t.type, dims: [...t.dims], b64: toB64(new Uint8Array(d.buffer, d.byteOffset, d.byteLength)) };
  }
  await session.release();
  return { outputs, ms };
}

/** The File the user (playwright's setInputFiles) chose on #file: the
 * first, or the one called `name`. */
function chosenFile(name) {
  const files = [...document.getElementById('file').files];
  const f = name === undefined ? files[0] : files.find((x) => x.name === name);
  if (!f) throw new Error(`no file ${name ?? ''} chosen on #file`);
  return f;
}

/** tools/bench/bench_browser_memory.mjs: one session and one run on X = 0.5
 * (shape [1, D]), the session made by `create`. */
async function benchRun(create) {
  const t0 = performance.now();
  const session = await create();
  const createMs = performance.now() - t0;
  const [meta] = session.inputMetadata;
  const dims = meta.shape.map((d) => (typeof d === 'number' ? d : 1));
  const x = new ort.Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.5), dims);
  const t1 = performance.now();
  const out = await session.run({ [meta.name]: x });
  const runMs = performance.now() - t1;
  const y = out[session.outputNames[0]].data;
  await session.release();
  return { createMs, runMs, first: Array.from(y.subarray(0, 4)), sum: y.reduce((a, b) => a + b, 0) };
}

function source(kind, url) {
  return kind === 'file' ? chosenFile() : url;
}

function plainError(e) {
  return { name: e?.name, message: String(e?.message ?? e), status: e?.status, code: e?.code,
           offset: e?.offset, isOnnxzipError: oz ? e instanceof oz.OnnxzipError : false };
}

async function guarded(fn) {
  try {
    return { ok: true, value: await fn() };
  } catch (e) {
    return { ok: false, error: plainError(e) };
  }
}

window.ozTest = {
  ortBuild: ORT_BUILD,
  hasPackage: () => oz !== null,
  crossOriginIsolated: () => globalThis.crossOriginIsolated === true,

  /** open(source, options) -> what the Archive says of itself. */
  open: (kind, url, options) => guarded(async () => {
    const a = await oz.open(source(kind, url), options);
    const info = { name: a.name, size: a.size, entries: a.entries, tensors: a.tensors,
                   modelBytes: a.modelBytes().length };
    a.close();
    return info;
  }),

  /** createSession(ort, source, undefined, openOptions) then one run. */
  runArchive: (kind, url, inputs, openOptions) => guarded(async () => {
    const t0 = performance.now();
    const session = await oz.createSession(ort, source(kind, url), undefined, openOptions);
    const createMs = performance.now() - t0;
    return { ...(await run(session, inputs)), createMs };
  }),

  /** The classic model's bytes straight to ORT (the same runtime's oracle). */
  runClassic: (url, inputs) => guarded(async () => {
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    return run(await ort.InferenceSession.create(bytes), inputs);
  }),

  view: (kind, url, viewOptions) => guarded(async () => {
    const a = await oz.open(source(kind, url));
    try {
      return toB64(await a.view(viewOptions));
    } finally {
      a.close();
    }
  }),

  verify: (kind, url) => guarded(async () => {
    const a = await oz.open(source(kind, url));
    const progress = [];
    try {
      await a.verify({ onProgress: (done, total) => progress.push([done, total]) });
    } finally {
      a.close();
    }
    return { progress };
  }),

  /** The archive chosen on #file through createSession(ort, File). */
  benchArchive: () => guarded(() => benchRun(() => oz.createSession(ort, chosenFile()))),

  /** The classic layout chosen on #file (model.onnx + model.onnx_data) through
   * ORT's own externalData, the data file given as the File. */
  benchClassic: () => guarded(() => benchRun(async () => {
    const model = new Uint8Array(await chosenFile('model.onnx').arrayBuffer());
    return ort.InferenceSession.create(model, {
      externalData: [{ path: 'model.onnx_data', data: chosenFile('model.onnx_data') }] });
  })),

  /** A package: open(source, options), its members, the model it holds, and readFile of each
   * file (base64), the opened model's tensorData of `tensors` (base64). */
  package: (kind, url, options, tensors = []) => guarded(async () => {
    const a = await oz.open(source(kind, url), options);
    try {
      const files = {}, data = {};
      for (const p of a.files.keys()) files[p] = toB64(await a.readFile(p));
      for (const t of tensors) data[t] = toB64(await a.tensorData(t));
      return { modelPath: a.modelPath, models: [...a.models.values()], files, sizes: [...a.files.values()], data };
    } finally {
      a.close();
    }
  }),

  tensorData: (kind, url, name) => guarded(async () => {
    const a = await oz.open(source(kind, url));
    try {
      return toB64(await a.tensorData(name));
    } finally {
      a.close();
    }
  }),
};
document.getElementById('status').textContent = oz ? 'ready' : 'ready (no package)';
