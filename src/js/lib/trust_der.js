// The few DER structures a signature's verification reads itself (WebCrypto takes keys and signatures in
// other forms): an EC SubjectPublicKeyInfo's curve, an ECDSA signature (DER SEQUENCE {r, s}) as WebCrypto's
// r || s, and of a certificate its public key, validity and key usages. Strict DER: definite, minimal
// lengths, nothing after the outer value. No cryptography here: WebCrypto and node:crypto do that.

// hex of an OID's content bytes -> its WebCrypto curve and the hash model_signing pairs with it
const CURVES = {
  '2a8648ce3d030107': { curve: 'P-256', hash: 'SHA-256', size: 32 },
  '2b81040022': { curve: 'P-384', hash: 'SHA-384', size: 48 },
  '2b81040023': { curve: 'P-521', hash: 'SHA-512', size: 66 },
};
const EC_PUBLIC_KEY = '2a8648ce3d0201';
const KEY_USAGE = '551d0f', EXT_KEY_USAGE = '551d25', CODE_SIGNING = '2b06010505070303';

const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

class DerError extends Error {}

/** A DER value at `at` of `b`: {tag, body (its content bytes), end (the offset after it)}. */
function tlv(b, at, end = b.length) {
  if (at + 2 > end) throw new DerError('DER value cut short');
  const tag = b[at];
  if ((tag & 0x1f) === 0x1f) throw new DerError('DER tag in several bytes');
  let len = b[at + 1], p = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > end) throw new DerError('DER length not definite or too long');
    len = 0;
    for (let k = 0; k < n; k++) len = len * 256 + b[p + k];
    if (b[p] === 0 || len < 0x80) throw new DerError('DER length not minimal');
    p += n;
  }
  if (p + len > end) throw new DerError('DER value longer than what holds it');
  return { tag, body: b.subarray(p, p + len), start: at, end: p + len };
}

/** The values inside a constructed value's body, in order. */
function children(body) {
  const out = [];
  for (let at = 0; at < body.length;) {
    const v = tlv(body, at);
    out.push(v);
    at = v.end;
  }
  return out;
}

/** The single DER value of `b` (nothing after it) with tag `tag`. */
function whole(b, tag, what) {
  const v = tlv(b, 0);
  if (v.tag !== tag || v.end !== b.length) throw new DerError(`${what} is no DER of the expected form`);
  return v;
}

/** A DER error as `fail(message)` (the caller's status), other errors unchanged. */
export function derOr(fail, fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof DerError) throw fail(e.message);
    throw e;
  }
}

/** The curve of an EC SubjectPublicKeyInfo: {curve, hash, size}, null when it is no P-256/384/521 key. */
export function spkiCurve(spki) {
  const [alg, key] = children(whole(spki, 0x30, 'the public key').body);
  if (!alg || alg.tag !== 0x30 || !key || key.tag !== 0x03) throw new DerError('the public key is no SubjectPublicKeyInfo');
  const [oid, params] = children(alg.body);
  if (oid?.tag !== 0x06 || hex(oid.body) !== EC_PUBLIC_KEY || params?.tag !== 0x06) return null;
  return CURVES[hex(params.body)] ?? null;
}

/** An ECDSA signature's DER (SEQUENCE {INTEGER r, INTEGER s}) as WebCrypto's IEEE P1363 r || s, each of
 * `size` bytes. */
export function ecdsaRaw(der, size) {
  const parts = children(whole(der, 0x30, 'the ECDSA signature').body);
  if (parts.length !== 2 || parts.some((p) => p.tag !== 0x02)) throw new DerError('the ECDSA signature is no SEQUENCE of two INTEGERs');
  const out = new Uint8Array(2 * size);
  parts.forEach(({ body }, k) => {
    if (!body.length || body[0] & 0x80) throw new DerError('the ECDSA signature has a negative or empty integer');
    if (body.length > 1 && body[0] === 0 && !(body[1] & 0x80)) throw new DerError('the ECDSA signature\'s integer is not minimal');
    const v = body[0] === 0 ? body.subarray(1) : body;
    if (v.length > size) throw new DerError('the ECDSA signature\'s integer is longer than the curve\'s');
    out.set(v, (k + 1) * size - v.length);
  });
  return out;
}

function time(v) {
  const s = new TextDecoder().decode(v.body);
  const m = v.tag === 0x17 ? /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(s) : v.tag === 0x18
    ? /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(s) : null;
  if (!m) throw new DerError(`a certificate's time '${s}' is no UTCTime or GeneralizedTime`);
  let y = Number(m[1]);
  if (v.tag === 0x17) y += y < 50 ? 2000 : 1900;  // RFC 5280 4.1.2.5.1
  return Date.UTC(y, m[2] - 1, m[3], m[4], m[5], m[6]);
}

/** Of a certificate's DER: {spki (its SubjectPublicKeyInfo's DER), notBefore, notAfter (ms since 1970),
 * digitalSignature (KeyUsage has it; null without KeyUsage), codeSigning (ExtendedKeyUsage has it)}. */
export function certificateFields(der) {
  const [tbs] = children(whole(der, 0x30, 'a certificate').body);
  if (tbs?.tag !== 0x30) throw new DerError('a certificate has no TBSCertificate');
  const f = children(tbs.body);
  const k = f[0]?.tag === 0xa0 ? 1 : 0;  // [0] version
  const [validity, spki] = [f[k + 3], f[k + 5]];
  if (validity?.tag !== 0x30 || spki?.tag !== 0x30) throw new DerError('a certificate lacks its validity or public key');
  const [nb, na] = children(validity.body);
  const out = { spki: tbs.body.subarray(spki.start, spki.end), notBefore: time(nb), notAfter: time(na),
    digitalSignature: null, codeSigning: false };
  const exts = f.slice(k + 6).find((x) => x.tag === 0xa3);
  for (const ext of exts ? children(whole(exts.body, 0x30, 'a certificate\'s extensions').body) : []) {
    const parts = children(ext.body);
    const id = hex(parts[0].body), value = parts[parts.length - 1];
    if (value.tag !== 0x04) throw new DerError('a certificate extension has no OCTET STRING value');
    if (id === KEY_USAGE) {
      const bits = whole(value.body, 0x03, 'KeyUsage').body;
      out.digitalSignature = bits.length > 1 && (bits[1] & 0x80) !== 0;
    } else if (id === EXT_KEY_USAGE) {
      out.codeSigning = children(whole(value.body, 0x30, 'ExtendedKeyUsage').body).some((o) => hex(o.body) === CODE_SIGNING);
    }
  }
  return out;
}

/** The DER of each "-----BEGIN `label`-----" block of PEM text `text`, in order. */
export function pemBlocks(text, label) {
  const out = [];
  const re = new RegExp(`-----BEGIN ${label}-----([^-]*)-----END ${label}-----`, 'g');
  for (const m of text.matchAll(re)) {
    const der = base64Bytes(m[1].replace(/[\r\n\t ]/g, ''));
    if (!der) throw new DerError(`a PEM ${label} block is no base64`);
    out.push(der);
  }
  return out;
}

/** Bytes of strict base64 (standard alphabet, padded); null when `s` is none. */
export function base64Bytes(s) {
  if (typeof s !== 'string' || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) return null;
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The PEM text of a SubjectPublicKeyInfo as Python's cryptography writes it (64-character lines): the
 * bytes whose SHA-256 is model_signing's key hint. */
export function spkiPem(spki) {
  let bin = '';
  for (const x of spki) bin += String.fromCharCode(x);
  const b64 = btoa(bin);
  const lines = b64.match(/.{1,64}/g).join('\n');
  return `-----BEGIN PUBLIC KEY-----\n${lines}\n-----END PUBLIC KEY-----\n`;
}

export { DerError };
