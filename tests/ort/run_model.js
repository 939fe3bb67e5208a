#!/usr/bin/env node
// run_model.js — run one ONNX model with ONNX Runtime (onnxruntime-node, CPU)
// on deterministic inputs and write its outputs bit-exactly as JSON.
//
//   node run_model.js [--load path|bytes [--folder DIR] [--cwd DIR]]...
//                     MODEL OUT.json [INPUT_SPEC.json]
//   node run_model.js --batch JOBS.json OUT.jsonl   (many models, given inputs:
//                     see runBatch() at the end)
//
// MODEL is given to ORT as a path, so ORT resolves external data relative to
// the model's directory (the classic external-data layouts, and an unzipped
// onnxzip archive whose __MODEL_PROTO was renamed to model.onnx).
//
// With --load options, MODEL is loaded once per option, in order, in this one
// process (sessions released in between), and OUT.json is {"loads": [...]}
// (see below). Each --load names a source; the options after it apply to it:
//   --load path           InferenceSession.create(MODEL path)
//   --load bytes          create(Uint8Array of MODEL's bytes): ORT then
//                         resolves external data relative to the process's
//                         working directory
//   --folder DIR          (bytes only) the session config entry
//                         session.model_external_initializers_file_folder_path
//                         = DIR (extra: {session: {...}}): ORT resolves there
//   --cwd DIR             process.chdir(DIR) before this load (stays in force)
// A load's "how" in OUT.json is its arguments joined by spaces.
//
// Inputs: for every graph input ORT reports, the element type and shape come
// from session.inputMetadata (onnxruntime-node >= 1.22). With an older ORT,
// INPUT_SPEC.json must supply them: {"NAME": {"type": "float32", "shape":
// [1, "N", 3]}, ...} (ort_layouts.py writes it from the model with the onnx
// package). Symbolic or unknown dimensions become 1, except these known cases,
// chosen by input name and rank:
//   sr                   scalar int64 16000          (Silero VAD sample rate)
//   input, rank 2        [1, 512]                    (Silero VAD audio chunk)
//   x, rank 4 [?,3,?,?]  [1, 3, 64, 192]             (PaddleOCR det/cls image;
//                                                    det needs multiples of 32)
// Values come from xorshift32 seeded from the input's name (so they do not
// depend on input order): floats uniform in [-1, 1), integers in 0..9,
// bools 0/1, strings "s<k>".
//
// Session: graphOptimizationLevel 'disabled', one intra-op and one inter-op
// thread, sequential execution, CPU execution provider only, so that the
// same model in every layout runs the same kernels in the same order.
//
// OUT.json: {"inputs": {NAME: {dims, type, hex}}, "outputs": {NAME: {dims,
// type, hex}}} where hex is the tensor's raw bytes (little-endian, as ORT
// returns them) in lower-case hex; string tensors are hexed as the UTF-8 of
// their JSON array. A tensor of more than 64 KiB (only intermediate values,
// which ort_layouts.py's "+probe" variants expose, get that big) has
// {dims, type, bytes, sha256} instead of hex, to keep OUT.json small. Exits 0 on success; on any failure prints
// "run_model: MODEL: message" to stderr and exits 1 (2 on a bad command line).
// With --load: OUT.json is {"loads": [{how, inputs, outputs, proc} or {how,
// error}]}, one per --load in order; a load that ORT refuses (create or run)
// is recorded with its error message and the next one still runs, so the exit
// status is 0 unless the command line, the inputs or OUT.json fail. proc holds
// VmRSS, RssAnon, RssFile and VmHWM (kB) from /proc/self/status just after
// the load's run, before its session is released (absent off Linux).
'use strict';

const crypto = require('crypto');
const fs = require('fs');

function die(model, msg, code) {
  process.stderr.write(`run_model: ${model}: ${msg}\n`);
  process.exit(code === undefined ? 1 : code);
}

function usage() {
  process.stderr.write('usage: node run_model.js [--load path|bytes [--folder DIR] [--cwd DIR]]... '
    + 'MODEL OUT.json [INPUT_SPEC.json]\n');
  process.exit(2);
}

// --load SOURCE [--folder DIR] [--cwd DIR] ... -> [{how, source, folder, cwd}]
const loads = [];
const argv = process.argv.slice(2);
const BATCH = argv[0] === '--batch'; // see runBatch() at the end
if (BATCH) argv.shift();
while (!BATCH && argv.length >= 2 && argv[0].startsWith('--')) {
  const [opt, value] = argv.splice(0, 2);
  const last = loads[loads.length - 1];
  if (opt === '--load' && (value === 'path' || value === 'bytes')) {
    loads.push({ how: value, source: value });
    continue;
  }
  const key = opt.slice(2);
  if (!last || !['folder', 'cwd'].includes(key) || key in last) usage();
  if (key === 'folder' && last.source !== 'bytes') usage();
  last[key] = value;
  last.how += ` ${opt} ${value}`;
}
if (BATCH ? argv.length !== 2 : (argv.length < 2 || argv.length > 3)) usage();
// absolute, so that a load's cwd option does not change which files are used;
// in batch mode modelPath is JOBS.json, then the current job's model (for die())
let [modelPath, outPath, specPath] = argv.map((a) => require('path').resolve(a));

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  die(modelPath, `cannot load onnxruntime-node (run 'npm ci --ignore-scripts' in tests/ort): ${e.message}`);
}

const { inputValues, SESSION_OPTIONS } = require('./inputs.js');

const HEX_MAX = 64 << 10;

// {dims, type, hex} or, above HEX_MAX bytes, {dims, type, bytes, sha256}
function record(t) {
  const d = t.data;
  const buf = Array.isArray(d) ? Buffer.from(JSON.stringify(d), 'utf8')
    : Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  const r = { dims: Array.from(t.dims), type: t.type };
  if (buf.length <= HEX_MAX) {
    r.hex = buf.toString('hex');
  } else {
    r.bytes = buf.length;
    r.sha256 = crypto.createHash('sha256').update(buf).digest('hex');
  }
  return r;
}

// ---- main ----------------------------------------------------------------------

// ORT refusing the model (create or run): recorded per load with --load
class Refused extends Error {}


async function createSession(load) {
  if (load.cwd !== undefined) process.chdir(load.cwd);
  const options = { ...SESSION_OPTIONS };
  let source = modelPath;
  if (load.source === 'bytes') {
    source = new Uint8Array(fs.readFileSync(modelPath));
    if (load.folder !== undefined) {
      options.extra = { session: { model_external_initializers_file_folder_path: load.folder } };
    }
  }
  try {
    return await ort.InferenceSession.create(source, options);
  } catch (e) {
    throw new Refused(`ORT refused the model: ${e.message}`);
  }
}

function inputMeta(session) {
  if (Array.isArray(session.inputMetadata) && session.inputMetadata.length === session.inputNames.length) {
    const meta = {};
    for (const m of session.inputMetadata) {
      if (!m.isTensor) die(modelPath, `input '${m.name}' is not a tensor; not supported by this test`);
      meta[m.name] = { type: m.type, shape: Array.from(m.shape) };
    }
    return meta;
  }
  if (specPath) return JSON.parse(fs.readFileSync(specPath, 'utf8'));
  return die(modelPath, 'this onnxruntime-node has no session.inputMetadata; pass INPUT_SPEC.json');
}

function makeFeeds(session, meta) {
  const feeds = {};
  const inputs = {};
  for (const name of session.inputNames) {
    const m = meta[name];
    if (!m) die(modelPath, `no type/shape for input '${name}'`);
    try {
      const v = inputValues(name, m.type, m.shape);
      feeds[name] = new ort.Tensor(v.type, v.data, v.dims);
    } catch (e) {
      die(modelPath, `input '${name}': ${e.message}`);
    }
    inputs[name] = record(feeds[name]);
  }
  return [feeds, inputs];
}

// VmRSS, RssAnon, RssFile, VmHWM in kB (null off Linux)
function procStatus() {
  let text;
  try {
    text = fs.readFileSync('/proc/self/status', 'utf8');
  } catch (e) {
    return null;
  }
  const r = {};
  for (const key of ['VmRSS', 'RssAnon', 'RssFile', 'VmHWM']) {
    const m = text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'));
    if (m) r[key] = Number(m[1]);
  }
  return r;
}

// {inputs, outputs, proc}; throws Refused when ORT refuses the model
async function runOnce(load) {
  const session = await createSession(load);
  const [feeds, inputs] = makeFeeds(session, inputMeta(session));
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    throw new Refused(`ORT run failed: ${e.message}`);
  }
  const outputs = {};
  for (const name of session.outputNames) {
    const t = results[name];
    if (!t) die(modelPath, `output '${name}' missing from the results`);
    outputs[name] = record(t);
  }
  const proc = procStatus();
  await session.release();
  return { inputs, outputs, proc };
}

async function main() {
  if (!loads.length) {
    let r;
    try {
      r = await runOnce({ how: 'path', source: 'path' });
    } catch (e) {
      if (e instanceof Refused) die(modelPath, e.message);
      throw e;
    }
    fs.writeFileSync(outPath, JSON.stringify({ inputs: r.inputs, outputs: r.outputs }) + '\n');
    return;
  }
  const done = [];
  for (const load of loads) {
    try {
      const r = await runOnce(load);
      done.push({ how: load.how, ...r });
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      done.push({ how: load.how, error: e.message });
    }
  }
  fs.writeFileSync(outPath, JSON.stringify({ loads: done }) + '\n');
}

// ---- --batch -------------------------------------------------------------------
//   node run_model.js --batch JOBS.json OUT.jsonl
// JOBS.json: [{model, loads: [{source: 'path'|'bytes', folder?}], feeds:
// {NAME: {type, dims, hex} | {type: 'string', dims, strings}}, fetches:
// [NAME...]}]: many models in one process, each fed the given inputs (a test
// corpus's own input_*.pb, decoded by the caller; hex is the raw little-endian
// bytes, float16 as its bits) instead of generated ones, and run for the
// outputs named in fetches only (the caller leaves out sequence/optional
// outputs, which this binding cannot return). Loads are as with --load. For
// each job, in order, one line {model, loads: [{how, outputs} | {how, error}]}
// is appended to OUT.jsonl as soon as the job is done, so that the caller
// knows how far the process got if ORT crashes it.

const FEED_ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function feedTensor(name, f) {
  if (f.type === 'string') return new ort.Tensor('string', f.strings, f.dims);
  const A = FEED_ARRAYS[f.type];
  if (!A) die(modelPath, `input '${name}': element type '${f.type}' not supported by --batch`);
  const b = Buffer.from(f.hex, 'hex');
  // a copy: the typed array needs its own, aligned buffer
  const data = new A(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  return new ort.Tensor(f.type, data, f.dims);
}

async function runJob(job, load) {
  const session = await createSession(load);
  const feeds = {};
  for (const [name, f] of Object.entries(job.feeds)) feeds[name] = feedTensor(name, f);
  let results;
  try {
    results = await session.run(feeds, job.fetches);
  } catch (e) {
    await session.release();
    throw new Refused(`ORT run failed: ${e.message}`);
  }
  const outputs = {};
  for (const name of job.fetches) {
    if (!results[name]) die(modelPath, `output '${name}' missing from the results`);
    outputs[name] = record(results[name]);
  }
  await session.release();
  return outputs;
}

async function runBatch() {
  const jobs = JSON.parse(fs.readFileSync(modelPath, 'utf8'));
  fs.writeFileSync(outPath, '');
  for (const job of jobs) {
    modelPath = require('path').resolve(job.model);
    const done = [];
    for (const l of job.loads) {
      const load = { source: l.source, how: l.source, folder: l.folder };
      if (l.folder !== undefined) load.how += ` --folder ${l.folder}`;
      try {
        done.push({ how: load.how, outputs: await runJob(job, load) });
      } catch (e) {
        if (!(e instanceof Refused)) throw e;
        done.push({ how: load.how, error: e.message });
      }
    }
    fs.appendFileSync(outPath, JSON.stringify({ model: job.model, loads: done }) + '\n');
  }
}

(BATCH ? runBatch() : main()).catch((e) => die(modelPath, e && e.stack ? e.stack : String(e)));
