// trust_transformers.test.mjs — transformersModel(source, {trust}) (issue 36): transformers.js
// (@huggingface/transformers) on packages signed by model_signing 1.1.1 (trust_fixtures.mjs: the
// transformers_js layout, a llama decoder in two data chunks, and encoder_decoder, a T5-style pair), in
// Node.js (onnxruntime-node; transformers.js needs Node.js >= 20.9: run_test.sh's pinned node under 18);
// in chromium, trust_browser.test.mjs covers open and createSession, not transformersModel. Oracle: the same pipeline on the signed folder
// (transformers.js's own loader): generated token ids equal. A changed tokenizer byte, a changed weight
// (CRC-32 and XXH3 consistent), a wrong key, no signature: the pipeline fails with the C library's status,
// naming the file, before any of it is used.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { env, pipeline } from '@huggingface/transformers';
import * as h from './helpers.mjs';
import { CASES, makeSigned } from './trust_fixtures.mjs';

const oz = await h.loadPackage();
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON;
const PROMPT = 'the quick brown fox';
// [layout, task]
const MODELS = [['transformers_js', 'text-generation'], ['encoder_decoder', 'text2text-generation']];
let dir, fx;

env.allowRemoteModels = false;
env.useFSCache = false;

before(() => {
  assert.ok(PYTHON && fs.existsSync(PYTHON), `ONNXZIP_PYVENV_PYTHON (${PYTHON}): the pinned venv's python is needed`);
  dir = h.scratch('oz-trust-tjs-');
  fx = makeSigned(dir, PYTHON);
  env.localModelPath = `${dir}/`;
});
after(() => { if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

async function generate(task, id, options) {
  const p = await pipeline(task, id, options);
  try {
    const out = await p.model.generate({ ...p.tokenizer(PROMPT), max_new_tokens: 8, do_sample: false });
    return Array.from(out.data, Number);
  } finally {
    await p.dispose();
  }
}

async function onPackage(source, trust, task) {
  const pkg = (await oz.transformersModel(source, { id: 'pkg/signed', trust })).install(env);
  try {
    return await generate(task, pkg.id, pkg.pipelineOptions());
  } finally {
    await pkg.close();
  }
}

const statusIs = (status, file) => (e) => {
  assert.equal(e.status, status, `${e.status}: ${e.message}`);
  if (file) assert.ok(e.message.includes(`'${file}'`), `the message names '${file}': ${e.message}`);
  return true;
};

describe('node', () => {
  let server;
  before(async () => { server = await h.rangeServer(); });
  after(async () => { await server?.close(); });

  for (const [kind, task] of MODELS) {
    test(`${kind} (${task}): the folder's token ids from a path, bytes, a URL; tampered or unsigned packages fail`, async () => {
      const trust = { publicKey: fx.pub };
      const want = await generate(task, kind, {});
      assert.ok(want.length > 5, `${kind}: ${want}`);
      const bytes = new Uint8Array(fs.readFileSync(fx.pkg(kind)));
      for (const [how, src] of [['path', fx.pkg(kind)], ['bytes', bytes], ['URL', server.serve(`${kind}.onnxzip`, fx.pkg(kind))]]) {
        assert.deepEqual(await onPackage(src, trust, task), want, `${kind} from ${how}`);
      }
      const { data, tokenizer } = CASES[kind];
      for (const [how, src] of [['path', fx.pkg(kind, 'weight')], ['URL', server.serve(`${kind}-w.onnxzip`, fx.pkg(kind, 'weight'))]]) {
        await assert.rejects(onPackage(src, trust, task), statusIs('ONNXZIP_EMISMATCH', data), `weight (${how})`);
      }
      await assert.rejects(onPackage(fx.pkg(kind, 'tokenizer'), trust, task), statusIs('ONNXZIP_EMISMATCH', tokenizer));
      await assert.rejects(onPackage(fx.pkg(kind), { publicKey: fx.otherPub }, task), statusIs('ONNXZIP_ESIGNATURE'));
      await assert.rejects(onPackage(fx.pkg(kind, 'unsigned'), trust, task), statusIs('ONNXZIP_EUNSIGNED'));
      assert.equal(env.customCache, null, 'a failed package left its cache installed');
    });
  }
});
