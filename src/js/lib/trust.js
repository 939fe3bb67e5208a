// Signatures (OpenSSF Model Signing 1.0, as model_signing 1.1.1 writes them): options.trust of open(),
// createSession() and transformersModel(). The rules, statuses and limits are the C library's
// (include/onnxzip/onnxzip.h "Signatures", src/trust/): a Sigstore bundle holding a DSSE envelope whose
// payload, an in-toto statement, lists every file of the folder the package unpacks to with its SHA-256.
// openSigned() checks the signature and the file names (no file's bytes); Signed.check() hashes the bytes
// unpack would write for a file (the wasm's file plan: lib/archive.js _plan) before they are used.
import { OnnxzipError } from './errors.js';
import { ecKey, ecdsaVerifies, sha256Hex, sha256Stream, verifyChain } from './trust_crypto.js';
import { base64Bytes, derOr, pemBlocks, spkiPem } from './trust_der.js';
import { parseStrictJson } from './trust_json.js';

export const MAX_BUNDLE = 16 << 20;
const MEDIA_TYPES = new Set(['application/vnd.dev.sigstore.bundle.v0.3+json',
  'application/vnd.dev.sigstore.bundle+json;version=0.2', 'application/vnd.dev.sigstore.bundle+json;version=0.1']);
const IN_TOTO = 'application/vnd.in-toto+json';
const STATEMENT = 'https://in-toto.io/Statement/v1';
const PREDICATE = 'https://model_signing/signature/v1.0';
const SIGNATURE_FILE = 'model.sig';
const enc = new TextEncoder();

const err = (status, where) => (message) => new OnnxzipError(status, `${where.display}: ${message}`, where.details);

// ---- options.trust --------------------------------------------------------------------------------------

function bytesOf(v, what) {
  if (typeof v === 'string') return enc.encode(v);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError(`${what} must be a string or bytes (ArrayBuffer, Uint8Array), not ${v === null ? 'null' : typeof v}`);
}

const listOf = (v, what) => (Array.isArray(v) ? v : [v]).map((x, i) => bytesOf(x, Array.isArray(v) ? `${what}[${i}]` : what));

/** options.trust checked: {keys: [ecKey], roots: [certificate DER], signature: bytes | null}. TypeError for
 * wrong types; EBUNDLE for PEM that is none, or a key of another kind (as onnxzip_trust_add_*()). */
export function trustOf(t) {
  if (typeof t !== 'object' || t === null) throw new TypeError('options.trust must be an object {publicKey, certificateChain, signature}');
  for (const k of Object.keys(t)) {
    if (!['publicKey', 'certificateChain', 'signature'].includes(k)) throw new TypeError(`options.trust.${k}: unknown (publicKey, certificateChain, signature)`);
  }
  if (t.publicKey == null && t.certificateChain == null) {
    throw new TypeError('options.trust needs publicKey (PEM) or certificateChain (PEM root certificates)');
  }
  const text = (b) => new TextDecoder().decode(b);
  const bad = (what) => (m) => new OnnxzipError('EBUNDLE', `options.trust.${what}: ${m}`);
  const keys = [], roots = [];
  for (const pem of t.publicKey == null ? [] : listOf(t.publicKey, 'options.trust.publicKey')) {
    const ders = derOr(bad('publicKey'), () => pemBlocks(text(pem), 'PUBLIC KEY'));
    if (!ders.length) throw bad('publicKey')('no PEM "PUBLIC KEY" block');
    for (const der of ders) keys.push(ecKey(der, bad('publicKey')));
  }
  for (const pem of t.certificateChain == null ? [] : listOf(t.certificateChain, 'options.trust.certificateChain')) {
    const ders = derOr(bad('certificateChain'), () => pemBlocks(text(pem), 'CERTIFICATE'));
    if (!ders.length) throw bad('certificateChain')('no PEM "CERTIFICATE" block');
    roots.push(...ders);
  }
  const signature = t.signature == null ? null : bytesOf(t.signature, 'options.trust.signature');
  if (signature && signature.length > MAX_BUNDLE) throw bad('signature')(`over ${MAX_BUNDLE} bytes`);
  return { keys, roots, signature };
}

// ---- the bundle -------------------------------------------------------------------------------------------

const isObj = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

function field(o, k, type, fail, path) {
  const v = o[k];
  const ok = type === 'object' ? isObj(v) : type === 'array' ? Array.isArray(v) : typeof v === type;
  if (!ok) throw fail(`${path}${k} ${v === undefined ? 'is missing' : `is not a JSON ${type}`}`);
  return v;
}

function b64Field(o, k, fail, path) {
  const b = base64Bytes(field(o, k, 'string', fail, path));
  if (!b) throw fail(`${path}${k} is not base64`);
  return b;
}

// DSSE's pre-authentication encoding of `body` with payload type `type`.
function pae(type, body) {
  const head = enc.encode(`DSSEv1 ${enc.encode(type).length} ${type} ${body.length} `);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** The statement's bytes once the bundle `bytes` verifies with `trust`. */
async function verifiedPayload(bytes, trust, where) {
  const bad = err('EBUNDLE', where), untrusted = err('ESIGNATURE', where);
  if (bytes.length > MAX_BUNDLE) throw bad(`the signature is over ${MAX_BUNDLE} bytes`);
  const b = parseStrictJson(bytes, (m) => bad(`the signature is no valid JSON: ${m}`));
  const media = field(b, 'mediaType', 'string', bad, '');
  if (!MEDIA_TYPES.has(media)) throw bad(`mediaType '${media}' is no Sigstore bundle media type read here`);
  const vm = field(b, 'verificationMaterial', 'object', bad, '');
  const keyless = vm.certificate !== undefined || (Array.isArray(vm.tlogEntries) && vm.tlogEntries.length > 0) ||
    (vm.timestampVerificationData !== undefined && vm.publicKey === undefined && vm.x509CertificateChain === undefined);
  if (keyless) {
    throw err('EUNSUPPORTED', where)('keyless (Sigstore) signatures are not supported (a Fulcio certificate and a ' +
      'Rekor entry need Sigstore\'s trust root): sign with a key or a certificate chain');
  }
  if (b.dsseEnvelope === undefined && b.messageSignature !== undefined) throw bad('the bundle holds no DSSE envelope (messageSignature)');
  const env = field(b, 'dsseEnvelope', 'object', bad, '');
  const payload = b64Field(env, 'payload', bad, 'dsseEnvelope.');
  const type = field(env, 'payloadType', 'string', bad, 'dsseEnvelope.');
  const sigs = field(env, 'signatures', 'array', bad, 'dsseEnvelope.');
  if (sigs.length !== 1) throw bad(`dsseEnvelope.signatures has ${sigs.length} signatures, not exactly one`);
  if (!isObj(sigs[0])) throw bad('dsseEnvelope.signatures[0] is not a JSON object');
  const sig = b64Field(sigs[0], 'sig', bad, 'dsseEnvelope.signatures[0].');
  let keys;
  if (isObj(vm.publicKey)) {
    if (vm.publicKey.hint !== undefined && typeof vm.publicKey.hint !== 'string') throw bad('verificationMaterial.publicKey.hint is not a JSON string');
    if (!trust.keys.length) throw untrusted('the package is signed with a key, and the trust has no public key (only certificates)');
    const hint = vm.publicKey.hint;
    keys = [];
    for (const k of trust.keys) if (!hint || hint === await sha256Hex(enc.encode(spkiPem(k.spki)))) keys.push(k);
    if (!keys.length) throw untrusted('the signature\'s key hint names another public key than the trusted one');
  } else if (isObj(vm.x509CertificateChain)) {
    const certs = field(vm.x509CertificateChain, 'certificates', 'array', bad, 'verificationMaterial.x509CertificateChain.');
    if (!certs.length) throw bad('verificationMaterial.x509CertificateChain.certificates is empty');
    const ders = certs.map((c, i) => {
      const path = `verificationMaterial.x509CertificateChain.certificates[${i}].`;
      if (!isObj(c)) throw bad(`${path.slice(0, -1)} is not a JSON object`);
      return b64Field(c, 'rawBytes', bad, path);
    });
    if (!trust.roots.length) throw untrusted('the package is signed with a certificate, and the trust has no root certificate (only public keys)');
    const spki = await verifyChain(ders, trust.roots, untrusted, bad);
    keys = [ecKey(spki, (m) => bad(`the signing certificate's key: ${m}`))];
  } else {
    throw bad('verificationMaterial has neither publicKey nor x509CertificateChain');
  }
  if (type !== IN_TOTO) throw untrusted(`the signed payload type is '${type}', not '${IN_TOTO}'`);
  const signed = pae(type, payload);
  for (const k of keys) if (await ecdsaVerifies(k, sig, signed, bad)) return payload;
  throw untrusted(isObj(vm.publicKey) ? 'the signature does not verify with the trusted public key'
    : 'the signature does not verify with the signing certificate\'s key');
}

// ---- the statement ----------------------------------------------------------------------------------------

// A resource name as model_signing writes it: "/"-separated, relative, no empty, "." or ".." component
// (the single-file model's resource is "." alone).
const badName = (n) => n !== '.' && (n === '' || n.startsWith('/') || n.split('/').some((c) => c === '' || c === '.' || c === '..'));

/** {resources: Map name -> hex digest, ignore: [paths]} of the statement `payload`. */
async function statementOf(payload, where) {
  const bad = err('EBUNDLE', where), unsupported = err('EUNSUPPORTED', where);
  const s = parseStrictJson(payload, (m) => bad(`the signed statement is no valid JSON: ${m}`));
  if (s._type !== STATEMENT) throw bad(`the statement's _type is ${JSON.stringify(s._type)}, not '${STATEMENT}'`);
  if (s.predicateType !== PREDICATE) {
    throw bad(`the statement's predicateType is ${JSON.stringify(s.predicateType)}, not '${PREDICATE}'`);
  }
  const subjects = field(s, 'subject', 'array', bad, 'statement.');
  if (subjects.length !== 1 || !isObj(subjects[0])) throw bad(`the statement has ${subjects.length} subjects, not exactly one`);
  const subjectDigest = field(field(subjects[0], 'digest', 'object', bad, 'statement.subject[0].'), 'sha256', 'string',
    bad, 'statement.subject[0].digest.');
  const pred = field(s, 'predicate', 'object', bad, 'statement.');
  const ser = field(pred, 'serialization', 'object', bad, 'statement.predicate.');
  const method = field(ser, 'method', 'string', bad, 'statement.predicate.serialization.');
  if (method === 'shards') throw unsupported('the statement\'s serialization method "shards" is not supported (only "files")');
  if (method !== 'files') throw bad(`the statement's serialization method '${method}' is unknown (only "files")`);
  const hash = field(ser, 'hash_type', 'string', bad, 'statement.predicate.serialization.');
  if (hash !== 'sha256') throw unsupported(`the statement's hash type '${hash}' is not supported (only sha256)`);
  const ignore = ser.ignore_paths === undefined ? [] : field(ser, 'ignore_paths', 'array', bad, 'statement.predicate.serialization.');
  if (ignore.some((p) => typeof p !== 'string')) throw bad('statement.predicate.serialization.ignore_paths holds a value that is no string');
  const list = field(pred, 'resources', 'array', bad, 'statement.predicate.');
  const resources = new Map();
  const raw = new Uint8Array(32 * list.length);
  list.forEach((r, i) => {
    const path = `statement.predicate.resources[${i}].`;
    if (!isObj(r)) throw bad(`${path.slice(0, -1)} is not a JSON object`);
    const name = field(r, 'name', 'string', bad, path);
    const alg = field(r, 'algorithm', 'string', bad, path);
    const digest = field(r, 'digest', 'string', bad, path);
    if (alg !== 'sha256') throw unsupported(`resource '${name}': hash algorithm '${alg}' is not supported (only sha256)`);
    if (!/^[0-9a-fA-F]{64}$/.test(digest)) throw bad(`resource '${name}': its digest is not 64 hex digits`);
    if (badName(name)) throw bad(`resource name '${name}' is absolute or has an empty, "." or ".." component`);
    if (resources.has(name)) throw bad(`resource '${name}' is listed twice`);
    resources.set(name, digest.toLowerCase());
    for (let k = 0; k < 32; k++) raw[32 * i + k] = parseInt(digest.slice(2 * k, 2 * k + 2), 16);
  });
  if ((await sha256Hex(raw)) !== subjectDigest.toLowerCase()) {
    throw bad('the statement\'s subject digest is not the SHA-256 of its resources\' digests');
  }
  return { resources, ignore };
}

// ---- a verified signature -----------------------------------------------------------------------------------

/** A verified signature of the package `archive` holds (onnxzip_signed): the statement's resources, and the
 * files found equal to them. */
export class Signed {
  #resources; #ignore; #where; #checked = new Set();
  constructor({ resources, ignore }, where) { this.#resources = resources; this.#ignore = ignore; this.#where = where; }

  ignored(path) { return this.#ignore.some((p) => path === p || path.startsWith(`${p}/`)); }

  /** The package's file names (or "." for a single-model archive) against the statement's resources. */
  checkNames(names) {
    const mismatch = err('EMISMATCH', this.#where);
    const have = new Set(names);
    for (const n of names) {
      if (!this.ignored(n) && !this.#resources.has(n)) throw mismatch(`file '${n}' is not in the signed statement`);
    }
    for (const n of this.#resources.keys()) {
      if (!this.ignored(n) && !have.has(n)) throw mismatch(`file '${n}' of the signed statement is not in the package`);
    }
  }

  /** Whether file `path` was found equal to its resource. */
  has(path) { return this.#checked.has(path); }

  /** Checks that `hex`, the SHA-256 of the bytes unpack writes for file `path`, is its resource's digest. */
  expect(path, hex) {
    const want = this.#resources.get(path);
    if (want === undefined) {
      throw err('EUNSIGNED', this.#where)(`file '${path}' is not covered by the signature (the statement's ignore_paths ` +
        'leave it out)');
    }
    if (hex !== want) throw err('EMISMATCH', this.#where)(`file '${path}' differs from the signed statement (SHA-256 ${hex}, signed ${want})`);
    this.#checked.add(path);
  }

  /** Checks the bytes `bytes` of plain file `path` (what is handed out). */
  async checkBytes(path, bytes) {
    this.expect(path, await sha256Hex(bytes));
    return bytes;
  }

  /** Checks each planned file (lib/archive.js _plan) not checked yet: its bytes through `read(segment)`
   * (an async iterator of the segment's bytes, in pieces). */
  async checkPlanned(files, read) {
    for (const f of files) {
      if (this.#checked.has(f.path)) continue;
      const h = await sha256Stream(f.size, `${this.#where.display}: file '${f.path}'`);
      for (const seg of f.segments) for await (const piece of read(seg)) h.update(piece);
      this.expect(f.path, await h.hex());
    }
  }
}

/** The Signed of the package `archive` holds, its signature (trust.signature, else the package's model.sig)
 * checked against `trust` (trustOf()) and its file names (`names`: the package's files, from its plan)
 * against the statement. Reads no file's bytes but model.sig's. */
export async function openSigned(archive, trust, names) {
  const where = { display: archive._reader.display, details: archive._where };
  let bytes = trust.signature;
  if (!bytes) {
    if (!archive.files.has(SIGNATURE_FILE)) {
      throw err('EUNSIGNED', where)(archive.models.size ? `the package has no ${SIGNATURE_FILE} and no signature was given ` +
        '(options.trust.signature)' : 'a single-model archive holds no signature: give its detached signature ' +
        '(options.trust.signature)');
    }
    if (archive.files.get(SIGNATURE_FILE).size > MAX_BUNDLE) throw err('EBUNDLE', where)(`${SIGNATURE_FILE} is over ${MAX_BUNDLE} bytes`);
    bytes = await archive._readFileUnsigned(SIGNATURE_FILE);
  }
  const signed = new Signed(await statementOf(await verifiedPayload(bytes, trust, where), where), where);
  signed.checkNames(names);
  return signed;
}
