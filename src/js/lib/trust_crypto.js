// The cryptography of signatures, all of it WebCrypto's (crypto.subtle: SHA-256, ECDSA verify) or, in
// Node.js, node:crypto's (streamed SHA-256, X.509 chains): nothing hand-written. Node.js 18 has WebCrypto as
// require('node:crypto').webcrypto only (globalThis.crypto from 19 on).
import { OnnxzipError } from './errors.js';
import { isNodeJs } from './readers.js';
import { certificateFields, derOr, ecdsaRaw, spkiCurve } from './trust_der.js';

/** A browser hashes a file in one crypto.subtle.digest() call (WebCrypto has no streaming digest), so the
 * whole file is one buffer first: files larger than this are ELIMIT there (Node.js streams any size). */
export const BROWSER_HASH_LIMIT = 2 ** 31;

let subtleP = null;
/** WebCrypto's SubtleCrypto; EUNSUPPORTED where there is none (a page served over plain http from
 * another host than localhost is no secure context: browsers give it no crypto.subtle). */
export function subtle() {
  subtleP ??= (async () => globalThis.crypto?.subtle ??
    (isNodeJs ? (await import('node:crypto')).webcrypto.subtle : undefined))();
  return subtleP.then((s) => {
    if (!s) {
      throw new OnnxzipError('EUNSUPPORTED', 'signatures need WebCrypto (crypto.subtle), which this page has not: ' +
        'browsers offer it to secure contexts only (https:, or http: on localhost)');
    }
    return s;
  });
}

const hexOf = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');

/** SHA-256 of `bytes` (one buffer), as lowercase hex. */
export async function sha256Hex(bytes) {
  return hexOf(await (await subtle()).digest('SHA-256', bytes));
}

/** A SHA-256 of `size` bytes given in order to update(bytes) (each copied or hashed at once: the caller may
 * reuse its buffer); hex() gives the digest. Node.js: node:crypto's streamed hash. Browsers: the bytes
 * gathered into one buffer, then crypto.subtle.digest (ELIMIT past BROWSER_HASH_LIMIT, naming `what`). */
export async function sha256Stream(size, what) {
  if (isNodeJs) {
    const h = (await import('node:crypto')).createHash('sha256');
    return { update: (b) => { h.update(b); }, hex: async () => h.digest('hex') };
  }
  if (size > BROWSER_HASH_LIMIT) {
    throw new OnnxzipError('ELIMIT', `${what} is ${size} bytes: a browser hashes a file in one piece (WebCrypto has no ` +
      `streaming SHA-256) and this package does so up to ${BROWSER_HASH_LIMIT} bytes; verify it in Node.js or ` +
      'with the onnxzip CLI (`onnxzip verify PKG --public-key KEY`)');
  }
  const buf = new Uint8Array(size);
  let at = 0;
  return {
    update: (b) => { buf.set(b, at); at += b.length; },
    hex: async () => sha256Hex(at === size ? buf : buf.subarray(0, at)),
  };
}

/** {spki, curve, hash, size} of a trusted EC public key's SubjectPublicKeyInfo DER; `fail` for a key of
 * another kind. */
export function ecKey(spki, fail) {
  const c = derOr(fail, () => spkiCurve(spki));
  if (!c) throw fail('not an EC P-256, P-384 or P-521 public key');
  return { spki, ...c };
}

/** Whether ECDSA signature `der` (DER, as the bundle holds it) over `data` verifies with `key` (ecKey()).
 * A signature that is no DER ECDSA signature is `fail`. */
export async function ecdsaVerifies(key, der, data, fail) {
  const raw = derOr(fail, () => ecdsaRaw(der, key.size));
  const s = await subtle();
  const k = await s.importKey('spki', key.spki, { name: 'ECDSA', namedCurve: key.curve }, false, ['verify']);
  return s.verify({ name: 'ECDSA', hash: key.hash }, k, raw, data);
}

/** The leaf's SubjectPublicKeyInfo DER after checking the chain `certs` (DER: the leaf, then intermediates)
 * up to one of `roots` (DER) as OpenSSL's X509_verify_cert does with the C library's store: each issuer
 * found by name and key identifier (X509Certificate.checkIssued) and its signature checked, the issuers CAs,
 * every certificate valid now, the leaf usable for signing (KeyUsage digitalSignature or ExtendedKeyUsage
 * codeSigning). `untrusted(message)` and `bad(message)` make the errors (ESIGNATURE, EBUNDLE). Node.js only
 * (node:crypto's X509Certificate): browsers have no X.509 in WebCrypto (EUNSUPPORTED). */
export async function verifyChain(certs, roots, untrusted, bad) {
  if (!isNodeJs) {
    throw new OnnxzipError('EUNSUPPORTED', 'certificate-chain signatures are verified in Node.js only: browsers have no ' +
      'X.509 path validation in WebCrypto; trust the signer\'s public key (trust.publicKey) instead');
  }
  const { X509Certificate } = await import('node:crypto');
  const load = (der, what) => {
    try {
      return { x: new X509Certificate(der), f: derOr(bad, () => certificateFields(der)) };
    } catch (e) {
      if (e instanceof OnnxzipError) throw e;
      throw bad(`${what} is no DER X.509 certificate (${e.message})`);
    }
  };
  const chain = certs.map((d, i) => load(d, i ? `certificate ${i} of the chain` : 'the signing certificate'));
  const anchors = roots.map((d) => load(d, 'a trusted root certificate'));
  const now = Date.now();
  const valid = (c) => {
    if (now < c.f.notBefore || now > c.f.notAfter) {
      throw untrusted(`certificate '${c.x.subject.replace(/\n/g, ', ')}' is ${now < c.f.notBefore ? 'not yet valid' :
        'expired'} (valid from ${new Date(c.f.notBefore).toISOString()} to ${new Date(c.f.notAfter).toISOString()})`);
    }
  };
  const issues = (issuer, c) => c.x.checkIssued(issuer.x) && c.x.verify(issuer.x.publicKey);
  const leaf = chain[0];
  if (!leaf.f.digitalSignature && !leaf.f.codeSigning) {
    throw untrusted('the signing certificate cannot be used for signing (no KeyUsage digitalSignature and no ' +
      'ExtendedKeyUsage codeSigning)');
  }
  let c = leaf;
  const used = new Set([leaf]);
  for (let depth = 0; depth < 16; depth++) {
    valid(c);
    const root = anchors.find((r) => r.x.ca && issues(r, c));
    if (root) {
      valid(root);
      return leaf.f.spki;
    }
    const next = chain.find((k) => !used.has(k) && k.x.ca && issues(k, c));
    if (!next) break;
    used.add(next);
    c = next;
  }
  throw untrusted('the certificate chain does not lead to a trusted root certificate');
}
