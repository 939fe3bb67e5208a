// The URL reader (spec 17): ranged GETs, the file pinned by its validator, every reply checked.
import { OnnxzipError } from './errors.js';
import { chunksOf, throwIfAborted } from './readers.js';

const CHUNK = 8 << 20;
// The C library's stall timeout (onnxzip_remote_options.stall_timeout_ms): a reply's headers as a whole,
// then each wait for a byte of its body.
const TIMEOUT_MS = 30000;
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
 * [reader, tail bytes]. options: fetch, headers, signal, retries, backoffMs, timeoutMs, tailBytes, name. */
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
    timeoutMs: options.timeoutMs ?? TIMEOUT_MS, signal: options.signal, userHeaders: { ...options.headers, ...auth },
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
  if (off >= 0 && len === 0) return new Uint8Array(0);  // no request: its range would be empty (bytes=off-(off-1))
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
  const clock = attemptClock(r, signal);
  const fetchFn = r.fetch;  // called unbound: a browser's fetch refuses any `this` but the window
  let res;
  try {
    clock.arm('headers');
    try {
      res = await clock.race(fetchFn(r.target, { headers: headersFor(r, off, len), cache: 'no-store',
        signal: clock.signal, redirect: 'follow' }));
    } catch (e) {
      throw failure(r, e, clock, signal, `network error reading ${what}`, what);
    }
    const drop = () => res.body?.cancel().catch(() => {});
    if (res.status !== 206) {
      drop();
      replyStatus(r, res, what);
    }
    let body;
    try {
      body = checkReply(r, res, off, len, what);
    } catch (e) {
      drop();
      throw e;
    }
    const bytes = await readBody(r, res, body.length, what, clock, signal);
    if (r.size < 0) pinFile(r, res, body.total);
    if (res.redirected && res.url) r.target = res.url;  // later requests go where the first one ended
    return bytes;
  } finally {
    clock.stop();
  }
}

// An attempt's own AbortSignal: aborted by the caller's `signal`, or when the reply's headers are not all
// there `r.timeoutMs` after the request, or no byte of its body came for `r.timeoutMs` (then `expired` says
// which: the C library's stall timeout; a byte now and then keeps a body going). race(p): p, or its abort
// (a fetch given in options may not heed the signal).
function attemptClock(r, signal) {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const aborted = new Promise((_, reject) => ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason),
    { once: true }));
  aborted.catch(() => {});  // seen through race() only
  let timer;
  const clock = {
    signal: ctl.signal, expired: null,
    arm(phase) {
      clearTimeout(timer);
      timer = setTimeout(() => { clock.expired = phase; ctl.abort(new DOMException('timed out', 'TimeoutError')); },
        r.timeoutMs);
    },
    race: (p) => Promise.race([p, aborted]),
    stop() { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); },
  };
  return clock;
}

// The body of a 206 that promised `want` bytes, read as it comes (the clock re-armed by each chunk; more
// than `want` bytes refused as they arrive, not after an endless body).
async function readBody(r, res, want, what, clock, signal) {
  const out = new Uint8Array(want);
  let got = 0;
  const reader = res.body?.getReader();
  try {
    for (clock.arm('body'); reader;) {
      const { done, value } = await clock.race(reader.read());
      if (done) break;
      clock.arm('body');
      if (got + value.length > want) {
        throw r.fail('EREPLY', `the reply to ${what} has more than the ${want} bytes asked (${got + value.length} so far)`);
      }
      out.set(value, got);
      got += value.length;
    }
  } catch (e) {
    reader?.cancel().catch(() => {});
    if (e instanceof OnnxzipError) throw e;
    throw failure(r, e, clock, signal, `the reply to ${what} ended after ${got} of ${want} bytes (cut short)`, what);
  }
  if (got < want) {
    throw Object.assign(new Transient(`the reply to ${what} ended after ${got} of ${want} bytes (truncated)`),
      { status: 'ENETWORK', extra: {} });
  }
  return out;
}

// Node.js's fetch (undici) refuses a reply that is no HTTP reply with a parser error (llhttp's HPE_* codes)
// or its own (UND_ERR_*), in the `cause` chain of its TypeError. Browsers' fetch shows no cause ("Failed
// to fetch"): there each is a network error.
function errorCode(e) {
  for (let c = e, depth = 0; c && depth < 4; c = c.cause, depth++) {
    if (typeof c.code === 'string' && /^(HPE_|UND_ERR_)/.test(c.code)) return [c.code, c.message];
  }
  return [null, e?.cause?.message ?? e?.message ?? String(e)];
}

// What failed fetch() or reading a body (`e`) means: the caller's abort passes through; the attempt's
// timeout is ETIMEOUT, a reply that is no HTTP reply EREPLY (as src/net/http_reply.c says them, not
// retried), anything else a network error (`context`: what was being done); the retried ones Transient.
function failure(r, e, clock, signal, context, what) {
  if (signal?.aborted) return signal.reason;
  const transient = (status, msg) => Object.assign(new Transient(msg), { status, extra: { cause: e } });
  if (clock.expired === 'headers') {
    return transient('ETIMEOUT', `${what}: the reply's headers were not all there after ${r.timeoutMs} ms (the ` +
      'timeout, which bounds them as a whole)');
  }
  if (clock.expired) return transient('ETIMEOUT', `${what}: no byte for ${r.timeoutMs} ms (the timeout)`);
  const [code, msg] = errorCode(e);
  const notHttp = (says) => r.fail('EREPLY', `the reply to ${what} ${says} (Node.js's fetch: ${msg}): not an HTTP reply`,
    { cause: e });
  if (code === 'HPE_INVALID_CONSTANT' || code === 'HPE_INVALID_VERSION') {
    return notHttp('has a malformed status line (it does not begin with HTTP/x.y)');
  }
  if (code === 'HPE_INVALID_STATUS') return notHttp('has an invalid status code (not three digits from 100 to 599)');
  if (code === 'UND_ERR_HEADERS_OVERFLOW' || code === 'HPE_HEADER_OVERFLOW') {
    return r.fail('EREPLY', `the reply to ${what} has a header too long (headers over Node.js's limit, ` +
      '--max-http-header-size, 16 KiB by default): refused', { cause: e });
  }
  if (code?.startsWith('HPE_')) return notHttp('breaks HTTP/1.1\'s syntax');
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return transient('ETIMEOUT', `${what}: ${msg} (Node.js's fetch timed out)`);
  }
  return transient('ENETWORK', `${context}: ${msg}`);
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
  const clen = res.headers.get('content-length');
  if (clen !== null && Number(clen) !== b - a + 1) {  // as src/net/http_reply.c: never read on to a length it lied about
    throw r.fail('EREPLY', `the reply to ${what} says Content-Length ${clen}, its Content-Range bytes ${a}-${b} holds ` +
      `${b - a + 1}: its framing contradicts itself`);
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
