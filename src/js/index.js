// onnxzip for JavaScript: open an onnxzip archive (URL, Blob/File, bytes, Node path), read its tensors,
// build its view and run it with ONNX Runtime. The rules are the C library's, compiled to WebAssembly.
import { Archive, openArchive } from './lib/archive.js';
import { OnnxzipError } from './lib/errors.js';
import { keepTail, urlReader } from './lib/http.js';
import { blobReader, bytesReader, fileReader, isNodeJs } from './lib/readers.js';
import { createSessionOn } from './lib/session.js';
import { TransformersPackage } from './lib/transformers.js';
import { openSigned, trustOf } from './lib/trust.js';

export { Archive, OnnxzipError, TransformersPackage };

function checkOptions(o) {
  if (o === undefined || o === null) return {};
  if (typeof o !== 'object') throw new TypeError('options must be an object');
  const num = (k, min) => {
    if (o[k] === undefined) return;
    if (typeof o[k] !== 'number') throw new TypeError(`options.${k} must be a number`);
    if (!Number.isSafeInteger(o[k]) || o[k] < min) throw new RangeError(`options.${k} must be an integer >= ${min}, not ${o[k]}`);
  };
  num('tailBytes', 1); num('retries', 0); num('backoffMs', 0); num('timeoutMs', 1);
  if (o.name !== undefined && typeof o.name !== 'string') throw new TypeError('options.name must be a string');
  if (o.model !== undefined && o.model !== null) {
    if (typeof o.model !== 'string') throw new TypeError('options.model must be a string (a model path of the package)');
    // "" is the C library's ONNXZIP_MODEL_NONE (members only), which this package does not offer
    if (o.model === '' || o.model.includes('\0')) throw new RangeError('options.model must be a model path (not empty, no NUL)');
  }
  if (o.fetch !== undefined && typeof o.fetch !== 'function') throw new TypeError('options.fetch must be a function');
  if (o.headers !== undefined && (typeof o.headers !== 'object' || o.headers === null)) {
    throw new TypeError('options.headers must be an object');
  }
  if (o.signal !== undefined && !(typeof o.signal === 'object' && o.signal !== null && 'aborted' in o.signal)) {
    throw new TypeError('options.signal must be an AbortSignal');
  }
  if (o.trust !== undefined) trustOf(o.trust);
  return o;
}

// A string source: an absolute http(s) URL, a file: URL or (Node) a path, else (browser) a relative URL.
// Any other "scheme:" prefix (two or more letters: "C:\\x" is a Windows path) is refused rather than
// read as a path or a relative URL: "s3://b/k" is no file of that name ("./s3:x" is).
function stringSource(s) {
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(s)?.[1].toLowerCase();
  if (scheme === 'http' || scheme === 'https' || scheme === 'file') return new URL(s);
  if (scheme) unsupportedScheme(scheme);
  if (isNodeJs) return { path: s };
  return new URL(s, globalThis.document?.baseURI ?? globalThis.location?.href);
}

function unsupportedScheme(scheme) {
  throw new TypeError(`unsupported URL scheme ${scheme}: (onnxzip opens http:, https: and file: URLs, ` +
    'paths (Node.js) and in-memory sources; a relative path that starts with "NAME:" can be written ./NAME:...)');
}

async function readerFor(source, o) {
  if (typeof source === 'string') source = stringSource(source);
  if (source instanceof URL) {
    if (source.protocol === 'http:' || source.protocol === 'https:') return urlReader(source, o);
    if (source.protocol !== 'file:') unsupportedScheme(source.protocol.slice(0, -1));
    if (!isNodeJs) throw new TypeError('a file: URL can be opened in Node.js only');
    const { fileURLToPath } = await import('node:url');
    source = { path: fileURLToPath(source) };
  }
  if (source?.path !== undefined) return [await fileReader(source.path, o.name), null];
  if (typeof Blob !== 'undefined' && source instanceof Blob) return [blobReader(source, o.name), null];
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && source instanceof SharedArrayBuffer)) {
    return [bytesReader(new Uint8Array(source), o.name), null];
  }
  if (ArrayBuffer.isView(source)) {
    return [bytesReader(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), o.name), null];
  }
  throw new TypeError('source must be a URL, a path, a Blob/File, an ArrayBuffer or an ArrayBufferView, not ' +
    (source === null ? 'null' : typeof source));
}

/**
 * Opens an onnxzip archive: checks its end records, directory, model and (except for URLs, whose
 * entries are checked on their first read) every local header, as the C library's open does.
 * @param {string|URL|Blob|ArrayBuffer|ArrayBufferView} source
 * @param {import('./index.d.ts').OpenOptions} [options]
 * @returns {Promise<Archive>}
 */
export async function open(source, options) {
  const o = checkOptions(options);
  const [reader, tail] = await readerFor(source, o);
  return openOn(reader, tail, o);
}

// open() whose model files, with options.trust, the caller checks (createSession: from the bytes ORT gets).
async function openDeferred(source, options) {
  const o = checkOptions(options);
  const [reader, tail] = await readerFor(source, o);
  return openOn(reader, tail, o, true);
}

// open() on a reader (`tail`: a URL's first reply); the reader is closed when the open fails. With
// options.trust the signature and the package's file names are checked, then (unless `deferModel`: the
// caller checks the bytes it hands on itself) the held model's files.
async function openOn(reader, tail, o, deferModel = false) {
  let archive;
  try {
    archive = await openArchive(reader, { tailBytes: o.tailBytes, tail, signal: o.signal, model: o.model });
  } catch (e) {
    await reader.close();
    throw e;
  }
  try {
    if (o.trust !== undefined) {
      // names only: a URL opened on one model reads no other model's entry
      const names = (await archive._plan(null, o.signal, { namesOnly: true })).map((f) => f.path);
      archive._signed = await openSigned(archive, trustOf(o.trust), names);
      if (!deferModel) await archive._checkSigned(null, { signal: o.signal });
    }
    if (o.verify) await archive.verify({ signal: o.signal });
  } catch (e) {
    await archive.close();
    throw e;
  }
  return archive;
}

/**
 * An ONNX Runtime InferenceSession (onnxruntime-node or onnxruntime-web, told apart by
 * `ort.env.versions`) over the archive's view; ORT reads the weights itself (see index.d.ts).
 * `sessionOptions` is never modified.
 */
export async function createSession(ort, source, sessionOptions, options) {
  if (typeof ort?.InferenceSession?.create !== 'function') {
    throw new TypeError('ort must be the onnxruntime-node or onnxruntime-web module (with InferenceSession.create)');
  }
  const so = sessionOptions ?? {};
  if (typeof so !== 'object') throw new TypeError('sessionOptions must be an object');
  if (source instanceof Archive) {
    if (options?.trust !== undefined) {
      throw new TypeError('options.trust: an Archive given is checked by open(source, { trust }), not here');
    }
    const want = options?.model;
    if (want != null && want !== source.modelPath) {
      throw new RangeError(`options.model '${want}': the Archive given holds ${source.modelPath === null ? 'a single ' +
        'model' : `model '${source.modelPath}'`}; open(source, { model }) opens another`);
    }
    return createSessionOn(ort, source, so, options?.signal);
  }
  const archive = await openDeferred(source, options);
  try {
    return await createSessionOn(ort, archive, so, options?.signal);
  } finally {
    await archive.close();
  }
}

/**
 * A package (format 1.2) as a transformers.js model source (see index.d.ts and lib/transformers.js):
 * `options` are open()'s (options.model excepted) and `id`, the model id it answers to.
 */
export async function transformersModel(source, options) {
  const { id, ...o } = options ?? {};
  if (id !== undefined && (typeof id !== 'string' || !/^[^/\s]+(\/[^/\s]+)?$/.test(id))) {
    throw new TypeError(`options.id must be a model id such as "user/name" (no spaces, at most one /), not ${JSON.stringify(id)}`);
  }
  if (o.model != null) throw new TypeError('options.model: transformers.js chooses the models of the package itself');
  checkOptions(o);
  const [reader, tail] = await readerFor(source, o);
  // a URL's last bytes are kept, and every model opens over this one reader (only the package closes
  // it): each byte is fetched once, from the one pinned file
  const kept = tail ? keepTail(reader, tail) : reader;
  const archive = await openOn(kept, tail, o, true);
  const shared = Object.create(kept, { close: { value: () => {} } });
  const openModel = async (model) => {
    const a = await openArchive(shared, { tailBytes: o.tailBytes, signal: o.signal, model });
    a._signed = archive._signed;  // one statement; a file checked once is not hashed again
    return a;
  };
  try {
    return new TransformersPackage(archive, openModel, id);
  } catch (e) {
    await archive.close();
    throw e;
  }
}
