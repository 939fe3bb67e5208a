#!/usr/bin/env node
// bench_transformers_js.mjs — transformers.js (@huggingface/transformers of tests/js) in Chromium on a
// repository as a folder (transformers.js's own loader, the files served by nginx) against the same
// repository as a package (onnxzip's transformersModel: from a URL on the same nginx, and from a File):
// the load's time (pipeline() until it resolves, measured in the page) and the peak memory of the
// chromium processes (the sum of Pss, sampled every 100 ms: chromium_memory.mjs) while the page loads the
// pipeline and runs it once. Each run is a fresh headless chromium; the layouts take turns going first.
//
// Models: tests/js/make_tjs_repos.py --ffn N (BERT-style feature-extraction, its weights inline in
// model.onnx; GPT-2-style text-generation with past key values, its weights in model.onnx_data), N
// setting the size (default 262144: 129 MiB of weights each).
//
// Run (after the build and .ci/install-deps; not part of the test suite):
//   node tools/bench/bench_transformers_js.mjs [--ffn 262144] [--repeat 3] [--workdir /tmp/oz-bench-tjs]
//   env ONNXZIP_JS_PACKAGE (default build-test/src/js/package), ONNXZIP_CLI, ONNXZIP_PYVENV_PYTHON (the
//   pinned venv's python: make_tjs_repos.py needs `tokenizers`; default build-test/pyvenv/bin/python).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { launch, unavailable } from '../../tests/js/browser/chromium.mjs';
import { startNginx } from '../../tests/js/browser/nginx.mjs';
import { CLI, PACKAGE_DIR, REPO } from '../../tests/js/helpers.mjs';
import { sampler } from './chromium_memory.mjs';

const require = createRequire(path.join(REPO, 'tests/js/package.json'));
const TJS_DIST = path.dirname(require.resolve('@huggingface/transformers'));
const TJS_ORT = path.dirname(createRequire(TJS_DIST + '/').resolve('onnxruntime-web'));
const PYTHON = process.env.ONNXZIP_PYVENV_PYTHON || path.join(REPO, 'build-test/pyvenv/bin/python');
const PROMPT = 'the quick brown fox';

const { values: opt } = parseArgs({
  options: {
    ffn: { type: 'string', default: '262144' },
    repeat: { type: 'string', default: '3' },
    workdir: { type: 'string', default: '/tmp/oz-bench-tjs' },
    keep: { type: 'boolean', default: false },
  },
});

const TASKS = { bert: ['embed', [PROMPT]], gpt2: ['generate', [PROMPT, 8]] };
const LAYOUTS = { folder: (m) => `folder:${m}`, url: (m) => `url:/data/${m}.onnxzip`, file: () => 'file' };

async function measure(srv, dir, model, layout) {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(10 * 60 * 1000);
    await page.goto(srv.url('page', 'transformers.html'));
    await page.waitForFunction(() => document.getElementById('status').textContent === 'ready');
    if (layout === 'file') await page.setInputFiles('#file', path.join(dir, 'data', `${model}.onnxzip`));
    const baseline = sampler(process.pid).stop();
    const s = sampler(process.pid);
    const [fn, args] = TASKS[model];
    const r = await page.evaluate(([f, a]) => window.tjsTest[f](...a), [fn, [LAYOUTS[layout](model), ...args]]);
    const peak = s.stop();
    if (!r.ok) throw new Error(`${model} ${layout}: ${r.error.message}`);
    const { loadMs, ...out } = r.value;
    return { model, layout, loadMs, out: JSON.stringify(out), baselineMiB: baseline.pssMiB, peakMiB: peak.pssMiB };
  } finally {
    await browser.close();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const f = (x, d = 0) => x.toFixed(d);

function report(rows, dir) {
  console.log('\n| model | weights MiB | layout | runs | peak Pss MiB (max) | above the loaded page MiB (max) | load ms (median) | output |');
  console.log('|---|---|---|---|---|---|---|---|');
  const groups = new Map();
  for (const r of rows) {
    const k = `${r.model}/${r.layout}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const agg = new Map();
  for (const [k, g] of groups) {
    const [model, layout] = k.split('/');
    const a = { model, layout, runs: g.length, peak: Math.max(...g.map((r) => r.peakMiB)),
      above: Math.max(...g.map((r) => r.peakMiB - r.baselineMiB)), load: median(g.map((r) => r.loadMs)),
      same: g.every((r) => r.out === g[0].out), out: g[0].out };
    agg.set(k, a);
    const weights = fs.statSync(path.join(dir, 'data', `${model}.onnxzip`)).size / 2 ** 20;
    const folder = agg.get(`${model}/folder`);
    const vs = folder && layout !== 'folder' ? (a.out === folder.out && a.same ? 'identical to the folder' : 'DIFFERS') : '';
    console.log(`| ${model} | ${f(weights)} | ${layout} | ${a.runs} | ${f(a.peak)} | ${f(a.above)} | ${f(a.load)} | ${vs} |`);
  }
  console.log('\npackage / folder (same model, same run):');
  for (const a of agg.values()) {
    const b = agg.get(`${a.model}/folder`);
    if (a.layout === 'folder' || !b) continue;
    console.log(`  ${a.model} ${a.layout}: peak Pss ${(a.peak / b.peak).toFixed(2)}x, above the page ` +
      `${(a.above / b.above).toFixed(2)}x, load ${(a.load / b.load).toFixed(2)}x`);
  }
}

async function main() {
  const why = unavailable();
  if (why) throw new Error(why);
  if (!fs.existsSync(path.join(PACKAGE_DIR, 'onnxzip.wasm'))) throw new Error(`no package at ${PACKAGE_DIR} (ONNXZIP_JS_PACKAGE)`);
  const dir = opt.workdir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  execFileSync(PYTHON, [path.join(REPO, 'tests/js/make_tjs_repos.py'), path.join(dir, 'repos'), '--ffn', opt.ffn],
    { stdio: 'inherit' });
  for (const m of Object.keys(TASKS)) {
    execFileSync(CLI, ['pack', path.join(dir, 'repos', m), '-o', path.join(dir, 'data', `${m}.onnxzip`), '-q']);
  }
  const srv = await startNginx({ page: path.join(REPO, 'tests/js/browser'), pkg: PACKAGE_DIR, tjs: TJS_DIST,
    tortweb: TJS_ORT, repos: path.join(dir, 'repos'), data: path.join(dir, 'data') });
  const rows = [];
  try {
    for (let i = 0; i < Number(opt.repeat); i++) {
      for (const model of Object.keys(TASKS)) {
        const layouts = Object.keys(LAYOUTS);
        for (const layout of i % 2 ? layouts.reverse() : layouts) {
          const r = await measure(srv, dir, model, layout);
          rows.push(r);
          console.log(JSON.stringify({ ...r, out: undefined }));
        }
      }
    }
  } finally {
    await srv.stop();
  }
  report(rows, dir);
  if (!opt.keep) fs.rmSync(dir, { recursive: true, force: true });
}

await main();
