#!/usr/bin/env node
// bench_browser_memory.mjs — peak memory and time of running a large model
// in Chromium (onnxruntime-web, wasm backend) from an onnxzip archive given as
// a File, against the classic layout (model.onnx + model.onnx_data, the data
// file given as a File through ORT's own externalData).
//
// For each size (MiB of float32 weights) it writes the model with
// tools/bench/bench_browser_memory.py (a MatMul + Add chain, 256 MiB weights),
// packs it with the CLI, then for each ORT build and layout launches a fresh
// headless chromium (Debian's, through playwright-core), loads the test page
// of tests/js/browser/ from a private nginx, gives it the file(s) through the
// page's <input type=file> (as a user would), creates the session, runs it
// once, and samples the chromium process tree every 100 ms: the sum of Pss
// (/proc/PID/smaps_rollup: shared pages split between the processes) and of
// VmRSS, keeping the max. A run that fails reports ORT's error.
//
// Run (after the build and .ci/install-deps; not part of the test suite):
//   node tools/bench/bench_browser_memory.mjs [--sizes 512,2560,3584]
//        [--ort jspi,wasm] [--layouts archive,classic] [--repeat N]
//        [--workdir /tmp/oz-bench-browser] [--keep]
//   --repeat N: N runs of each (the layouts taking turns going first); the
//   table shows the max peak and the median times.
//   env ONNXZIP_JS_PACKAGE (default build-test/src/js/package), ONNXZIP_CLI
//   (default build-test/tools/onnxzip).
// ORT builds: 'jspi' = ort.jspi.min.mjs (reads Blob external data one
// initializer at a time, onnxruntime PR 29477), 'wasm' = ort.wasm.min.mjs
// (reads a Blob whole with arrayBuffer() first).
// The workdir (models and archives, ~2x the largest size) is removed at the
// end unless --keep; the disk writes run at disk speed.
//
// One run (chromium 156, ORT-web 1.30.0, 1 thread, 2 shared cores; peak Pss
// of all chromium processes, create = InferenceSession creation incl. open):
//   weights  build  archive: Pss / create   classic: Pss / create
//   1 GiB    jspi   2509 MiB / 4.44 s        2503 MiB / 4.44 s   (median of 3)
//   2 GiB    jspi   4048 MiB / 8.13 s        4046 MiB / 8.74 s   (median of 3)
//   2.25 GiB jspi   4302 MiB / 9.80 s        4301 MiB / 8.46 s   (median of 3)
//   2.5 GiB  jspi   both: "Can't create a session. ERROR_CODE: 6, ERROR_MESSAGE:
//                   Exception during initialization: std::bad_alloc" (wasm32 4 GiB)
//   1 GiB    wasm   3273 MiB / 6.59 s        3273 MiB / 4.78 s
//   1.75 GiB wasm   5572 MiB / 7.87 s        5575 MiB / 9.04 s
//   2 GiB    wasm   both: "The requested file could not be read, typically due
//                   to permission problems ..." (Blob.arrayBuffer() of >= 2 GiB)
// Archive and classic peak within 0.3%, outputs identical; times are noisy.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { launch, unavailable } from '../../tests/js/browser/chromium.mjs';
import { startNginx } from '../../tests/js/browser/nginx.mjs';
import { CLI, PACKAGE_DIR, REPO } from '../../tests/js/helpers.mjs';
import { sampler } from './chromium_memory.mjs';

const ORT_WEB_DIST = path.join(REPO, 'tests/js/node_modules/onnxruntime-web/dist');
const RUN_TIMEOUT_MS = 15 * 60 * 1000;

const { values: opt } = parseArgs({
  options: {
    sizes: { type: 'string', default: '512,2560,3584' },
    ort: { type: 'string', default: 'jspi,wasm' },
    layouts: { type: 'string', default: 'archive,classic' },
    workdir: { type: 'string', default: '/tmp/oz-bench-browser' },
    repeat: { type: 'string', default: '1' },
    keep: { type: 'boolean', default: false },
  },
});

function makeModel(dir, sizeMiB) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('/usr/bin/python3', [path.join(REPO, 'tools/bench/bench_browser_memory.py'), dir, String(sizeMiB)],
    { stdio: 'inherit' });
  execFileSync(CLI, ['pack', path.join(dir, 'model.onnx'), '-o', path.join(dir, 'model.onnxzip')], { stdio: 'inherit' });
}

async function measure(srv, dir, ortBuild, layout) {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(RUN_TIMEOUT_MS);
    await page.goto(srv.url('page', `index.html?ort=${ortBuild}`));
    await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('ready'));
    const files = layout === 'archive' ? ['model.onnxzip'] : ['model.onnx', 'model.onnx_data'];
    await page.setInputFiles('#file', files.map((f) => path.join(dir, f)));
    const baseline = sampler(process.pid).stop();
    const s = sampler(process.pid);
    const t0 = performance.now();
    const r = await page.evaluate((fn) => window.ozTest[fn](), layout === 'archive' ? 'benchArchive' : 'benchClassic');
    const wallMs = performance.now() - t0;
    const peak = s.stop();
    return { ok: r.ok, error: r.ok ? null : r.error.message, ...(r.value ?? {}), wallMs, baseline, peak };
  } finally {
    await browser.close();
  }
}

async function main() {
  const why = unavailable();
  if (why) throw new Error(why);
  if (!fs.existsSync(path.join(PACKAGE_DIR, 'onnxzip.wasm'))) throw new Error(`no package at ${PACKAGE_DIR} (ONNXZIP_JS_PACKAGE)`);
  const sizes = opt.sizes.split(',').map(Number);
  const builds = opt.ort.split(',');
  const layouts = opt.layouts.split(',');
  const dir = path.join(opt.workdir, 'model');
  const srv = await startNginx({ page: path.join(REPO, 'tests/js/browser'), pkg: PACKAGE_DIR, ort: ORT_WEB_DIST });
  const rows = [];
  try {
    for (const size of sizes) {
      makeModel(dir, size);
      const bytes = fs.statSync(path.join(dir, 'model.onnxzip')).size;
      for (const ortBuild of builds) {
        for (let i = 0; i < Number(opt.repeat); i++) {
          // the layouts take turns going first (page cache, the other helpers' load)
          for (const layout of i % 2 ? [...layouts].reverse() : layouts) {
            const r = await measure(srv, dir, ortBuild, layout);
            const row = { size, bytes, ortBuild, layout, ...r };
            rows.push(row);
            console.log(JSON.stringify({ ...row, baseline: undefined, baselinePssMiB: r.baseline.pssMiB }));
          }
        }
      }
    }
  } finally {
    await srv.stop();
    if (!opt.keep) fs.rmSync(opt.workdir, { recursive: true, force: true });
  }
  report(rows);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** Runs of one size, build and layout: the max of the peaks, the median times. */
function aggregate(rows) {
  const groups = new Map();
  for (const r of rows) {
    const k = `${r.size}/${r.ortBuild}/${r.layout}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(r);
  }
  return [...groups.values()].map((g) => {
    const ok = g.filter((r) => r.ok);
    return { ...g[0], runs: g.length, okRuns: ok.length, error: g.find((r) => !r.ok)?.error,
             pssMiB: Math.max(...g.map((r) => r.peak.pssMiB)), rssMiB: Math.max(...g.map((r) => r.peak.rssMiB)),
             createMs: ok.length ? median(ok.map((r) => r.createMs)) : undefined,
             runMs: ok.length ? median(ok.map((r) => r.runMs)) : undefined, first: ok[0]?.first,
             same: ok.every((r) => r.first.every((v, i) => Object.is(v, ok[0].first[i]))) };
  });
}

function report(rows) {
  const f = (x, d = 0) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
  const groups = aggregate(rows);
  console.log('\n| weights MiB | ORT build | layout | runs | peak Pss MiB | peak RSS sum MiB | create s (median) | run s (median) | result |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const g of groups) {
    const result = g.okRuns === g.runs ? `ok y[0..1]=${g.first.slice(0, 2).map((v) => v.toPrecision(6))}` +
      (g.same ? '' : ' (runs DIFFER)') : `FAILED ${g.runs - g.okRuns}/${g.runs}: ${g.error}`;
    console.log(`| ${f(g.bytes / 2 ** 20)} | ${g.ortBuild} | ${g.layout} | ${g.runs} | ${f(g.pssMiB)} | ${f(g.rssMiB)} | ` +
      `${f(g.createMs / 1000, 2)} | ${f(g.runMs / 1000, 2)} | ${result} |`);
  }
  console.log('\narchive / classic (same size and ORT build):');
  for (const a of groups.filter((g) => g.layout === 'archive' && g.okRuns)) {
    const c = groups.find((g) => g.layout === 'classic' && g.okRuns && g.size === a.size && g.ortBuild === a.ortBuild);
    if (!c) continue;
    const same = a.first.every((v, i) => Object.is(v, c.first[i]));
    console.log(`  ${f(a.bytes / 2 ** 20)} MiB ${a.ortBuild}: peak Pss ${(a.pssMiB / c.pssMiB).toFixed(2)}x, ` +
      `create ${(a.createMs / c.createMs).toFixed(2)}x, outputs ${same ? 'identical' : 'DIFFER'}`);
  }
}

await main();
