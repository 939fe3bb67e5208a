// transformers.js (@huggingface/transformers) from a package: the repository's files served by name.
//
// Why env.customCache: transformers.js 4.3.1 asks its cache first for every file of a model
// (utils/hub.js loadResourceFile: cache.match(localPath), then cache.match(remoteURL)), before any
// file system or network access, and stores nothing on a hit. env.fetch would not do: in Node.js
// local paths are read with fs, never fetch, and fetched files are copied into the Cache API or the
// FileCache. A hit may be a Response (its bytes) or, in Node.js, a path string.
//
// What is served: a plain file (config.json, tokenizer.json...) as its bytes; a model
// (onnx/model.onnx) as the archive's view for that model, whose large tensors reference the archive
// file by offset under one name, the "location"; that file's bytes reach ONNX Runtime by the
// session options of pipelineOptions(), or by "onnx/model.onnx_data" when the repository's config
// makes transformers.js ask for data files (use_external_data_format):
//  - Node.js, a file: the location is the archive's own name, its folder the session config entry
//    session.model_external_initializers_file_folder_path: onnxruntime-node reads the file itself
//    (no copy in JavaScript);
//  - otherwise (browsers, Node.js bytes/Blob/URL): externalData {path: location, data} with data an
//    archive-sized Uint8Array: the source's own bytes for an in-memory source (no copy), else a
//    buffer into which each model's bytes are read when transformers.js asks for that model (only
//    that model's ranges are fetched; the rest is never written). ORT web copies tensors from it
//    into its heap, as it does from a folder's model.onnx or .onnx_data.
import { OnnxzipError } from './errors.js';
import { isNodeJs } from './readers.js';
import { FOLDER, fillModel, viewThreshold } from './session.js';

// A Response whose body is `load()`'s bytes (read on the first use, once), or fails with its error, and
// never copies them: the Response constructor copies a body it is given (an archive-sized buffer: 1.5x
// the weights' size more at the peak in Chromium, measured), so this one has none and its readers hand
// out the bytes (arrayBuffer(): their own buffer when they fill it; body: a stream of one chunk, for
// transformers.js's progress_callback). `size` (null: unknown) is its content-length: transformers.js
// asks match() for sizes too (progress totals), which then reads nothing. An error rejects every read:
// transformers.js swallows what match() throws and goes on as if the file were absent, but not a failed
// read of what match() returned.
class Served extends Response {
  #load; #got = null;
  constructor(size, load) {
    super(null, { status: 200, headers: size === null ? {} : { 'content-length': String(size) } });
    this.#load = load;
  }
  _bytes() {
    if (!this.#got) {
      this.#got = this.#load();
      // kept for every reader (a clone reads through it): its failure is each reader's, never unhandled
      this.#got.catch(() => {});
    }
    return this.#got;
  }
  get body() {
    return new ReadableStream({ start: async (c) => {
      try { c.enqueue(await this._bytes()); c.close(); } catch (e) { c.error(e); }
    } });
  }
  get bodyUsed() { return false; }
  async arrayBuffer() {
    const b = await this._bytes();
    return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer;
  }
  async bytes() { return new Uint8Array(await this.arrayBuffer()); }
  async blob() { return new Blob([await this._bytes()]); }
  async text() { return new TextDecoder().decode(await this._bytes()); }
  async json() { return JSON.parse(await this.text()); }
  clone() { return new Served(this.headers.has('content-length') ? Number(this.headers.get('content-length')) : null, () => this._bytes()); }
}

const served = (bytes) => new Served(bytes.byteLength, () => Promise.resolve(bytes));
const failed = (error) => new Served(null, () => Promise.reject(error));

// The URL string of a fetch() input (a string, a URL or a Request).
const urlOf = (input) => (typeof input === 'string' ? input : input instanceof URL ? input.href : String(input?.url ?? input));

// [from, to] of a fetch's single "Range: bytes=A-B" (or "A-", "-N") within `size` bytes, null without one.
function rangeOf(init, input, size) {
  const h = new Headers(init?.headers ?? (typeof input === 'object' ? input?.headers : undefined)).get('range');
  const m = /^bytes=(\d*)-(\d*)$/.exec(h ?? '');
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') return [Math.max(0, size - Number(m[2])), size - 1];
  return [Number(m[1]), m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)];
}

// The model id: "onnxzip/" and the archive's name without its extension, in the characters a Hub id has.
function defaultId(name) {
  const stem = name.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '');
  return `onnxzip/${stem || 'package'}`;
}

// [folder, name] of a path ("/"-separated; a Node.js file's real path may also use "\\")
function splitPath(p) {
  const at = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return [p.slice(0, Math.max(at, 0)) || p.slice(0, at + 1), p.slice(at + 1)];
}

/** A package serving its repository's files to transformers.js (index.d.ts TransformersPackage). */
export class TransformersPackage {
  #archive; #openModel; #views = new Map(); #files = new Map(); #data = null; #next = null; #env = null; #saved = null;
  #nodeFile;
  constructor(archive, openModel, id) {
    if (archive.models.size === 0) {
      throw new OnnxzipError('EINVAL', `${archive._reader.display}: a single model, not a package: transformers.js ` +
        'needs a repository (config.json, tokenizer files, onnx/...): pack its folder with `onnxzip pack DIR`');
    }
    this.#archive = archive;
    this.#openModel = openModel;
    this.#nodeFile = isNodeJs && archive._reader.kind === 'file';
    this.id = id ?? defaultId(archive.name);
    this.archive = archive;
  }

  // The name a model's view gives the archive file (see the top of this file).
  #location(model) { return this.#nodeFile ? splitPath(this.#archive._reader.realPath)[1] : `${splitPath(model)[1]}_data`; }

  // The archive-sized buffer of externalData: the source's bytes, or one filled model by model.
  #buffer() {
    const r = this.#archive._reader;
    return r.kind === 'bytes' ? r.bytes : (this.#data ??= new Uint8Array(this.#archive.size));
  }

  /** ONNX Runtime session options for this package's models: `so` (not modified) plus the archive. */
  sessionOptions(so = {}) {
    if (typeof so !== 'object' || so === null) throw new TypeError('session options must be an object');
    if (this.#nodeFile) {
      const [folder] = splitPath(this.#archive._reader.realPath);
      return { ...so, extra: { ...so.extra, session: { ...so.extra?.session, [FOLDER]: folder } } };
    }
    const data = this.#buffer();
    const names = new Set([...this.#archive.models.keys()].map((m) => this.#location(m)));
    return { ...so, externalData: [...(so.externalData ?? []), ...[...names].map((path) => ({ path, data }))] };
  }

  /** pipeline()/from_pretrained() options: `o` with local_files_only (a file the package lacks is
   * never looked for elsewhere) and sessionOptions(o.session_options). */
  pipelineOptions(o = {}) {
    if (typeof o !== 'object' || o === null) throw new TypeError('options must be an object');
    return { ...o, local_files_only: true, session_options: this.sessionOptions(o.session_options ?? {}) };
  }

  /** Makes this package env.customCache (env.useCustomCache = true; a custom cache set before
   * answers what is not this package's), sets env.allowLocalModels (browsers default to false, which
   * refuses pipelineOptions' local_files_only) and wraps env.fetch so that a request for this
   * package's id is answered here, never sent (see #fetch). close() puts all three back. Returns this. */
  install(env) {
    if (typeof env !== 'object' || env === null || !('customCache' in env)) {
      throw new TypeError("env must be transformers.js's env (import { env } from '@huggingface/transformers')");
    }
    if (env.customCache === this) return this;
    this.#next = env.useCustomCache ? env.customCache : null;
    this.#env = env;
    const next = env.fetch;
    const own = (input, init) => (this.#pathOf(urlOf(input)) === null ? next(input, init) : this.#fetch(input, init));
    this.#saved = { fetch: next, own, allowLocalModels: env.allowLocalModels };
    env.customCache = this;
    env.useCustomCache = true;
    env.allowLocalModels = true;
    env.fetch = own;
    return this;
  }

  // env.fetch for a URL of this package's id. transformers.js fetches such URLs although the cache has
  // the file, or the package lacks it: a file's size for progress totals (utils/model_registry/
  // get_file_metadata.js, "Range: bytes=0-0" to env.remoteHost: it ignores local_files_only, and counts
  // no cache hit that is a path, as a Node.js file's data file is), whether optional files exist
  // (tokenizer_config.json, preprocessor_config.json), and in browsers a file the cache lacks from
  // env.localModelPath. Answered here as a server would: the file (a Range honoured), or 404.
  async #fetch(input, init) {
    const path = this.#pathOf(urlOf(input));
    let got;
    try {
      got = await this.#serve(path);
    } catch (e) {
      // as a server answers a file it cannot give: transformers.js does not await every fetch it starts
      // (sizes for its progress totals), so a rejection here went unhandled and ended the process; the
      // error itself reaches the caller through match(), which the model's load awaits
      return new Response(String(e?.message ?? e), { status: 500, statusText: 'Internal Server Error' });
    }
    if (got === undefined) return new Response(null, { status: 404, statusText: 'Not Found' });
    const r = this.#archive._reader;
    // a Node.js file's data file: served as a path, its bytes are the archive's
    const [size, read] = typeof got === 'string' ? [r.size, (a, n) => r.read(a, n)]
      : [Number(got.headers.get('content-length')), async (a, n) => (await got._bytes()).subarray(a, a + n)];
    const span = rangeOf(init, input, size);
    if (span && (span[0] >= size || span[1] < span[0])) {
      return new Response(null, { status: 416, headers: { 'content-range': `bytes */${size}` } });
    }
    const [a, b] = span ?? [0, size - 1];
    const headers = { 'content-length': String(b - a + 1), ...(span ? { 'content-range': `bytes ${a}-${b}/${size}` } : {}) };
    return new Response(await read(a, b - a + 1), { status: span ? 206 : 200, headers });
  }

  // The package path `key` names (transformers.js asks for "LOCALMODELPATH/ID/FILE", "ID/FILE" or
  // "REMOTEHOST/ID/resolve/REVISION/FILE"), or null for another model's file.
  #pathOf(key) {
    const s = String(key), marker = `${this.id}/`;
    const at = s.startsWith(marker) ? 0 : s.indexOf(`/${marker}`) + 1;
    if (at <= 0 && !s.startsWith(marker)) return null;
    let rest = s.slice(at + marker.length).replace(/^(\.?\/)+/, '');
    const resolved = /^resolve\/[^/]+\/(.*)$/.exec(rest);
    if (resolved && !this.#has(rest)) rest = resolved[1];
    return rest;
  }

  #has(p) { return this.#archive.files.has(p) || this.#archive.models.has(p); }

  /** Cache API match(): this package's file as a Response, else what the next cache says (undefined
   * when none). A failed read gives a Response whose arrayBuffer() rejects with the error. */
  async match(request) {
    const path = this.#pathOf(request);
    if (path === null) return this.#next?.match(request);
    try {
      return await this.#serve(path);
    } catch (e) {
      return failed(e);
    }
  }

  /** Cache API put(): passed to the next cache (nothing of this package is ever put). */
  async put(request, response, progress) { return this.#next?.put(request, response, progress); }

  async #serve(path) {
    const a = this.#archive;
    if (a.files.has(path)) return new Served(a.files.get(path).size, () => this.#file(path));
    if (a.models.has(path)) return served(await this.#view(path));
    const chunk = /^(.*)_data(?:_(\d+))?$/.exec(path);
    if (!chunk || !a.models.has(chunk[1])) return undefined;
    // transformers.js asks for data files when the config says the model has them: the view's
    // location is then the first one's name; the others are never read (one byte: onnxruntime-node
    // refuses an empty buffer, "contains null pointers")
    try {
      await this.#view(chunk[1]);
    } catch {
      // The model's own request (asked first, awaited after its data files) fails with the error.
      // transformers.js loads data files in `new Promise(async ...)`, where a failure is never
      // settled: the pipeline would hang with an unhandled rejection. One byte, nothing of the package.
      return served(new Uint8Array(1));
    }
    if (this.#nodeFile) return a._reader.realPath;  // onnxruntime-node reads the folder's file itself
    return served(chunk[2] ? new Uint8Array(1) : this.#buffer());
  }

  // A plain file's bytes, read once (transformers.js asks for config.json and tokenizer_config.json
  // several times); a failed read may be tried again.
  #file(path) {
    let p = this.#files.get(path);
    if (!p) {
      p = this.#archive.readFile(path);
      this.#files.set(path, p);
      p.catch(() => this.#files.delete(path));
    }
    return p;
  }

  // A model's view (memoized), its bytes read into the externalData buffer first.
  #view(model) {
    let p = this.#views.get(model);
    if (!p) {
      p = this.#makeView(model);
      this.#views.set(model, p);
      p.catch(() => this.#views.delete(model));  // a failed read may be tried again
    }
    return p;
  }

  async #makeView(model) {
    const held = this.#archive.modelPath === model;
    const a = held ? this.#archive : await this.#openModel(model);
    try {
      // the view's inline bytes are taken from the buffer fillModel filled (headers checked), not read again
      const filled = !this.#nodeFile && this.#archive._reader.kind !== 'bytes';
      if (filled) await fillModel(a, this.#buffer());
      // options.trust: the model's files checked before its view is served, from the bytes ORT will get
      // (a Node.js file's read again: ORT reads it itself)
      await a._checkSigned(model, { buffer: this.#nodeFile ? null : this.#buffer() });
      return await a.view({ location: this.#location(model), sizeThreshold: viewThreshold(a, { given: !this.#nodeFile }),
        _file: filled ? this.#buffer() : null });
    } finally {
      if (!held) await a.close();
    }
  }

  /** Closes the archive; an install()ed package gives env.customCache back to the cache before it, and
   * env.allowLocalModels and env.fetch their values before install() (env.fetch if still its own). */
  async close() {
    const env = this.#env;
    if (env?.customCache === this) {
      env.customCache = this.#next;
      env.useCustomCache = this.#next !== null;
      env.allowLocalModels = this.#saved.allowLocalModels;
      if (env.fetch === this.#saved.own) env.fetch = this.#saved.fetch;
    }
    this.#env = this.#saved = null;
    this.#views.clear();
    this.#files.clear();
    this.#data = null;
    await this.#archive.close();
  }
}
