// api.test.mjs — the package's API contract (issue 22): every kind of source (path, file: URL, bytes,
// a typed array's window, Blob, http URL) gives the CLI's entries and tensors (`onnxzip ls --json`),
// its view (`onnxzip view -o -`) and its tensor bytes (`onnxzip extract`); argument errors are
// TypeError/RangeError; damaged archives fail with the CLI's status; URL replies are checked (spec 17);
// createSession with onnxruntime-node gives the outputs of a session on the original classic model.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as h from './helpers.mjs';

const oz = await h.loadPackage();
const SIMPLE = path.join(h.REPO, 'tests', 'fuzz', 'corpus', 'fuzz_open', 'classic_simple.onnx');  // x[?] -> z
let dir, server, base;
const files = {};
const served = new Map();  // url path -> {file, etag, mode}
const hits = [];

// A range server: strong ETag + Last-Modified, 206 for one range; misbehaviours by `mode`.
function handle(req, res) {
  const u = new URL(req.url, 'http://x');
  const s = served.get(u.pathname);
  hits.push({ path: u.pathname, range: req.headers.range, ifMatch: req.headers['if-match'] });
  if (!s) { res.writeHead(404).end(); return; }
  if (s.mode === 'flaky' && s.fails-- > 0) { res.writeHead(503).end(); return; }
  const body = fs.readFileSync(s.file);
  const etag = s.mode === 'changing' && hits.filter((x) => x.path === u.pathname).length > 1 ? '"v2"' : s.etag;
  const head = { 'Last-Modified': new Date(0).toUTCString() };
  if (s.mode === 'weak') head.ETag = 'W/' + etag; else if (s.mode !== 'none') head.ETag = etag;
  if (s.mode === 'nolm' || s.mode === 'none') delete head['Last-Modified'];
  if (req.headers['if-match'] && req.headers['if-match'] !== etag) { res.writeHead(412).end(); return; }
  if (s.mode === 'norange') { res.writeHead(200, head).end(body); return; }
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  let a = Number(m[1]), b = m[2] === '' ? body.length - 1 : Math.min(Number(m[2]), body.length - 1);
  if (m[1] === '') { a = Math.max(0, body.length - Number(m[2])); b = body.length - 1; }
  if (s.mode === 'offbyone') b = Math.max(a, b - 1);
  if (s.mode === 'gzip') head['Content-Encoding'] = 'gzip';
  res.writeHead(206, { ...head, 'Content-Range': `bytes ${a}-${b}/${body.length}` }).end(body.subarray(a, b + 1));
}

function serve(name, file, mode = 'ok', extra = {}) {
  served.set('/' + name, { file, etag: `"e-${name}"`, mode, ...extra });
  return `${base}/${name}`;
}

before(async () => {
  dir = h.scratch('oz-api-');
  files.entries = path.join(dir, 'simple.onnxzip');  // every tensor an entry
  h.cliOk('pack', '--size-threshold', '0', SIMPLE, '-o', files.entries);
  files.inline = path.join(dir, 'inline.onnxzip');  // tensors inline in the model
  h.cliOk('pack', SIMPLE, '-o', files.inline);
  server = http.createServer(handle);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => { server?.close(); if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

// The sources of one archive file, every kind.
function sources(file) {
  const bytes = fs.readFileSync(file);
  const padded = new Uint8Array(bytes.length + 16);
  padded.set(bytes, 7);
  const name = path.basename(file);
  return {
    path: [file, {}], fileUrl: [pathToFileURL(file), {}],
    arrayBuffer: [bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), { name }],
    window: [new DataView(padded.buffer, 7, bytes.length), { name }],
    blob: [new Blob([bytes]), { name }],
    url: [`${serve(name, file)}?token=secret`, {}],
  };
}

for (const kind of ['entries', 'inline']) {
  test(`every source kind gives the CLI's listing, view and tensor bytes (${kind})`, async () => {
    const file = files[kind];
    const want = h.cliListing(file);  // ls --json, alignments the file offsets'
    const wantJson = h.cliOk('ls', file, '--json').toString('utf8');
    const view = h.cliOk('view', file, '-o', '-');
    const view0 = h.cliOk('view', file, '-o', '-', '--size-threshold', '0');
    for (const [label, [src, opts]] of Object.entries(sources(file))) {
      const a = await oz.open(src, opts);
      try {
        assert.equal(a.name, path.basename(file), label);
        assert.equal(a.size, fs.statSync(file).size, label);
        assert.deepEqual(JSON.parse(JSON.stringify({ entries: a.entries, tensors: a.tensors })), want, label);
        h.assertSameListing(a._listing, wantJson, label);
        assert.deepEqual(Buffer.from(await a.view()), view, `${label}: view`);
        assert.deepEqual(Buffer.from(await a.view({ sizeThreshold: 0 })), view0, `${label}: view 0`);
        for (const t of a.tensors) {
          const got = await a.tensorData(t.key);
          assert.deepEqual(Buffer.from(got), h.cliOk('extract', file, t.key, '-o', '-'), `${label}: ${t.key}`);
          assert.equal(a.tensor(t.key), t);
        }
        await a.verify();
      } finally {
        await a.close();
      }
    }
  });
}

test('tensorData of an in-memory source shares its memory', async () => {
  const file = fs.readFileSync(files.entries);
  const padded = new Uint8Array(file.length + 32);
  padded.set(file, 13);
  for (const bytes of [new Uint8Array(file), padded.subarray(13, 13 + file.length)]) {
    const a = await oz.open(bytes);
    const t = a.tensors.find((x) => x.storage === 'entry');
    const d = await a.tensorData(t.name);
    assert.equal(d.buffer, bytes.buffer);
    assert.equal(d.byteOffset, bytes.byteOffset + t.offset);
    assert.deepEqual(Buffer.from(d), h.cliOk('extract', files.entries, t.key, '-o', '-'));
    assert.equal(a.name, 'model.onnxzip');
    await assert.rejects(a.tensorData('no such tensor'), { name: 'OnnxzipError', status: 'ONNXZIP_ENOTFOUND' });
    a.close();
  }
});

test('opening a URL reads the tail and the directory and model, no tensor entry\'s data', async () => {
  const file = files.entries;
  const { entries } = JSON.parse(h.cliOk('ls', '--json', file));
  const weights = entries.filter((e) => e.name !== '__MODEL_PROTO').map((e) => [e.data_offset, e.data_offset + e.size]);
  assert.ok(weights.length > 0);
  const size = fs.statSync(file).size;
  for (const tailBytes of [22, 64, 200]) {
    hits.length = 0;
    const a = await oz.open(serve('tail.onnxzip', file), { tailBytes });
    a.close();
    assert.equal(hits[0].range, `bytes=-${tailBytes}`);
    assert.ok(hits.length > 1, `tail ${tailBytes}: the directory is below the tail`);
    for (const { range } of hits.slice(1)) {
      const [, from, to] = /^bytes=(\d+)-(\d+)$/.exec(range).map(Number);
      assert.ok(to < size - tailBytes, `${range} re-reads the tail`);
      for (const [lo, hi] of weights) assert.ok(to < lo || from >= hi, `${range} overlaps tensor data [${lo}, ${hi})`);
    }
  }
});

test('wrong argument types are TypeError, bad values RangeError', async () => {
  for (const bad of [42, null, undefined, {}, [1, 2]]) await assert.rejects(oz.open(bad), TypeError);
  await assert.rejects(oz.open(files.entries, { tailBytes: '1' }), TypeError);
  await assert.rejects(oz.open(files.entries, { tailBytes: -1 }), RangeError);
  await assert.rejects(oz.open(files.entries, { tailBytes: 1.5 }), RangeError);
  await assert.rejects(oz.open('ftp://example.org/x.onnxzip'), TypeError);
  const a = await oz.open(files.entries);
  await assert.rejects(a.view({ sizeThreshold: -1 }), RangeError);
  await assert.rejects(a.view({ sizeThreshold: 0.5 }), RangeError);
  await assert.rejects(a.view({ sizeThreshold: '1' }), TypeError);
  await assert.rejects(a.view({ location: 'a/b.onnxzip' }), { status: 'ONNXZIP_EINVAL' });
  await assert.rejects(oz.createSession({}, files.entries), TypeError);
  a.close();
});

test('a missing file is ONNXZIP_EIO with ENOENT, a directory ONNXZIP_ENOTREG', async () => {
  const missing = path.join(dir, 'missing.onnxzip');
  const e = await oz.open(missing).catch((x) => x);
  assert.ok(e instanceof oz.OnnxzipError);
  assert.equal(e.status, h.cliStatus(h.cli('ls', missing).stderr));
  assert.equal(e.status, 'ONNXZIP_EIO');
  assert.equal(e.cause.code, 'ENOENT');
  assert.equal(e.path, missing);
  assert.match(e.message, /missing\.onnxzip.*ENOENT/);
  const d = await oz.open(dir).catch((x) => x);
  assert.equal(d.status, h.cliStatus(h.cli('ls', dir).stderr));
});

test('a cut or damaged archive fails with the CLI\'s status, from every source', async () => {
  const bytes = fs.readFileSync(files.entries);
  const cut = path.join(dir, 'cut.onnxzip');
  fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 10));
  const flipped = path.join(dir, 'flipped.onnxzip');
  const f = Buffer.from(bytes);
  f[64] ^= 1;  // the first entry's first data byte: found by verify (CRC-32)
  fs.writeFileSync(flipped, f);
  // entry 0's name in the central directory, not in its local header: onnxzip_open meets the local
  // header first (ELOCAL); a URL open, which reads no local header, meets the model's reference
  const renamed = path.join(dir, 'renamed.onnxzip');
  const g = Buffer.from(bytes);
  g[g.readUInt32LE(g.length - 22 + 16) + 46] ^= 1;
  fs.writeFileSync(renamed, g);
  for (const file of [cut, flipped, renamed]) {
    const want = h.cliStatus(h.cli('verify', file).stderr);
    assert.ok(want, file);
    for (const [label, [src, opts]] of Object.entries(sources(file))) {
      const e = await oz.open(src, { ...opts, verify: true }).then(() => null, (x) => x);
      assert.ok(e instanceof oz.OnnxzipError, `${label}: ${e}`);
      const cli = label === 'url' ? await h.cliAsync('verify', '--allow-http', '--retries', '0', src) : null;
      assert.equal(e.status, cli ? h.cliStatus(cli.stderr) : want, `${label}: ${e.message}`);
      assert.equal(typeof e.code, 'number');
      assert.doesNotMatch(e.message, /secret/);
    }
  }
});

test('verify reports progress and stops on abort', async () => {
  const a = await oz.open(files.entries);
  const seen = [];
  await a.verify({ onProgress: (done, total) => seen.push([done, total]) });
  assert.deepEqual(seen.at(-1), [a.size, a.size]);
  const ctl = new AbortController();
  ctl.abort();
  await assert.rejects(a.verify({ signal: ctl.signal }), { name: 'AbortError' });
  a.close();
});

test('URL replies are checked (spec 17)', async () => {
  const file = files.entries;
  const status = async (url, o = {}) => (await oz.open(url, { backoffMs: 1, ...o }).then((a) => a.close(), (e) => e))?.status;
  assert.equal(await status(serve('norange.onnxzip', file, 'norange')), 'ONNXZIP_ENORANGE');
  assert.equal(await status(serve('weak.onnxzip', file, 'weak')), undefined);  // Last-Modified pins it
  assert.equal(await status(serve('nolm.onnxzip', file, 'nolm')), undefined);  // the strong ETag pins it
  assert.equal(await status(serve('none.onnxzip', file, 'none')), 'ONNXZIP_EHTTP');  // nothing could
  const weakOnly = serve('weakonly.onnxzip', file, 'weak');
  served.get('/weakonly.onnxzip').etag = '"w"';
  const noVal = { fetch: async (u, init) => { const r = await fetch(u, init); const hd = new Headers(r.headers);
    hd.delete('last-modified'); return new Response(r.body, { status: r.status, headers: hd }); } };
  assert.equal(await status(weakOnly, noVal), 'ONNXZIP_EHTTP');
  assert.equal(await status(serve('gzip.onnxzip', file, 'gzip')), 'ONNXZIP_EREPLY');
  assert.equal(await status(serve('off.onnxzip', file, 'offbyone')), 'ONNXZIP_EREPLY');
  const e404 = await oz.open(`${base}/nothing.onnxzip?sig=secret`, { backoffMs: 1 }).catch((x) => x);
  assert.equal(e404.status, 'ONNXZIP_EHTTP');
  assert.equal(e404.httpStatus, 404);
  assert.doesNotMatch(e404.message, /secret/);
  assert.match(e404.message, /nothing\.onnxzip\?\.\.\./);
  assert.equal(await status(serve('flaky.onnxzip', file, 'flaky', { fails: 2 })), undefined);
  assert.equal(await status(serve('flaky2.onnxzip', file, 'flaky', { fails: 9 }), { retries: 2 }), 'ONNXZIP_EHTTP');
  // the file replaced after open: the next read fails, whatever it reads
  const a = await oz.open(serve('changing.onnxzip', file, 'changing'));
  await assert.rejects(a.tensorData(a.tensors[0].key), { status: 'ONNXZIP_ECHANGED' });
  a.close();
  // every request after the first carries the pinned ETag
  hits.length = 0;
  const b = await oz.open(serve('pinned.onnxzip', file));
  await b.verify();
  b.close();
  assert.ok(hits.length > 1);
  assert.ok(hits.slice(1).every((x) => x.ifMatch === '"e-pinned.onnxzip"'), JSON.stringify(hits));
});

test('createSession with onnxruntime-node gives the original model\'s outputs', async (t) => {
  let ort;
  try {
    ort = createRequire(import.meta.url)('onnxruntime-node');
  } catch {
    t.skip('onnxruntime-node is not installed in tests/js (npm ci)');
    return;
  }
  const ref = await ort.InferenceSession.create(SIMPLE);
  const x = new ort.Tensor('float32', Float32Array.from({ length: 4 }, (_, i) => i / 4 - 0.3), [1, 4]);
  const want = (await ref.run({ x })).z;
  const so = Object.freeze({ graphOptimizationLevel: 'all', extra: Object.freeze({ session: Object.freeze({}) }) });
  for (const [label, [src, opts]] of Object.entries(sources(files.entries))) {
    const s = await oz.createSession(ort, src, so, opts);
    const got = (await s.run({ x })).z;
    assert.deepEqual(got.dims, want.dims, label);
    assert.deepEqual(Buffer.from(got.data.buffer), Buffer.from(want.data.buffer), label);
    await s.release();
  }
  assert.deepEqual(so, { graphOptimizationLevel: 'all', extra: { session: {} } });
});

// index.d.ts used as an application would (types/usage.ts, with @ts-expect-error lines for what it must
// refuse), checked by tsc --strict against onnxruntime-node/-web's and transformers.js's own types.
test('index.d.ts: types/usage.ts type-checks with tsc --strict', () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(h.REPO, 'tests/js/types')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc -p tests/js/types:\n${r.stdout}${r.stderr}`);
});

test('package.json: name, the project\'s version, ESM with types', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(h.PACKAGE_DIR, 'package.json'), 'utf8'));
  const version = /version:\s*'([^']+)'/.exec(fs.readFileSync(path.join(h.REPO, 'meson.build'), 'utf8'))[1];
  assert.equal(pkg.name, 'onnxzip');
  assert.equal(pkg.version, version);
  assert.equal(pkg.type, 'module');
  assert.deepEqual(pkg.exports['.'], { types: './index.d.ts', default: './index.js' });
  assert.deepEqual(pkg.dependencies ?? {}, {});
  for (const f of ['index.js', 'index.d.ts', 'onnxzip.wasm', 'lib']) assert.ok(fs.existsSync(path.join(h.PACKAGE_DIR, f)), f);
});
