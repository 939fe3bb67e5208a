// trust.test.mjs — options.trust (issue 36) in Node.js: packages of the four layouts of
// tests/packages/make_repos.py signed by the oracle model_signing 1.1.1 (trust_fixtures.mjs) run in
// onnxruntime-node with the signer's key (outputs = the folder's, bit for bit), from a path, bytes and a URL;
// a wrong key, a changed tokenizer byte, a changed weight (CRC-32 and XXH3 consistent: only the signature
// catches it) and an unsigned package are refused with the C library's statuses, naming the file, and
// ONNX Runtime is never called. Also: a certificate chain (Node.js's X.509), a detached signature, a
// single-model archive (OMS's single-file model), and bundles that are malformed, keyless or for another
// payload type (signed here with node:crypto, an independent signer). The chromium side: trust_browser.test.mjs.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import * as h from './helpers.mjs';
import { CASES, KINDS, signedSetup, signedTeardown, spyOrt as spying } from './trust_fixtures.mjs';

const oz = await h.loadPackage();
const ort = createRequire(import.meta.url)('onnxruntime-node');
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON;
let dir, fx, server;

before(async () => { ({ dir, fx, server } = await signedSetup('oz-trust-', PYTHON)); });
after(() => signedTeardown({ dir, server }));

const outputs = (session, spec) => h.sessionOutputs(ort, session, spec);

const spyOrt = () => spying(ort);  // onnxruntime-node counting its sessions

async function refused(promise, status, file, what) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.status, status, `${what}: ${e.status} ${e.message}`);
    if (file) assert.ok(e.message.includes(`'${file}'`), `${what}: the message names '${file}': ${e.message}`);
    return true;
  });
}

describe('packages signed by model_signing', () => {
  for (const kind of KINDS) {
    const { model, data, tokenizer } = CASES[kind];
    test(`${kind}: createSession with the signer's key runs ${model} (path, bytes, URL) as the folder does`, async () => {
      const trust = { publicKey: fx.pub };
      const want = await outputs(await ort.InferenceSession.create(`${fx.folder(kind)}/${model}`), fx.feeds[kind][model]);
      const pkg = fx.pkg(kind);
      const url = server.serve(`${kind}.onnxzip`, pkg);
      for (const [how, src] of [['path', pkg], ['bytes', fs.readFileSync(pkg)], ['URL', url]]) {
        const s = await oz.createSession(ort, src, {}, { model, trust });
        assert.deepEqual(await outputs(s, fx.feeds[kind][model]), want, `${kind} ${model} (${how})`);
      }
      const a = await oz.open(pkg, { trust });
      try {
        const tok = await a.readFile(tokenizer);
        assert.deepEqual(Buffer.from(tok), fs.readFileSync(`${fx.folder(kind)}/${tokenizer}`));
      } finally {
        await a.close();
      }
    });

    test(`${kind}: a wrong key, a changed tokenizer byte, a changed weight, no signature: refused, nothing runs`, async () => {
      const spy = spyOrt();
      const trust = { publicKey: fx.pub };
      await refused(oz.createSession(spy, fx.pkg(kind), {}, { model, trust: { publicKey: fx.otherPub } }),
        'ONNXZIP_ESIGNATURE', null, 'wrong key');
      await refused(oz.open(fx.pkg(kind), { trust: { publicKey: fx.otherPub } }), 'ONNXZIP_ESIGNATURE', null, 'wrong key (open)');
      for (const [how, src] of [['path', fx.pkg(kind, 'weight')], ['URL', server.serve(`${kind}-w.onnxzip`, fx.pkg(kind, 'weight'))],
        ['bytes', fs.readFileSync(fx.pkg(kind, 'weight'))]]) {
        await refused(oz.createSession(spy, src, {}, { model, trust }), 'ONNXZIP_EMISMATCH', data, `weight (${how})`);
      }
      await refused(oz.open(fx.pkg(kind, 'weight'), { model, trust }), 'ONNXZIP_EMISMATCH', data, 'weight (open)');
      // the tokenizer is checked when it is handed out; the model, which does not use it, runs
      const a = await oz.open(fx.pkg(kind, 'tokenizer'), { trust });
      try {
        await refused(a.readFile(tokenizer), 'ONNXZIP_EMISMATCH', tokenizer, 'tokenizer');
      } finally {
        await a.close();
      }
      await refused(oz.createSession(spy, fx.pkg(kind, 'unsigned'), {}, { model, trust }), 'ONNXZIP_EUNSIGNED', null, 'unsigned');
      assert.equal(spy.calls, 0, 'ONNX Runtime was given a refused model');
      const s = await oz.createSession(spy, fx.pkg(kind, 'tokenizer'), {}, { model, trust });
      await s.release();
      assert.equal(spy.calls, 1);
    });
  }

  test('open(URL, {model, trust}) reads no byte of another model\'s entry: the names check takes the manifest\'s', async () => {
    for (const kind of KINDS) {
      const all = await oz.open(fx.pkg(kind));
      const models = [...all.models.keys()], entries = all.entries;
      await all.close();
      const url = server.serve(`${kind}-names.onnxzip`, fx.pkg(kind));
      for (const m of models) {
        const ranges = [];
        const fetchLog = (u, init) => { ranges.push(init?.headers?.Range); return fetch(u, init); };
        await (await oz.open(url, { model: m, tailBytes: 4096, fetch: fetchLog, trust: { publicKey: fx.pub } })).close();
        assert.equal(ranges[0], 'bytes=-4096');
        for (const r of ranges.slice(1)) {  // after the tail
          const [from, to] = /^bytes=(\d+)-(\d+)$/.exec(r).slice(1).map(Number);
          for (const e of entries.filter((x) => models.includes(x.name) && x.name !== m)) {
            assert.ok(to < e.headerOffset || from >= e.dataOffset + e.size, `${kind}: ${m}: ${r} reads ${e.name}`);
          }
        }
      }
    }
  });

  test('a detached signature (trust.signature) verifies the unsigned package; its own model.sig is not needed', async () => {
    const kind = 'genai', { model } = CASES[kind];
    const signature = fs.readFileSync(`${fx.folder(kind)}/model.sig`);
    const s = await oz.createSession(ort, fx.pkg(kind, 'unsigned'), {}, { model, trust: { publicKey: fx.pub, signature } });
    await s.release();
  });

  test('a certificate chain: the CA verifies (Node.js X.509); another CA, a leaf not for signing, a key only: ESIGNATURE', async () => {
    for (const kind of ['transformers_js', 'diffusers']) {
      const { model } = CASES[kind];
      const want = await outputs(await ort.InferenceSession.create(`${fx.folder(kind)}/${model}`), fx.feeds[kind][model]);
      const s = await oz.createSession(ort, fx.pkg(kind, 'cert'), {}, { model, trust: { certificateChain: fx.ca } });
      assert.deepEqual(await outputs(s, fx.feeds[kind][model]), want);
      await refused(oz.open(fx.pkg(kind, 'cert'), { trust: { certificateChain: fx.otherCa } }), 'ONNXZIP_ESIGNATURE', null, 'other CA');
      await refused(oz.open(fx.pkg(kind, 'nosign'), { trust: { certificateChain: fx.ca } }), 'ONNXZIP_ESIGNATURE', null, 'no digitalSignature');
      await refused(oz.open(fx.pkg(kind, 'cert'), { trust: { publicKey: fx.pub } }), 'ONNXZIP_ESIGNATURE', null, 'key for a chain');
      await refused(oz.open(fx.pkg(kind), { trust: { certificateChain: fx.ca } }), 'ONNXZIP_ESIGNATURE', null, 'chain for a key');
    }
  });

  test('a single-model archive: OMS\'s single-file model (resource "."), detached signature only', async () => {
    const trust = { publicKey: fx.pub, signature: fx.singleSig };
    const s = await oz.createSession(ort, fx.single, {}, { trust });
    await s.release();
    const url = server.serve('single.onnxzip', fx.single);
    await (await oz.createSession(ort, url, {}, { trust })).release();
    await refused(oz.open(fx.single, { trust: { publicKey: fx.pub } }), 'ONNXZIP_EUNSIGNED', null, 'no detached signature');
    await refused(oz.open(fx.singleBad, { trust }), 'ONNXZIP_EMISMATCH', '.', 'a changed byte');
  });
});

// ---- bundles made here: the statement of a signed package, re-signed with node:crypto ----------------------

const PAYLOAD_TYPE = 'application/vnd.in-toto+json';
function pae(type, body) {
  return Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `), body]);
}
function bundle(statement, { type = PAYLOAD_TYPE, signedType = type, key } = {}) {
  const body = Buffer.from(typeof statement === 'string' ? statement : JSON.stringify(statement));
  const sig = crypto.sign('sha256', pae(signedType, body), fs.readFileSync(key));
  return { mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json', verificationMaterial: { publicKey: { hint: '' }, tlogEntries: [] },
    dsseEnvelope: { payload: body.toString('base64'), payloadType: type, signatures: [{ sig: sig.toString('base64') }] } };
}
function statementOf(kind) {
  const b = JSON.parse(fs.readFileSync(`${fx.folder(kind)}/model.sig`, 'utf8'));
  return JSON.parse(Buffer.from(b.dsseEnvelope.payload, 'base64').toString('utf8'));
}
// the subject digest model_signing computes: SHA-256 of the resources' raw digests in order
function resubject(st) {
  const h = crypto.createHash('sha256');
  for (const r of st.predicate.resources) h.update(Buffer.from(r.digest, 'hex'));
  st.subject[0].digest.sha256 = h.digest('hex');
  return st;
}

describe('bundles: each malformed or unsupported form is its own status', () => {
  const open = (sig) => oz.open(fx.pkg('genai', 'unsigned'), { trust: { publicKey: fx.pub, signature: typeof sig === 'string' ? sig : JSON.stringify(sig) } });
  const key = () => `${dir}/signer.pem`;

  test('re-signed here, the same statement verifies (the harness is sound)', async () => {
    await (await open(bundle(statementOf('genai'), { key: key() }))).close();
  });
  test('EBUNDLE: JSON, a duplicated key, base64, two signatures, nesting, _type, predicateType, names, subject', async () => {
    const good = bundle(statementOf('genai'), { key: key() });
    const text = JSON.stringify(good);
    await refused(open('{"mediaType": '), 'ONNXZIP_EBUNDLE', null, 'truncated JSON');
    // two payloads: JSON.parse would read the last one, a verifier of the first another statement
    await refused(open(text.replace('"payloadType"', `"payload":"${Buffer.from('{}').toString('base64')}","payloadType"`)),
      'ONNXZIP_EBUNDLE', null, 'duplicated payload');
    await refused(open({ ...good, dsseEnvelope: { ...good.dsseEnvelope, payload: '!!!!' } }), 'ONNXZIP_EBUNDLE', null, 'base64');
    const two = { ...good.dsseEnvelope, signatures: [...good.dsseEnvelope.signatures, ...good.dsseEnvelope.signatures] };
    await refused(open({ ...good, dsseEnvelope: two }), 'ONNXZIP_EBUNDLE', null, 'two signatures');
    await refused(open(`${'['.repeat(100)}${']'.repeat(100)}`), 'ONNXZIP_EBUNDLE', null, 'deep');
    await refused(open({ ...good, mediaType: 'application/json' }), 'ONNXZIP_EBUNDLE', null, 'media type');
    const st = statementOf('genai');
    await refused(open(bundle({ ...st, _type: 'x' }, { key: key() })), 'ONNXZIP_EBUNDLE', null, '_type');
    await refused(open(bundle({ ...st, predicateType: 'https://model_signing/Digests/v0.1' }, { key: key() })),
      'ONNXZIP_EBUNDLE', null, 'predicateType');
    for (const name of ['../evil', '/etc/passwd', 'a/./b']) {
      const s = structuredClone(st);
      s.predicate.resources[0].name = name;
      await refused(open(bundle(resubject(s), { key: key() })), 'ONNXZIP_EBUNDLE', null, `name ${name}`);
    }
    const dup = structuredClone(st);
    dup.predicate.resources.push(dup.predicate.resources[0]);
    await refused(open(bundle(resubject(dup), { key: key() })), 'ONNXZIP_EBUNDLE', null, 'duplicated resource');
    const sub = structuredClone(st);
    sub.subject[0].digest.sha256 = '0'.repeat(64);
    await refused(open(bundle(sub, { key: key() })), 'ONNXZIP_EBUNDLE', null, 'subject digest');
  });
  test('EUNSUPPORTED: keyless (Rekor entries), shards, another hash', async () => {
    const good = bundle(statementOf('genai'), { key: key() });
    await refused(open({ ...good, verificationMaterial: { certificate: { rawBytes: 'AAAA' }, tlogEntries: [{ logIndex: '1' }] } }),
      'ONNXZIP_EUNSUPPORTED', null, 'keyless');
    const shards = statementOf('genai');
    shards.predicate.serialization.method = 'shards';
    await refused(open(bundle(shards, { key: key() })), 'ONNXZIP_EUNSUPPORTED', null, 'shards');
    const blake = statementOf('genai');
    blake.predicate.serialization.hash_type = 'blake3';
    await refused(open(bundle(blake, { key: key() })), 'ONNXZIP_EUNSUPPORTED', null, 'blake3');
  });
  test('ESIGNATURE: another payload type, a signature over another payload type; EMISMATCH: a missing, an extra file', async () => {
    const st = statementOf('genai');
    await refused(open(bundle(st, { key: key(), type: 'application/json' })), 'ONNXZIP_ESIGNATURE', null, 'payload type');
    await refused(open(bundle(st, { key: key(), signedType: 'application/json' })), 'ONNXZIP_ESIGNATURE', null, 'signed type');
    const extra = structuredClone(st);
    extra.predicate.resources.push({ name: 'zz-not-there.json', algorithm: 'sha256', digest: 'a'.repeat(64) });
    await refused(open(bundle(resubject(extra), { key: key() })), 'ONNXZIP_EMISMATCH', 'zz-not-there.json', 'missing file');
    const fewer = structuredClone(st);
    const gone = fewer.predicate.resources.findIndex((r) => r.name === 'tokenizer.json');
    fewer.predicate.resources.splice(gone, 1);
    await refused(open(bundle(resubject(fewer), { key: key() })), 'ONNXZIP_EMISMATCH', 'tokenizer.json', 'extra file');
  });
});
