// createSession(): an ONNX Runtime session over an archive's view, ORT reading the weights itself.
import { Archive } from './archive.js';
import { isNodeJs } from './readers.js';

export const FOLDER = 'model_external_initializers_file_folder_path';

// The view's location: the archive's name when it is a plain file name, else a stand-in.
function plainName(name) {
  return /^[^/\\]+$/.test(name) && name !== '.' && name !== '..' ? name : 'model.onnxzip';
}

// A Blob's whole file in memory, every local header checked (ORT will read every entry).
async function wholeBlob(archive, signal) {
  const buf = new Uint8Array(await archive._reader.blob.arrayBuffer());
  const all = archive.entries.map((_, i) => i);
  await archive._checkLocal(all, signal, new Map(all.map((i) => {
    const e = archive.entries[i];
    return [i, buf.subarray(e.headerOffset, e.dataOffset)];
  })));
  return buf;
}

const FILL_PIECE = 8 << 20, FILL_BATCH = 32 << 20;  // fillModel's reads (a URL's requests are at most 8 MiB anyway)

// Puts into `buf`, a buffer of the file's size, at their file offsets, what ORT reads of it for
// `archive`'s model: its entry and its tensors' entries (their local headers checked in the same
// requests, and from a URL each entry's CRC-32 and XXH3 once it is all there; spans closer than `gap`
// share one, default the reader's); every other byte is left alone,
// never fetched: over a URL a package's other models are not transferred. Read at most FILL_BATCH
// bytes at a time: what one _readChecked() reads is held until it returns (a whole model at once:
// 1.08x the folder's peak memory in Chromium from a File, in batches 0.98x,
// tools/bench/bench_transformers_js.mjs, 129 MiB of weights).
export async function fillModel(archive, buf, signal, gap) {
  buf.set(archive.modelBytes(), archive._modelEntry.dataOffset);
  let batch = [], size = 0;
  const flush = async () => {
    if (batch.length) for (const [s, bytes] of await archive._readChecked(batch, signal, gap)) buf.set(bytes, s[0]);
    [batch, size] = [[], 0];
  };
  for (const [off, len] of archive._tensorSpans().sort((x, y) => x[0] - y[0])) {
    for (let at = off; at < off + len; at += FILL_PIECE) {
      const n = Math.min(FILL_PIECE, off + len - at);
      if (size + n > FILL_BATCH) await flush();
      batch.push([at, n]);
      size += n;
    }
  }
  await flush();
  // from a URL: every tensor entry's CRC-32 and XXH3, and the pins of a check made before (open with trust)
  await archive._checkFilled(buf, signal);
}

// A buffer of the file's size holding only the archive's model's bytes (fillModel), read by exact
// ranges (gap 0); every other byte zero.
async function modelFile(archive, signal) {
  const buf = new Uint8Array(archive.size);
  await fillModel(archive, buf, signal, 0);
  return buf;
}

/** What ORT is given besides the view: {location, options} (see index.d.ts createSession). */
export async function sessionPlan(ort, archive, so, signal) {
  const r = archive._reader;
  const nodeOrt = ort.env?.versions?.node != null;
  if (nodeOrt && r.kind === 'file') {
    // onnxruntime-node takes externalData only as bytes; ORT maps the file itself when told its folder
    const { dirname, basename } = await import('node:path');
    const extra = { ...so.extra, session: { ...so.extra?.session, [FOLDER]: dirname(r.realPath) } };
    await archive._checkSigned(null, { signal });  // options.trust: the file's bytes, before ORT maps it
    return { location: basename(r.realPath), options: { ...so, extra } };
  }
  let data, file = null, checkFrom = null;
  if (r.kind === 'bytes') data = checkFrom = r.bytes;
  else if (r.kind === 'url' && (archive._signed || nodeOrt || isNodeJs || archive.models.size > 0 ||
    r.fetch !== globalThis.fetch || Object.keys(r.userHeaders).length)) {
    // onnxruntime-web in Node reads a string as a path; ORT's own GET of a package's URL would transfer
    // its other models and files, and leave out the caller's fetch and headers (credentials); a signed
    // model's bytes must be the ones checked: the model's bytes are read here
    data = file = checkFrom = await modelFile(archive, signal);
  } else if (r.kind === 'file') data = r.realPath;
  else if (nodeOrt || isNodeJs) data = file = checkFrom = await wholeBlob(archive, signal);
  else data = r.kind === 'blob' ? r.blob : r.target;
  // options.trust: the model's files checked before ORT gets them, from the bytes it gets where they are
  // in memory; a path's and a Blob's are read again (ORT reads them itself)
  await archive._checkSigned(null, { buffer: checkFrom, signal });
  const location = plainName(archive.name);
  const externalData = [...(so.externalData ?? []), { path: location, data }];
  return { location, options: { ...so, externalData }, given: true, file,
    remote: typeof data === 'string' && r.kind === 'url' };
}

// The view's size threshold. ORT checks the external data of a tensor in a subgraph (an If branch's
// Constant or initializer) as a file relative to the model's folder even when that data was given
// as externalData (bytes or a URL: "should be stored in NAME, but it is not regular file",
// onnxruntime 1.30): such tensors are then inlined, with every smaller one (a view has one
// threshold, spec 16).
export function viewThreshold(archive, plan) {
  let t = 1024;
  if (!plan.given) return t;  // ORT reads the archive file itself
  for (const x of archive.tensors) {
    if (x.graphDepth > 0 && x.storage === 'entry') t = Math.max(t, x.byteLength + 1);
  }
  return t;
}

/** An InferenceSession of `ort` (onnxruntime-node or onnxruntime-web) over `archive`'s view. */
export async function createSessionOn(ort, archive, so, signal) {
  const plan = await sessionPlan(ort, archive, so, signal);
  const view = await archive.view({ location: plan.location, sizeThreshold: viewThreshold(archive, plan),
    _file: plan.file });
  const session = await ort.InferenceSession.create(view, plan.options);
  if (plan.remote) {
    // ORT fetched the file by a plain GET: the pinned file must still be the one served
    try {
      await archive._reader.read(archive.size - 1, 1);
    } catch (e) {
      await session.release?.();
      throw e;
    }
  }
  return session;
}

export { Archive };
