// trust_fixtures.mjs — signed packages for the JS trust tests (trust.test.mjs, in Node.js and chromium):
// the four repository layouts of tests/packages/make_repos.py signed by the oracle, model_signing 1.1.1
// (`model_signing sign key DIR --signature DIR/model.sig`, the pinned venv's; ONNXZIP_MODEL_SIGNING may
// name another), with P-256 keys made by the openssl CLI, then packed by the CLI (`onnxzip pack DIR`, which
// keeps model.sig). Tampered copies are changed in the folder after signing and packed: their CRC-32 and
// XXH3 are consistent, only the signature can catch them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cliListing, cliOk, crc32, makeRepos, rangeServer, scratch } from './helpers.mjs';

export const KINDS = ['transformers_js', 'encoder_decoder', 'genai', 'diffusers'];
// per layout: the model run, a data file of it (a weight changed there), a tokenizer file (a byte changed)
export const CASES = {
  transformers_js: { model: 'onnx/model.onnx', data: 'onnx/model.onnx_data', tokenizer: 'tokenizer.json' },
  encoder_decoder: { model: 'onnx/encoder_model.onnx', data: 'onnx/encoder_model.onnx_data', tokenizer: 'tokenizer.json' },
  genai: { model: 'model.onnx', data: 'model.onnx.data', tokenizer: 'tokenizer.json' },
  diffusers: { model: 'unet/model.onnx', data: 'unet/model.onnx_data', tokenizer: 'tokenizer/vocab.json' },
};

export function run(cmd, args, what) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  assert.equal(r.error, undefined, `${what}: ${r.error}`);
  assert.equal(r.status, 0, `${what}: ${cmd} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// model_signing: ONNXZIP_MODEL_SIGNING, else the pinned venv's (beside its python).
export function modelSigning(python) {
  const exe = process.env.ONNXZIP_MODEL_SIGNING || path.join(path.dirname(python), 'model_signing');
  assert.ok(fs.existsSync(exe), `${exe} absent: model_signing 1.1.1 (tests/python/requirements.txt) signs the test ` +
    'packages; make the venv with tests/python/venv.sh BUILDDIR/pyvenv, or set ONNXZIP_MODEL_SIGNING');
  return exe;
}

// Flips one byte of FILE at OFFSET (after signing: the signature no longer matches it).
function flip(file, offset) {
  const b = fs.readFileSync(file);
  b[offset] ^= 0x01;
  fs.writeFileSync(file, b);
}

// A P-256 key pair in DIR/NAME.pem (private) and DIR/NAME.pub.pem.
function keyPair(dir, name) {
  const key = path.join(dir, `${name}.pem`), pub = path.join(dir, `${name}.pub.pem`);
  run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], 'key');
  run('openssl', ['ec', '-in', key, '-pubout', '-out', pub], 'public key');
  return { key, pub: fs.readFileSync(pub, 'utf8') };
}

// A CA (self-signed, CA:TRUE) and a leaf it issues, KeyUsage `usage`, in DIR/NAME*.pem.
function certificates(dir, name, ca, usage) {
  const conf = path.join(dir, `${name}.cnf`);
  fs.writeFileSync(conf, `[leaf]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,${usage}\n`);
  const leafKey = path.join(dir, `${name}.key.pem`), csr = path.join(dir, `${name}.csr`), leaf = path.join(dir, `${name}.crt.pem`);
  run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', leafKey], 'leaf key');
  run('openssl', ['req', '-new', '-key', leafKey, '-subj', `/CN=${name} signer`, '-out', csr], 'csr');
  run('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', '7', '-days', '30',
    '-extfile', conf, '-extensions', 'leaf', '-out', leaf], 'leaf');
  return { key: leafKey, cert: leaf };
}

function rootCa(dir, name) {
  const key = path.join(dir, `${name}.key.pem`), cert = path.join(dir, `${name}.pem`);
  run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], 'CA key');
  run('openssl', ['req', '-x509', '-new', '-key', key, '-subj', `/CN=${name}`, '-days', '30', '-out', cert,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], 'CA');
  return { key, cert, pem: fs.readFileSync(cert, 'utf8') };
}

/** Makes everything under DIR; returns {pub, otherPub, ca, otherCa, feeds, pkg(kind, variant), folder(kind),
 * single, singleSig, singleBad}. Variants: 'signed', 'tokenizer' (a tokenizer byte changed), 'weight' (a
 * byte of the model's data file changed), 'unsigned' (no model.sig), 'cert' (signed with a certificate whose
 * leaf has digitalSignature), 'nosign' (a leaf with keyEncipherment only). */
export function makeSigned(dir, python) {
  const ms = modelSigning(python);
  const feeds = makeRepos(python, dir, KINDS);
  const signer = keyPair(dir, 'signer'), other = keyPair(dir, 'other');
  const ca = rootCa(dir, 'ca'), otherCa = rootCa(dir, 'otherca');
  const leaf = certificates(dir, 'leaf', ca, 'digitalSignature'), noSign = certificates(dir, 'nosign', ca, 'keyEncipherment');
  const folder = (kind, variant = 'signed') => path.join(dir, variant === 'signed' ? kind : `${kind}-${variant}`);
  const pkg = (kind, variant = 'signed') => path.join(dir, `${kind}-${variant}.onnxzip`);
  for (const kind of KINDS) {
    const src = folder(kind);
    const copy = (variant) => { fs.cpSync(src, folder(kind, variant), { recursive: true }); return folder(kind, variant); };
    for (const [variant, l] of [['cert', leaf], ['nosign', noSign]]) {
      const d = copy(variant);
      run(ms, ['sign', 'certificate', d, '--private_key', l.key, '--signing_certificate', l.cert,
        '--certificate_chain', ca.cert, '--signature', path.join(d, 'model.sig')], `model_signing sign certificate ${kind}`);
    }
    run(ms, ['sign', 'key', src, '--private_key', signer.key, '--signature', path.join(src, 'model.sig')], `model_signing sign ${kind}`);
    flip(path.join(copy('tokenizer'), CASES[kind].tokenizer), 10);
    flip(path.join(copy('weight'), CASES[kind].data), 100);
    fs.rmSync(path.join(copy('unsigned'), 'model.sig'));
    for (const variant of ['signed', 'tokenizer', 'weight', 'unsigned', 'cert', 'nosign']) {
      cliOk('pack', folder(kind, variant), '-o', pkg(kind, variant), '-q');
    }
  }
  // a single-model archive: OMS's single-file model, its signature detached
  const single = path.join(dir, 'single.onnxzip'), singleSig = path.join(dir, 'single.onnxzip.sig');
  cliOk('pack', path.join(folder('genai'), 'model.onnx'), '-o', single, '-q');
  run(ms, ['sign', 'key', single, '--private_key', signer.key, '--signature', singleSig], 'model_signing sign single');
  const singleBad = path.join(dir, 'single-bad.onnxzip');
  fs.copyFileSync(single, singleBad);
  const big = cliListing(single).entries.reduce((x, e) => (e.size > x.size ? e : x));  // a weight's entry
  flip(singleBad, big.dataOffset + 10);
  return { pub: signer.pub, otherPub: other.pub, signerKey: signer.key, ca: ca.pem, otherCa: otherCa.pem, feeds, pkg,
    folder, single, singleSig: fs.readFileSync(singleSig), singleBad };
}

// `data` with a byte at `at` + 4 changed and bytes [at, at + 4) solved so that its CRC-32 is unchanged
// (CRC-32 is affine over GF(2): the 32 bit flips of a 4-byte window span every difference), as
// tests/python/test_trust.py's forge_crc32 does; helpers.mjs's crc32 is the tests' own.
export function forgeCrc32(data, at) {
  const want = crc32(data);
  const d = Buffer.from(data);
  d[at + 4] ^= 0xff;
  d.fill(0, at, at + 4);
  const base = crc32(d);
  const basis = new Map();  // leading bit -> [crc delta, window bits]: Gaussian elimination over GF(2)
  const top = (x) => 31 - Math.clz32(x);
  for (let b = 0; b < 32; b++) {
    d[at + (b >> 3)] ^= 1 << (b & 7);
    let delta = (crc32(d) ^ base) >>> 0, bits = (2 ** b) >>> 0;
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
  assert.equal(crc32(d), want);
  assert.ok(!d.equals(Buffer.from(data)));
  return d;
}

// A copy of zip FILE whose central records of entries NAMES have their digest field's Algorithm (spec 4.4)
// set to 2, which readers ignore: their XXH3 is no longer checked. Walks the central directory itself.
export function dropXxh3(file, names, out) {
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

/** [tensor, its entry]: the largest of `tensors` stored in an entry, which holds it alone (`entries`: the
 * CLI's listing of the archive). */
export function largestWeight(tensors, entries) {
  const t = tensors.filter((x) => x.storage === 'entry').reduce((x, y) => (y.byteLength > x.byteLength ? y : x));
  const e = entries.find((x) => x.name === t.entry);
  assert.ok(e.dataOffset === t.offset && e.size === t.byteLength, `${t.key}: an entry of its own`);
  return [t, e];
}

/** A copy of the single-model archive fx.single, its largest weight's XXH3 dropped (dropXxh3) before it is
 * signed (it is its one signed file), as DIR/NAME.onnxzip: {served, sig (the detached signature's bytes),
 * entry (the weight's, from the CLI's listing), key (the tensor's)}. */
export function singleWithoutXxh3(dir, fx, python, name) {
  const { entries, tensors } = cliListing(fx.single);
  const [t, entry] = largestWeight(tensors, entries);
  const served = path.join(dir, `${name}.onnxzip`);
  dropXxh3(fx.single, [entry.name], served);
  run(modelSigning(python), ['sign', 'key', served, '--private_key', fx.signerKey, '--signature', `${served}.sig`], 'sign');
  return { served, sig: fs.readFileSync(`${served}.sig`), entry, key: t.key };
}

/** The Node.js trust tests' setup: makeSigned() in a scratch directory named after `prefix`, by the pinned
 * venv's `python`, and a range server: {dir, fx, server}. */
export async function signedSetup(prefix, python) {
  assert.ok(python && fs.existsSync(python), `ONNXZIP_PYVENV_PYTHON (${python}): the pinned venv's python is needed`);
  const dir = scratch(prefix);
  return { dir, fx: makeSigned(dir, python), server: await rangeServer() };
}

/** What signedSetup() made, removed. */
export async function signedTeardown(s) {
  await s?.server?.close();
  if (s?.dir) fs.rmSync(s.dir, { recursive: true, force: true });
}

/** onnxruntime `ort` counting InferenceSession.create calls: a refused package must never reach it. */
export function spyOrt(ort) {
  const spy = { calls: 0, env: ort.env, Tensor: ort.Tensor };
  spy.InferenceSession = { create: (...a) => { spy.calls++; return ort.InferenceSession.create(...a); } };
  return spy;
}
