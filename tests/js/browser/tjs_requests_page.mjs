// The page side of tests/js/tjs_requests.test.mjs: window.tjsRequests.run() loads a pipeline from a
// package (a URL, the File chosen on #file, or its bytes) and runs it once. transformers.js's env is
// left at its defaults (allowLocalModels false, the Hub as remoteHost) but for ORT's wasm, served here.
import { env, pipeline } from '/tjs/transformers.js';

const oz = await import('/pkg/index.js');
const wasm = env.backends.onnx.wasm;
wasm.wasmPaths = { mjs: new URL('/tortweb/ort-wasm-simd-threaded.asyncify.mjs', location.href).href,
                   wasm: new URL('/tortweb/ort-wasm-simd-threaded.asyncify.wasm', location.href).href };
wasm.numThreads = 1;  // no COOP/COEP here: no SharedArrayBuffer
// onnxzip's own wasm, loaded by its first open (this one fails: no archive), before the test records requests
await oz.open(new Uint8Array(0)).catch(() => {});

async function source(kind) {
  const file = document.getElementById('file').files[0];
  if (kind === 'File') return file;
  if (kind === 'bytes') return new Uint8Array(await file.arrayBuffer());
  return kind;  // a URL
}

window.tjsRequests = {
  async run(kind, id, task, extra, withCallback) {
    try {
      const pkg = (await oz.transformersModel(await source(kind), { id })).install(env);
      const events = [];
      try {
        const o = pkg.pipelineOptions({ ...extra, ...(withCallback ? { progress_callback: (e) => events.push(e.status) } : {}) });
        const p = await pipeline(task, pkg.id, o);
        try {
          if (task === 'feature-extraction') await p('the quick brown fox');
          else await p.model.generate({ ...p.tokenizer('the quick brown fox'), max_new_tokens: 2, do_sample: false });
        } finally {
          await p.dispose();
        }
      } finally {
        await pkg.close();
      }
      if (withCallback && !events.includes('ready')) return { ok: false, error: `no 'ready' event: ${events}` };
      return { ok: true };
    } catch (e) {
      return { ok: false, error: `${e?.name}: ${e?.message ?? e}` };
    }
  },
};
document.getElementById('status').textContent = 'ready';
