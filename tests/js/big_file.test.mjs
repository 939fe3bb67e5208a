// big_file.test.mjs — a package holding a file over 4 GiB (issue 35), read by the npm package (wasm32:
// 32-bit pointers, sizes and offsets crossing as doubles). The CLI packs a folder with a sparse
// 4,400,000,000-byte shard (random 4 KiB at its start, middle and end) and a tokenizer.json whose
// entry follows it, past the 4 GiB mark. open(path) lists both with the CLI's sizes (ls --json);
// readFile('tokenizer.json') reads from beyond 2^32 and gives its bytes; readFile of the shard either
// gives its bytes (an engine whose typed arrays hold 4.4 GB: the three blocks checked) or fails with
// ONNXZIP_ELIMIT naming the file and its size — never a wrapped size, a short buffer or the engine's
// bare RangeError. Suite zip64 (the pack takes seconds: the CRC-32 of 4.4 GB).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import * as h from './helpers.mjs';

const oz = await h.loadPackage();
const BIG = 'model-00001-of-00002.safetensors', BIG_SIZE = 4_400_000_000, BLOCK = 4096;
const SIMPLE = path.join(h.REPO, 'tests', 'fuzz', 'corpus', 'fuzz_open', 'classic_simple.onnx');
const dir = h.scratch('big');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function makeFolder(root) {
  fs.mkdirSync(path.join(root, 'onnx'), { recursive: true });
  fs.copyFileSync(SIMPLE, path.join(root, 'onnx', 'model.onnx'));
  fs.writeFileSync(path.join(root, 'tokenizer.json'), JSON.stringify({ version: '1.0', model: { type: 'BPE' } }));
  const blocks = new Map();
  const fd = fs.openSync(path.join(root, BIG), 'w');
  try {
    fs.ftruncateSync(fd, BIG_SIZE);
    for (const off of [0, BIG_SIZE / 2, BIG_SIZE - BLOCK]) {
      blocks.set(off, crypto.randomBytes(BLOCK));
      fs.writeSync(fd, blocks.get(off), 0, BLOCK, off);
    }
  } finally {
    fs.closeSync(fd);
  }
  return blocks;
}

test('a package with a 4.4 GB file', async () => {
  const root = path.join(dir, 'repo'), pkg = path.join(dir, 'p.onnxzip');
  const blocks = makeFolder(root);
  h.cliOk('pack', root, '-o', pkg);
  const listed = JSON.parse(h.cliOk('ls', '--json', pkg));
  const a = await oz.open(pkg);
  try {
    assert.deepEqual([...a.files.values()].map((f) => [f.path, f.size]), listed.files.map((f) => [f.path, f.size]));
    assert.equal(a.files.get(BIG).size, BIG_SIZE);
    const tokEntry = a.entries.find((e) => e.name === 'tokenizer.json');
    assert.ok(tokEntry.dataOffset > 2 ** 32, `tokenizer.json's data at ${tokEntry.dataOffset}`);
    assert.deepEqual(Buffer.from(await a.readFile('tokenizer.json')), fs.readFileSync(path.join(root, 'tokenizer.json')));
    let bytes = null;
    try {
      bytes = await a.readFile(BIG);
    } catch (err) {
      assert.equal(err.name, 'OnnxzipError', err.stack);
      assert.equal(err.status, 'ONNXZIP_ELIMIT');
      assert.match(err.message, new RegExp(`file '${BIG}' is ${BIG_SIZE} bytes, more than this JavaScript engine holds`));
    }
    if (bytes) {
      assert.equal(bytes.length, BIG_SIZE);
      for (const [off, want] of blocks) assert.deepEqual(Buffer.from(bytes.subarray(off, off + BLOCK)), want, `at ${off}`);
    }
  } finally {
    a.close();
  }
});
