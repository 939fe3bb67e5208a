// The raw wasm ABI of the npm package (src/js/wasm/onnxzip_wasm.c, loaded by lib/wasm.js) against
// the CLI on the same archives: `onnxzip ls --json` (entries, tensors), `onnxzip view` (bytes),
// `onnxzip verify` (statuses of damaged copies). Archives are packed by the CLI from
// tools/make_example_model.py's model (python3 with onnx and numpy).
//   ONNXZIP_JS_PACKAGE  the package directory (default build-test/src/js/package)
//   ONNXZIP_CLI         the CLI (default build-test/tools/onnxzip)
//   ONNXZIP_PYTHON      a python3 with onnx and numpy (default /usr/bin/python3)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { crc32 } from './helpers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = path.resolve(process.env.ONNXZIP_JS_PACKAGE ?? path.join(root, 'build-test/src/js/package'));
const cli = path.resolve(process.env.ONNXZIP_CLI ?? path.join(root, 'build-test/tools/onnxzip'));
const python = process.env.ONNXZIP_PYTHON ?? '/usr/bin/python3';

const { load } = await import(pathToFileURL(path.join(pkg, 'lib/wasm.js')).href);
const x = await load();

// --- raw ABI helpers ---------------------------------------------------------------------------
const u8 = () => new Uint8Array(x.memory.buffer); // re-read: memory may have grown
const dv = () => new DataView(x.memory.buffer);
function put(bytes) {
  const p = x.ozw_malloc(Math.max(bytes.length, 1));
  assert.ok(p, 'ozw_malloc');
  u8().set(bytes, p);
  return p;
}
const putStr = (s) => put(Buffer.concat([Buffer.from(s), Buffer.from([0])]));
function str(p) {
  const m = u8();
  let e = p;
  while (m[e]) e++;
  return Buffer.from(m.subarray(p, e)).toString('utf8');
}
const statusName = (st) => str(x.ozw_status_name(st));
function check(st, what) {
  if (st !== 0) assert.fail(`${what}: ${statusName(st)}: ${str(x.ozw_error_message())}`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxzip-wasm-'));
function run(cmd, args, ok = true) {
  const r = spawnSync(cmd, args, { encoding: 'buffer', cwd: tmp });
  if (ok && r.status !== 0) assert.fail(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r;
}
// the CLI's verdict on a file: null, or its status name ("[ONNXZIP_ECRC]" ends its message)
function cliVerify(file) {
  const r = run(cli, ['verify', file], false);
  if (r.status === 0) return null;
  return /\[(ONNXZIP_\w+)\]/.exec(r.stderr.toString())?.[1] ?? `exit ${r.status}: ${r.stderr}`;
}

/** ozw_open from a tail of `tail` bytes, widened as asked; returns the handle and the rounds. `model`:
 * a package's model (its path), passed as the last argument only when given. */
function open(bytes, name, tail, model) {
  let off = Math.max(0, bytes.length - tail);
  for (let rounds = 0; rounds <= 3; rounds++) {
    const win = put(bytes.subarray(off)), np = putStr(name), needp = x.ozw_malloc(8), outp = x.ozw_malloc(4);
    const mp = model === undefined ? 0 : putStr(model);
    const args = [np, win, bytes.length - off, off, bytes.length, needp, outp];
    const st = model === undefined ? x.ozw_open(...args) : x.ozw_open(...args, mp);
    const need = dv().getFloat64(needp, true), h = dv().getUint32(outp, true);
    [win, np, needp, outp, mp].forEach((p) => x.ozw_free(p));
    if (st !== 0) return { st, message: str(x.ozw_error_message()) };
    if (h) return { h, rounds };
    assert.ok(need >= 0 && need < off, `need ${need} below the window at ${off}`);
    off = need;
  }
  assert.fail('more than 3 rounds');
}
const json = (h) => JSON.parse(str(x.ozw_json(h)));

function verify(h, bytes, chunk) {
  const v = x.ozw_verify_begin(h);
  assert.ok(v, str(x.ozw_error_message()));
  for (let at = 0; at < bytes.length; at += chunk) {
    const p = put(bytes.subarray(at, at + chunk));
    const st = x.ozw_verify_feed(v, p, Math.min(chunk, bytes.length - at));
    x.ozw_free(p);
    if (st) {
      x.ozw_verify_abort(v);
      return statusName(st);
    }
  }
  const st = x.ozw_verify_end(v);
  return st ? statusName(st) : null;
}

function view(h, bytes, threshold, location) {
  const ranges = JSON.parse(str(x.ozw_view_ranges(h, threshold)));
  for (let i = 1; i < ranges.length; i++) assert.ok(ranges[i][0] > ranges[i - 1][0] + ranges[i - 1][1]);
  const inl = Buffer.concat(ranges.map(([o, n]) => bytes.subarray(o, o + n)));
  const ip = put(inl), lp = putStr(location), outp = x.ozw_malloc(4), lenp = x.ozw_malloc(4);
  const st = x.ozw_view(h, threshold, lp, ip, inl.length, outp, lenp);
  const p = dv().getUint32(outp, true), n = dv().getUint32(lenp, true);
  [ip, lp, outp, lenp].forEach((q) => x.ozw_free(q));
  check(st, 'ozw_view');
  const out = Buffer.from(u8().subarray(p, p + n));
  x.ozw_free(p);
  return { out, ranges };
}

// --- archives ----------------------------------------------------------------------------------
let archive, bytes, ls, pkgBytes;
const lsText = {};  // `onnxzip ls --json NAME` (run in tmp: the archive named as the wasm names it)
before(() => {
  run(python, [path.join(root, 'tools/make_example_model.py'), 'ex.onnx']);
  run(cli, ['pack', 'ex.onnx', '-o', 'model.onnxzip', '-q']);
  // every tensor inline: raw_data at offsets of many alignments within __MODEL_PROTO
  run(cli, ['pack', 'ex.onnx', '-o', 'inline.onnxzip', '-q', '--size-threshold', '1G']);
  archive = path.join(tmp, 'model.onnxzip');
  bytes = fs.readFileSync(archive);
  ls = JSON.parse(run(cli, ['ls', '--json', archive]).stdout);
  for (const name of ['model.onnxzip', 'inline.onnxzip']) {
    lsText[name] = run(cli, ['ls', '--json', name]).stdout.toString();
  }
  // a package (spec 19): tests/js/make_repo.py's repository folder
  run(python, [path.join(root, 'tests/js/make_repo.py'), 'repo', 'tensors.json']);
  run(cli, ['pack', 'repo', '-o', 'repo.onnxzip', '-q']);
  pkgBytes = fs.readFileSync(path.join(tmp, 'repo.onnxzip'));
  lsText['repo.onnxzip'] = run(cli, ['ls', '--json', 'repo.onnxzip']).stdout.toString();
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('open through the need protocol; ozw_json is onnxzip ls --json, byte for byte', () => {
  const inline = fs.readFileSync(path.join(tmp, 'inline.onnxzip'));
  assert.ok(JSON.parse(lsText['inline.onnxzip']).tensors.filter((t) => t.storage === 'inline').length >= 5);
  for (const [name, data] of [['inline.onnxzip', inline], ['model.onnxzip', bytes]]) {
    const want = JSON.parse(lsText[name]);
    for (const tail of [64, 300, data.length]) {
      const { h, rounds } = open(data, name, tail);
      assert.ok(h, `tail ${tail}`);
      if (tail === 64) assert.ok(rounds >= 1, 'a 64-byte tail must ask for more');
      const j = json(h);
      assert.deepEqual(j.tensors, want.tensors, `${name}: tensors`);  // inline ones' alignment included
      assert.deepEqual(j.entries, want.entries, `${name}: entries`);
      assert.equal(str(x.ozw_json(h)), lsText[name], `${name}: the same bytes`);
      const m = want.entries.find((e) => e.name === '__MODEL_PROTO');
      assert.equal(m, want.entries[want.entries.length - 1], 'the model is the last entry (archive.js relies on it)');
      const mp = x.ozw_model(h), ms = x.ozw_model_size(h);
      assert.deepEqual(Buffer.from(u8().subarray(mp, mp + ms)), data.subarray(m.data_offset, m.data_offset + m.size));
      x.ozw_close(h);
    }
  }
});

test('open refuses what is no zip, and a window not ending at the size', () => {
  const r = open(Buffer.alloc(4096, 7), 'junk.bin', 4096);
  assert.equal(statusName(r.st), 'ONNXZIP_ENOTZIP');
  assert.match(r.message, /junk\.bin/);
  const win = put(bytes.subarray(100)), np = putStr('m'), needp = x.ozw_malloc(8), outp = x.ozw_malloc(4);
  const st = x.ozw_open(np, win, bytes.length - 101, 100, bytes.length, needp, outp);
  assert.equal(statusName(st), 'ONNXZIP_EINVAL');
});

test('local headers: checked, and a corrupted one refused', () => {
  const { h } = open(bytes, 'model.onnxzip', 256);
  ls.entries.forEach((e, i) => {
    const hdr = Buffer.from(bytes.subarray(e.header_offset, e.data_offset));
    if (e.name !== '__MODEL_PROTO') {
      hdr[30] ^= 0x20; // the name's first byte
      const p = put(hdr);
      assert.notEqual(x.ozw_check_local(h, i, p, hdr.length), 0, `corrupted header of ${e.name}`);
      hdr[30] ^= 0x20;
      u8().set(hdr, p);
    }
    const p = put(hdr);
    check(x.ozw_check_local(h, i, p, hdr.length), `header of ${e.name}`);
    x.ozw_free(p);
  });
  x.ozw_close(h);
});

test('view bytes equal onnxzip view for thresholds 0, 1024 (default), 2048, 1 GiB', () => {
  const { h } = open(bytes, 'model.onnxzip', 512);
  let sawSome = false;
  for (const t of [0, 1024, 2048, 1 << 30]) {
    const args = ['view', archive, '-o', path.join(tmp, `v${t}.onnx`), '-q'];
    if (t !== 1024) args.push('--size-threshold', String(t));
    run(cli, args);
    const { out, ranges } = view(h, bytes, t, 'model.onnxzip');
    assert.deepEqual(out, fs.readFileSync(path.join(tmp, `v${t}.onnx`)), `threshold ${t}`);
    if (t === 0) assert.equal(ranges.length, 0);
    if (t === 2048 && ranges.length) sawSome = true;
  }
  assert.ok(sawSome, 'threshold 2048 inlines some entry tensors');
  const lp = putStr('a/b'), o = x.ozw_malloc(8);
  assert.equal(statusName(x.ozw_view(h, 1024, lp, 0, 0, o, o + 4)), 'ONNXZIP_EINVAL');
  x.ozw_close(h);
});

test('verify: passes on the archive, fails as onnxzip verify does on damaged copies', () => {
  const { h } = open(bytes, 'model.onnxzip', 4096);
  for (const chunk of [1, 7, 4096, bytes.length]) assert.equal(verify(h, bytes, chunk), null, `chunk ${chunk}`);
  assert.equal(verify(h, bytes.subarray(0, bytes.length - 1), 4096), 'ONNXZIP_ETRUNC');
  const e = ls.entries.find((t) => t.name !== '__MODEL_PROTO' && t.size > 100);
  const write = (b, name) => { fs.writeFileSync(path.join(tmp, name), b); return path.join(tmp, name); };

  const crc = Buffer.from(bytes);
  crc[e.data_offset + 10] ^= 1;
  assert.equal(cliVerify(write(crc, 'crc.onnxzip')), 'ONNXZIP_ECRC');
  assert.equal(verify(h, crc, 4096), 'ONNXZIP_ECRC');

  // the same flip with the CRC-32 recorded anew (local header, central record): only XXH3 differs
  const dig = Buffer.from(crc), old = Buffer.alloc(4), now = Buffer.alloc(4);
  old.writeUInt32LE(e.crc32);
  now.writeUInt32LE(crc32(dig.subarray(e.data_offset, e.data_offset + e.size)));
  const model = ls.entries.find((t) => t.name === '__MODEL_PROTO');
  now.copy(dig, e.header_offset + 14);
  for (let at = dig.indexOf(old, model.data_offset + model.size); at >= 0; at = dig.indexOf(old, at + 4)) now.copy(dig, at);
  assert.equal(cliVerify(write(dig, 'dig.onnxzip')), 'ONNXZIP_EDIGEST');
  const d = open(dig, 'dig.onnxzip', 4096);
  assert.ok(d.h, d.message);
  assert.equal(verify(d.h, dig, 4096), 'ONNXZIP_EDIGEST');
  x.ozw_close(d.h);

  const loc = Buffer.from(bytes);
  loc[e.header_offset + 30] ^= 0x20; // the name in the local header
  const want = cliVerify(write(loc, 'loc.onnxzip'));
  assert.ok(want, 'the CLI refuses the damaged local header');
  assert.equal(verify(h, loc, 4096), want);
  x.ozw_close(h);
});

// The manifest (spec 19.4) as the test reads it from the file: models and files in order, the default.
function manifest(data, entries) {
  const m = entries.find((e) => e.name === '__PACKAGE');
  const lines = data.subarray(m.data_offset, m.data_offset + m.size).toString('utf8').split('\n');
  assert.equal(lines[0], 'onnxzip-package\t1.2');
  const members = [];
  let dflt = null;
  for (const f of lines.slice(1).map((l) => l.split('\t'))) {
    if (f[0] === 'model' || f[0] === 'file') members.push({ path: f[1], kind: f[0] === 'model' ? 0 : 1 });
    if (f[0] === 'default') dflt = f[1];
  }
  dflt ??= members.find((x) => x.kind === 0).path;
  return members.map((x) => ({ ...x, isDefault: x.path === dflt ? 1 : 0 }));
}

test('packages: ozw_member_* = the manifest; ozw_open\'s model = ozw_model_path; none: the default', () => {
  const { entries } = JSON.parse(lsText['repo.onnxzip']);
  const want = manifest(pkgBytes, entries);
  assert.equal(want.filter((m) => m.kind === 0).length, 3);
  const info = x.ozw_malloc(32);
  for (const model of [undefined, ...want.filter((m) => m.kind === 0).map((m) => m.path)]) {
    const { h, st, message } = open(pkgBytes, 'repo.onnxzip', 256, model);
    assert.ok(h, `${model}: ${st && statusName(st)} ${message}`);
    assert.equal(x.ozw_member_count(h), want.length);
    want.forEach((m, i) => {
      assert.equal(str(x.ozw_member_path(h, i)), m.path);
      check(x.ozw_member_info(h, i, info), 'ozw_member_info');
      const [kind, isDefault, size, entry] = [0, 8, 16, 24].map((k) => dv().getFloat64(info + k, true));
      assert.deepEqual({ kind, isDefault, entry: entries[entry].name, size },
        { kind: m.kind, isDefault: m.isDefault, entry: m.path, size: entries[entry].size }, m.path);
    });
    assert.equal(x.ozw_member_path(h, want.length), 0);
    assert.notEqual(x.ozw_member_info(h, want.length, info), 0);
    const path_ = str(x.ozw_model_path(h));
    assert.equal(path_, model ?? want.find((m) => m.isDefault).path);
    const e = entries.find((t) => t.name === path_);
    const mp = x.ozw_model(h), ms = x.ozw_model_size(h);
    assert.deepEqual(Buffer.from(u8().subarray(mp, mp + ms)), pkgBytes.subarray(e.data_offset, e.data_offset + e.size));
    x.ozw_close(h);
  }
  x.ozw_free(info);
  const bad = open(pkgBytes, 'repo.onnxzip', 256, 'onnx/nope.onnx');
  assert.equal(statusName(bad.st), 'ONNXZIP_ENOTFOUND');
  assert.match(bad.message, /repo\.onnxzip.*'onnx\/nope\.onnx'/);
  const single = open(bytes, 'model.onnxzip', 256);
  assert.equal(x.ozw_member_count(single.h), 0);
  assert.equal(x.ozw_model_path(single.h), 0);
  x.ozw_close(single.h);
  assert.equal(statusName(open(bytes, 'model.onnxzip', 256, 'onnx/model.onnx').st), 'ONNXZIP_EINVAL');
});
