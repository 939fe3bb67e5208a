// trust_pins.test.mjs — spec 20.5 "bytes read again are not the bytes checked" in JavaScript: a tensor read
// after open(url, {trust}) is a new transfer, which a hostile origin may answer with other bytes. The origin
// drops an entry's XXH3 (its digest field's algorithm set to one readers do not know, which they ignore) and,
// once the trusted open is done, answers with tensor bytes that differ but keep the entry's CRC-32 (forged
// here), the size and the ETag. tensorData(), view() and createSession() over the opened Archive must then
// fail with EMISMATCH naming the entry and the URL (not its query), never hand out the forged bytes; on the
// four layouts of tests/packages/make_repos.py signed by model_signing 1.1.1 (trust_fixtures.mjs) and a
// single-model archive with a detached signature.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import * as h from './helpers.mjs';
import { CASES, KINDS, modelSigning, run, signedSetup, signedTeardown, spyOrt as spying } from './trust_fixtures.mjs';

const oz = await h.loadPackage();
const ort = createRequire(import.meta.url)('onnxruntime-node');
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON;
let dir, fx, server;

before(async () => { ({ dir, fx, server } = await signedSetup('oz-trust-pins-', PYTHON)); });
after(() => signedTeardown({ dir, server }));

// `data` with a byte at `at` + 4 changed and bytes [at, at + 4) solved so that its CRC-32 is unchanged
// (CRC-32 is affine over GF(2): the 32 bit flips of a 4-byte window span every difference), as
// tests/python/test_trust.py's forge_crc32 does; helpers' crc32 is the tests' own.
function forgeCrc32(data, at) {
  const want = h.crc32(data);
  const d = Buffer.from(data);
  d[at + 4] ^= 0xff;
  d.fill(0, at, at + 4);
  const base = h.crc32(d);
  const basis = new Map();  // leading bit -> [crc delta, window bits]: Gaussian elimination over GF(2)
  const top = (x) => 31 - Math.clz32(x);
  for (let b = 0; b < 32; b++) {
    d[at + (b >> 3)] ^= 1 << (b & 7);
    let delta = (h.crc32(d) ^ base) >>> 0, bits = (2 ** b) >>> 0;
    d[at + (b >> 3)] ^= 1 << (b & 7);
    while (delta && basis.has(top(delta))) {
      const [rd, rb] = basis.get(top(delta));
      [delta, bits] = [(delta ^ rd) >>> 0, (bits ^ rb) >>> 0];
    }
    assert.ok(delta, 'CRC-32 over 4 bytes is full rank');
    basis.set(top(delta), [delta, bits]);
  }
  let target = (want ^ base) >>> 0, bits = 0;
  while (target) {
    const [rd, rb] = basis.get(top(target));
    [target, bits] = [(target ^ rd) >>> 0, (bits ^ rb) >>> 0];
  }
  d.writeUInt32LE(bits, at);
  assert.equal(h.crc32(d), want);
  assert.ok(!d.equals(Buffer.from(data)));
  return d;
}

// A copy of zip FILE whose central records of entries NAMES have their digest field's Algorithm (spec 4.4)
// set to 2, which readers ignore: their XXH3 is no longer checked. Walks the central directory itself.
function dropXxh3(file, names, out) {
  const b = fs.readFileSync(file);
  const eocd = b.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let at = b.readUInt32LE(eocd + 16), dropped = 0;
  for (let k = b.readUInt16LE(eocd + 10); k > 0; k--) {
    assert.equal(b.readUInt32LE(at), 0x02014b50, `${file}: a central record at ${at}`);
    const [n, x, c] = [28, 30, 32].map((o) => b.readUInt16LE(at + o));
    const name = b.toString('utf8', at + 46, at + 46 + n);
    const field = at + 46 + n + x - 14;  // the digest field, last of the central extra area
    if (names.includes(name)) {
      assert.deepEqual([...b.subarray(field, field + 4)], [0x4f, 0x5a, 10, 0], `${name}: the digest field`);
      assert.equal(b[field + 5], 1, `${name}: XXH3`);
      b[field + 5] = 2;
      dropped++;
    }
    at += 46 + n + x + c;
  }
  assert.equal(dropped, names.length, `${file}: ${names}`);
  fs.writeFileSync(out, b);
}

// The attack on the archive `served` (its XXH3s of `entry` dropped) as NAME: open(url?sig=SECRET, {trust})
// (its model `model`), `check(a)` of its bytes at once, then the forged bytes answered; returns {a, url}.
async function attacked(name, served, entry, openOptions) {
  const url = server.serve(name, served);
  const a = await oz.open(`${url}?sig=SECRET`, { ...openOptions, trust: { publicKey: fx.pub, ...openOptions.trust } });
  const bytes = fs.readFileSync(served).subarray(entry.dataOffset, entry.dataOffset + entry.size);
  return { a, url, bytes, forge: () => server.tamper(name, entry.dataOffset, forgeCrc32(bytes, (bytes.length >> 1) - 4)) };
}

async function mismatch(promise, entry, url, what) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.status, 'ONNXZIP_EMISMATCH', `${what}: ${e.status} ${e.message}`);
    assert.ok(e.message.includes(`entry '${entry}'`), `${what}: names the entry '${entry}': ${e.message}`);
    // the URL as the package displays it: its query elided (lib/http.js)
    assert.ok(e.message.startsWith(`${url}?...: `) && e.url === `${url}?...`, `${what}: names the URL ${url}: ${e.message}`);
    assert.ok(!e.message.includes('SECRET'), `${what}: no query: ${e.message}`);
    return true;
  });
}

// The largest tensor of `a` stored in an entry of its own, and that entry (the CLI's listing of FILE).
function target(a, file) {
  const t = a.tensors.filter((x) => x.storage === 'entry').reduce((x, y) => (y.byteLength > x.byteLength ? y : x));
  const e = h.cliListing(file).entries.find((x) => x.name === t.entry);
  assert.ok(e.dataOffset === t.offset && e.size === t.byteLength, `${t.key}: an entry of its own`);
  return [t, e];
}

const spyOrt = () => spying(ort);  // onnxruntime-node counting its sessions: a refused model never reaches it

// Archive `a`'s use `use` of tensor `t` after the forged bytes are answered.
function readAgain(a, t, use, spy) {
  if (use === 'tensorData') return a.tensorData(t.key);
  if (use === 'view') return a.view({ sizeThreshold: t.byteLength + 1 });  // the weight copied into the view
  return oz.createSession(spy, a, {});
}

// A fetch() whose first reply holding all of `entry`'s data answers `forged` in its place (then the file's bytes).
function forgingFetch(entry, forged) {
  const f = async (url, init) => {
    const res = await fetch(url, init);
    const range = /^bytes (\d+)-(\d+)\//.exec(res.headers.get('content-range') ?? '');
    if (f.forged || !range || Number(range[1]) > entry.dataOffset || Number(range[2]) < entry.dataOffset + entry.size - 1) return res;
    f.forged = true;
    const body = Buffer.from(await res.arrayBuffer());
    forged.copy(body, entry.dataOffset - Number(range[1]));
    return new Response(body, { status: res.status, headers: res.headers });
  };
  f.forged = false;
  return f;
}

describe('reads after open(url, {trust}) hand out the checked bytes', () => {
  for (const kind of KINDS) {
    const { model } = CASES[kind];
    for (const use of ['tensorData', 'view', 'createSession']) {
      test(`${kind}: ${use} of ${model}'s largest weight answered otherwise (same CRC-32, no XXH3) is EMISMATCH`, async () => {
        const pkg = fx.pkg(kind);
        const probe = await oz.open(pkg, { model });
        const [t, e] = target(probe, pkg);
        await probe.close();
        const served = path.join(dir, `${kind}-${use}.onnxzip`);
        dropXxh3(pkg, [e.name], served);
        const { a, url, bytes, forge } = await attacked(path.basename(served), served, e, { model });
        try {
          assert.deepEqual(Buffer.from(await a.tensorData(t.key)), Buffer.from(bytes), `${kind}: the weight before`);
          forge();
          const spy = spyOrt();
          await mismatch(readAgain(a, t, use, spy), e.name, url, `${kind} ${use}`);
          assert.equal(spy.calls, 0, `${kind}: ONNX Runtime never called`);
        } finally {
          await a.close();
        }
      });
    }
  }

  for (const use of ['tensorData', 'view', 'createSession']) {
    test(`a single-model archive (detached signature): ${use} of its largest weight answered otherwise is EMISMATCH`, async () => {
      const probe = await oz.open(fx.single);
      const [t, e] = target(probe, fx.single);
      await probe.close();
      // a single-model archive is its one signed file: the XXH3 is dropped before signing
      const served = path.join(dir, `single-${use}.onnxzip`), sig = `${served}.sig`;
      dropXxh3(fx.single, [e.name], served);
      run(modelSigning(PYTHON), ['sign', 'key', served, '--private_key', fx.signerKey, '--signature', sig], 'sign');
      const { a, url, bytes, forge } = await attacked(path.basename(served), served, e, { trust: { signature: fs.readFileSync(sig) } });
      try {
        assert.deepEqual(Buffer.from(await a.tensorData(t.key)), Buffer.from(bytes), 'the weight before');
        forge();
        const spy = spyOrt();
        await mismatch(readAgain(a, t, use, spy), e.name, url, `single ${use}`);
        assert.equal(spy.calls, 0, 'ONNX Runtime never called');
      } finally {
        await a.close();
      }
    });
  }

  // createSession(url) fills the buffer ORT gets, then hashes a single-model archive's file, which that buffer
  // does not hold whole (its headers, its directory), as a stream: the buffer must be those bytes
  test('createSession(url, {trust}) of a single-model archive: a weight answered otherwise in the bytes ORT gets is EMISMATCH', async () => {
    const probe = await oz.open(fx.single);
    const [, e] = target(probe, fx.single);
    await probe.close();
    const served = path.join(dir, 'single-session.onnxzip'), sig = `${served}.sig`;
    dropXxh3(fx.single, [e.name], served);
    run(modelSigning(PYTHON), ['sign', 'key', served, '--private_key', fx.signerKey, '--signature', sig], 'sign');
    const url = server.serve(path.basename(served), served);
    const bytes = fs.readFileSync(served).subarray(e.dataOffset, e.dataOffset + e.size);
    const trust = { publicKey: fx.pub, signature: fs.readFileSync(sig) };
    const spy = spyOrt();
    await oz.createSession(spy, `${url}?sig=SECRET`, {}, { trust });  // the file as signed: it runs
    assert.equal(spy.calls, 1);
    const fetchFn = forgingFetch(e, forgeCrc32(bytes, (bytes.length >> 1) - 4));
    await mismatch(oz.createSession(spy, `${url}?sig=SECRET`, {}, { trust, fetch: fetchFn }), e.name, url, 'createSession');
    assert.ok(fetchFn.forged && spy.calls === 1, 'the weight forged; ONNX Runtime not called again');
  });
});
