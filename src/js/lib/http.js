// The URL reader (spec 17): ranged GETs, the file pinned by its validator, every reply checked.
import { OnnxzipError } from './errors.js';
import { chunksOf, throwIfAborted } from './readers.js';

const CHUNK = 8 << 20;
const RETRY = new Set([408, 429]);
// Refusals of an expired signed URL (spec 17.4.1 #3): asked again through the original URL.
const EXPIRED = new Set([400, 401, 403, 410]);

/** `url` as messages show it: no query, fragment or user:password (each left as "..."). */
export function displayUrl(url) {
  const u = new URL(url);
  return `${u.protocol}//${u.username || u.password ? '...@' : ''}${u.host}${u.pathname}` +
    `${u.search ? '?...' : ''}${u.hash ? '#...' : ''}`;
}

function lastSegment(u) {
  const seg = u.pathname.split('/').pop();
  try { return decodeURIComponent(seg) || 'model.onnxzip'; } catch { return seg || 'model.onnxzip'; }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(signal.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// "bytes A-B/S" -> [A, B, S] (S NaN when "*").
function contentRange(v) {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec((v ?? '').trim());
  return m ? [Number(m[1]), Number(m[2]), m[3] === '*' ? NaN : Number(m[3])] : null;
}

class Transient extends Error {}

/** Opens `url` (a URL object, http: or https:): the tail request of spec 17.1 #1. Returns
 * [reader, tail bytes]. options: fetch, headers, signal, retries, backoffMs, tailBytes, name. */
export async function urlReader(url, options) {
  const original = new URL(url);
  const auth = {};
  if (original.username || original.password) {  // fetch() refuses credentials in URLs
    const cred = `${decodeURIComponent(original.username)}:${decodeURIComponent(original.password)}`;
    auth.Authorization = 'Basic ' + btoa(String.fromCharCode(...new TextEncoder().encode(cred)));
    original.username = original.password = '';
  }
  const r = {
    kind: 'url', url: original.href, display: displayUrl(url), name: options.name ?? lastSegment(original),
    size: -1, gap: 256 << 10, target: original.href, pin: null,
    fetch: options.fetch ?? globalThis.fetch, retries: options.retries ?? 4, backoffMs: options.backoffMs ?? 250,
    signal: options.signal, userHeaders: { ...options.headers, ...auth },
  };
  r.fail = (status, what, extra = {}) =>
    new OnnxzipError(status, `${r.display}: ${what}`, { url: r.display, ...extra });
  r.read = (off, len) => request(r, off, len);
  r.chunks = chunksOf((off, len, signal) => request(r, off, len, signal), CHUNK);
  r.close = () => {};
  const tail = await request(r, -1, options.tailBytes ?? 65536);
  return [r, tail];
}

/** URL reader `r` whose reads take what lies in the file's last bytes `tail` (its first reply) from
 * them and fetch only the rest: a package's models, files and tensors then read each byte once (the
 * file is pinned: later replies are of the same file). r's own reads always fetch. */
export function keepTail(r, tail) {
  const at = r.size - tail.length;
  const read = async (off, len) => {
    if (off + len <= at) return r.read(off, len);
    if (off >= at) return tail.subarray(off - at, off - at + len);
    const head = await r.read(off, at - off);
    const out = new Uint8Array(len);
    out.set(head);
    out.set(tail.subarray(0, off + len - at), head.length);
    return out;
  };
  return Object.create(r, { read: { value: read } });
}

// One ranged GET of [off, off+len) (off -1: the last len bytes), retried as spec 17.3 says.
async function request(r, off, len, signal = r.signal) {
  let reResolved = false;
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(signal);
    try {
      return await attemptOnce(r, off, len, signal);
    } catch (e) {
      if (e === 'expired' && !reResolved) { reResolved = true; r.target = r.url; attempt--; continue; }
      if (!(e instanceof Transient)) throw e;
      if (attempt >= r.retries) throw r.fail(e.status, e.message + ` (after ${attempt + 1} attempts)`, e.extra);
      await sleep(r.backoffMs * 2 ** attempt, signal);
    }
  }
}

function headersFor(r, off, len) {
  const h = { ...r.userHeaders, Range: off < 0 ? `bytes=-${len}` : `bytes=${off}-${off + len - 1}` };
  if (r.pin?.etag) h['If-Match'] = r.pin.etag;
  else if (r.pin?.lastModified) h['If-Unmodified-Since'] = r.pin.lastModified;
  return h;
}

async function attemptOnce(r, off, len, signal) {
  const what = off < 0 ? `the last ${len} bytes` : `bytes ${off}-${off + len - 1}`;
  let res;
  const fetchFn = r.fetch;  // called unbound: a browser's fetch refuses any `this` but the window
  try {
    res = await fetchFn(r.target, { headers: headersFor(r, off, len), cache: 'no-store', signal, redirect: 'follow' });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw Object.assign(new Transient(`network error reading ${what}: ${e?.cause?.message ?? e?.message ?? e}`),
      { status: 'ENETWORK', extra: { cause: e } });
  }
  const drop = () => res.body?.cancel().catch(() => {});
  if (res.status !== 206) {
    drop();
    replyStatus(r, res, what);
  }
  const body = checkReply(r, res, off, len, what);
  let bytes;
  try {
    bytes = new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw Object.assign(new Transient(`reply to ${what} cut short: ${e?.message ?? e}`), { status: 'ENETWORK', extra: { cause: e } });
  }
  if (bytes.length > body.length) {
    throw r.fail('EREPLY', `the reply to ${what} has ${bytes.length} bytes, more than the ${body.length} asked`);
  }
  if (bytes.length < body.length) {
    throw Object.assign(new Transient(`the reply to ${what} ended after ${bytes.length} of ${body.length} bytes`),
      { status: 'ENETWORK', extra: {} });
  }
  if (r.size < 0) pinFile(r, res, body.total);
  if (res.redirected && res.url) r.target = res.url;  // later requests go where the first one ended
  return bytes;
}

// A reply other than 206: throws the right error (a Transient one to retry).
function replyStatus(r, res, what) {
  const s = res.status;
  if (s === 200) {
    throw r.fail('ENORANGE', `the server ignored the range request for ${what} (200 with the whole file); ` +
      'byte ranges are required', { httpStatus: s });
  }
  if (s === 416) {  // as src/net/http_reply.c: a suffix range of an empty file, else bytes past a shrunk file
    if (r.size < 0) throw r.fail('ENOTZIP', 'the file is empty (416 for its last bytes): not an archive', { httpStatus: s });
    throw r.fail('ECHANGED', `${what} are no longer in the file (416 Range Not Satisfiable): it changed since it ` +
      'was opened', { httpStatus: s });
  }
  if (s === 412) {
    throw r.fail('ECHANGED', `the file changed since it was opened (412 Precondition Failed for ${what})`, { httpStatus: s });
  }
  if (EXPIRED.has(s) && r.target !== r.url) throw 'expired';  // eslint-disable-line no-throw-literal
  const msg = `HTTP ${s}${res.statusText ? ' ' + res.statusText : ''} for ${what}`;
  if (s >= 500 || RETRY.has(s)) throw Object.assign(new Transient(msg), { status: 'EHTTP', extra: { httpStatus: s } });
  throw r.fail('EHTTP', msg, { httpStatus: s });
}

const CORS = ' (a cross-origin server must list ETag, Last-Modified and Content-Range in Access-Control-Expose-Headers)';

// The checks of spec 17.2/17.3 on a 206's headers; returns {length, total}.
function checkReply(r, res, off, len, what) {
  const enc = res.headers.get('content-encoding');
  if (enc && enc.trim().toLowerCase() !== 'identity') {
    throw r.fail('EREPLY', `the reply to ${what} is encoded (Content-Encoding: ${enc}); ranges of the file itself are required`);
  }
  const raw = res.headers.get('content-range');
  const cr = contentRange(raw);
  if (!cr) {
    throw r.fail('EREPLY', raw === null ? `the 206 reply to ${what} has no visible Content-Range${CORS}`
      : `the reply to ${what} has an unusable Content-Range: ${raw}`);
  }
  const [a, b, total] = cr;
  if (r.size >= 0 && total !== r.size) {
    throw r.fail('ECHANGED', `the file changed since it was opened: its size is now ${total}, was ${r.size}`);
  }
  const etag = res.headers.get('etag');
  if (r.pin?.etag && etag !== null && etag !== r.pin.etag) {
    throw r.fail('ECHANGED', `the file changed since it was opened (ETag ${etag}, was ${r.pin.etag})`);
  }
  const want = off < 0 ? [Math.max(0, total - len), total - 1] : [off, off + len - 1];
  if (!Number.isFinite(total) || a !== want[0] || b !== want[1]) {
    throw r.fail('EREPLY', `the reply to ${what} is Content-Range ${raw}, not the range asked`);
  }
  return { length: b - a + 1, total };
}

// The first reply pins the file: its size and its strong ETag, else its Last-Modified (spec 17.2).
function pinFile(r, res, total) {
  const etag = res.headers.get('etag');
  const lastModified = res.headers.get('last-modified');
  if (etag && !etag.startsWith('W/')) r.pin = { etag };
  else if (lastModified) r.pin = { lastModified };
  else {
    throw r.fail('EHTTP', `the server sends neither a strong ETag nor Last-Modified${etag ? ` (only the weak ETag ${etag})` : ''}, ` +
      `so a replaced file could not be told from this one${CORS}`);
  }
  r.size = total;
}
