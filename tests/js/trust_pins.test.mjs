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
import { CASES, KINDS, dropXxh3, forgeCrc32, largestWeight, signedSetup, signedTeardown, singleWithoutXxh3,
  spyOrt as spying } from './trust_fixtures.mjs';

const oz = await h.loadPackage();
const ort = createRequire(import.meta.url)('onnxruntime-node');
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON;
let dir, fx, server;

before(async () => { ({ dir, fx, server } = await signedSetup('oz-trust-pins-', PYTHON)); });
after(() => signedTeardown({ dir, server }));

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
        const probe = await oz.open(pkg, { model });  // the model's tensors
        const [t, e] = largestWeight(probe.tensors, h.cliListing(pkg).entries);
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
      const { served, sig, entry: e, key } = singleWithoutXxh3(dir, fx, PYTHON, `single-${use}`);
      const { a, url, bytes, forge } = await attacked(path.basename(served), served, e, { trust: { signature: sig } });
      try {
        assert.deepEqual(Buffer.from(await a.tensorData(key)), Buffer.from(bytes), 'the weight before');
        forge();
        const spy = spyOrt();
        await mismatch(readAgain(a, a.tensor(key), use, spy), e.name, url, `single ${use}`);
        assert.equal(spy.calls, 0, 'ONNX Runtime never called');
      } finally {
        await a.close();
      }
    });
  }

  // createSession(url) fills the buffer ORT gets, then hashes a single-model archive's file, which that buffer
  // does not hold whole (its headers, its directory), as a stream: the buffer must be those bytes
  test('createSession(url, {trust}) of a single-model archive: a weight answered otherwise in the bytes ORT gets is EMISMATCH', async () => {
    const { served, sig, entry: e } = singleWithoutXxh3(dir, fx, PYTHON, 'single-session');
    const url = server.serve(path.basename(served), served);
    const bytes = fs.readFileSync(served).subarray(e.dataOffset, e.dataOffset + e.size);
    const trust = { publicKey: fx.pub, signature: sig };
    const spy = spyOrt();
    await oz.createSession(spy, `${url}?sig=SECRET`, {}, { trust });  // the file as signed: it runs
    assert.equal(spy.calls, 1);
    const fetchFn = forgingFetch(e, forgeCrc32(bytes, (bytes.length >> 1) - 4));
    await mismatch(oz.createSession(spy, `${url}?sig=SECRET`, {}, { trust, fetch: fetchFn }), e.name, url, 'createSession');
    assert.ok(fetchFn.forged && spy.calls === 1, 'the weight forged; ONNX Runtime not called again');
  });
});
