// The browser test's data (tests/js/browser.test.mjs): models made here and
// packed by the CLI, deterministic inputs, onnxruntime-node's outputs on the
// classic models (the oracle), and a comparison that reports how far apart
// two float outputs are (ulps) when they are not bit for bit the same.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { CORPUS } from '../helpers.mjs';

// Corpus models the test runs when present: file -> input shapes for their
// symbolic dims (others: 1). Skipped are models whose outputs are not
// deterministic functions of random inputs (silero: sr must be 8000/16000)
// or too slow for CI (PP-OCRv4 det).
export const CORPUS_MODELS = {
  'light_squeezenet.onnx': {},
  'light_inception_v2.onnx': {},
  'light_resnet50.onnx': {},
  'ch_ppocr_mobile_v2.0_cls_infer.onnx': { x: [1, 3, 48, 192] },
};

// Where onnxruntime-web 1.30 (wasm SIMD128 kernels) and onnxruntime-node 1.30
// (MLAS x86-64 AVX2/FMA kernels) compute differently. Measured on one-op
// models (X[3,32] x W[32,64], seeded): Gemm alone and MatMul alone differ in
// about 2/3 of the outputs, up to 717 ulp near zero (|diff| ~1e-8); Add
// alone agrees bit for bit, as do Gather and Cast (embed.onnx). These
// models' browser outputs are compared with node's by max |diff| < 1e-5 and
// the ulps are reported (the browser's archive runs must still equal its
// classic run bit for bit); every other model must equal node bit for bit.
export const KERNEL_DIFFERS = {
  'tiny.onnx': 'Gemm and MatMul (float32 GEMM: MLAS FMA kernels in node, wasm SIMD128 kernels in the browser)',
  'ch_ppocr_mobile_v2.0_cls_infer.onnx': 'Conv and MatMul (both through MLAS SGEMM, as tiny.onnx\'s Gemm and MatMul)',
};

export function run(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${e.status}):\n${e.stderr}`);
  }
}

/** Deterministic pseudo-random numbers (an LCG: the same on every run). */
function lcg(seed) {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s / 2 ** 32; };
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

/** Inputs for an onnxruntime-node session: {name: ort.Tensor}, shapes from
 * `shapes[name]` else symbolic dims = `symbolic`; int64 values in
 * [0, intRange). */
export function makeInputs(ort, session, { shapes = {}, symbolic = 1, intRange = 4096, seed = 1 } = {}) {
  const next = lcg(seed);
  const feeds = {};
  for (const meta of session.inputMetadata) {
    const dims = shapes[meta.name] ?? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : symbolic));
    const n = dims.reduce((a, b) => a * b, 1);
    const Arr = ARRAYS[meta.type];
    if (!Arr) throw new Error(`input ${meta.name}: type ${meta.type} not generated`);
    const data = new Arr(n);
    for (let i = 0; i < n; i++) {
      const r = next();
      if (meta.type === 'int64' || meta.type === 'uint64') data[i] = BigInt(Math.floor(r * intRange));
      else if (meta.type.startsWith('float')) data[i] = r * 2 - 1;
      else data[i] = Math.floor(r * 100);
    }
    feeds[meta.name] = new ort.Tensor(meta.type, data, dims);
  }
  return feeds;
}

const b64 = (ta) => Buffer.from(ta.buffer, ta.byteOffset, ta.byteLength).toString('base64');

/** {name: ort.Tensor} -> the page's JSON form {name: {type, dims, b64}}. */
export function toPage(tensors) {
  return Object.fromEntries(Object.entries(tensors).map(([k, t]) => [k, { type: t.type, dims: [...t.dims], b64: b64(t.data) }]));
}

/** onnxruntime-node's outputs of the classic model at `file`, page form. */
export async function nodeOutputs(ort, file, opts) {
  const session = await ort.InferenceSession.create(file, { logSeverityLevel: 3 });
  const feeds = makeInputs(ort, session, opts);
  const out = await session.run(feeds);
  const outputs = toPage(Object.fromEntries(session.outputNames.map((n) => [n, out[n]])));
  await session.release();
  return { inputs: toPage(feeds), outputs };
}

/** float32 bits on a line where adjacent floats are 1 apart. */
function ordered(bits) {
  return bits < 0 ? -(bits & 0x7fffffff) : bits;
}

/** How two page-form outputs differ: null when bit for bit equal, else
 * {name, detail, maxUlp, maxAbs} of the first output that differs. */
export function difference(a, b) {
  const names = Object.keys(a).sort();
  if (names.join() !== Object.keys(b).sort().join()) return { detail: `outputs ${names} vs ${Object.keys(b).sort()}` };
  for (const name of names) {
    const x = a[name], y = b[name];
    if (x.type !== y.type || x.dims.join() !== y.dims.join()) {
      return { name, detail: `${name}: ${x.type}[${x.dims}] vs ${y.type}[${y.dims}]` };
    }
    if (x.b64 === y.b64) continue;
    const bx = Buffer.from(x.b64, 'base64'), by = Buffer.from(y.b64, 'base64');
    if (x.type !== 'float32' || bx.length !== by.length) return { name, detail: `${name}: ${x.type} bytes differ` };
    let maxUlp = 0, maxAbs = 0, count = 0;
    for (let i = 0; i < bx.length; i += 4) {
      const ulp = Math.abs(ordered(bx.readInt32LE(i)) - ordered(by.readInt32LE(i)));
      if (ulp) count++;
      maxUlp = Math.max(maxUlp, ulp);
      maxAbs = Math.max(maxAbs, Math.abs(bx.readFloatLE(i) - by.readFloatLE(i)));
    }
    return { name, maxUlp, maxAbs, detail: `${name}: ${count} of ${bx.length / 4} floats differ, max ${maxUlp} ulp, max |diff| ${maxAbs.toExponential(3)}` };
  }
  return null;
}

/** Writes the test's archives into `dir` with the CLI: the README's example
 * model (tiny), the exact-op model (embed), a copy of embed with one weight
 * byte flipped (bad.onnxzip), each model's CLI view, and the corpus models
 * present. Returns [{name, classic, archive, view, corpus}]. */
export function makeFixtures(dir, { cli, python, repo }) {
  const models = [];
  const add = (name, classic, corpus = false) => {
    const archive = path.join(dir, name.replace(/\.onnx$/, '.onnxzip'));
    run(cli, ['pack', classic, '-o', archive, '-q']);
    const view = archive.replace(/\.onnxzip$/, '.view.onnx');
    run(cli, ['view', archive, '-o', view, '-q']);
    models.push({ name, classic, archive, view, corpus });
  };
  run(python, [path.join(repo, 'tools/make_example_model.py'), path.join(dir, 'tiny.onnx')]);
  add('tiny.onnx', path.join(dir, 'tiny.onnx'));
  run(python, [path.join(repo, 'tests/js/browser/make_models.py'), path.join(dir, 'embed.onnx')]);
  add('embed.onnx', path.join(dir, 'embed.onnx'));
  const bad = fs.readFileSync(path.join(dir, 'embed.onnxzip'));
  bad[1000] ^= 0x01; // inside embed.float's data (it starts at offset 64)
  fs.writeFileSync(path.join(dir, 'bad.onnxzip'), bad);
  for (const name of Object.keys(CORPUS_MODELS)) {
    const src = path.join(CORPUS, 'models', name);
    if (fs.existsSync(src)) add(name, src, true);
  }
  return models;
}
