// repo_package.test.mjs — packages (format 1.2, spec 19) in the npm package (issue 29): a repository folder
// (make_repo.py: models under onnx/ and text_encoder/, external data in one file and in two chunks,
// plain files) packed by the CLI (`onnxzip pack DIR -o PKG`), then opened from every kind of source.
// Oracles: the folder itself (file list, file bytes), the `onnx` package on the folder's models (their
// tensors, make_repo.py's TENSORS.json), onnxruntime-node on the folder's models (outputs, bit for bit),
// the CLI (`ls --json --model`), and the requests a URL open sends (counted through options.fetch).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as h from './helpers.mjs';

const oz = await h.loadPackage();
const PYTHON = process.env.ONNXZIP_PYTHON || '/usr/bin/python3';
let dir, repo, pkg, single, server, oracle;
const DATA = /\.onnx_data(_\d+)?$/;  // make_repo.py's external data files, consumed by pack

// Every file under `root`, '/'-separated, sorted.
function listFolder(root) {
  return h.walk(root, () => true).map((p) => path.relative(root, p).split(path.sep).join('/')).sort();
}

before(async () => {
  dir = h.scratch('oz-package-');
  repo = path.join(dir, 'repo');
  const made = spawnSync(PYTHON,
    [path.join(h.REPO, 'tests/js/make_repo.py'), repo, path.join(dir, 'tensors.json')], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  oracle = JSON.parse(fs.readFileSync(path.join(dir, 'tensors.json'), 'utf8'));
  pkg = path.join(dir, 'repo.onnxzip');
  h.cliOk('pack', repo, '-o', pkg, '-q');
  single = path.join(dir, 'single.onnxzip');  // a 1.1 single-model archive of one of the models
  h.cliOk('pack', path.join(repo, 'onnx', 'model.onnx'), '-o', single, '-q');
  server = await h.rangeServer();
});
after(async () => { await server?.close(); if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

// A fetch that records each request's Range header (one entry per request, retries included).
function countingFetch(log) {
  return (url, init) => { log.push(init?.headers?.Range ?? null); return fetch(url, init); };
}

// The sources of one archive file, every kind the package opens.
function sources(file) {
  const bytes = fs.readFileSync(file);
  const name = path.basename(file);
  return {
    path: [file, {}], fileUrl: [pathToFileURL(file), {}],
    bytes: [new Uint8Array(bytes), { name }], blob: [new Blob([bytes]), { name }],
    url: [server.serve(name, file), {}],
  };
}

const modelPaths = () => listFolder(repo).filter((p) => p.endsWith('.onnx'));
const filePaths = () => listFolder(repo).filter((p) => !p.endsWith('.onnx') && !DATA.test(p));

test('models and files list the folder; readFile gives each file\'s bytes, from every source', async () => {
  assert.ok(filePaths().includes('empty.txt') && filePaths().includes('assets/blob.bin'), 'make_repo.py changed');
  for (const [label, [src, opts]] of Object.entries(sources(pkg))) {
    const a = await oz.open(src, opts);
    try {
      assert.deepEqual([...a.models.keys()].sort(), modelPaths(), label);
      assert.deepEqual([...a.files.keys()].sort(), filePaths(), label);
      const byName = new Map(a.entries.map((e) => [e.name, e]));
      for (const [p, m] of a.models) {
        assert.deepEqual(Object.keys(m).sort(), ['default', 'path', 'size'], `${label}: ${p}`);
        assert.equal(m.path, p);
        assert.equal(m.size, byName.get(p).size, `${label}: ${p}: its entry's size`);
      }
      const defaults = [...a.models.values()].filter((m) => m.default);
      assert.equal(defaults.length, 1, `${label}: one default model`);
      assert.equal(a.modelPath, defaults[0].path, `${label}: open() holds the default`);
      for (const [p, f] of a.files) {
        const want = fs.readFileSync(path.join(repo, p));
        assert.deepEqual(f, { path: p, size: want.length }, `${label}: ${p}`);
        for (let k = 0; k < 2; k++) {  // the first read checks the local header (a URL's), the second not
          assert.deepEqual(Buffer.from(await a.readFile(p)), want, `${label}: readFile(${p}) #${k + 1}`);
        }
      }
    } finally {
      await a.close();
    }
  }
});

test('each model: open(PKG, {model}) holds it, its tensors are the folder\'s, its listing the CLI\'s', async () => {
  for (const [label, [src, opts]] of Object.entries(sources(pkg))) {
    for (const m of modelPaths()) {
      const a = await oz.open(src, { ...opts, model: m });
      try {
        assert.equal(a.modelPath, m, label);
        h.assertSameListing(a._listing, h.cliOk('ls', '--json', '--model', m, pkg).toString('utf8'), `${label}: ${m}`);
        const names = Object.keys(oracle[m]);
        assert.ok(names.length >= 2, m);
        for (const name of names) {
          const got = await a.tensorData(name);
          assert.deepEqual(Buffer.from(got), Buffer.from(oracle[m][name], 'base64'), `${label}: ${m}: ${name}`);
        }
        const stored = new Set(a.tensors.filter((t) => names.includes(t.name)).map((t) => t.storage));
        if (label === 'path') assert.ok(stored.has('entry') && stored.has('inline'), `${m}: ${[...stored]}`);
        const entry = a.entries.find((e) => e.name === m);
        assert.equal(a.modelBytes().length, entry.size, `${label}: ${m}: modelBytes is its entry`);
        await a.verify();
      } finally {
        await a.close();
      }
    }
  }
});

test('createSession on each model of the package = onnxruntime-node on the folder\'s model, bit for bit', async (t) => {
  const ort = createRequire(import.meta.url)('onnxruntime-node');
  const x = new ort.Tensor('float32', Float32Array.from({ length: 16 }, (_, i) => Math.sin(i + 1)), [1, 16]);
  const run = async (s) => {
    const out = await s.run({ X: x });
    await s.release();
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [v.dims, Buffer.from(v.data.buffer)]]));
  };
  const wants = {};
  for (const m of modelPaths()) wants[m] = await run(await ort.InferenceSession.create(path.join(repo, m)));
  const all = sources(pkg);
  for (const label of ['path', 'bytes', 'url']) {
    const [src, opts] = all[label];
    for (const m of modelPaths()) {
      assert.deepEqual(await run(await oz.createSession(ort, src, {}, { ...opts, model: m })), wants[m], `${label}: ${m}`);
    }
    const a = await oz.open(src, opts);
    assert.deepEqual(await run(await oz.createSession(ort, src, {}, opts)), wants[a.modelPath], `${label}: default`);
    await a.close();
  }
  t.diagnostic(`${modelPaths().length} models, outputs identical to the folder's`);
});

test('an unknown model or file is ONNXZIP_ENOTFOUND naming it', async () => {
  assert.equal(h.cliStatus(h.cli('ls', '--model', 'onnx/nope.onnx', pkg).stderr), 'ONNXZIP_ENOTFOUND');  // as the CLI
  for (const [label, [src, opts]] of Object.entries(sources(pkg))) {
    for (const model of ['onnx/nope.onnx', 'config.json', 'ONNX/model.onnx']) {
      await assert.rejects(oz.open(src, { ...opts, model }), (e) => {
        assert.ok(e instanceof oz.OnnxzipError, `${label}: ${e}`);
        assert.equal(e.status, 'ONNXZIP_ENOTFOUND', `${label}: ${e.message}`);
        assert.ok(e.message.includes(`'${model}'`), e.message);
        return true;
      });
    }
    const a = await oz.open(src, opts);
    try {
      for (const p of ['nope.json', 'onnx/model.onnx', 'onnx/model.onnx_data', '/config.json', 'CONFIG.JSON']) {
        await assert.rejects(a.readFile(p), (e) => {
          assert.ok(e instanceof oz.OnnxzipError, `${label}: ${e}`);
          assert.equal(e.status, 'ONNXZIP_ENOTFOUND', e.message);
          assert.ok(e.message.includes(`'${p}'`), e.message);
          return true;
        });
      }
      await assert.rejects(a.readFile('onnx/model.onnx'), /that is a model/);
      await assert.rejects(a.readFile(42), TypeError);
    } finally {
      await a.close();
    }
    await assert.rejects(a.readFile('config.json'), { status: 'ONNXZIP_EINVAL' });  // closed
  }
});

test('a single-model archive: no members, modelPath null; a model asked of it is ONNXZIP_EINVAL', async () => {
  const a = await oz.open(single);
  try {
    assert.equal(a.models.size, 0);
    assert.equal(a.files.size, 0);
    assert.equal(a.modelPath, null);
    await assert.rejects(a.readFile('config.json'), { status: 'ONNXZIP_ENOTFOUND', message: /not a package/ });
  } finally {
    await a.close();
  }
  await assert.rejects(oz.open(single, { model: 'onnx/model.onnx' }), { status: 'ONNXZIP_EINVAL' });
});

test('options.model: a string without NUL; createSession of an Archive holding another model refuses', async () => {
  await assert.rejects(oz.open(pkg, { model: 42 }), TypeError);
  await assert.rejects(oz.open(pkg, { model: 'onnx/model.onnx\0x' }), RangeError);
  await assert.rejects(oz.open(pkg, { model: '' }), RangeError);
  const ort = createRequire(import.meta.url)('onnxruntime-node');
  const a = await oz.open(pkg, { model: 'text_encoder/model.onnx' });
  try {
    await assert.rejects(oz.createSession(ort, a, {}, { model: 'onnx/model.onnx' }), RangeError);
  } finally {
    await a.close();
  }
});

test('over HTTP: readFile is one range request (header and bytes); a model\'s open reads no tensor or file', async (t) => {
  const log = [];
  const url = server.serve('http.onnxzip', pkg);
  const a = await oz.open(url, { fetch: countingFetch(log), tailBytes: 4096 });
  try {
    for (const p of filePaths()) {
      const e = a.entries.find((x) => x.name === p);
      log.length = 0;
      assert.deepEqual(Buffer.from(await a.readFile(p)), fs.readFileSync(path.join(repo, p)), p);
      assert.deepEqual(log, [`bytes=${e.headerOffset}-${e.dataOffset + e.size - 1}`], `${p}: its header and data`);
      log.length = 0;
      await a.readFile(p);
      assert.deepEqual(log, e.size ? [`bytes=${e.dataOffset}-${e.dataOffset + e.size - 1}`] : [], `${p}: again`);
    }
  } finally {
    await a.close();
  }
  // opening a model reads, after the file's last bytes, no byte of a tensor or file entry
  const sizes = [];
  for (const m of modelPaths()) {
    log.length = 0;
    const b = await oz.open(url, { fetch: countingFetch(log), tailBytes: 256, model: m });
    const others = b.entries.filter((e) => e.name !== m && e.name !== '__PACKAGE' && !b.models.has(e.name));
    assert.equal(log[0], 'bytes=-256');
    let bytes = 256;
    for (const r of log.slice(1)) {
      const [from, to] = /^bytes=(\d+)-(\d+)$/.exec(r).slice(1).map(Number);
      bytes += to - from + 1;
      for (const e of others) assert.ok(to < e.headerOffset || from >= e.dataOffset + e.size, `${m}: ${r} reads ${e.name}`);
    }
    sizes.push(`${m}: ${log.length} requests, ${bytes} bytes (its entry ${b.models.get(m).size})`);
    await b.close();
  }
  t.diagnostic(sizes.join('; '));
});
