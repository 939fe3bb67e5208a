// Readers: one per kind of source. Each has kind, name (the archive's file name), display (how
// messages name it), size, read(offset, length) -> Promise<Uint8Array>, chunks(from, to, signal)
// (an async iterator over [from, to) in order, for verify) and close().
import { OnnxzipError, ioError } from './errors.js';

/** Node.js, not a page (an Electron renderer has `process` and `window`: it is a page). */
export const isNodeJs = typeof process !== 'undefined' && process.versions?.node != null &&
  typeof window === 'undefined';

const DEFAULT_NAME = 'model.onnxzip';
const BLOB_CHUNK = 8 << 20;
const FILE_CHUNK = 4 << 20;

function throwIfAborted(signal) {
  if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** A reader's chunks(from, to, signal): [from, to) in order, `step` bytes per read(off, len, signal). */
export function chunksOf(read, step) {
  return async function* chunks(from, to, signal) {
    for (let at = from; at < to; at += step) {
      throwIfAborted(signal);
      yield await read(at, Math.min(to, at + step) - at, signal);
    }
  };
}

/** An in-memory archive: reads are subarrays (no copy). Messages name it by `name`, else as "the bytes
 * given" (its name, model.onnxzip, is a stand-in: no file of that name was given). */
export function bytesReader(bytes, name) {
  return {
    kind: 'bytes', bytes, name: name ?? DEFAULT_NAME, display: name ?? 'the bytes given', size: bytes.length, gap: Infinity,
    async read(off, len) { return bytes.subarray(off, off + len); },
    readSync(off, len) { return bytes.subarray(off, off + len); },
    chunks: chunksOf((off, len) => bytes.subarray(off, off + len), BLOB_CHUNK),
    close() {},
  };
}

/** A Blob or File: slices, read as they are asked for. Messages name it by `name`, else by the File's
 * name, else as "the Blob given". */
export function blobReader(blob, name) {
  const given = name ?? (typeof blob.name === 'string' && blob.name ? blob.name : null);
  const own = given ?? DEFAULT_NAME, shown = given ?? 'the Blob given';
  const r = {
    kind: 'blob', blob, name: own, display: shown, size: blob.size, gap: 64 << 10,
    async read(off, len) {
      let buf;
      try {
        buf = await blob.slice(off, off + len).arrayBuffer();
      } catch (e) {
        throw ioError(e, r, `cannot read ${len} bytes at offset ${off}`);
      }
      if (buf.byteLength !== len) {
        throw new OnnxzipError('EIO', `${shown}: read ${buf.byteLength} of ${len} bytes at offset ${off}`, { offset: off });
      }
      return new Uint8Array(buf);
    },
    chunks: chunksOf((off, len) => r.read(off, len), BLOB_CHUNK),
    close() {},
  };
  return r;
}

// Node's "ENOENT: no such file or directory, open '/x'" -> "No such file or directory".
function sysText(e) {
  const m = /^[A-Z0-9_]+: (.*?)(, \w+ '.*')?$/.exec(e?.message ?? '');
  const t = m ? m[1] : String(e?.message ?? e);
  return t.charAt(0).toUpperCase() + t.slice(1);
}

function fsError(e, path, what) {
  const code = typeof e?.code === 'string' ? ` (${e.code})` : '';
  return new OnnxzipError('EIO', `${path}: ${what}: ${sysText(e)}${code}`,
    { cause: e, errno: e?.errno, syscall: e?.syscall, path });
}

/** A file in Node (fs/promises, imported only here so that browsers never load node: modules). */
export async function fileReader(path, name) {
  const fs = await import('node:fs/promises');
  const { readSync } = await import('node:fs');
  const { basename } = await import('node:path');
  let fh, real, st;
  try {
    fh = await fs.open(path, 'r');
    st = await fh.stat();
    real = await fs.realpath(path);
  } catch (e) {
    await fh?.close();
    throw fsError(e, path, 'cannot open');
  }
  if (!st.isFile()) {
    await fh.close();
    const dir = st.isDirectory();
    throw new OnnxzipError('ENOTREG', `${path}: ${dir ? 'a directory, ' : ''}not a regular file`, { path });
  }
  const r = {
    kind: 'file', name: name ?? basename(real), display: path, path, realPath: real, size: st.size, gap: 64 << 10,
    async read(off, len) {
      const buf = new Uint8Array(len);
      for (let got = 0; got < len;) {
        let n;
        try {
          ({ bytesRead: n } = await fh.read(buf, got, len - got, off + got));
        } catch (e) {
          throw fsError(e, path, `cannot read ${len} bytes at offset ${off}`);
        }
        if (n === 0) {
          throw new OnnxzipError('EIO', `${path}: the file ended at ${off + got} while reading ${len} bytes at ` +
            `offset ${off} (was it changed since it was opened?)`, { path, offset: off + got });
        }
        got += n;
      }
      return buf;
    },
    // open's reads of local headers (lib/archive.js SourceReads): small, synchronous; 0 bytes: the end
    readSync(off, len) {
      const buf = new Uint8Array(len);
      let got = 0;
      try {
        for (let k; got < len && (k = readSync(fh.fd, buf, got, len - got, off + got)) > 0;) got += k;
      } catch (e) {
        throw fsError(e, path, `cannot read ${len} bytes at offset ${off}`);
      }
      return buf.subarray(0, got);
    },
    chunks: chunksOf((off, len) => r.read(off, len), FILE_CHUNK),
    close() { const f = fh; fh = null; return f?.close(); },
  };
  return r;
}

export { throwIfAborted };
