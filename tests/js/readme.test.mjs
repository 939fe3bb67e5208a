// readme.test.mjs — the examples of README.md's "## JavaScript" section run
// as written (every example in the README must): its ```sh block (npm install
// of the build's package directory; npm pack's tarball listed by tar), its
// ```js block (example.mjs, run by node in a fresh project with the demo's
// archive) and its ```html block (the page, served by nginx and opened in
// Debian's chromium); and those of "### transformers.js": its ```js (node), its
// ```html (chromium, every request of the page recorded: none leaves nginx) and
// its ```sh (the variable onnxruntime-node's install script reads). Oracles:
// `onnxzip ls --json` (the tensors printed and logged), python3-onnx (the weight
// values printed), onnxruntime-node on the classic tiny.onnx (the outputs
// printed), transformers.js on the repository folder (the embeddings printed),
// nginx's access log (open()'s first request), tar (the tarball's files),
// onnxruntime-node's script/install*.js.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launch, unavailable } from './browser/chromium.mjs';
import { NGINX, startNginx } from './browser/nginx.mjs';
import { CLI, PACKAGE_DIR, REPO, cliListing, cliOk, scratch } from './helpers.mjs';

const require = createRequire(import.meta.url);
const PYTHON = process.env.ONNXZIP_PYTHON || '/usr/bin/python3'; // Debian's, with python3-onnx
const REQUIRED = process.env.ONNXZIP_JS_REQUIRED === '1';
const HERE = path.join(REPO, 'tests', 'js');

// The "## JavaScript" section of README.md (up to the next "## " heading).
function jsSection() {
  const lines = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8').split('\n');
  const start = lines.indexOf('## JavaScript');
  assert.ok(start >= 0, 'README.md has no "## JavaScript" section');
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start, end < 0 ? undefined : end);
}

// The "### transformers.js" subsection of README.md (up to the next "## " or "### " heading).
function transformersSection() {
  const lines = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8').split('\n');
  const start = lines.indexOf('### transformers.js');
  assert.ok(start >= 0, 'README.md has no "### transformers.js" section');
  const end = lines.findIndex((l, i) => i > start && /^###? /.test(l));
  return lines.slice(start, end < 0 ? undefined : end);
}

// The one fenced block of language LANG in the section (default: "## JavaScript"): its text.
function block(lang, section = jsSection()) {
  const found = [];
  let cur = null;
  for (const l of section) {
    if (cur === null && l.startsWith('```')) cur = { lang: l.slice(3).trim(), body: [] };
    else if (cur !== null && l.startsWith('```')) { found.push(cur); cur = null; }
    else if (cur !== null) cur.body.push(l);
  }
  assert.equal(cur, null, 'an unclosed ``` block in README.md\'s JavaScript section');
  const mine = found.filter((b) => b.lang === lang);
  assert.equal(mine.length, 1, `README.md's JavaScript section: ${mine.length} \`\`\`${lang} blocks, expected 1`);
  return mine[0].body.join('\n') + '\n';
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 180000, maxBuffer: 1 << 26, ...opts });
  if (r.error) throw r.error;
  return r;
}

function runOk(cmd, args, opts) {
  const r = run(cmd, args, opts);
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// The demo's archive (tools/demo.sh): tiny.onnx by make_example_model.py, packed by the CLI.
function makeTiny(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const onnx = path.join(dir, 'tiny.onnx');
  const archive = path.join(dir, 'tiny.onnxzip');
  runOk(PYTHON, [path.join(REPO, 'tools', 'make_example_model.py'), onnx]);
  cliOk('pack', onnx, '-o', archive);
  return { onnx, archive };
}

// A tensor's line of example.mjs (console.log(key, dtype, dims, storage, offset, alignment)).
const TENSOR_LINE = /^(\S+) ([A-Z0-9_]+) \[ ?([\d, ]*?) ?\] (\S+) (\d+) (\d+)$/;
// The numbers of a printed Float32Array(N) [ ... ] (node's util.inspect).
function printedFloats(out, re) {
  const m = re.exec(out);
  assert.ok(m, `no ${re} in example.mjs's output:\n${out}`);
  return m.at(-1).split(',').map((s) => s.trim()).filter(Boolean).map(Number);
}

let work, tiny;
before(() => {
  work = scratch('readme-');
  tiny = makeTiny(path.join(work, 'tiny'));
});
after(() => { if (work) fs.rmSync(work, { recursive: true, force: true }); });

describe('```sh: npm install / npm pack of the package directory', () => {
  const npm = run('npm', ['--version']);
  const skip = npm.error || npm.status !== 0 ? 'npm absent (Debian: apt-get install npm)' : null;
  if (skip && REQUIRED) test('npm required (ONNXZIP_JS_REQUIRED=1)', () => assert.fail(skip));
  // npm's cache and logs in the scratch directory, nothing asked of a registry
  const npmEnv = () => ({ ...process.env, npm_config_cache: path.join(work, 'npm-cache'),
    npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' });

  // The sh block: "npm install DIR   # or: npm pack DIR2", DIR the package of a build dir "build".
  function shPaths() {
    const lines = block('sh').split('\n').filter((l) => l.trim());
    assert.equal(lines.length, 1, `the sh block: ${JSON.stringify(lines)}`);
    const m = /^npm install (\S+)\s+# or: npm pack (\S+)$/.exec(lines[0]);
    assert.ok(m, `the sh block is not "npm install DIR  # or: npm pack DIR": ${lines[0]}`);
    for (const p of [m[1], m[2]]) assert.ok(p.endsWith('build/src/js/package'), `${p}: not BUILD/src/js/package`);
    // the build directory's package under test stands for the README's build/
    assert.ok(PACKAGE_DIR.endsWith(path.join('src', 'js', 'package')), PACKAGE_DIR);
    return path.resolve(PACKAGE_DIR);
  }

  test('npm install DIR into a project, then import(\'onnxzip\')', { skip: skip ?? false }, () => {
    const pkg = shPaths();
    const proj = path.join(work, 'npm-project');
    fs.mkdirSync(proj);
    // a project of its own (else npm installs into the nearest parent with node_modules)
    fs.writeFileSync(path.join(proj, 'package.json'), '{"name": "readme-npm", "version": "1.0.0", "private": true}\n');
    runOk('npm', ['install', '--ignore-scripts', '--offline', pkg], { cwd: proj, env: npmEnv() });
    const deps = JSON.parse(fs.readFileSync(path.join(proj, 'package.json'), 'utf8')).dependencies;
    assert.ok(deps?.onnxzip, `package.json after npm install: ${JSON.stringify(deps)}`);
    // npm links a folder (npm >= 9.4, and 8), or copies it (npm 9.0-9.3, Debian 12's 9.2: install-links)
    const installed = path.join(proj, 'node_modules', 'onnxzip');
    if (fs.realpathSync(installed) !== fs.realpathSync(pkg)) {
      for (const f of ['package.json', 'index.js', 'onnxzip.wasm']) {
        assert.ok(fs.readFileSync(path.join(installed, f)).equals(fs.readFileSync(path.join(pkg, f))),
          `${installed}/${f}: neither a link to nor a copy of ${pkg}/${f}`);
      }
    }
    const out = runOk(process.execPath, ['-e',
      "import('onnxzip').then((m) => console.log(JSON.stringify(Object.keys(m).sort())))"], { cwd: proj });
    assert.deepEqual(JSON.parse(out), ['Archive', 'OnnxzipError', 'TransformersPackage', 'createSession', 'open',
      'transformersModel']);
  });

  test('npm pack DIR: a tarball with the wasm, the modules, the types, package.json, README.md', { skip: skip ?? false }, () => {
    const pkg = shPaths();
    const dest = path.join(work, 'npm-pack');
    fs.mkdirSync(dest);
    const packed = JSON.parse(runOk('npm', ['pack', pkg, '--pack-destination', dest, '--json'],
      { cwd: dest, env: npmEnv() }));
    const tgz = path.join(dest, packed[0].filename);
    const files = runOk('tar', ['-tzf', tgz]).split('\n').filter(Boolean).sort();
    const lib = fs.readdirSync(path.join(pkg, 'lib')).filter((n) => n.endsWith('.js')).map((n) => `package/lib/${n}`);
    assert.ok(lib.length > 0, `${pkg}/lib has no .js`);
    const want = ['package/README.md', 'package/index.d.ts', 'package/index.js', 'package/onnxzip.wasm',
      'package/package.json', ...lib].sort();
    assert.deepEqual(files, want);
    // the tarball's wasm is the build's
    const wasm = run('tar', ['-xzOf', tgz, 'package/onnxzip.wasm'], { encoding: 'buffer' }).stdout;
    assert.ok(wasm.equals(fs.readFileSync(path.join(pkg, 'onnxzip.wasm'))), 'the tarball\'s onnxzip.wasm differs');
  });
});

test('```js: example.mjs runs in a project with onnxzip and onnxruntime-node', async (t) => {
  const proj = path.join(work, 'node-project');
  fs.mkdirSync(path.join(proj, 'node_modules'), { recursive: true });
  // symlinks, as `npm install <folder>` makes for onnxzip
  fs.symlinkSync(path.resolve(PACKAGE_DIR), path.join(proj, 'node_modules', 'onnxzip'));
  fs.symlinkSync(path.join(HERE, 'node_modules', 'onnxruntime-node'), path.join(proj, 'node_modules', 'onnxruntime-node'));
  // "with the demo's archive copied to build/example/tiny.onnxzip"
  const { onnx, archive } = makeTiny(path.join(proj, 'build', 'example'));
  fs.writeFileSync(path.join(proj, 'example.mjs'), block('js'));
  const r = run(process.execPath, ['example.mjs'], { cwd: proj });
  t.diagnostic(`node example.mjs:\n${r.stdout}${r.stderr}`);
  assert.equal(r.status, 0, `node example.mjs: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  const out = r.stdout;

  // the tensors, one line each, = onnxzip ls --json
  const ls = cliListing(archive).tensors;
  const lines = out.split('\n').slice(0, ls.length);
  const printed = lines.map((l) => {
    const m = TENSOR_LINE.exec(l);
    assert.ok(m, `not a tensor line: ${l}`);
    return [m[1], m[2], m[3] ? m[3].split(',').map(Number) : [], m[4], Number(m[5]), Number(m[6])];
  });
  assert.deepEqual(printed, ls.map((x) => [x.key, x.dtype, x.dims, x.storage, x.offset, x.alignment]));
  assert.ok(!TENSOR_LINE.test(out.split('\n')[ls.length]), 'more tensor lines than ls --json has tensors');

  // fc1.weight's first values = onnx's (python3-onnx on tiny.onnx)
  const wantW = JSON.parse(runOk(PYTHON, ['-c', `import json, sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
w = [numpy_helper.to_array(i) for i in m.graph.initializer if i.name == 'fc1.weight'][0]
print(json.dumps([float(v) for v in w.reshape(-1)[:3]]))`, onnx]));
  assert.deepEqual(printedFloats(out, /Float32Array\(3\) \[([^\]]*)\]/), wantW);

  // Y = onnxruntime-node's on the classic tiny.onnx with the example's input
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(onnx);
  const X = new ort.Tensor('float32', new Float32Array(2 * 32).fill(0.5), [2, 32]);
  const { Y } = await session.run({ X });
  assert.deepEqual(Y.dims, [2, 16]);
  const m = /\[ ?([\d, ]*?) ?\] Float32Array\(4\) \[([^\]]*)\]/.exec(out);
  assert.ok(m, `no "[dims] Float32Array(4) [...]" in the output:\n${out}`);
  assert.deepEqual(m[1].split(',').map(Number), [2, 16]);
  assert.deepEqual(printedFloats(out, /\] Float32Array\(4\) \[([^\]]*)\]/), Array.from(Y.data.slice(0, 4)));
  await session.release?.();
});

// make_tjs_repos.py needs `tokenizers`: the pinned venv's interpreter (tests/python/venv.sh makes it)
const PYVENV = process.env.ONNXZIP_PYVENV_PYTHON || path.join(REPO, 'build-test', 'pyvenv', 'bin', 'python');

// "bert.onnxzip: onnxzip pack bert -o bert.onnxzip": make_tjs_repos.py's BERT-style repository, packed
// once, and the oracle of its examples: transformers.js's own loader on the folder, the same pipeline.
let bertMade = null;
function bert() {
  bertMade ??= (async () => {
    assert.ok(fs.existsSync(PYVENV), `${PYVENV} absent: tests/python/venv.sh BUILD/pyvenv makes it`);
    runOk(PYVENV, [path.join(HERE, 'make_tjs_repos.py'), path.join(work, 'tjs-repos')]);
    const archive = path.join(work, 'bert.onnxzip');
    cliOk('pack', path.join(work, 'tjs-repos', 'bert'), '-o', archive, '-q');
    const { env, pipeline } = await import('@huggingface/transformers');
    Object.assign(env, { allowRemoteModels: false, useFSCache: false, localModelPath: path.join(work, 'tjs-repos') + '/' });
    const extractor = await pipeline('feature-extraction', 'bert');
    const out = await extractor('the quick brown fox');
    await extractor.dispose();
    return { archive, want: { dims: out.dims, first4: Array.from(out.data.slice(0, 4)) } };
  })();
  return bertMade;
}

test('### transformers.js: its ```js runs in a project with onnxzip and @huggingface/transformers', async (t) => {
  const proj = path.join(work, 'tjs-project');
  fs.mkdirSync(path.join(proj, 'node_modules', '@huggingface'), { recursive: true });
  fs.symlinkSync(path.resolve(PACKAGE_DIR), path.join(proj, 'node_modules', 'onnxzip'));
  fs.symlinkSync(path.join(HERE, 'node_modules', '@huggingface', 'transformers'),
    path.join(proj, 'node_modules', '@huggingface', 'transformers'));
  const { archive, want } = await bert();
  fs.copyFileSync(archive, path.join(proj, 'bert.onnxzip'));
  fs.writeFileSync(path.join(proj, 'example.mjs'), block('js', transformersSection()));
  const r = run(process.execPath, ['example.mjs'], { cwd: proj });
  t.diagnostic(`node example.mjs:\n${r.stdout}${r.stderr}`);
  assert.equal(r.status, 0, `node example.mjs: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  const m = /^onnxzip\/bert \[ ?([\d, ]*?) ?\] Float32Array\(4\) \[([^\]]*)\]/.exec(r.stdout);
  assert.ok(m, `no "onnxzip/bert [dims] Float32Array(4) [...]" in the output:\n${r.stdout}`);
  assert.deepEqual(m[1].split(',').map(Number), want.dims);
  assert.deepEqual(printedFloats(r.stdout, /\] Float32Array\(4\) \[([^\]]*)\]/), want.first4);
});

test('### transformers.js: its ```sh names the variable onnxruntime-node\'s install script reads to skip its downloads', () => {
  const line = block('sh', transformersSection()).trim();
  const m = /^(\w+)=(\S+) npm install @huggingface\/transformers (\S+)$/.exec(line);
  assert.ok(m, `the sh block is not "VAR=VALUE npm install @huggingface/transformers DIR": ${line}`);
  assert.ok(m[3].endsWith('build/src/js/package'), `${m[3]}: not BUILD/src/js/package`);
  // the oracle: onnxruntime-node's own install script (the version transformers.js depends on), which
  // exits before any download when parseInstallFlag() returns false: for this variable set to this value
  const tjsDir = path.join(HERE, 'node_modules', '@huggingface', 'transformers');
  let ortNode = path.dirname(createRequire(tjsDir + '/').resolve('onnxruntime-node'));
  while (!fs.existsSync(path.join(ortNode, 'script', 'install.js')) && ortNode !== path.dirname(ortNode)) ortNode = path.dirname(ortNode);
  const utils = fs.readFileSync(path.join(ortNode, 'script', 'install-utils.js'), 'utf8');
  assert.match(utils, new RegExp(`let flag = process\\.env\\.${m[1]} \\|\\|`), `install-utils.js reads no ${m[1]} first`);
  const parse = /function parseInstallFlag\(\) \{([\s\S]*?)\n\}/.exec(utils)?.[1] ?? '';
  assert.match(parse, new RegExp(`case '${m[2]}':\\s*return false;`), `${m[2]} does not skip the install in parseInstallFlag()`);
  assert.match(fs.readFileSync(path.join(ortNode, 'script', 'install.js'), 'utf8'),
    /if \(INSTALL_FLAG === false\) \{\s*process\.exit\(0\);/, 'install.js does not exit at once when skipped');
});

// A describe() of a page in chromium served by nginx, skipped without them (a failure when required):
// body(c) adds its tests, which call c.start(locations) for the server and the browser (stopped after).
function inChromium(title, body) {
  describe(title, () => {
    const skip = unavailable() ?? (fs.existsSync(NGINX) ? null : `${NGINX} absent (Debian: apt-get install nginx)`);
    if (skip && REQUIRED) test('the browser required (ONNXZIP_JS_REQUIRED=1)', () => assert.fail(skip));
    const c = { skip: skip ?? false };
    c.start = async (locations) => {
      c.srv = await startNginx(locations);
      c.browser = await launch();
      return c;
    };
    after(async () => {
      await c.browser?.close();
      await c.srv?.stop();
    });
    body(c);
  });
}

inChromium('### transformers.js: its ```html page in chromium, served by nginx', (c) => {
  test('index.html: the folder\'s embeddings logged; no request leaves the server', { skip: c.skip }, async (t) => {
    // the layout the block expects: ./transformers/ (its dist), ./ort/ (its onnxruntime-web's dist), ./onnxzip/
    const site = path.join(work, 'tjs-site');
    fs.mkdirSync(site);
    fs.writeFileSync(path.join(site, 'index.html'), block('html', transformersSection()));
    const { archive, want } = await bert();
    fs.copyFileSync(archive, path.join(site, 'bert.onnxzip'));
    const tjsDist = path.dirname(require.resolve('@huggingface/transformers'));
    fs.symlinkSync(tjsDist, path.join(site, 'transformers'));
    fs.symlinkSync(path.dirname(createRequire(tjsDist + '/').resolve('onnxruntime-web')), path.join(site, 'ort'));
    fs.symlinkSync(path.resolve(PACKAGE_DIR), path.join(site, 'onnxzip'));
    const { srv, browser } = await c.start({ site });
    const page = await browser.newPage();
    const errors = [], logged = [], requested = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (msg) => {
      logged.push(Promise.all(msg.args().map((a) => a.jsonValue().catch(() => null))).then((args) => [msg.type(), args]));
    });
    page.on('request', (r) => requested.push(r.url()));
    const origin = new URL(srv.baseUrl).origin;
    await page.route((u) => u.origin !== origin, (route) => route.abort());  // recorded above first
    await page.goto(srv.url('site', 'index.html'));
    const line = async () => (await Promise.all(logged)).find(([type, a]) => type === 'log' && a[0] === 'onnxzip/bert');
    const deadline = Date.now() + 60000;
    while (!errors.length && !(await line()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(errors, [], 'page errors');
    const got = await line();
    assert.ok(got, `no console.log of onnxzip/bert in 60 s: ${JSON.stringify(await Promise.all(logged))}`);
    t.diagnostic(`logged: ${JSON.stringify(got[1])}`);
    assert.deepEqual(got[1][1], want.dims);
    // onnxruntime-web (wasm) against onnxruntime-node on the folder: the same float32 math, other kernels
    got[1][2].forEach((v, i) => assert.ok(Math.abs(v - want.first4[i]) <= 1e-5, `value ${i}: ${v}, folder ${want.first4[i]}`));
    assert.deepEqual(requested.filter((u) => !u.startsWith(origin + '/')), [], 'requests to other hosts');
    const failed = (await srv.requests('/')).filter((e) => e.status >= 400 && !e.path.endsWith('/favicon.ico'));
    assert.deepEqual(failed.map((e) => `${e.status} ${e.path}`), [], 'requests that failed');
  });
});

inChromium('```html: the page in chromium, served by nginx', (c) => {
  test('index.html: tensors logged, open() reads the tail by Range, a picked File runs', { skip: c.skip }, async (t) => {
    // the layout the block expects: ./ort/ (onnxruntime-web's dist), ./onnxzip/, tiny.onnxzip
    const site = path.join(work, 'site');
    fs.mkdirSync(site);
    fs.writeFileSync(path.join(site, 'index.html'), block('html'));
    fs.copyFileSync(tiny.archive, path.join(site, 'tiny.onnxzip'));
    fs.symlinkSync(path.dirname(require.resolve('onnxruntime-web')), path.join(site, 'ort'));
    fs.symlinkSync(path.resolve(PACKAGE_DIR), path.join(site, 'onnxzip'));
    const { srv, browser } = await c.start({ site });
    const page = await browser.newPage();
    const errors = [];
    const logged = []; // [type, [args as JSON values], text] per console message
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (msg) => {
      logged.push(Promise.all(msg.args().map((a) => a.jsonValue().catch(() => null)))
        .then((args) => [msg.type(), args, msg.text()]));
    });
    const settled = async () => Promise.all(logged);
    const hasLog = async (args) => (await settled()).some(([type, a]) =>
      type === 'log' && JSON.stringify(a) === JSON.stringify(args));
    // Waits up to 60 s for COND (in node) or a page error.
    const until = async (cond, what) => {
      const deadline = Date.now() + 60000;
      while (!errors.length && !(await cond()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(errors, [], `page errors (waiting for ${what})`);
      assert.ok(await cond(), `no ${what} in 60 s; console: ${JSON.stringify(await settled())}`);
    };
    await page.goto(srv.url('site', 'index.html'));
    // the File handler is set once createSession(ort, 'tiny.onnxzip') has resolved
    await until(() => page.evaluate(() => typeof document.getElementById('pick').onchange === 'function'),
      '#pick.onchange (set after createSession by URL)');

    // console.log(archive.tensors.map(...)) = ls --json's tensors
    const ls = cliListing(tiny.archive).tensors;
    const tensorList = ls.map((x) => `${x.key} ${x.dims.join(',')}`);
    assert.ok(await hasLog([tensorList]), `no console.log of ${JSON.stringify(tensorList)}: ${JSON.stringify(await settled())}`);

    // open()'s first request for the archive: a Range request for its tail
    const log = await srv.requests('/site/tiny.onnxzip', { waitFor: 1 });
    t.diagnostic(`nginx: ${log.map((e) => `${e.status} ${e.range ?? '(no Range)'} ${e.bytes}`).join('; ')}`);
    assert.ok(log.length >= 1, 'nginx logged no request for tiny.onnxzip');
    assert.match(log[0].range ?? '', /^bytes=-\d+$/, `first request: ${JSON.stringify(log[0])}`);
    assert.equal(log[0].status, 206);

    // the user picks the file: its session's input and output names logged
    await page.setInputFiles('#pick', tiny.archive);
    await until(() => hasLog([['X'], ['Y']]), 'console.log of ["X"] ["Y"]');
    // everything the page asked for was there (but a favicon)
    const failed = (await srv.requests('/')).filter((e) => e.status >= 400 && !e.path.endsWith('/favicon.ico'));
    assert.deepEqual(failed.map((e) => `${e.status} ${e.path}`), [], 'requests that failed');
    for (const [type, , text] of await settled()) if (type !== 'log') t.diagnostic(`console.${type}: ${text}`);
  });
});
