// OnnxzipError: every failure of the C library (through the wasm) and of the JS I/O layer.

// onnxzip_status values (include/onnxzip/onnxzip.h: a stable ABI, never renumbered)
const NAMES = ['EINVAL', 'ENOMEM', 'EIO', 'ENOTZIP', 'ENOTONNXZIP', 'ETRUNC', 'EEOCD', 'EZIP64', 'ECDIR',
  'ELOCAL', 'EBOUNDS', 'EOVERLAP', 'EMETHOD', 'EFLAGS', 'EALIGN', 'ENAME', 'EDUPNAME', 'ENOMODEL',
  'EMODELPOS', 'EPROTO', 'EREF', 'ERANGE', 'ESIZE', 'ECRC', 'EDIGEST', 'ELIMIT', 'ENOTFOUND', 'EDTYPE',
  'EUNSUPPORTED', 'EPATH', 'EBUSY', 'ESAMEFILE', 'ENOTREG', 'ESTALE', 'ENETWORK', 'ETIMEOUT', 'EHTTP',
  'ENORANGE', 'EREPLY', 'ECHANGED', 'ECANCELED', 'EPACKAGE', 'EUNSIGNED', 'ESIGNATURE', 'EBUNDLE', 'EMISMATCH'];

/** The numeric code of a status name ("ONNXZIP_ETRUNC" -> -6); -1 (EINVAL) when unknown. */
export function statusCode(status) {
  const i = NAMES.indexOf(String(status).replace(/^ONNXZIP_/, ''));
  return i < 0 ? -1 : -(i + 1);
}

/** A failure of onnxzip: `status` ("ONNXZIP_ETRUNC"), `code` (its number), `offset` (the file offset
 * when known), `url` or `path` (the source, a URL without query, fragment and user:password);
 * a failed system call's error is `cause`, and its `errno`/`syscall` are copied like Node's fs errors. */
export class OnnxzipError extends Error {
  constructor(status, message, details = {}) {
    super(message, details.cause !== undefined ? { cause: details.cause } : undefined);
    this.name = 'OnnxzipError';
    this.status = status.startsWith('ONNXZIP_') ? status : 'ONNXZIP_' + status;
    this.code = statusCode(this.status);
    if (details.offset !== undefined && details.offset >= 0) this.offset = details.offset;
    for (const k of ['url', 'path', 'errno', 'syscall', 'httpStatus']) {
      if (details[k] !== undefined) this[k] = details[k];
    }
  }
}

/** `e` as an OnnxzipError: an aborted signal's reason passes through unchanged. */
export function ioError(e, source, what) {
  if (e instanceof OnnxzipError || e?.name === 'AbortError') return e;
  const sys = e && typeof e.code === 'string' ? ` (${e.code})` : '';
  return new OnnxzipError('EIO', `${source.display}: ${what}: ${e?.message ?? e}${sys}`,
    { cause: e, errno: e?.errno, syscall: e?.syscall, ...(source.kind === 'url' ? { url: source.display }
      : source.kind === 'file' ? { path: source.display } : {}) });
}
