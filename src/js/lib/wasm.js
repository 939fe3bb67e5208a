// Loads onnxzip.wasm (the C reader, src/js/wasm/onnxzip_wasm.c, compiled for wasm32-wasi as a
// reactor) once per realm: in Node from the file next to the package's top (fs), in browsers with
// fetch + WebAssembly.instantiateStreaming (or instantiate on the bytes when the server's
// Content-Type is not application/wasm). The wasm imports three WASI calls of wasi-libc's stdio,
// which nothing of the binding reaches (it writes JSON to memory streams): stubbed here; and
// onnxzip.read, ozw_open_file's reads of the source (setReader).
// Memory helpers, statuses as errors: lib/native.js.

/** Where the package's onnxzip.wasm is. */
export const wasmURL = new URL('../onnxzip.wasm', import.meta.url);

const ERRNO_BADF = 8;

/** The WASI imports: output to descriptors is discarded (its length reported written, so stdio does
 * not retry), seeks fail with EBADF (stdio then treats the stream as a pipe). */
function wasiImports(memory) {
  return {
    fd_write(fd, iovs, iovsLen, nwritten) {
      const dv = new DataView(memory().buffer);
      let n = 0;
      for (let i = 0; i < iovsLen; i++) n += dv.getUint32(iovs + 8 * i + 4, true);
      dv.setUint32(nwritten, n, true);
      return 0;
    },
    fd_close() { return 0; },
    fd_seek() { return ERRNO_BADF; },
  };
}

function isNodeFile(url) {
  return url.protocol === 'file:' && typeof process === 'object' && !!process.versions?.node;
}

let reader = null;

/** Sets the function behind the wasm's import onnxzip.read(fd, ptr, n, offset) (ozw_open_file's
 * reads of local headers: lib/archive.js); null: every read fails (-1). */
export function setReader(fn) { reader = fn; }

async function instantiate(url) {
  let instance = null;
  const imports = {
    wasi_snapshot_preview1: wasiImports(() => instance.exports.memory),
    onnxzip: { read: (fd, ptr, n, off) => (reader ? reader(fd, ptr, n, off) : -1) },
  };
  let result;
  if (isNodeFile(url)) {
    const { readFile } = await import('node:fs/promises');
    result = await WebAssembly.instantiate(await readFile(url), imports);
  } else {
    const r = await fetch(url);
    if (!r.ok) throw new Error(`onnxzip: cannot load ${url.href}: HTTP ${r.status}`);
    try {
      result = await WebAssembly.instantiateStreaming(r.clone(), imports);
    } catch {
      // a Content-Type other than application/wasm (file servers, some CDNs): take the bytes
      result = await WebAssembly.instantiate(await r.arrayBuffer(), imports);
    }
  }
  instance = result.instance;
  instance.exports._initialize();
  return instance.exports;
}

let loading = null;

/** The wasm's exports (ozw_*, memory), instantiated on the first call; later calls return the same
 * promise. A failed load is not cached: the next call tries again. */
export function load() {
  loading ??= instantiate(wasmURL).catch((e) => { loading = null; throw e; });
  return loading;
}
