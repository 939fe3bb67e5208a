// Pins (spec 20.5; the C library's read/pins.c): the SHA-256 of each entry of a URL's archive that a signature
// check hashed whole. A later read of it is a new transfer, which the origin may answer with other bytes of the
// same CRC-32 (and no XXH3: the directory is not signed), so it is hashed again and compared.
import { OnnxzipError } from './errors.js';
import { sha256Hex, sha256Stream } from './trust_crypto.js';

export class Pins {
  #sha = new Map();  // entry index -> SHA-256 (hex)
  #entries; #display; #where;
  constructor(entries, display, where) { this.#entries = entries; this.#display = display; this.#where = where; }

  get size() { return this.#sha.size; }
  has(i) { return this.#sha.has(i); }

  /** Pins the entries of `found` (Map index -> Promise of the hex SHA-256 of its bytes), once the check that
   * hashed them passed; an entry pinned before keeps its pin. */
  async add(found) {
    for (const [i, hex] of found) {
      const h = await hex;
      if (!this.#sha.has(i)) this.#sha.set(i, h);
    }
  }

  /** EMISMATCH naming entry i and the source. */
  mismatch(i) {
    const e = this.#entries[i];
    return new OnnxzipError('EMISMATCH', `${this.#display}: entry '${e.name}': the bytes read now differ from the ones ` +
      'the signature check hashed (another SHA-256): the file changed since, or its origin answers otherwise',
    { ...this.#where, offset: e.dataOffset });
  }

  /** `bytes`, entry i's whole data read now, once they hash to its pin (an entry not pinned: at once). */
  async check(i, bytes) {
    const want = this.#sha.get(i);
    if (want !== undefined && await sha256Hex(bytes) !== want) throw this.mismatch(i);
    return bytes;
  }

  /** Checks `part`, bytes read now at `at` of entry i's data, against `whole`, its checked data. */
  same(i, part, at, whole) {
    for (let k = 0; k < part.length; k++) if (part[k] !== whole[at + k]) throw this.mismatch(i);
  }
}

/** Hashes the entries (`list`: indices, in file order, none empty) whose data lies in a stream of file bytes
 * fed in order from `from` by feed(bytes): `found` gets each one's hex SHA-256 (a Promise) as its last byte
 * passes. What a single-model archive's one file, streamed for its check, gives its entries' pins. */
export function entryHasher(entries, list, from, found) {
  let k = 0, at = from, h = null;
  return async (bytes) => {
    const end = at + bytes.length;
    while (k < list.length && entries[list[k]].dataOffset < end) {
      const e = entries[list[k]];
      h ??= await sha256Stream(e.size, `entry '${e.name}'`);
      h.update(bytes.subarray(Math.max(0, e.dataOffset - at), Math.min(bytes.length, e.dataOffset + e.size - at)));
      if (e.dataOffset + e.size > end) break;
      found.set(list[k++], h.hex());
      h = null;
    }
    at = end;
  };
}
