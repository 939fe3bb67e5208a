// The transformers.js side of tests/js/transformers.test.mjs (and of tools/bench/bench_transformers_js.mjs)
// in the page: window.tjsTest's functions take and return plain JSON for playwright's evaluate().
// A model comes either from a repository folder nginx serves under /repos/NAME/ (transformers.js's
// own loader: the oracle) or from a package through onnxzip's transformersModel (a URL under /data/,
// or the File chosen on #file).
import { env, pipeline } from '/tjs/transformers.js';

const oz = await import('/pkg/index.js');
env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = '/repos/';
env.useBrowserCache = false;  // every load reads its files again (nginx's log sees them)
env.useWasmCache = false;
const wasm = env.backends.onnx.wasm;
wasm.wasmPaths = { mjs: new URL('/tortweb/ort-wasm-simd-threaded.asyncify.mjs', location.href).href,
                   wasm: new URL('/tortweb/ort-wasm-simd-threaded.asyncify.wasm', location.href).href };
wasm.numThreads = 1;  // no COOP/COEP here: no SharedArrayBuffer

function toB64(u8) {
  let s = '';
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(s);
}

// [model id, pipeline options, package or null] of `source`: 'folder:NAME', 'url:PATH' or 'file'.
async function load(source) {
  if (source.startsWith('folder:')) return [source.slice(7), {}, null];
  const src = source === 'file' ? document.getElementById('file').files[0] : source.slice(4);
  const pkg = (await oz.transformersModel(src)).install(env);
  return [pkg.id, pkg.pipelineOptions(), pkg];
}

async function guarded(fn) {
  try {
    return { ok: true, value: await fn() };
  } catch (e) {
    return { ok: false, error: { name: e?.name, message: String(e?.message ?? e), status: e?.status } };
  }
}

// Runs `use` on the pipeline of `task` over `source`, then frees it all; the load's time in ms.
async function withPipeline(task, source, use, extra = {}) {
  const t0 = performance.now();
  const [id, options, pkg] = await load(source);
  const p = await pipeline(task, id, pkg ? pkg.pipelineOptions(extra) : { ...options, ...extra });
  const loadMs = performance.now() - t0;
  try {
    return { ...(await use(p)), loadMs };
  } finally {
    await p.dispose();
    await pkg?.close();
  }
}

window.tjsTest = {
  /** feature-extraction of `text`: the embeddings' dims and float32 bytes (base64). */
  embed: (source, text) => guarded(() => withPipeline('feature-extraction', source, async (p) => {
    const out = await p(text);
    return { dims: out.dims, data: toB64(new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength)) };
  })),
  /** text-generation (or `task`), greedy: the token ids of `n` new tokens (after the prompt's, for a decoder);
   * `options`: the pipeline's (e.g. dtype). */
  generate: (source, prompt, n, task = 'text-generation', options = {}) => guarded(() => withPipeline(task, source, async (p) => {
    const out = await p.model.generate({ ...p.tokenizer(prompt), max_new_tokens: n, do_sample: false });
    return { ids: Array.from(out.data, Number) };
  }, options)),
};
document.getElementById('status').textContent = 'ready';
