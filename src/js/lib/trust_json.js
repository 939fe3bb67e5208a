// The JSON of a signature (the Sigstore bundle and the in-toto statement it carries), read as the C library's
// trust layer reads it with jansson (JSON_REJECT_DUPLICATES): strict UTF-8, no duplicated key, no NUL or lone
// surrogate in a string, nesting at most MAX_DEPTH deep. JSON.parse would keep the last of two equal keys,
// so that two verifiers could read two different payloads from one file: a parser of its own refuses them.

export const MAX_DEPTH = 64;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Parser {
  constructor(text, fail) { this.s = text; this.i = 0; this.fail = fail; }
  error(what) { throw this.fail(`${what} at character ${this.i}`); }
  ws() { while (/[ \t\n\r]/.test(this.s[this.i] ?? '')) this.i++; }
  value(depth) {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object(depth + 1);
    if (c === '[') return this.array(depth + 1);
    if (c === '"') return this.string();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (this.s.startsWith(word, this.i)) { this.i += word.length; return v; }
    }
    return this.error(c === undefined ? 'unexpected end of the JSON text' : `unexpected '${c}'`);
  }
  nest(depth) { if (depth > MAX_DEPTH) this.error(`JSON nested deeper than ${MAX_DEPTH} levels`); }
  object(depth) {
    this.nest(depth);
    this.i++;
    const out = Object.create(null);
    this.ws();
    if (this.s[this.i] === '}') { this.i++; return out; }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.error('expected a string (an object key)');
      const at = this.i;
      const key = this.string();
      if (Object.hasOwn(out, key)) { this.i = at; this.error(`duplicated object key '${key}'`); }
      this.ws();
      if (this.s[this.i++] !== ':') { this.i--; this.error("expected ':'"); }
      out[key] = this.value(depth);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return out;
      if (c !== ',') { this.i--; this.error("expected ',' or '}'"); }
    }
  }
  array(depth) {
    this.nest(depth);
    this.i++;
    const out = [];
    this.ws();
    if (this.s[this.i] === ']') { this.i++; return out; }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') { this.i--; this.error("expected ',' or ']'"); }
    }
  }
  string() {
    STRING.lastIndex = this.i;
    const m = STRING.exec(this.s);
    if (!m) this.error('invalid string (a control character, a bad escape or no closing quote)');
    const v = JSON.parse(m[0]);
    // jansson refuses "\u0000" (without JSON_ALLOW_NUL) and an escaped lone surrogate
    if (v.includes('\0')) this.error('a string holds NUL (\\u0000)');
    if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v)) {
      this.error('a string holds a lone UTF-16 surrogate');
    }
    this.i += m[0].length;
    return v;
  }
  number() {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.error('invalid number');
    this.i += m[0].length;
    return Number(m[0]);
  }
}

/** The value of the JSON document `bytes` (a Uint8Array), or throws `fail(message)`: invalid UTF-8,
 * invalid JSON, a duplicated key, nesting deeper than MAX_DEPTH. Objects have no prototype. */
export function parseStrictJson(bytes, fail) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw fail('not UTF-8');
  }
  const p = new Parser(text, fail);
  const v = p.value(0);
  p.ws();
  if (p.i !== text.length) p.error('text after the JSON value');
  if (v === null || typeof v !== 'object') throw fail('not a JSON object');
  return v;
}
