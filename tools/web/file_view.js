// tools/web/file_view.js — how the page shows a package's plain file
// (config.json, tokenizer files, ...): text as text (pretty-printed when it
// is JSON), anything else as a hex preview, large files truncated. The
// result is plain strings for textContent: nothing from the file ever
// becomes markup.

export const PREVIEW_BYTES = 256 * 1024;      // text shown at most
export const READ_LIMIT = 64 * 1024 * 1024;   // larger files are not read at all
const HEX_BYTES = 512;

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return `${n.toFixed(n < 10 ? 2 : 1)} ${u[i]}`;
}

// text unless it is not UTF-8 or has control characters other than
// tab, newline, form feed and carriage return
function asText(bytes, truncated) {
  let text;
  try {
    // stream: a character cut by the truncation is no error
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated });
  } catch {
    return null;
  }
  return /[\x00-\x08\x0b\x0e-\x1f\x7f]/.test(text) ? null : text;
}

function hexDump(bytes) {
  const lines = [];
  for (let off = 0; off < bytes.length; off += 16) {
    const row = bytes.subarray(off, off + 16);
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${off.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join('\n');
}

// pretty JSON, or null when the text is no JSON or re-printing could change
// what it says (integers beyond 2^53 lose digits in JSON.parse)
function prettyJson(path, text) {
  if (!/\.json$/i.test(path) && !/^\s*[{[]/.test(text)) return null;
  if (/\d{16,}/.test(text)) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

/** {note, text} for a file of `size` bytes whose first bytes are `bytes`
 * (all of them when size <= PREVIEW_BYTES; null when it was too large to read). */
export function describeFile(path, size, bytes) {
  const total = size < 1024 ? `${size} bytes` : `${size} bytes (${fmtBytes(size)})`;
  if (bytes === null) return { note: `${total}: too large to preview here (more than ${fmtBytes(READ_LIMIT)})`, text: '' };
  const truncated = size > bytes.length;
  const text = asText(bytes, truncated);
  if (text === null) {
    const shown = Math.min(size, HEX_BYTES);
    return { note: `binary, ${total}${shown < size ? `: the first ${shown} bytes in hex` : ''}`, text: hexDump(bytes.subarray(0, shown)) };
  }
  if (truncated) return { note: `text, ${total}: the first ${bytes.length} bytes shown`, text };
  const pretty = prettyJson(path, text);
  if (pretty !== null) return { note: `JSON, ${total}${pretty === text ? '' : ', pretty-printed'}`, text: pretty };
  return { note: `text, ${total}`, text };
}
