#!/usr/bin/env node
// ort_load.js — one measured ONNX Runtime load, for tools/bench/bench_ort.py.
//
//   node ort_load.js MODEL on|off
//
// Creates an InferenceSession for MODEL by path (ORT resolves external data
// relative to MODEL's directory), with prepacking on or off (session config
// entry session.disable_prepacking = "1" for off), runs it once on the
// model's single input (float16 or float32) filled with deterministic values
// in [-1, 1), and prints one JSON line to stdout:
//   {create_ms, run_ms, minflt, out_sha256, before: {...}, after: {...}}
// where before/after hold VmRSS, RssAnon, RssFile and VmHWM (kB) from
// /proc/self/status before the session is created and after the first run
// (session still alive), and minflt counts the minor page faults from
// session creation to the end of the run (process.resourceUsage()).
// Session: CPU EP, one intra-op and one inter-op thread, sequential, graph
// optimizations disabled (no constant folding: the first run, not session
// creation, reads the weights), as in tests/ort/run_model.js. Exits 1 with
// a message on stderr on any failure.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const [modelPath, prepack] = process.argv.slice(2);
if (!modelPath || !['on', 'off'].includes(prepack)) {
  process.stderr.write('usage: node ort_load.js MODEL on|off\n');
  process.exit(2);
}

// the pinned onnxruntime-node the ORT tests install (.ci/install-deps)
const ort = require(path.join(__dirname, '..', '..', 'tests', 'ort', 'node_modules', 'onnxruntime-node'));
// the options of tests/ort's runs: the same kernels in the same order in every layout
const { SESSION_OPTIONS } = require(path.join(__dirname, '..', '..', 'tests', 'ort', 'inputs.js'));

function procStatus() {
  const text = fs.readFileSync('/proc/self/status', 'utf8');
  const r = {};
  for (const key of ['VmRSS', 'RssAnon', 'RssFile', 'VmHWM']) {
    const m = text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'));
    if (m) r[key] = Number(m[1]);
  }
  return r;
}

// values in [-1, 1) from xorshift32; float16: their bits with the mantissa
// cut to 10 bits and float16 subnormals flushed to zero
function input(type, n) {
  const a = type === 'float16' ? new Uint16Array(n) : new Float32Array(n);
  let x = 0x2545f491;
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    f[0] = ((x >>> 8) / 8388608) - 1;
    if (type !== 'float16') { a[i] = f[0]; continue; }
    const b = u[0];
    const e = ((b >>> 23) & 0xff) - 127 + 15;
    a[i] = e <= 0 ? ((b >>> 16) & 0x8000) : (((b >>> 16) & 0x8000) | (e << 10) | ((b >>> 13) & 0x3ff));
  }
  return a;
}

async function main() {
  const options = { ...SESSION_OPTIONS };
  if (prepack === 'off') options.extra = { session: { disable_prepacking: '1' } };
  const before = procStatus();
  const flt0 = process.resourceUsage().minorPageFault;
  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(modelPath, options);
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const { type, shape } = session.inputMetadata[0];
  const n = shape.reduce((p, d) => p * d, 1);
  const feeds = { [session.inputNames[0]]: new ort.Tensor(type, input(type, n), Array.from(shape)) };
  t0 = process.hrtime.bigint();
  const results = await session.run(feeds);
  const runMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const after = procStatus();
  const minflt = process.resourceUsage().minorPageFault - flt0;
  const h = crypto.createHash('sha256');
  for (const name of session.outputNames) {
    const d = results[name].data;
    h.update(Buffer.from(d.buffer, d.byteOffset, d.byteLength));
  }
  process.stdout.write(JSON.stringify({
    create_ms: createMs, run_ms: runMs, minflt, out_sha256: h.digest('hex'), before, after,
  }) + '\n');
  await session.release();
}

main().catch((e) => {
  process.stderr.write(`ort_load: ${modelPath}: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
