// remote_package.test.mjs — one model of a remote package (issue 30): every model of the four repository
// layouts of tests/packages/make_repos.py, packed by the CLI (`onnxzip pack DIR -o PKG`), served by a
// local HTTP server (helpers.rangeServer, counting the body bytes it sends), run by createSession(ort, URL,
// {}, {model}) in onnxruntime-node (and from the package's path). Oracles: onnxruntime-node on the folder's
// model (outputs, bit for bit) and the server's byte count against what that model needs: its entry, its
// tensors' entries and the package's end (manifest, central directory, end records), each entry with its
// local header.
// And the ```js block of README.md's "### ONNX Runtime" (under "## Packages") run as written, its URL the
// local server's, on the folder readme_examples.py makes (the demo's MLP as an encoder and a decoder).
// Needs the pinned venv's python (make_repos.py uses `tokenizers`): ONNXZIP_PYVENV_PYTHON.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import * as h from './helpers.mjs';

const oz = await h.loadPackage();
const ort = createRequire(import.meta.url)('onnxruntime-node');
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON;
const KINDS = ['transformers_js', 'encoder_decoder', 'genai', 'diffusers'];
const TAIL = 4096;  // the first request's bytes (tailBytes): read whatever the model is
let dir, server, feeds;


before(async () => {
  assert.ok(PYTHON && fs.existsSync(PYTHON), `ONNXZIP_PYVENV_PYTHON (${PYTHON}): the pinned venv's python ` +
    '(tests/python/venv.sh BUILDDIR/pyvenv) is needed for make_repos.py');
  dir = h.scratch('oz-remote-package-');
  feeds = h.makeRepos(PYTHON, dir, KINDS);
  for (const kind of KINDS) h.cliOk('pack', path.join(dir, kind), '-o', path.join(dir, `${kind}.onnxzip`), '-q');
  server = await h.rangeServer();
});
after(async () => { await server?.close(); if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

const run = (session, spec) => h.sessionOutputs(ort, session, spec);

// The bytes model `m` of the package `pkg` needs: its entry, the entries its tensors lie in (each with its
// local header), and everything from the manifest (the last entry) to the file's end; `open`: the same
// without the tensors (what open() reads).
async function needed(pkg, m) {
  const a = await oz.open(pkg, { model: m });
  try {
    const span = (e) => e.dataOffset + e.size - e.headerOffset;
    const byName = new Map(a.entries.map((e) => [e.name, e]));
    const used = new Set([m, ...a.tensors.filter((t) => t.storage === 'entry').map((t) => t.entry)]);
    const last = a.entries.reduce((x, e) => (e.headerOffset > x.headerOffset ? e : x));
    const end = a.size - last.headerOffset;
    const others = a.entries.filter((e) => a.models.has(e.name) && e.name !== m);
    const need = [...used].reduce((k, n) => k + span(byName.get(n)), 0) + end;
    return { need, open: span(byName.get(m)) + end, others,
      tensors: used.size - 1, size: a.size, last: a.entries.filter((e) => a.models.has(e.name)).pop().name };
  } finally {
    await a.close();
  }
}

test('open(URL, {model}) and createSession(ort, URL, {}, {model}) for every model of every layout: the ' +
  'folder\'s outputs, bit for bit, and only that model\'s bytes transferred', async (t) => {
  const lines = [];
  let nonLast = 0;
  for (const kind of KINDS) {
    const pkg = path.join(dir, `${kind}.onnxzip`);
    const url = server.serve(`${kind}.onnxzip`, pkg);
    for (const m of Object.keys(feeds[kind])) {
      const want = await run(await ort.InferenceSession.create(path.join(dir, kind, m)), feeds[kind][m]);
      const { need, open, others, tensors, size, last } = await needed(pkg, m);
      let before = server.sent;
      const ranges = [];
      const fetchLog = (u, init) => { ranges.push(init?.headers?.Range); return fetch(u, init); };
      await (await oz.open(url, { model: m, tailBytes: TAIL, fetch: fetchLog })).close();
      const opened = server.sent - before;
      assert.equal(ranges[0], `bytes=-${TAIL}`);
      for (const r of ranges.slice(1)) {  // after the tail: no byte of another model's entry
        const [from, to] = /^bytes=(\d+)-(\d+)$/.exec(r).slice(1).map(Number);
        for (const e of others) {
          assert.ok(to < e.headerOffset || from >= e.dataOffset + e.size, `${kind}: ${m}: ${r} reads ${e.name}`);
        }
      }
      assert.ok(opened <= 1.01 * open + TAIL, `${kind}: open(URL, {model: '${m}'}) transferred ${opened} bytes, ` +
        `the model's entry and the package's end are ${open} (+ a ${TAIL}-byte first read)`);
      before = server.sent;
      const session = await oz.createSession(ort, url, {}, { model: m, tailBytes: TAIL });
      const sent = server.sent - before;
      assert.deepEqual(await run(session, feeds[kind][m]), want, `${kind}: ${m}`);
      const local = await oz.createSession(ort, pkg, {}, { model: m });  // the path: ORT maps the file
      assert.deepEqual(await run(local, feeds[kind][m]), want, `${kind}: ${m} (path)`);
      if (m !== last) nonLast++;
      lines.push(`${kind} ${m}: open ${opened} bytes (${open} needed), session ${sent} (${need} needed, ` +
        `${tensors} tensor entries), package ${size}`);
      assert.ok(sent <= 1.01 * need + TAIL, `${kind}: ${m}: ${sent} bytes transferred, the model needs ${need} ` +
        `(+ a ${TAIL}-byte first read); the package is ${size}`);
    }
  }
  assert.ok(nonLast >= 4, 'make_repos.py changed: too few models before a package\'s last');
  t.diagnostic(lines.join('; '));
});

// The one ```js block of README.md's "### ONNX Runtime" subsection of "## Packages".
function readmeBlock() {
  const lines = fs.readFileSync(path.join(h.REPO, 'README.md'), 'utf8').split('\n');
  const pkgs = lines.findIndex((l) => l.startsWith('## Packages'));
  const start = lines.findIndex((l, i) => i > pkgs && l === '### ONNX Runtime');
  const end = lines.findIndex((l, i) => i > start && /^#{1,3} /.test(l));  // the subsection ends at the next ###
  assert.ok(pkgs >= 0 && start > pkgs, 'README.md has no "### ONNX Runtime" under "## Packages"');
  const text = lines.slice(start, end).join('\n');
  const blocks = [...text.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(blocks.length, 1, 'one ```js block');
  return blocks[0];
}

// readme_examples.py's repo/ (tools/make_example_model.py's MLP saved as two models with external data), packed.
const TINY_REPO = `
import sys, onnx, subprocess, pathlib
root = pathlib.Path(sys.argv[1])
(root / "onnx").mkdir(parents=True)
subprocess.run([sys.executable, sys.argv[2], str(root.parent / "model.onnx")], check=True, stdout=subprocess.DEVNULL)
for name in ("encoder_model", "decoder_model_merged"):
    onnx.save_model(onnx.load(str(root.parent / "model.onnx")), str(root / "onnx" / f"{name}.onnx"),
                    save_as_external_data=True, location=f"{name}.onnx_data", size_threshold=1024)
(root / "config.json").write_text('{"model_type": "demo"}\\n')
`;

test('README "### ONNX Runtime" (Packages): its js block runs, one model by URL = the folder\'s model', async (t) => {
  const code = readmeBlock();
  const url = /'(https:\/\/[^']+\/repo\.onnxzip)'/.exec(code)?.[1];
  assert.ok(url, 'the block names no https://.../repo.onnxzip');
  const work = path.join(dir, 'readme');
  const maker = path.join(h.REPO, 'tools/make_example_model.py');
  const made = spawnSync(PYTHON, ['-c', TINY_REPO, path.join(work, 'repo'), maker], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  h.cliOk('pack', path.join(work, 'repo'), '-o', path.join(work, 'repo.onnxzip'), '-q');
  fs.mkdirSync(path.join(work, 'node_modules'));
  const modules = path.join(work, 'node_modules');
  fs.symlinkSync(path.resolve(h.PACKAGE_DIR), path.join(modules, 'onnxzip'));
  fs.symlinkSync(path.join(h.REPO, 'tests/js/node_modules/onnxruntime-node'), path.join(modules, 'onnxruntime-node'));
  const served = server.serve('readme.onnxzip', path.join(work, 'repo.onnxzip'));
  fs.writeFileSync(path.join(work, 'example.mjs'), code.replace(url, served));
  // asynchronously: the server answering the example runs in this process
  const r = await promisify(execFile)(process.execPath, ['example.mjs'], { cwd: work, timeout: 120000 });
  t.diagnostic(r.stdout.trim());
  const folder = await ort.InferenceSession.create(path.join(work, 'repo/onnx/decoder_model_merged.onnx'));
  const { Y } = await folder.run({ X: new ort.Tensor('float32', new Float32Array(2 * 32).fill(0.5), [2, 32]) });
  await folder.release();
  const m = /^\[ ?([\d, ]*?) ?\] Float32Array\(4\) \[([^\]]*)\]$/m.exec(r.stdout);
  assert.ok(m, `no "[dims] Float32Array(4) [...]" in:\n${r.stdout}`);
  assert.deepEqual(m[1].split(',').map(Number), Y.dims);
  assert.deepEqual(m[2].split(',').map(Number), Array.from(Y.data.slice(0, 4)));
});
