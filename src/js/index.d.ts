// Types of the onnxzip package (hand-written; index.js is the implementation).

/** Where an archive is read from. A string is an absolute http(s) URL, a `file:` URL, or (Node.js)
 * a file path; in a browser, a URL relative to the document. */
export type Source = string | URL | Blob | ArrayBuffer | ArrayBufferView;

export interface OpenOptions {
  /** Aborts the open (and, for createSession, reading the file). */
  signal?: AbortSignal;
  /** The fetch used for URLs (default: globalThis.fetch). */
  fetch?: typeof fetch;
  /** Extra request headers for URLs (e.g. Authorization). */
  headers?: Record<string, string>;
  /** How many bytes the first read takes from the file's end (default 65536). */
  tailBytes?: number;
  /** Retries of a URL request after 5xx, 408, 429 or a network error (default 4). */
  retries?: number;
  /** The first retry's delay in ms, doubling each time (default 250). */
  backoffMs?: number;
  /** A URL request's timeout in ms (default 30000, the C library's stall timeout): its reply's headers
   * must all be there within it, then each byte of its body must come within it of the last; else the
   * attempt fails (retried, then ONNXZIP_ETIMEOUT). */
  timeoutMs?: number;
  /** The archive's file name (Archive.name; the default location of its view), also how messages name
   * it. Default: a path's or URL's last segment, a File's name; else "model.onnxzip", and messages say
   * "the bytes given" or "the Blob given". */
  name?: string;
  /** Verify the whole file (Archive.verify) before open resolves. */
  verify?: boolean;
  /** The model of a package to open, by its path (a key of Archive.models, e.g.
   * "onnx/model_fp16.onnx"); tensors, modelBytes(), view() and createSession are then that model's.
   * Default: the package's default model. A path the package has no model of fails with
   * ONNXZIP_ENOTFOUND; any model given for an archive that is no package, with ONNXZIP_EINVAL; ""
   * or a NUL character is a RangeError. */
  model?: string;
  /** Check the publisher's OpenSSF Model Signing signature (model_signing 1.1.1's bundle) before any
   * byte is used: the signature (the package's model.sig, or trust.signature), the package's file names
   * against the signed statement, then the SHA-256 of the held model's files as `onnxzip unpack` writes
   * them (open; createSession and transformersModel check them from the bytes ONNX Runtime gets) and of
   * each plain file readFile() hands out. From a URL, a tensor read after open (tensorData, view,
   * createSession over the Archive) is hashed again and compared with what the check hashed. Failures: ONNXZIP_EUNSIGNED, ONNXZIP_ESIGNATURE,
   * ONNXZIP_EBUNDLE, ONNXZIP_EMISMATCH (naming the file), ONNXZIP_EUNSUPPORTED (keyless Sigstore
   * bundles; certificate chains in browsers; no WebCrypto), ONNXZIP_ELIMIT (a file over
   * 2 GiB in a browser, which hashes a file in one piece). */
  trust?: Trust;
}

/** Who may have signed: PEM text or its bytes. At least one of publicKey and certificateChain. */
export interface Trust {
  /** Trusted EC public key(s) (P-256, P-384, P-521; PEM "PUBLIC KEY"). */
  publicKey?: string | ArrayBuffer | ArrayBufferView | Array<string | ArrayBuffer | ArrayBufferView>;
  /** Trusted root certificate(s) (PEM "CERTIFICATE"): the bundle's chain must lead to one, every
   * certificate valid now, the leaf with KeyUsage digitalSignature or ExtendedKeyUsage codeSigning.
   * Node.js only (node:crypto's X509Certificate). */
  certificateChain?: string | ArrayBuffer | ArrayBufferView | Array<string | ArrayBuffer | ArrayBufferView>;
  /** A detached signature (the bundle's JSON), used instead of the package's model.sig; required for a
   * single-model archive (whose one resource, ".", is the archive file). */
  signature?: string | ArrayBuffer | ArrayBufferView;
}

/** A zip entry (central directory order). Offsets are absolute file offsets. */
export interface Entry {
  readonly name: string;
  readonly headerOffset: number;
  readonly dataOffset: number;
  readonly size: number;
  readonly crc32: number;
  /** XXH3-64 digest as 16 hex digits, or null when the archive records none. */
  readonly xxh3: string | null;
  /** The largest power of two (<= 65536) dividing dataOffset. */
  readonly alignment: number;
}

export type Storage = 'entry' | 'inline' | 'typed' | (string & {});

/** A tensor of the model (initializers, Constant attributes, ...), as `onnxzip ls --json` lists it. */
export interface Tensor {
  /** The tensor's name ("" for unnamed attribute tensors). */
  readonly name: string;
  /** Unique key: the name when not empty, else e.g. "node#0/value". */
  readonly key: string;
  /** ONNX TensorProto.DataType number. */
  readonly dataType: number;
  /** Its name, e.g. "FLOAT". */
  readonly dtype: string;
  readonly dims: readonly number[];
  /** "entry": its own zip entry; "inline": raw bytes inside the model; "typed": typed fields. */
  readonly storage: Storage;
  readonly kind: string;
  /** The zip entry holding it (storage "entry"), else null. */
  readonly entry: string | null;
  /** Absolute file offset of its bytes (storage "entry" and "inline"). */
  readonly offset: number;
  readonly byteLength: number;
  /** The largest power of two (<= 65536) dividing `offset` (storage "entry" and "inline"); 0 for
   * "typed": the file's, as `onnxzip ls` reports it from every source (the C struct's
   * onnxzip_tensor.alignment is that of the bytes' address in memory). */
  readonly alignment: number;
  readonly graphDepth: number;
}

export interface ViewOptions {
  /** Tensors smaller than this many bytes are copied into the view (default 1024). */
  sizeThreshold?: number;
  /** The archive's file name the view references (default Archive.name; a plain name). */
  location?: string;
}

/** A model of a package (format 1.2, spec section 19). */
export interface PackageModel {
  /** Its path in the repository folder, "/"-separated (e.g. "onnx/model.onnx"). */
  readonly path: string;
  /** Its serialized ModelProto's bytes as stored (the weights not counted). */
  readonly size: number;
  /** Whether it is the package's default model (what open() holds without options.model). */
  readonly default: boolean;
}

/** A plain file of a package (tokenizer, configuration, ...). */
export interface PackageFile {
  /** Its path in the repository folder, "/"-separated (e.g. "tokenizer.json"). */
  readonly path: string;
  /** Its size in bytes. */
  readonly size: number;
}

export interface ReadFileOptions {
  signal?: AbortSignal;
}

export interface VerifyOptions {
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

export declare class Archive {
  private constructor();
  readonly name: string;
  readonly size: number;
  readonly entries: readonly Entry[];
  readonly tensors: readonly Tensor[];
  /** A package's models by path, in the manifest's order; empty for an archive that is no package. */
  readonly models: ReadonlyMap<string, PackageModel>;
  /** A package's plain files by path, in the manifest's order; empty for an archive that is no package. */
  readonly files: ReadonlyMap<string, PackageFile>;
  /** The path of the package's model this Archive holds (tensors, modelBytes, view), or null when the
   * archive is no package. */
  readonly modelPath: string | null;
  /** The bytes of a package's plain file (a key of `files`), read in one range read through the
   * archive's source (its local header checked; from a URL its CRC-32 and XXH3 too: ONNXZIP_ECRC /
   * ONNXZIP_EDIGEST when the bytes were changed on the way); shares memory with an in-memory source:
   * don't modify it. A path that is no file of the package (a model's too) fails with ONNXZIP_ENOTFOUND; a
   * file larger than the engine's largest typed array (V8: 4 GiB or less) with ONNXZIP_ELIMIT. */
  readFile(path: string, options?: ReadFileOptions): Promise<Uint8Array>;
  /** The tensor with this key or name. */
  tensor(nameOrKey: string): Tensor | undefined;
  /** The model's bytes (__MODEL_PROTO, or the entry of the package's model it holds; from a URL checked
   * against their CRC-32 and XXH3 at open): the same array on each call; don't modify it. */
  modelBytes(): Uint8Array;
  /** The view (spec 16): a small ONNX model whose large tensors reference the archive by offset. */
  view(options?: ViewOptions): Promise<Uint8Array>;
  /** A tensor's raw bytes (from a URL, an entry of its own checked against its CRC-32 and XXH3); shares memory
   * with an in-memory source (and with modelBytes() for "inline" tensors): don't modify it. "typed"
   * tensors fail with ONNXZIP_EUNSUPPORTED, an unknown name with ONNXZIP_ENOTFOUND. */
  tensorData(nameOrKey: string): Promise<Uint8Array>;
  /** Reads the whole file in order, checking every CRC-32 and XXH3 digest and the model. */
  verify(options?: VerifyOptions): Promise<void>;
  /** Frees it (and closes a Node.js file). */
  close(): void | Promise<void>;
}

export type Status =
  | 'ONNXZIP_EINVAL' | 'ONNXZIP_ENOMEM' | 'ONNXZIP_EIO' | 'ONNXZIP_ENOTZIP' | 'ONNXZIP_ENOTONNXZIP'
  | 'ONNXZIP_ETRUNC' | 'ONNXZIP_EEOCD' | 'ONNXZIP_EZIP64' | 'ONNXZIP_ECDIR' | 'ONNXZIP_ELOCAL'
  | 'ONNXZIP_EBOUNDS' | 'ONNXZIP_EOVERLAP' | 'ONNXZIP_EMETHOD' | 'ONNXZIP_EFLAGS' | 'ONNXZIP_EALIGN'
  | 'ONNXZIP_ENAME' | 'ONNXZIP_EDUPNAME' | 'ONNXZIP_ENOMODEL' | 'ONNXZIP_EMODELPOS' | 'ONNXZIP_EPROTO'
  | 'ONNXZIP_EREF' | 'ONNXZIP_ERANGE' | 'ONNXZIP_ESIZE' | 'ONNXZIP_ECRC' | 'ONNXZIP_EDIGEST'
  | 'ONNXZIP_ELIMIT' | 'ONNXZIP_ENOTFOUND' | 'ONNXZIP_EDTYPE' | 'ONNXZIP_EUNSUPPORTED' | 'ONNXZIP_EPATH'
  | 'ONNXZIP_EBUSY' | 'ONNXZIP_ESAMEFILE' | 'ONNXZIP_ENOTREG' | 'ONNXZIP_ESTALE' | 'ONNXZIP_ENETWORK'
  | 'ONNXZIP_ETIMEOUT' | 'ONNXZIP_EHTTP' | 'ONNXZIP_ENORANGE' | 'ONNXZIP_EREPLY' | 'ONNXZIP_ECHANGED'
  | 'ONNXZIP_ECANCELED' | 'ONNXZIP_EPACKAGE' | 'ONNXZIP_EUNSIGNED' | 'ONNXZIP_ESIGNATURE' | 'ONNXZIP_EBUNDLE'
  | 'ONNXZIP_EMISMATCH';

/** Every failure of onnxzip (bad arguments are TypeError/RangeError instead). */
export declare class OnnxzipError extends Error {
  readonly name: 'OnnxzipError';
  /** E.g. "ONNXZIP_ETRUNC". */
  readonly status: Status;
  /** The C library's status number (e.g. -6). */
  readonly code: number;
  /** The file offset the failure is at, when known. */
  readonly offset?: number;
  /** The URL (without query, fragment and user:password) of a URL source. */
  readonly url?: string;
  /** The path of a Node.js file source. */
  readonly path?: string;
  /** A failed system call's errno (negative, as in Node.js) and name; `cause` is Node's error. */
  readonly errno?: number;
  readonly syscall?: string;
  /** The HTTP status of a refused request. */
  readonly httpStatus?: number;
}

/** Opens an archive, checking it as the C library's open does. */
export declare function open(source: Source, options?: OpenOptions): Promise<Archive>;

/** The parts of onnxruntime-node / onnxruntime-web createSession uses. */
export interface OrtModule<S, O> {
  readonly env: { readonly versions?: { readonly node?: string; readonly web?: string } };
  readonly InferenceSession: { create(model: Uint8Array, options?: O): Promise<S> };
}

/**
 * An ONNX Runtime session over the archive's view, ORT reading the weights itself:
 * onnxruntime-node with a file: the session config entry
 * session.model_external_initializers_file_folder_path (ORT maps the file);
 * onnxruntime-web in a browser: externalData {path, data} with data the URL (ORT fetches it by a
 * plain GET; the file is checked against the pinned ETag afterwards), the Blob, or the bytes;
 * otherwise the bytes: a Blob's read whole; a URL's in Node, of a package, or
 * opened with `fetch` or `headers` (which ORT's GET would not carry): the model's entry and its
 * tensors' alone, in range requests (the package's other models are not transferred), in a
 * buffer of the file's size, their local headers checked and each entry's CRC-32 and XXH3
 * (ONNXZIP_ECRC / ONNXZIP_EDIGEST: changed on the way). `sessionOptions` is
 * copied, never modified. A source that is an Archive stays open; any other is closed after.
 * A package's model other than the default: `options.model` (or an Archive opened with it).
 */
export declare function createSession<S, O extends object>(
  ort: OrtModule<S, O>, source: Source | Archive, sessionOptions?: O, options?: OpenOptions): Promise<S>;

/** The parts of transformers.js's `env` (import { env } from '@huggingface/transformers') install() sets. */
export interface TransformersEnv {
  useCustomCache: boolean;
  customCache: unknown;
  allowLocalModels: boolean;
  fetch: (input: string | URL, init?: any) => Promise<any>;
}

export interface TransformersModelOptions extends Omit<OpenOptions, 'model'> {
  /** The model id the package answers to in pipeline()/from_pretrained() (default "onnxzip/" and the
   * archive's name without extension, e.g. "onnxzip/bert" for bert.onnxzip). */
  id?: string;
}

/**
 * A package (format 1.2) serving its repository's files to transformers.js (@huggingface/transformers
 * 4.x) as its env.customCache: plain files as their bytes, each model (onnx/model.onnx...) as its
 * view, whose weights reach ONNX Runtime through pipelineOptions()' session options: in Node.js from a
 * path, the archive file itself (onnxruntime-node reads it; no copy in JavaScript); otherwise an
 * archive-sized buffer (an in-memory source's own bytes, else filled with each model's bytes when
 * transformers.js asks for that model: only those ranges are read). A repository whose config asks
 * for data files (transformers.js_config.use_external_data_format) gets them from the same buffer.
 */
export declare class TransformersPackage {
  private constructor();
  /** The model id to give pipeline() and from_pretrained(). */
  readonly id: string;
  /** The package (the Archive of its default model; models and files list what it serves). */
  readonly archive: Archive;
  /** Sets env.customCache to this package and env.useCustomCache = true (a custom cache set before
   * answers for other models), env.allowLocalModels = true (a browser's default, false, refuses
   * pipelineOptions()' local_files_only) and wraps env.fetch: a request for a file of this package's
   * id (transformers.js asks the Hub for files' sizes when given a progress_callback, and whether
   * optional files exist, whatever local_files_only says) is answered by the package (a file it lacks:
   * 404), never sent. Returns this. */
  install(env: TransformersEnv): this;
  /** pipeline()/from_pretrained() options: `options` (not modified) with local_files_only: true (a
   * file the package lacks is never fetched from the Hub) and session_options from sessionOptions(). */
  pipelineOptions<const O extends Record<string, any>>(options?: O): O & { local_files_only: true; session_options: object };
  /** ONNX Runtime session options with what the views need (externalData, or in Node.js from a path
   * the session config entry session.model_external_initializers_file_folder_path). */
  sessionOptions<S extends object>(sessionOptions?: S): S;
  /** The Cache API's match(): a file of this package as a Response (its arrayBuffer() rejecting with
   * an OnnxzipError when reading it fails), a model as its view; else the cache installed before. */
  match(request: string): Promise<Response | string | undefined>;
  /** The Cache API's put(): passed to the cache installed before (nothing of the package is put). */
  put(request: string, response: Response, progress?: unknown): Promise<void>;
  /** Closes the archive; an installed package gives env.customCache back to the cache before it, and
   * env.allowLocalModels and env.fetch the values they had before install(). */
  close(): Promise<void>;
}

/** Opens a package for transformers.js (see TransformersPackage): a URL, a Blob/File, bytes or
 * (Node.js) a path, as open() takes them. A single-model archive fails with ONNXZIP_EINVAL. */
export declare function transformersModel(source: Source, options?: TransformersModelOptions): Promise<TransformersPackage>;
