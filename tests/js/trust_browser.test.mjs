// trust_browser.test.mjs — options.trust (issue 36) in Debian's chromium (playwright-core), WebCrypto's
// SHA-256 and ECDSA: the packages of trust_fixtures.mjs (the four layouts signed by model_signing 1.1.1)
// from a private nginx, through the page tests/js/browser/page.mjs (createSession + one run, readFile).
// The signer's key runs each layout's model with the outputs onnxruntime-node gives on the folder's model
// (within the kernels' rounding: ORT web and node are different builds); a wrong key, a changed tokenizer
// byte or weight, no signature: refused with the C library's statuses, naming the file; a certificate
// chain: EUNSUPPORTED (browsers have no X.509 in WebCrypto). A weight nginx serves otherwise after
// open(url, {trust}) (same CRC-32, size and ETag; no XXH3): tensorData is EMISMATCH (pins, spec 20.5).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launch, unavailable } from './browser/chromium.mjs';
import { NGINX, startNginx } from './browser/nginx.mjs';
import { PACKAGE_DIR, REPO, scratch } from './helpers.mjs';
import { CASES, KINDS, forgeCrc32, makeSigned, singleWithoutXxh3 } from './trust_fixtures.mjs';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');
const ORT_WEB_DIST = path.dirname(require.resolve('onnxruntime-web'));
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON;
const skip = unavailable() ?? (fs.existsSync(NGINX) ? null : `${NGINX} absent (Debian: apt-get install nginx)`);
if (skip && process.env.ONNXZIP_JS_REQUIRED === '1') throw new Error(`browser test required: ${skip}`);

let dir, fx, srv, browser, page;

async function call(fn, ...args) {
  return page.evaluate(([f, a]) => window.ozTest[f](...a), [fn, args]);
}

// make_repos' feeds as the page takes them: {name: {type, dims, b64}}
const pageInputs = (spec) => Object.fromEntries(Object.entries(spec).map(([k, [type, dims, b64]]) => [k, { type, dims, b64 }]));

async function nodeOutputs(kind, model) {
  const s = await ort.InferenceSession.create(path.join(fx.folder(kind), model));
  try {
    const feeds = Object.fromEntries(Object.entries(fx.feeds[kind][model]).map(([k, [type, dims, b64]]) => {
      const b = Buffer.from(b64, 'base64');
      const T = { float32: Float32Array, int64: BigInt64Array, float16: Uint16Array, int32: Int32Array }[type];
      return [k, new ort.Tensor(type, new T(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), dims)];
    }));
    const out = await s.run(feeds);
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, { type: v.type, dims: [...v.dims], data: v.data }]));
  } finally {
    await s.release();
  }
}

function assertClose(got, want, what) {
  for (const [name, w] of Object.entries(want)) {
    const g = got[name];
    assert.ok(g, `${what}: no output ${name}`);
    assert.deepEqual([g.type, g.dims], [w.type, w.dims], `${what}: ${name}`);
    const b = Buffer.from(g.b64, 'base64');
    const data = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
    assert.equal(w.type, 'float32', `${what}: ${name} is ${w.type}`);
    for (let i = 0; i < data.length; i++) {
      assert.ok(Math.abs(data[i] - w.data[i]) <= 1e-4 * (1 + Math.abs(w.data[i])), `${what}: ${name}[${i}] ${data[i]} vs ${w.data[i]}`);
    }
  }
}

function refused(r, status, file, what) {
  assert.equal(r.ok, false, `${what}: accepted`);
  assert.equal(r.error.status, status, `${what}: ${r.error.status} ${r.error.message}`);
  if (file) assert.ok(r.error.message.includes(`'${file}'`), `${what}: the message names '${file}': ${r.error.message}`);
}

describe('trust in chromium', { skip: skip ?? false }, () => {
  before(async () => {
    assert.ok(PYTHON && fs.existsSync(PYTHON), `ONNXZIP_PYVENV_PYTHON (${PYTHON}): the pinned venv's python is needed`);
    dir = scratch('oz-trust-browser-');
    fx = makeSigned(dir, PYTHON);
    srv = await startNginx({ page: path.join(REPO, 'tests/js/browser'), pkg: PACKAGE_DIR, ort: ORT_WEB_DIST, data: dir });
    browser = await launch();
    page = await browser.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e}`));
    await page.goto(srv.url('page', 'index.html'));
    await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('ready'));
    assert.ok(await page.evaluate(() => window.ozTest.hasPackage()), `the package did not load from ${PACKAGE_DIR}`);
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const url = (kind, variant) => `/data/${path.basename(fx.pkg(kind, variant))}`;

  for (const kind of KINDS) {
    const { model, data, tokenizer } = CASES[kind];
    test(`${kind}: the signer's key runs ${model}; wrong key, changed tokenizer, changed weight, unsigned refused`, async () => {
      const trust = { publicKey: fx.pub };
      const inputs = pageInputs(fx.feeds[kind][model]);
      const good = await call('runArchive', 'url', url(kind, 'signed'), inputs, { model, trust });
      assert.ok(good.ok, `${kind}: ${JSON.stringify(good.error)}`);
      assertClose(good.value.outputs, await nodeOutputs(kind, model), kind);
      refused(await call('runArchive', 'url', url(kind, 'signed'), inputs, { model, trust: { publicKey: fx.otherPub } }),
        'ONNXZIP_ESIGNATURE', null, 'wrong key');
      refused(await call('runArchive', 'url', url(kind, 'weight'), inputs, { model, trust }), 'ONNXZIP_EMISMATCH', data, 'weight');
      refused(await call('runArchive', 'url', url(kind, 'unsigned'), inputs, { model, trust }), 'ONNXZIP_EUNSIGNED', null, 'unsigned');
      const tok = await page.evaluate(async ([u, t, p]) => {
        const oz = await import('/pkg/index.js');
        const a = await oz.open(u, { trust: t });
        try {
          await a.readFile(p);
          return { ok: true };
        } catch (e) {
          return { ok: false, error: { status: e.status, message: e.message } };
        } finally {
          a.close();
        }
      }, [url(kind, 'tokenizer'), trust, tokenizer]);
      refused(tok, 'ONNXZIP_EMISMATCH', tokenizer, 'tokenizer');
    });
  }

  test('a certificate chain is EUNSUPPORTED in a browser (no X.509 in WebCrypto); a single-model archive verifies', async () => {
    refused(await call('open', 'url', url('genai', 'cert'), { trust: { certificateChain: fx.ca } }), 'ONNXZIP_EUNSUPPORTED', null, 'chain');
    const sig = fx.singleSig.toString('utf8');
    const ok = await call('open', 'url', `/data/${path.basename(fx.single)}`, { trust: { publicKey: fx.pub, signature: sig } });
    assert.ok(ok.ok, JSON.stringify(ok.error));
    refused(await call('open', 'url', `/data/${path.basename(fx.singleBad)}`, { trust: { publicKey: fx.pub, signature: sig } }),
      'ONNXZIP_EMISMATCH', '.', 'single, a changed byte');
  });

  test('a single-model archive: a weight served otherwise after open(url, {trust}) is EMISMATCH (WebCrypto pins)', async () => {
    const s = singleWithoutXxh3(dir, fx, PYTHON, 'single-pinned');
    const trust = { publicKey: fx.pub, signature: s.sig.toString('utf8') };
    await page.evaluate(async ([u, t]) => { window.pinned = await (await import('/pkg/index.js')).open(u, { trust: t }); },
      [`/data/${path.basename(s.served)}`, trust]);
    const read = () => page.evaluate(async (k) => {
      try {
        return { ok: true, value: (await window.pinned.tensorData(k)).length };
      } catch (e) {
        return { ok: false, error: { status: e.status, message: e.message } };
      }
    }, s.key);
    try {
      assert.deepEqual(await read(), { ok: true, value: s.entry.size });
      // the file replaced by one whose weight differs with the same CRC-32; its mtime kept: nginx's ETag is the same
      const st = fs.statSync(s.served), b = fs.readFileSync(s.served), at = s.entry.dataOffset;
      forgeCrc32(b.subarray(at, at + s.entry.size), (s.entry.size >> 1) - 4).copy(b, at);
      fs.writeFileSync(`${s.served}.tmp`, b);
      fs.utimesSync(`${s.served}.tmp`, st.atime, st.mtime);
      fs.renameSync(`${s.served}.tmp`, s.served);
      refused(await read(), 'ONNXZIP_EMISMATCH', s.entry.name, 'a weight served otherwise');
    } finally {
      await page.evaluate(() => window.pinned.close());
    }
  });
});
