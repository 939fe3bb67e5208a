// Calls into the onnxzip wasm (src/js/wasm/onnxzip_wasm.c): memory in and out, statuses as errors.
import * as wasm from './wasm.js';
import { OnnxzipError } from './errors.js';

let loading = null;
/** The wasm instance's exports (instantiated once per realm). */
export function exports() {
  loading ??= wasm.load();
  return loading;
}

const utf8 = new TextDecoder('utf-8');
const enc = new TextEncoder();

export class Native {
  constructor(x) { this.x = x; }
  get u8() { return new Uint8Array(this.x.memory.buffer); }
  str(p) {
    const m = this.u8;
    let e = p;
    while (m[e] !== 0) e++;
    return utf8.decode(m.subarray(p, e));
  }
  alloc(n) {
    const p = this.x.ozw_malloc(Math.max(n, 1));
    if (!p) throw new OnnxzipError('ENOMEM', `out of wasm memory (${n} bytes)`);
    return p;
  }
  /** Copies `bytes` (a Uint8Array or an array of them, concatenated) into wasm memory. */
  put(bytes) {
    const parts = Array.isArray(bytes) ? bytes : [bytes];
    const p = this.alloc(parts.reduce((n, b) => n + b.length, 0));
    let at = p;
    for (const b of parts) { this.u8.set(b, at); at += b.length; }
    return p;
  }
  putStr(s) { return this.put([enc.encode(s), new Uint8Array(1)]); }
  free(...ps) { for (const p of ps) if (p) this.x.ozw_free(p); }
  f64(p) { return new DataView(this.x.memory.buffer).getFloat64(p, true); }
  ptr(p) { return new DataView(this.x.memory.buffer).getUint32(p, true); }
  /** The error of status `st` (the C library's message and offset). */
  error(st, details = {}) {
    const offset = this.x.ozw_error_offset();
    return new OnnxzipError(this.str(this.x.ozw_status_name(st)), this.str(this.x.ozw_error_message()),
      { ...details, offset: offset >= 0 ? offset : undefined });
  }
  check(st, details) { if (st !== 0) throw this.error(st, details); }
  /** The result `p` of a call returning a pointer (ozw_json, ozw_view_ranges, ozw_verify_begin):
   * NULL throws the last failure (its status from ozw_error_status). */
  nonNull(p, details) {
    if (!p) throw this.error(this.x.ozw_error_status() || -2, details);
    return p;
  }
}

/** The Native wrapper, the wasm loaded first. */
export async function native() { return new Native(await exports()); }
