// corpus.test.mjs — the JS package against the CLI and ONNX Runtime on real
// models: every shared-corpus model (models/*.onnx, extdata/*/*.onnx) and
// libonnx-testdata's models, each packed by the CLI (default options, every
// other one --align 4096), then opened by the package from its path and from
// its bytes:
//   - entries and tensors equal `onnxzip ls --json`'s (fields in camelCase),
//     and the wasm's listing is the CLI's JSON byte for byte, the archive's
//     name aside (alignments are the file offsets', from either);
//   - view() and view({sizeThreshold: 0}) byte-identical to `onnxzip view`
//     (default threshold and --size-threshold 0);
//   - createSession(onnxruntime-node, source) gives outputs bit-identical to
//     onnxruntime-node's own session on the ORIGINAL model file, fed the
//     deterministic inputs of tests/ort/inputs.js (a model ORT cannot run
//     from the original is skipped, with ORT's reason).
// libonnx-testdata: all of its models by default (ONNXZIP_JS_TESTDATA=all);
// =N every N-th (sorted by path), =0 none, for quicker local runs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ort from 'onnxruntime-node';
import inputs from '../ort/inputs.js';
import * as h from './helpers.mjs';

const { inputValues } = inputs;
// tests/ort's options, ORT's log down to fatal errors: the models it cannot
// run from the original (skipped) would fill the log with its complaints.
const SESSION_OPTIONS = { ...inputs.SESSION_OPTIONS, logSeverityLevel: 4 };
const oz = await h.loadPackage();

// A typed array's bytes, or a string tensor's strings as UTF-8 JSON.
function tensorBytes(t) {
  const d = t.data;
  if (Array.isArray(d)) return Buffer.from(JSON.stringify(d), 'utf8');
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

// ORT's session on the original model: {feeds, outputs} or {skip: reason}.
async function reference(model) {
  let session;
  try {
    session = await ort.InferenceSession.create(model, SESSION_OPTIONS);
  } catch (e) {
    return { skip: `ORT cannot load the original: ${e.message.split('\n')[0]}` };
  }
  try {
    const feeds = {};
    for (const m of session.inputMetadata) {
      if (!m.isTensor) return { skip: `input '${m.name}' is not a tensor` };
      const v = inputValues(m.name, m.type, Array.from(m.shape));
      feeds[m.name] = new ort.Tensor(v.type, v.data, v.dims);
    }
    let results;
    try {
      results = await session.run(feeds);
    } catch (e) {
      return { skip: `ORT cannot run the original: ${e.message.split('\n')[0]}` };
    }
    return { feeds, outputs: outputsOf(session, results) };
  } catch (e) {
    return { skip: `no inputs for the original: ${e.message}` };
  } finally {
    await session.release();
  }
}

function outputsOf(session, results) {
  const out = {};
  for (const name of session.outputNames) {
    const t = results[name];
    out[name] = { type: t.type, dims: Array.from(t.dims), bytes: tensorBytes(t) };
  }
  return out;
}

async function runPackageSession(source, ref) {
  const session = await oz.createSession(ort, source, SESSION_OPTIONS);
  try {
    return outputsOf(session, await session.run(ref.feeds));
  } finally {
    await session.release();
  }
}

// Outputs equal bit for bit (NaN payloads included).
function assertSameOutputs(got, want, how) {
  assert.deepEqual(Object.keys(got), Object.keys(want), `${how}: output names`);
  for (const [name, w] of Object.entries(want)) {
    const g = got[name];
    assert.equal(g.type, w.type, `${how}: output '${name}' type`);
    assert.deepEqual(g.dims, w.dims, `${how}: output '${name}' dims`);
    assert.ok(g.bytes.equals(w.bytes), `${how}: output '${name}' differs from ORT's on the original`);
  }
}

async function checkArchive(archive, listing, views, how) {
  assert.deepEqual(h.pick(archive.entries, h.ENTRY_FIELDS), listing.entries, `${how}: entries`);
  assert.deepEqual(h.pick(archive.tensors, h.TENSOR_FIELDS), listing.tensors, `${how}: tensors`);
  h.assertSameListing(archive._listing, views.lsJson, how);
  assert.equal(archive.size, fs.statSync(views.archive).size, `${how}: size`);
  assert.ok(Buffer.from(await archive.view()).equals(views.byDefault), `${how}: view() != onnxzip view`);
  assert.ok(Buffer.from(await archive.view({ sizeThreshold: 0 })).equals(views.all),
    `${how}: view({sizeThreshold: 0}) != onnxzip view --size-threshold 0`);
}

// Packs MODEL into DIR, checks the package against the CLI and ORT.
async function checkModel(t, model, index, dir) {
  const name = `${path.basename(model, '.onnx')}.onnxzip`;
  const archive = path.join(dir, name);
  const packArgs = index % 2 ? ['--align', '4096'] : [];
  h.cliOk('pack', model, '-o', archive, ...packArgs);
  const listing = h.cliListing(archive);
  const views = {
    archive,
    lsJson: h.cliOk('ls', archive, '--json').toString('utf8'),
    byDefault: h.cliOk('view', archive, '-o', '-'),
    all: h.cliOk('view', archive, '-o', '-', '--size-threshold', '0'),
  };
  const bytes = new Uint8Array(fs.readFileSync(archive));
  const fromPath = await oz.open(archive);
  const fromBytes = await oz.open(bytes, { name });
  try {
    assert.equal(fromPath.name, name);
    await checkArchive(fromPath, listing, views, 'from its path');
    await checkArchive(fromBytes, listing, views, 'from its bytes');
    const ref = await reference(model);
    if (ref.skip) {
      t.diagnostic(`ORT part skipped: ${ref.skip}`);
      return 'ort-skipped';
    }
    assertSameOutputs(await runPackageSession(archive, ref), ref.outputs, 'createSession(path)');
    assertSameOutputs(await runPackageSession(fromBytes, ref), ref.outputs, 'createSession(Archive of bytes)');
    return 'ort-identical';
  } finally {
    fromPath.close();
    fromBytes.close();
  }
}

// Runs checkModel for every model as a subtest of T, in one scratch directory.
async function checkAll(t, models, idOf) {
  const dir = h.scratch('corpus');
  const counts = {};
  const t0 = Date.now();
  try {
    for (const [i, model] of models.entries()) {
      await t.test(idOf(model), async (st) => {
        const sub = fs.mkdtempSync(path.join(dir, 'm'));
        try {
          const r = await checkModel(st, model, i, sub);
          counts[r] = (counts[r] || 0) + 1;
        } finally {
          fs.rmSync(sub, { recursive: true, force: true });
        }
      });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  t.diagnostic(`${models.length} models in ${((Date.now() - t0) / 1000).toFixed(1)} s: `
    + `${counts['ort-identical'] || 0} ran bit-identical in ORT, ${counts['ort-skipped'] || 0} not runnable by ORT`);
}

test('shared corpus models', async (t) => {
  const models = h.corpusModels();
  if (!models.length) {
    t.skip(`shared corpus absent: no models/*.onnx or extdata/*/*.onnx under ${h.CORPUS} (set ONNXZIP_SHARED_CORPUS)`);
    return;
  }
  await checkAll(t, models, (m) => path.relative(h.CORPUS, m));
});

// All 1,072 take about a minute here (2 cores); a stride is fixed, so that
// a shorter run is reproducible.
function testdataSelection(all) {
  const knob = process.env.ONNXZIP_JS_TESTDATA || 'all';
  if (knob === 'all') return all;
  const n = Number(knob);
  if (!Number.isInteger(n) || n < 0) throw new Error(`ONNXZIP_JS_TESTDATA: 'all' or a stride, not '${knob}'`);
  return n === 0 ? [] : all.filter((_, i) => i % n === 0);
}

test('libonnx-testdata models', async (t) => {
  const all = h.testdataModels();
  if (!all.length) {
    t.skip(`libonnx-testdata absent: no *.onnx under ${h.TESTDATA} (apt-get install libonnx-testdata)`);
    return;
  }
  const models = testdataSelection(all);
  if (!models.length) {
    t.skip('ONNXZIP_JS_TESTDATA=0');
    return;
  }
  t.diagnostic(`${models.length} of ${all.length} models (ONNXZIP_JS_TESTDATA=${process.env.ONNXZIP_JS_TESTDATA || 'all'})`);
  await checkAll(t, models, (m) => path.relative(h.TESTDATA, path.dirname(m)));
});
