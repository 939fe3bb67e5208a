// helpers.mjs — what the node --test files of tests/js share: where the
// package under test, the CLI and the test inputs are, the CLI run as an
// independent oracle, scratch directories. Nothing here imports the package.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// The assembled package directory (BUILD/src/js/package) and the CLI of the
// same build; meson's test() sets both.
export const PACKAGE_DIR = process.env.ONNXZIP_JS_PACKAGE || path.join(REPO, 'build-test', 'src', 'js', 'package');
export const CLI = process.env.ONNXZIP_CLI || path.join(REPO, 'build-test', 'tools', 'onnxzip');

// The read-only corpora, as tests/python/_helpers.py locates them.
export const CORPUS = process.env.ONNXZIP_SHARED_CORPUS || path.join(REPO, '..', 'shared', 'corpus');
export const TESTDATA = process.env.ONNXZIP_TESTDATA || '/usr/share/libonnx-testdata/data';

// The package's public module (index.js of the assembled directory).
export async function loadPackage() {
  return import(pathToFileURL(path.join(PACKAGE_DIR, 'index.js')).href);
}

// Sorted files under DIR (recursively) whose names satisfy KEEP; [] when DIR is absent.
export function walk(dir, keep) {
  const out = [];
  let names;
  try {
    names = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const d of names) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...walk(p, keep));
    else if (d.isFile() && keep(d.name)) out.push(p);
  }
  return out.sort();
}

// models/*.onnx and extdata/*/*.onnx of the shared corpus, sorted.
export function corpusModels() {
  const top = walk(path.join(CORPUS, 'models'), (n) => n.endsWith('.onnx'))
    .filter((p) => path.dirname(p) === path.join(CORPUS, 'models'));
  const ext = walk(path.join(CORPUS, 'extdata'), (n) => n.endsWith('.onnx'));
  return [...top, ...ext];
}

// Every model.onnx of Debian's libonnx-testdata, sorted.
export function testdataModels() {
  return walk(TESTDATA, (n) => n.endsWith('.onnx'));
}

// Runs the CLI; returns {status, stdout (Buffer), stderr (string)}.
export function cli(...args) {
  const r = spawnSync(CLI, args, { maxBuffer: 1 << 30, timeout: 120000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

// cli() without blocking the event loop (a server in this process must answer
// the CLI's requests): resolves to the same {status, stdout, stderr}.
export function cliAsync(...args) {
  return new Promise((resolve, reject) => {
    const p = spawn(CLI, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120000 });
    const out = [], err = [];
    p.stdout.on('data', (b) => out.push(b));
    p.stderr.on('data', (b) => err.push(b));
    p.on('error', reject);
    p.on('close', (status) => resolve({ status, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

// Runs the CLI and returns its standard output; throws with its messages on failure.
export function cliOk(...args) {
  const r = cli(...args);
  if (r.status !== 0) throw new Error(`onnxzip ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// The status name the CLI reports for a failure: its message ends "[ONNXZIP_X]".
export function cliStatus(stderr) {
  const m = stderr.match(/\[(ONNXZIP_[A-Z0-9_]+)\]\s*$/);
  return m ? m[1] : null;
}

// A scratch directory on tmpfs where there is one; removed by the caller.
export function scratch(prefix) {
  let base = os.tmpdir();
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    base = '/dev/shm';
  } catch {
    // no /dev/shm: the system's temporary directory
  }
  return fs.mkdtempSync(path.join(base, `onnxzip-js-${prefix}.`));
}

// `onnxzip ls --json` of ARCHIVE as the package names its fields (camelCase):
// every field as the CLI prints it, alignment included (the file offset's,
// from onnxzip_listing(), the function the package's wasm calls too).
export function cliListing(archive) {
  const j = JSON.parse(cliOk('ls', archive, '--json').toString('utf8'));
  return {
    entries: j.entries.map((e) => ({
      name: e.name, headerOffset: e.header_offset, dataOffset: e.data_offset, size: e.size,
      crc32: e.crc32, xxh3: e.xxh3, alignment: e.alignment,
    })),
    tensors: j.tensors.map((t) => ({
      name: t.name, key: t.key, dataType: t.data_type, dtype: t.dtype, dims: t.dims,
      storage: t.storage, kind: t.kind, entry: t.entry, offset: t.offset, byteLength: t.nbytes,
      alignment: t.alignment, graphDepth: t.graph_depth,
    })),
  };
}

// Asserts that two `onnxzip ls --json` texts (the CLI's stdout, an Archive's
// _listing: the wasm's onnxzip_listing()) are the same bytes but for the
// archive's name, which names the source (a path, a URL, a Blob's name).
export function assertSameListing(got, want, what) {
  const first = /^\{"archive": "[^\n]*",\n/;
  assert.match(got, first, `${what}: first line`);
  assert.match(want, first, `${what}: first line (CLI)`);
  assert.equal(got.slice(got.indexOf('\n')), want.slice(want.indexOf('\n')), `${what}: ls --json, byte for byte`);
}

export const ENTRY_FIELDS = ['name', 'headerOffset', 'dataOffset', 'size', 'crc32', 'xxh3', 'alignment'];
export const TENSOR_FIELDS = ['name', 'key', 'dataType', 'dtype', 'dims', 'storage', 'kind', 'entry', 'offset',
  'byteLength', 'alignment', 'graphDepth'];

// Plain copies of the package's entry/tensor objects with only FIELDS, for
// deepStrictEqual against cliListing() (a field the package lacks shows as undefined).
export function pick(objs, fields) {
  return Array.from(objs, (o) => Object.fromEntries(fields.map((k) => [k, Array.isArray(o[k]) ? Array.from(o[k]) : o[k]])));
}

// An HTTP/1.1 server on 127.0.0.1 serving registered files the way spec 17
// asks of a server: GET and HEAD, one byte range per request (`bytes=A-B`,
// `A-`, `-N`) answered 206 with an exact Content-Range, a strong ETag
// (If-Match checked: 412), Last-Modified, no Content-Encoding; an
// unsatisfiable range 416 `bytes */SIZE`; no Range 200. Files are read at each
// request. Returns {serve(name, file) -> its http URL, tamper(name, offset, bytes), sent (body bytes so far),
// close()}.
export async function rangeServer() {
  const files = new Map();
  const changes = new Map();  // name -> [offset, bytes]: sent in place of the file's (tamper())
  let sent = 0;  // body bytes written, every reply
  const server = http.createServer((req, res) => {
    const key = req.url.split('?')[0];
    const file = files.get(key);
    if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) { res.writeHead(file ? 405 : 404).end(); return; }
    const body = fs.readFileSync(file);
    const change = changes.get(key);
    if (change) Buffer.from(change[1]).copy(body, change[0]);
    const st = fs.statSync(file);
    const head = { ETag: `"${body.length}-${st.mtimeMs}"`, 'Last-Modified': st.mtime.toUTCString(),
      'Accept-Ranges': 'bytes', 'Content-Type': 'application/octet-stream' };
    const ifMatch = req.headers['if-match'];
    if (ifMatch && ifMatch !== '*' && !ifMatch.split(/\s*,\s*/).includes(head.ETag)) { res.writeHead(412, head).end(); return; }
    const send = (code, extra, bytes) => {
      if (req.method !== 'HEAD') sent += bytes.length;
      res.writeHead(code, { ...head, ...extra, 'Content-Length': bytes.length }).end(req.method === 'HEAD' ? undefined : bytes);
    };
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    // no Range, or an invalid one (RFC 9110 14.2: ignored): the whole file
    if (!m || (m[1] === '' && m[2] === '') || (m[2] !== '' && Number(m[2]) < Number(m[1]))) { send(200, {}, body); return; }
    let a, b;
    if (m[1] === '') [a, b] = [Math.max(0, body.length - Number(m[2])), body.length - 1];
    else [a, b] = [Number(m[1]), m[2] === '' ? body.length - 1 : Math.min(Number(m[2]), body.length - 1)];
    if (a >= body.length || (m[1] === '' && Number(m[2]) === 0)) {
      send(416, { 'Content-Range': `bytes */${body.length}` }, Buffer.alloc(0));
      return;
    }
    send(206, { 'Content-Range': `bytes ${a}-${b}/${body.length}` }, body.subarray(a, b + 1));
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    serve(name, file) {
      const key = '/' + encodeURIComponent(name);
      files.set(key, file);
      return base + key;
    },
    /** NAME's bytes at OFFSET sent as BYTES from now on (a change in transit that keeps every size and
     * header); BYTES null: sent as they are again. */
    tamper(name, offset, bytes) {
      const key = '/' + encodeURIComponent(name);
      if (bytes) changes.set(key, [offset, bytes]); else changes.delete(key);
    },
    /** Body bytes sent so far (all replies). */
    get sent() { return sent; },
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}

// CRC-32 (zip's polynomial) of BUF, bit by bit from its table: the tests' own,
// independent of the C library (node:zlib's crc32 is Node >= 20.15 only).
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// Writes DIR/KIND folders and DIR/feeds.json: {kind: {model: {input: [dtype, dims, base64]}}}
// (make_repos.sample_inputs).
const MAKE_REPOS = `
import base64, json, pathlib, sys
sys.path.insert(0, sys.argv[1])
import make_repos
out, feeds = pathlib.Path(sys.argv[2]), {}
for kind in sys.argv[3:]:
    root = make_repos.make(kind, out / kind)
    feeds[kind] = {m: {k: [str(v.dtype), list(v.shape), base64.b64encode(v.tobytes()).decode()]
                       for k, v in make_repos.sample_inputs(root / m).items()}
                   for m in make_repos.model_paths(root)}
(out / "feeds.json").write_text(json.dumps(feeds))
`;

// tests/packages/make_repos.py's KINDS into DIR (by PYTHON, the pinned venv's):
// the folders DIR/KIND, and each model's sample inputs as feeds.json says.
export function makeRepos(python, dir, kinds) {
  const made = spawnSync(python, ['-c', MAKE_REPOS, path.join(REPO, 'tests/packages'), dir, ...kinds],
    { encoding: 'utf8' });
  assert.equal(made.status, 0, `make_repos.py: ${made.stderr}`);
  return JSON.parse(fs.readFileSync(path.join(dir, 'feeds.json'), 'utf8'));
}

const TYPED = { float32: Float32Array, float16: Uint16Array, int64: BigInt64Array, int32: Int32Array };

// The feeds.json inputs of one model as onnxruntime `ort`'s tensors.
export function ortFeeds(ort, spec) {
  return Object.fromEntries(Object.entries(spec).map(([name, [dtype, dims, b64]]) => {
    const bytes = Buffer.from(b64, 'base64');
    const data = new TYPED[dtype](bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    return [name, new ort.Tensor(dtype, data, dims)];
  }));
}

// Runs `session` (then released) on the inputs `spec`: {output: [type, dims, bytes]}, to compare.
export async function sessionOutputs(ort, session, spec) {
  try {
    const out = await session.run(ortFeeds(ort, spec));
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [v.type, v.dims, Buffer.from(v.data.buffer)]]));
  } finally {
    await session.release();
  }
}
