// remote_tamper.test.mjs — bytes changed in transit (issue 35, point 0): a server that sends another model's
// bytes, or one letter of a weight's name changed (the protobuf stays well-formed), in place of a package
// model's. open(url, {model}) must refuse it (ONNXZIP_ECRC or ONNXZIP_EDIGEST, the C library's statuses,
// naming the URL without its query and the entry) instead of handing the changed model on (modelBytes(),
// view()); with the whole package in the first request's tail and with the model before it (tailBytes).
// Untouched, the same open gives the model's own bytes. Oracles: Python's zipfile (where the entry's bytes
// lie, and what they are), onnx (the models).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import * as h from './helpers.mjs';

const oz = await h.loadPackage();
const PYTHON = process.env.ONNXZIP_PYTHON || '/usr/bin/python3';
let dir, server, url, a, b, at;

// Two models of the same size (their weights 'wa' and 'wb'), written to DIR/a and DIR/b.
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
  const where = JSON.parse(python(WHERE, pkg, 'a/model.onnx', 'b/model.onnx'));
  at = where['a/model.onnx'][0];
  a = Buffer.from(where['a/model.onnx'][1], 'base64');
  b = Buffer.from(where['b/model.onnx'][1], 'base64');
  assert.ok(a.length === b.length && !a.equals(b), 'two models of the same size');
  server = await h.rangeServer();
  url = server.serve('pkg.onnxzip', pkg);
});
after(async () => { await server?.close(); if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

const TAILS = { 'the package in the first request': {}, 'the model before it': { tailBytes: 600 } };  // a/: 890 from the end

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
