// remote_tamper.test.mjs — bytes changed in transit (issue 35, point 0): a server that sends another model's
// bytes, or one letter of a weight's name changed (the protobuf stays well-formed), in place of a package
// model's. open(url, {model}) must refuse it (ONNXZIP_ECRC or ONNXZIP_EDIGEST, the C library's statuses,
// naming the URL without its query and the entry) instead of handing the changed model on (modelBytes(),
// view()); with the whole package in the first request's tail and with the model before it (tailBytes).
// Untouched, the same open gives the model's own bytes. And a file's bytes (another file's, one letter) or
// one byte of a tensor's entry: readFile() and tensorData() refuse them, and createSession(ort, url) (the
// tensors it reads for ORT) too. Oracles: Python's zipfile (where
// the entry's bytes lie, and what they are), onnx (the models).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import * as h from './helpers.mjs';

const oz = await h.loadPackage();
const ort = createRequire(import.meta.url)('onnxruntime-node');
const PYTHON = process.env.ONNXZIP_PYTHON || '/usr/bin/python3';
let dir, server, url, a, b, at, where;

// Two models of the same size (their weights 'wa' and 'wb'), written to DIR/a and DIR/b, and two files of
// the same size.
const MAKE = `
import sys, numpy as np
from onnx import TensorProto, helper, numpy_helper, save
for d, w, k in (("a", "wa", 1), ("b", "wb", 2)):
    init = numpy_helper.from_array(np.arange(4096, dtype=np.float32) * k, w)
    g = helper.make_graph([helper.make_node("Add", ["x", w], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4096])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4096])], [init])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    save(m, f"{sys.argv[1]}/{d}/model.onnx")
for name, kind in (("config.json", "bert"), ("vocab.txt", "gpt2")):
    open(f"{sys.argv[1]}/{name}", "w").write('{"model_type": "%s"}\\n' % kind)
`;

// [data offset, base64 bytes] of each entry named, from zipfile and the local header it points to.
const WHERE = `
import base64, json, sys, zipfile
out = {}
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[1], "rb") as f:
    for n in sys.argv[2:]:
        i = z.getinfo(n)
        f.seek(i.header_offset + 26)
        l = f.read(4)
        out[n] = [i.header_offset + 30 + int.from_bytes(l[:2], "little") + int.from_bytes(l[2:], "little"),
                  base64.b64encode(z.read(n)).decode()]
print(json.dumps(out))
`;

function python(script, ...args) {
  const r = spawnSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

before(async () => {
  dir = h.scratch('oz-tamper-');
  const repo = path.join(dir, 'repo');
  for (const d of ['a', 'b']) fs.mkdirSync(path.join(repo, d), { recursive: true });
  python(MAKE, repo);
  const pkg = path.join(dir, 'pkg.onnxzip');
  h.cliOk('pack', repo, '-o', pkg, '-q');
  where = JSON.parse(python(WHERE, pkg, 'a/model.onnx', 'b/model.onnx', 'config.json', 'vocab.txt', 'a/wa'));
  at = where['a/model.onnx'][0];
  a = Buffer.from(where['a/model.onnx'][1], 'base64');
  b = Buffer.from(where['b/model.onnx'][1], 'base64');
  assert.ok(a.length === b.length && !a.equals(b), 'two models of the same size');
  assert.ok(fs.statSync(pkg).size - at > 600, 'a/model.onnx lies before the last 600 bytes (TAILS)');
  server = await h.rangeServer();
  url = server.serve('pkg.onnxzip', pkg);
});
after(async () => { await server?.close(); if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

const TAILS = { 'the package in the first request': {}, 'the model before it': { tailBytes: 600 } };

test('untouched: open(url, {model}) holds the model\'s own bytes', async () => {
  for (const [label, opts] of Object.entries(TAILS)) {
    const arc = await oz.open(url + '?sig=SECRET', { ...opts, model: 'a/model.onnx' });
    try {
      assert.deepEqual(Buffer.from(arc.modelBytes()), a, label);
      assert.ok((await arc.view()).byteLength > 0, label);
    } finally {
      await arc.close();
    }
  }
});

for (const change of ['another model\'s bytes', 'one letter of a weight\'s name']) {
  test(`${change} in transit: open(url, {model}) refuses it`, async () => {
    if (change.startsWith('another')) server.tamper('pkg.onnxzip', at, b);
    else server.tamper('pkg.onnxzip', at + a.indexOf('wa'), Buffer.from('wz'));
    try {
      for (const [label, opts] of Object.entries(TAILS)) {
        await assert.rejects(oz.open(url + '?sig=SECRET', { ...opts, model: 'a/model.onnx' }), (e) => {
          assert.ok(['ONNXZIP_ECRC', 'ONNXZIP_EDIGEST'].includes(e.status), `${label}: ${e.status} ${e.message}`);
          assert.ok(e.message.includes(url) && !e.message.includes('SECRET'), `${label}: ${e.message}`);
          assert.ok(e.message.includes('\'a/model.onnx\''), `${label}: ${e.message}`);
          return true;
        }, label);
      }
    } finally {
      server.tamper('pkg.onnxzip', 0, null);
    }
  });
}

const bytesOf = (name) => Buffer.from(where[name][1], 'base64');
const CHANGES = {
  'another file\'s bytes': ['config.json', () => [where['config.json'][0], bytesOf('vocab.txt')]],
  'one letter of a file': ['config.json', () => [where['config.json'][0] + bytesOf('config.json').indexOf('bert'),
    Buffer.from('Bert')]],
  'one byte of a tensor': ['wa', () => [where['a/wa'][0] + 100, Buffer.from([bytesOf('a/wa')[100] ^ 0x20])]],
};

test('untouched: readFile() and tensorData() give the entries\' bytes', async () => {
  const arc = await oz.open(url + '?sig=SECRET', { model: 'a/model.onnx' });
  try {
    assert.deepEqual(Buffer.from(await arc.readFile('config.json')), bytesOf('config.json'));
    assert.deepEqual(Buffer.from(await arc.readFile('config.json')), bytesOf('config.json'), 'a second read');
    assert.deepEqual(Buffer.from(await arc.tensorData('wa')), bytesOf('a/wa'));
  } finally {
    await arc.close();
  }
});

for (const [change, [what, how]] of Object.entries(CHANGES)) {
  test(`${change} in transit: ${what === 'wa' ? 'tensorData' : 'readFile'}() refuses it`, async () => {
    const arc = await oz.open(url + '?sig=SECRET', { model: 'a/model.onnx' });
    const [off, bytes] = how();
    server.tamper('pkg.onnxzip', off, bytes);
    try {
      for (let k = 0; k < 2; k++) {  // the first read checks the local header too, the second not
        const read = what === 'wa' ? arc.tensorData('wa') : arc.readFile(what);
        await assert.rejects(read, (e) => {
          const entry = what === 'wa' ? 'a/wa' : what;
          assert.ok(['ONNXZIP_ECRC', 'ONNXZIP_EDIGEST'].includes(e.status), `${e.status} ${e.message}`);
          assert.ok(e.message.includes(url) && !e.message.includes('SECRET') && e.message.includes(`'${entry}'`),
            e.message);
          return true;
        }, `read #${k + 1}`);
      }
    } finally {
      server.tamper('pkg.onnxzip', 0, null);
      await arc.close();
    }
  });
}

test('one byte of a tensor in transit: createSession(ort, url, {}, {model}) refuses it; untouched, it runs', async () => {
  const x = new ort.Tensor('float32', new Float32Array(4096).fill(1), [4096]);
  const session = await oz.createSession(ort, url + '?sig=SECRET', {}, { model: 'a/model.onnx' });
  try {
    const y = (await session.run({ x })).y.data;
    assert.equal(y[100], 101, 'x + wa, wa = arange(4096)');
  } finally {
    await session.release();
  }
  const [off, bytes] = CHANGES['one byte of a tensor'][1]();
  server.tamper('pkg.onnxzip', off, bytes);
  try {
    await assert.rejects(oz.createSession(ort, url + '?sig=SECRET', {}, { model: 'a/model.onnx' }), (e) => {
      assert.ok(['ONNXZIP_ECRC', 'ONNXZIP_EDIGEST'].includes(e.status), `${e.status} ${e.message}`);
      assert.ok(e.message.includes(url) && !e.message.includes('SECRET') && e.message.includes("'a/wa'"), e.message);
      return true;
    });
  } finally {
    server.tamper('pkg.onnxzip', 0, null);
  }
});
