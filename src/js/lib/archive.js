// Archive: an opened onnxzip archive over a reader (lib/readers.js, lib/http.js).
import { OnnxzipError, ioError } from './errors.js';
import { native } from './native.js';
import { Pins, entryHasher } from './pins.js';
import { sha256Hex } from './trust_crypto.js';
import { throwIfAborted } from './readers.js';
import { setReader } from './wasm.js';

const MAX_SPAN = 8 << 20;  // one read of local headers or inline ranges covers at most this much

function entryOf(e) {
  return Object.freeze({ name: e.name, headerOffset: e.header_offset, dataOffset: e.data_offset, size: e.size,
    crc32: e.crc32, xxh3: e.xxh3 ?? null, alignment: e.alignment });
}

// [offset, length] of entry `e`'s local header (an Entry: headerOffset, dataOffset).
function headerSpan(e) { return [e.headerOffset, e.dataOffset - e.headerOffset]; }

// A tensor of the wasm's JSON (onnxzip_listing(): `onnxzip ls --json`, alignment the file offset's).
function tensorOf(t) {
  return Object.freeze({ name: t.name, key: t.key, dataType: t.data_type, dtype: t.dtype, dims: Object.freeze(t.dims),
    storage: t.storage, kind: t.kind, entry: t.entry ?? null, offset: t.offset, byteLength: t.nbytes,
    alignment: t.alignment, graphDepth: t.graph_depth });
}

// [offset, length] spans grouped into reads: neighbours closer than `gap` share one read of at most
// MAX_SPAN bytes (a lone longer span is read alone). Returns [{off, len, spans}] in file order.
export function groupSpans(spans, gap) {
  const sorted = [...spans].sort((p, q) => p[0] - q[0]);
  const reads = [];
  for (const s of sorted) {
    const last = reads[reads.length - 1];
    const end = s[0] + s[1];
    if (last && s[0] - (last.off + last.len) <= gap && end - last.off <= MAX_SPAN) {
      last.len = Math.max(last.len, end - last.off);
      last.spans.push(s);
    } else reads.push({ off: s[0], len: s[1], spans: [s] });
  }
  return reads;
}

// Reads every span (through groupSpans), a few reads at a time; returns Map span -> bytes.
async function readSpans(reader, spans, signal, gap = reader.gap) {
  const out = new Map();
  const reads = groupSpans(spans, gap);
  let next = 0;
  const worker = async () => {
    while (next < reads.length) {
      const g = reads[next++];
      throwIfAborted(signal);
      const bytes = await reader.read(g.off, g.len);
      for (const s of g.spans) out.set(s, bytes.subarray(s[0] - g.off, s[0] - g.off + s[1]));
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, reads.length) }, worker));
  return out;
}

// The bytes of a source the C reader asks for while ozw_open_file or ozw_open_lazy runs (wasm import
// onnxzip.read): from reader.readSync when it has one (bytes, Node files), else from what was read
// before (a Blob, a URL: reads are asynchronous, so a miss is noted, read, and the open tried again).
// A miss is read whole, and at least `minRead` bytes (a Blob's local headers: few reads).
class SourceReads {
  constructor(reader, minRead = 64 << 10) {
    this.reader = reader; this.minRead = minRead; this.chunks = []; this.miss = null; this.error = null;
  }
  get(off, len) {
    if (off >= this.reader.size) return new Uint8Array(0);
    if (this.reader.readSync) return this.reader.readSync(off, Math.min(len, this.reader.size - off));
    const c = this.chunks.find((x) => x.off <= off && off < x.off + x.bytes.length);
    return c ? c.bytes.subarray(off - c.off, off - c.off + len) : null;
  }
  // the import: copies into wasm memory; -1 (a miss, or a failed read kept in this.error)
  call(n, ptr, len, off) {
    try {
      const b = this.get(off, len);
      if (!b) { this.miss ??= [off, Math.min(Math.max(len, this.minRead), this.reader.size - off)]; return -1; }
      n.u8.set(b, ptr);
      return b.length;
    } catch (e) {
      this.error ??= e;
      return -1;
    }
  }
  async fill(spans, signal) {
    for (const g of groupSpans(spans, this.reader.gap)) {
      throwIfAborted(signal);
      this.chunks.push({ off: g.off, bytes: await this.reader.read(g.off, g.len) });
    }
  }
}

const FD = 3;  // the descriptor ozw_open_file's reads name (any; one source at a time)

// ozw_open (reads null: headerSpans' prediction), ozw_open_lazy (a URL: a package model before the
// window is the one range read, not every byte after it) or ozw_open_file over the window `win` at
// the file's end, widened as the C reader asks (at most 3 rounds); missed reads are read and the open
// tried again. `model`: the package's model to hold (null: its default).
async function openRounds(n, reader, win, reads, signal, model) {
  const size = reader.size;
  let winOff = size - win.length;
  const nameP = n.putStr(reader.display);
  const modelP = model == null ? 0 : n.putStr(model);
  const outs = n.alloc(16);  // need (f64) at +0, handle (pointer) at +8
  try {
    for (let round = 0; ; round++) {
      const winP = n.put(win);
      let st;
      if (reads) {
        reads.miss = null;
        setReader((fd, ptr, len, off) => reads.call(n, ptr, len, off));
        try {
          const open = reader.kind === 'url' ? n.x.ozw_open_lazy : n.x.ozw_open_file;
          st = open(nameP, winP, win.length, winOff, size, FD, outs, outs + 8, modelP);
        } finally {
          setReader(null);
          n.free(winP);
        }
        if (reads.error) throw ioError(reads.error, reader, 'cannot read');
        if (st !== 0 && reads.miss) {
          await reads.fill([reads.miss], signal);
          round--;
          continue;
        }
      } else {
        st = n.x.ozw_open(nameP, winP, win.length, winOff, size, outs, outs + 8, modelP);
        n.free(winP);
      }
      n.check(st, where(reader));
      const h = n.ptr(outs + 8);
      if (h) return h;
      const need = n.f64(outs);
      if (round >= 3 || !(need >= 0 && need < winOff)) {
        throw new OnnxzipError('EINVAL', `${reader.display}: internal error: open asked for offset ${need}`);
      }
      throwIfAborted(signal);
      const more = await reader.read(need, winOff - need);
      const wider = new Uint8Array(more.length + win.length);
      wider.set(more);
      wider.set(win, more.length);
      [win, winOff] = [wider, need];
    }
  } finally {
    n.free(nameP, modelP, outs);
  }
}

// A Blob's local headers, read ahead of ozw_open_file: where the URL-style open (predicted data
// offsets) puts them; [] when that open fails (a damaged file: ozw_open_file then asks one by one).
async function headerSpans(n, reader, win, signal, model) {
  let h;
  try {
    h = await openRounds(n, reader, win, null, signal, model);
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    return [];
  }
  try {
    const { entries } = JSON.parse(n.str(n.nonNull(n.x.ozw_json(h))));
    return entries.map((e) => headerSpan(entryOf(e)));
  } finally {
    n.x.ozw_close(h);
  }
}

/** Opens the archive `reader` serves (the open protocol of js-design.md). `tail`: the file's last
 * bytes when the reader already has them (a URL's first request). A URL's local headers are checked at
 * open when they lie in the bytes at hand, else on each entry's first read, and its model's CRC-32 and
 * XXH3 at open (the C library's open of a URL); any other source's all at open, as onnxzip_open() does.
 * `model`: the package's model to hold (null: its default). */
export async function openArchive(reader, { tailBytes = 65536, tail = null, signal, model = null } = {}) {
  const n = await native();
  const size = reader.size;
  const win = tail ?? await reader.read(size - Math.min(tailBytes, size), Math.min(tailBytes, size));
  const url = reader.kind === 'url';
  const reads = new SourceReads(reader, url ? 0 : undefined);
  if (!url && !reader.readSync) await reads.fill(await headerSpans(n, reader, win, signal, model), signal);
  const h = await openRounds(n, reader, win, reads, signal, model);
  try {
    return new Archive(n, h, reader, !url);
  } catch (e) {
    n.x.ozw_close(h);
    throw e;
  }
}

// `len` zero bytes in pieces of at most 1 MiB (a data file's gaps between tensors).
function* zeros(len) {
  const z = new Uint8Array(Math.min(len, 1 << 20));
  for (let left = len; left > 0; left -= z.length) yield left >= z.length ? z : z.subarray(0, left);
}

// The files of wasm plan `plan` (ozw_plan_*) as JavaScript objects; `out`: 48 bytes of wasm memory.
function planOf(n, plan, out) {
  const files = [];
  for (let i = 0, count = n.x.ozw_plan_count(plan); i < count; i++) {
    n.check(n.x.ozw_plan_file(plan, i, out));
    const [pathP, modelP, size, nseg] = [0, 8, 16, 24].map((k) => n.f64(out + k));
    const segments = [];
    for (let k = 0; k < nseg; k++) {
      n.check(n.x.ozw_plan_segment(plan, i, k, out));
      const [kind, length, bytesP, offset, entry, entryOffset] = [0, 8, 16, 24, 32, 40].map((o) => n.f64(out + o));
      segments.push({ kind, length, offset, entry, entryOffset, bytes: kind === 0 ? n.u8.slice(bytesP, bytesP + length) : null });
    }
    files.push({ path: n.str(pathP), model: modelP ? n.str(modelP) : null, size, segments });
  }
  return files;
}

function where(reader) { return reader.kind === 'url' ? { url: reader.display } : reader.kind === 'file' ? { path: reader.display } : {}; }

// A package's members (ozw_member_*): {models, files} Maps path -> frozen {path, size[, default]}, and
// entries, path -> entry index; empty for an archive that is no package.
function membersOf(n, h) {
  const models = new Map(), files = new Map(), entries = new Map();
  const info = n.alloc(32);
  try {
    for (let i = 0, count = n.x.ozw_member_count(h); i < count; i++) {
      n.check(n.x.ozw_member_info(h, i, info));
      const [kind, isDefault, size, entry] = [0, 8, 16, 24].map((k) => n.f64(info + k));
      const path = n.str(n.x.ozw_member_path(h, i));
      if (kind === 0) models.set(path, Object.freeze({ path, size, default: isDefault !== 0 }));
      else files.set(path, Object.freeze({ path, size }));
      entries.set(path, entry);
    }
  } finally {
    n.free(info);
  }
  return { models, files, entries };
}

/** An opened archive. */
export class Archive {
  #n; #h; #reader; #checked = new Set(); #model; #byKey = new Map(); #order; #memberEntry; #pins;
  constructor(n, h, reader, allChecked = false) {
    this.#n = n; this.#h = h; this.#reader = reader;
    this._listing = n.str(n.nonNull(n.x.ozw_json(h), where(reader)));  // `onnxzip ls --json`, byte for byte
    const info = JSON.parse(this._listing);
    this.name = reader.name;
    this.size = reader.size;
    this.entries = Object.freeze(info.entries.map(entryOf));
    this.#pins = new Pins(this.entries, reader.display, where(reader));
    this.tensors = Object.freeze(info.tensors.map(tensorOf));
    const pkg = membersOf(n, h);
    [this.models, this.files, this.#memberEntry] = [pkg.models, pkg.files, pkg.entries];
    const mp = n.x.ozw_model_path(h);
    this.modelPath = mp ? n.str(mp) : null;
    // the model's entry: a package's model by its path, else __MODEL_PROTO (the directory's last record)
    this._modelEntry = this.entries[mp ? pkg.entries.get(this.modelPath) : this.entries.length - 1];
    for (const t of this.tensors) if (t.name && !this.#byKey.has(t.name)) this.#byKey.set(t.name, t);
    for (const t of this.tensors) this.#byKey.set(t.key, t);  // a key wins over another tensor's name
    const p = n.x.ozw_model(h);
    this.#model = n.u8.slice(p, p + n.x.ozw_model_size(h));
    if (allChecked) this.entries.forEach((_, i) => this.#checked.add(i));
    this._signed = null;  // lib/trust.js Signed: set by open() with options.trust
  }
  get _reader() { return this.#reader; }
  #handle() {
    if (!this.#h) throw new OnnxzipError('EINVAL', `${this.#reader.display}: the archive is closed`);
    return this.#h;
  }

  /** The tensor with this key (Tensor.key) or name, or undefined. */
  tensor(nameOrKey) { return this.#byKey.get(String(nameOrKey)); }

  /** The model's bytes (__MODEL_PROTO, or the package's model entry): the same array on each call; don't
   * modify it. */
  modelBytes() { return this.#model; }

  // Checks the local headers of entries `indices` not checked yet; `got` may hold the bytes of some.
  async _checkLocal(indices, signal, got = new Map()) {
    const unchecked = indices.filter((i) => !this.#checked.has(i));
    const spans = unchecked.map((i) => headerSpan(this.entries[i]));
    const missing = spans.filter((s, k) => !got.has(unchecked[k]));
    const read = missing.length ? await readSpans(this.#reader, missing, signal) : new Map();
    const n = this.#n;
    unchecked.forEach((i, k) => {
      const hdr = got.get(i) ?? read.get(spans[k]);
      const p = n.put(hdr);
      const st = n.x.ozw_check_local(this.#handle(), i, p, hdr.length);
      n.free(p);
      n.check(st, where(this.#reader));
      this.#checked.add(i);
    });
  }

  // Entry i's whole data, read here: from a URL, checked against its CRC-32 and XXH3 by the C library (ECRC /
  // EDIGEST naming the entry) before it is handed on, as the C library checks a remote archive's entries; a
  // local source's (path, bytes, Blob) by verify(), as onnxzip_open()'s.
  #checkData(i, bytes) {
    if (this.#reader.kind !== 'url') return bytes;
    const n = this.#n;
    const p = n.put(bytes);
    const st = n.x.ozw_check_data(this.#handle(), i, p, bytes.length);
    n.free(p);
    n.check(st, where(this.#reader));
    return bytes;
  }

  /** The [offset, length] of each tensor stored in an entry (one per offset): what fillModel() reads. */
  _tensorSpans() {
    const byOffset = new Map();
    for (const t of this.tensors) if (t.storage === 'entry' && t.byteLength) byOffset.set(t.offset, [t.offset, t.byteLength]);
    return [...byOffset.values()];
  }

  /** For a URL: checks each tensor entry whose whole data `buf` holds at its file offset (a buffer of
   * the file's size that fillModel() filled) against its CRC-32 and XXH3, and the tensors against the pins
   * of their entries, before ORT is given them. */
  async _checkFilled(buf, signal) {
    if (this.#reader.kind !== 'url') return;
    for (const [off, len] of this._tensorSpans()) {
      const i = this.#overlapping(off, off + len).find((k) => this.entries[k].dataOffset === off &&
        this.entries[k].size === len);
      if (i !== undefined) this.#checkData(i, buf.subarray(off, off + len));
    }
    await this.#filledPins(buf, signal);
  }

  // The tensors a buffer fillModel() filled holds against the pins of their entries.
  async #filledPins(buf, signal) {
    await this.#checkPins(this._tensorSpans().map((s) => [s, buf.subarray(s[0], s[0] + s[1])]), signal);
  }

  /** The bytes of file ranges `spans` ([offset, length]), with the local headers of the entries they
   * lie in checked first (for a URL: read in the same requests). Returns Map span -> bytes. `gap`:
   * spans closer than this share a read (default: the reader's). */
  async _readChecked(spans, signal, gap) {
    const ents = new Set();
    for (const [off, len] of spans) {
      for (const i of this.#overlapping(off, off + len)) if (!this.#checked.has(i)) ents.add(i);
    }
    const heads = [...ents].map((i) => headerSpan(this.entries[i]));
    const all = await readSpans(this.#reader, [...spans, ...heads], signal, gap);
    await this._checkLocal([...ents], signal, new Map([...ents].map((i, k) => [i, all.get(heads[k])])));
    return all;
  }

  // Indices of the entries whose data overlaps [from, to) (a view's merged range may span several).
  #overlapping(from, to) {
    this.#order ??= this.entries.map((e, i) => i).sort((a, b) => this.entries[a].dataOffset - this.entries[b].dataOffset);
    const o = this.#order, E = this.entries;
    let lo = 0, hi = o.length;
    while (lo < hi) {  // the first entry whose data ends after `from`
      const mid = (lo + hi) >> 1;
      if (E[o[mid]].dataOffset + E[o[mid]].size <= from) lo = mid + 1; else hi = mid;
    }
    const out = [];
    for (let k = lo; k < o.length && E[o[k]].dataOffset < to; k++) out.push(o[k]);
    return out;
  }

  /** The raw bytes of a tensor (by key or name). */
  async tensorData(nameOrKey) {
    const t = this.tensor(nameOrKey);
    this.#handle();
    if (!t) throw new OnnxzipError('ENOTFOUND', `${this.#reader.display}: no tensor named '${nameOrKey}'`);
    if (t.storage === 'inline') {
      const at = t.offset - this._modelEntry.dataOffset;
      return this.#model.subarray(at, at + t.byteLength);
    }
    if (t.storage !== 'entry') {
      throw new OnnxzipError('EUNSUPPORTED', `${this.#reader.display}: tensor '${t.key}' is stored in the model's ` +
        `${t.storage} fields, which are not raw bytes: decode it from modelBytes()`);
    }
    const i = this.entries.findIndex((e) => e.name === t.entry);
    const e = this.entries[i];
    // its entry whole, or a pinned entry's part: the entry read whole and checked (CRC-32, XXH3, its pin)
    if (e && (this.#pins.has(i) || (e.dataOffset === t.offset && e.size === t.byteLength))) {
      const bytes = await this.#entryData(i, `tensor '${t.key}'`);
      return bytes.subarray(t.offset - e.dataOffset, t.offset - e.dataOffset + t.byteLength);
    }
    const span = [t.offset, t.byteLength];
    return (await this._readChecked([span])).get(span);
  }

  /** A package's plain file (Archive.files) by its path: its bytes, read in one range read (with its
   * entry's local header, checked on the first read for a URL; from a URL, its CRC-32 and XXH3 too); opened
   * with options.trust, their SHA-256 checked against the signature before they are returned. */
  async readFile(path, { signal } = {}) {
    const bytes = await this._readFileUnsigned(path, signal);
    return this._signed ? this._signed.checkBytes(path, bytes) : bytes;
  }

  async _readFileUnsigned(path, signal) {
    if (typeof path !== 'string') throw new TypeError('path must be a string');
    this.#handle();
    if (!this.files.has(path)) throw this.#noFile(path);
    return this.#entryData(this.#memberEntry.get(path), `file '${path}'`, signal);
  }

  // Entry i's data read whole (its local header checked on the first read; from a URL its CRC-32 and XXH3).
  async #entryData(i, what, signal) {
    const e = this.entries[i];
    throwIfAborted(signal);
    if (this.#checked.has(i)) {
      return this.#pins.check(i, this.#checkData(i, e.size ? await this.#readWhole(what, e.dataOffset, e.size) : new Uint8Array(0)));
    }
    const [off, hlen] = headerSpan(e);
    const bytes = await this.#readWhole(what, off, hlen + e.size);
    await this._checkLocal([i], signal, new Map([[i, bytes.subarray(0, hlen)]]));
    return this.#pins.check(i, this.#checkData(i, bytes.subarray(hlen)));
  }

  // Read ranges `got` ([[offset, length], bytes]) against the pins of the entries they overlap (a URL's, after
  // a check with options.trust): an entry a range holds whole is hashed; one it holds in part is read whole
  // and checked, and the range's bytes of it must be those.
  async #checkPins(got, signal) {
    if (!this.#pins.size) return;
    const whole = new Map();
    for (const [[off, len], bytes] of got) {
      for (const i of this.#overlapping(off, off + len).filter((k) => this.#pins.has(k))) {
        const e = this.entries[i], at = e.dataOffset - off;
        if (at >= 0 && at + e.size <= len) {
          await this.#pins.check(i, bytes.subarray(at, at + e.size));
          continue;
        }
        if (!whole.has(i)) whole.set(i, await this.#entryData(i, `entry '${e.name}'`, signal));
        const from = Math.max(0, at), to = Math.min(len, at + e.size);
        this.#pins.same(i, bytes.subarray(from, to), from - at, whole.get(i));
      }
    }
  }

  // One buffer for an entry: one larger than the engine's largest typed array (a 5 GB safetensors shard;
  // V8 holds 2^32 bytes or fewer) is ELIMIT saying so, not the engine's bare RangeError.
  async #readWhole(what, off, len) {
    try {
      return await this.#reader.read(off, len);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      throw new OnnxzipError('ELIMIT', `${this.#reader.display}: ${what} is ${len} bytes, more than this JavaScript ` +
        `engine holds in one buffer (${err.message}); the onnxzip CLI, C and Python libraries extract it streamed`,
        where(this.#reader));
    }
  }

  get _where() { return where(this.#reader); }

  /** The file plan of `path` (null: every file of the package, or "." of a single-model archive): [{path,
   * model, size, segments: [{kind (0 bytes, 1 archive, 2 zeros), length, bytes, offset, entry (-1: the
   * whole file), entryOffset}]}], the plan's bytes copied. Entries the C planner reads (a model's, inline
   * tensors') come through the import as open's do: a miss is read, and the plan made again. `namesOnly`:
   * every file's path from the manifest (onnxzip_file_plan_names), no model entry read where it names them. */
  async _plan(path, signal, { namesOnly = false } = {}) {
    const n = this.#n;
    const reads = new SourceReads(this.#reader, 0);
    const pathP = path == null ? 0 : n.putStr(path);
    const out = n.alloc(48);
    try {
      for (let round = 0; ; round++) {
        reads.miss = null;
        setReader((fd, ptr, len, off) => reads.call(n, ptr, len, off));
        let plan;
        try {
          plan = namesOnly ? n.x.ozw_plan_names(this.#handle()) : n.x.ozw_plan_create(this.#handle(), pathP);
        } finally {
          setReader(null);
        }
        if (reads.error) throw ioError(reads.error, this.#reader, 'cannot read');
        if (!plan && reads.miss && round < 1000) {
          await reads.fill([reads.miss], signal);
          continue;
        }
        n.nonNull(plan, where(this.#reader));
        try {
          return planOf(n, plan, out);
        } finally {
          n.x.ozw_plan_free(plan);
        }
      }
    } finally {
      n.free(pathP, out);
    }
  }

  /** Checks against the signature (options.trust) the files of `path` (a model: its model file and data
   * files; null: the model the archive holds, or a single-model archive's file), their archive bytes taken
   * from `buffer` (a buffer of the file's size holding them at their offsets) when given, else read. A URL's
   * entries the files held whole are then pinned (lib/pins.js): later reads of them are hashed and compared. */
  async _checkSigned(path, { buffer = null, signal } = {}) {
    if (!this._signed) return;
    const files = await this._plan(path ?? this.modelPath, signal);
    let last = null;  // a URL's entry read whole for its CRC-32 and XXH3 (a data file's tensors lie in several)
    const r = this.#reader;
    const found = new Map();  // a URL's entry -> the SHA-256 (a Promise) of its bytes, hashed whole
    const archiveBytes = async function* (seg, self) {
      if (buffer && seg.entry >= 0) {
        yield buffer.subarray(seg.offset, seg.offset + seg.length);
      } else if (r.kind === 'url' && seg.entry >= 0) {
        if (last?.i !== seg.entry) last = { i: seg.entry, bytes: await self.#entryData(seg.entry, `entry '${self.entries[seg.entry].name}'`, signal) };
        if (seg.entryOffset === 0 && seg.length === last.bytes.length && !found.has(seg.entry)) found.set(seg.entry, sha256Hex(last.bytes));
        yield last.bytes.subarray(seg.entryOffset, seg.entryOffset + seg.length);
      } else if (r.kind === 'url') {
        yield* self.#streamPinning(seg.offset, seg.offset + seg.length, found, signal);
      } else {
        yield* r.chunks(seg.offset, seg.offset + seg.length, signal);
      }
    };
    await this._signed.checkPlanned(files, (seg) => (seg.kind === 0 ? [seg.bytes] : seg.kind === 2 ? zeros(seg.length)
      : archiveBytes(seg, this)));
    await this.#pins.add(found);
    // a single-model archive's file, which `buffer` (what ORT gets) does not hold whole, was streamed: the
    // tensors in the buffer, read before, must be the bytes hashed
    if (buffer && found.size) await this.#filledPins(buffer, signal);
  }

  // A URL's bytes [from, to) that are no one entry's (a single-model archive's file), in order, once: the
  // entries they hold whole hashed as they pass (into `found`), the held model's bytes given from memory.
  async* #streamPinning(from, to, found, signal) {
    const list = this.#overlapping(from, to).filter((i) => this.entries[i].size > 0 &&
      this.entries[i].dataOffset >= from && this.entries[i].dataOffset + this.entries[i].size <= to);
    const feed = entryHasher(this.entries, list, from, found);
    const m = this._modelEntry;
    const held = list.includes(this.entries.indexOf(m)) && m.size === this.#model.length;
    const parts = held ? [[from, m.dataOffset], [m.dataOffset, m.dataOffset + m.size, this.#model], [m.dataOffset + m.size, to]]
      : [[from, to]];
    for (const [a, b, bytes] of parts) {
      for await (const piece of bytes ? [bytes] : this.#reader.chunks(a, b, signal)) {
        await feed(piece);
        yield piece;
      }
    }
  }

  // ENOTFOUND for readFile(path), saying what the archive has instead
  #noFile(path) {
    const files = [...this.files.keys()];
    const what = this.models.size === 0 ? `no file '${path}' (the archive is a single model, not a package)`
      : `the package has no file '${path}'` + (this.models.has(path)
        ? ` (that is a model: open(source, { model: '${path}' }) opens it)`
        : ` (its files: ${files.slice(0, 8).join(', ') || 'none'}${files.length > 8 ? ', ...' : ''})`);
    return new OnnxzipError('ENOTFOUND', `${this.#reader.display}: ${what}`, where(this.#reader));
  }

  /** The view (spec 16): a small ONNX model whose large tensors reference this archive by offset.
   * `_file` (internal): a buffer of the file's size already holding the bytes the view copies. */
  async view({ sizeThreshold = 1024, location = this.name, _file = null } = {}) {
    if (typeof sizeThreshold !== 'number') throw new TypeError('sizeThreshold must be a number');
    if (!Number.isSafeInteger(sizeThreshold) || sizeThreshold < 0) {
      throw new RangeError(`sizeThreshold must be a non-negative integer, not ${sizeThreshold}`);
    }
    if (typeof location !== 'string') throw new TypeError('location must be a string');
    const n = this.#n;
    const ranges = JSON.parse(n.str(n.nonNull(n.x.ozw_view_ranges(this.#handle(), sizeThreshold), where(this.#reader))));
    const got = _file ? new Map(ranges.map((s) => [s, _file.subarray(s[0], s[0] + s[1])]))
      : ranges.length ? await this._readChecked(ranges) : new Map();
    if (!_file) await this.#checkPins(got);
    const inlineP = n.put(ranges.map((s) => got.get(s)));
    const locP = n.putStr(location);
    const outs = n.alloc(8);
    try {
      const total = ranges.reduce((k, s) => k + s[1], 0);
      n.check(n.x.ozw_view(this.#handle(), sizeThreshold, locP, inlineP, total, outs, outs + 4), where(this.#reader));
      const p = n.ptr(outs);
      const bytes = n.u8.slice(p, p + n.ptr(outs + 4));
      n.free(p);
      return bytes;
    } finally {
      n.free(inlineP, locP, outs);
    }
  }

  /** Reads the whole file in order through the C stream checker (spec 11.1). */
  async verify({ signal, onProgress } = {}) {
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('onProgress must be a function');
    const n = this.#n;
    const v = n.nonNull(n.x.ozw_verify_begin(this.#handle()), where(this.#reader));
    let done = 0;
    try {
      for await (const chunk of this.#reader.chunks(0, this.size, signal)) {
        const p = n.put(chunk);
        const st = n.x.ozw_verify_feed(v, p, chunk.length);
        n.free(p);
        n.check(st, where(this.#reader));
        done += chunk.length;
        onProgress?.(done, this.size);
      }
    } catch (e) {
      n.x.ozw_verify_abort(v);
      throw e;
    }
    n.check(n.x.ozw_verify_end(v), where(this.#reader));
  }

  /** Frees the archive (and closes a Node file). Idempotent. */
  close() {
    if (!this.#h) return;
    this.#n.x.ozw_close(this.#h);
    this.#h = 0;
    return this.#reader.close();
  }
}
