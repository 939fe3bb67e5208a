// inputs.js — the deterministic inputs and the session options with which
// ONNX Runtime runs a model in the tests: tests/ort/run_model.js (see its
// header for the rules) and tests/js/corpus.test.mjs (the JS package's
// sessions against ORT's on the original model). One copy of the rules, so
// both feed a model the same values.
'use strict';

// ---- deterministic values --------------------------------------------------

function fnv1a(s) {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function xorshift32(seed) {
  let x = (seed >>> 0) || 0x9e3779b9;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x;
  };
}

// float in [-1, 1) with 24 random bits: exactly representable in float32
const toFloat = (u) => ((u >>> 8) / 8388608) - 1;
const toInt = (u) => u % 10;

// float32 value -> IEEE half bits (round to nearest even); values here are in
// [-1, 1) so no overflow handling beyond the generic path is needed
function halfBits(f) {
  const b = new DataView(new ArrayBuffer(4));
  b.setFloat32(0, f);
  const x = b.getUint32(0);
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h += 1;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h += 1;
  return sign | h;
}

function bfloat16Bits(f) {
  const b = new DataView(new ArrayBuffer(4));
  b.setFloat32(0, f);
  const x = b.getUint32(0);
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

function makeData(type, n, next) {
  let a;
  switch (type) {
    case 'float32': a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = toFloat(next()); return a;
    case 'float64': a = new Float64Array(n); for (let i = 0; i < n; i++) a[i] = toFloat(next()); return a;
    case 'float16': a = new Uint16Array(n); for (let i = 0; i < n; i++) a[i] = halfBits(toFloat(next())); return a;
    case 'bfloat16': a = new Uint16Array(n); for (let i = 0; i < n; i++) a[i] = bfloat16Bits(toFloat(next())); return a;
    case 'int8': a = new Int8Array(n); break;
    case 'uint8': a = new Uint8Array(n); break;
    case 'int16': a = new Int16Array(n); break;
    case 'uint16': a = new Uint16Array(n); break;
    case 'int32': a = new Int32Array(n); break;
    case 'uint32': a = new Uint32Array(n); break;
    case 'int64': a = new BigInt64Array(n); for (let i = 0; i < n; i++) a[i] = BigInt(toInt(next())); return a;
    case 'uint64': a = new BigUint64Array(n); for (let i = 0; i < n; i++) a[i] = BigInt(toInt(next())); return a;
    case 'bool': a = new Uint8Array(n); for (let i = 0; i < n; i++) a[i] = next() & 1; return a;
    case 'string': a = []; for (let i = 0; i < n; i++) a.push(`s${toInt(next())}`); return a;
    default: throw new Error(`input element type '${type}' not supported by this test`);
  }
  for (let i = 0; i < n; i++) a[i] = toInt(next());
  return a;
}

// ---- shapes ------------------------------------------------------------------

const isFixed = (d) => typeof d === 'number' && Number.isInteger(d) && d >= 0;

// Returns [dims, type] for an input, or throws.
function resolveInput(name, type, shape) {
  const rank = shape.length;
  if (name === 'sr' && rank === 0 && type === 'int64') {
    return { dims: [], type, fill: () => BigInt64Array.from([16000n]) };
  }
  if (name === 'input' && rank === 2 && type === 'float32' && !isFixed(shape[1])) {
    return { dims: [isFixed(shape[0]) ? shape[0] : 1, 512], type };
  }
  if (name === 'x' && rank === 4 && shape[1] === 3 && !isFixed(shape[2]) && !isFixed(shape[3])) {
    return { dims: [isFixed(shape[0]) ? shape[0] : 1, 3, 64, 192], type };
  }
  return { dims: shape.map((d) => (isFixed(d) ? d : 1)), type };
}

// {dims, type, data} for the input NAME of element type TYPE (ORT's names:
// 'float32', 'int64', ...) and shape SHAPE (numbers; anything else is a
// symbolic or unknown dimension), values from xorshift32 seeded from NAME.
function inputValues(name, type, shape) {
  const r = resolveInput(name, type, shape);
  const n = r.dims.reduce((a, b) => a * b, 1);
  const data = r.fill ? r.fill() : makeData(r.type, n, xorshift32(fnv1a(name) ^ 0x2545f491));
  return { dims: r.dims, type: r.type, data };
}

// Graph optimizations off, one thread, sequential, CPU only: the same model
// in every layout runs the same kernels in the same order.
const SESSION_OPTIONS = {
  executionProviders: ['cpu'],
  graphOptimizationLevel: 'disabled',
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  logSeverityLevel: 3,
};

module.exports = { inputValues, SESSION_OPTIONS };
