#!/usr/bin/env node
// tools/web/screenshot.mjs — serves the repository root with the command the
// README gives (python3 -m http.server), opens tools/web/ in headless
// chromium (Debian's, through tests/js's playwright-core), chooses the
// demo's example archive (tools/demo.sh: build/example/tiny.onnxzip; made
// here with the CLI when absent), verifies and runs it, and saves the page
// as a PNG.
//   node tools/web/screenshot.mjs [OUT.png] [--build build]
// (default tools/web/screenshot.png; --build: the build directory whose
// src/js/package and tools/onnxzip to use).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { launch } from '../../tests/js/browser/chromium.mjs';
import { REPO } from '../../tests/js/helpers.mjs';

const { values: opt, positionals } = parseArgs({ allowPositionals: true, options: { build: { type: 'string', default: 'build' } } });
const out = path.resolve(positionals[0] ?? path.join(REPO, 'tools/web/screenshot.png'));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function waitHttp(url) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}

const example = path.join(REPO, 'build/example/tiny.onnxzip');
let archive = example;
if (!fs.existsSync(archive)) {
  const dir = fs.mkdtempSync('/tmp/oz-web-shot-');
  execFileSync('/usr/bin/python3', [path.join(REPO, 'tools/make_example_model.py'), path.join(dir, 'tiny.onnx')]);
  archive = path.join(dir, 'tiny.onnxzip');
  execFileSync(path.join(REPO, opt.build, 'tools/onnxzip'), ['pack', path.join(dir, 'tiny.onnx'), '-o', archive, '-q']);
}

const port = await freePort();
const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1'], { cwd: REPO, stdio: 'ignore' });
const browser = await launch();
try {
  const base = `http://127.0.0.1:${port}/tools/web/`;
  await waitHttp(base);
  const page = await browser.newPage({ viewport: { width: 1000, height: 760 } });
  page.on('pageerror', (e) => console.error(`page error: ${e}`));
  const pkg = `../../${opt.build}/src/js/package/index.js`;
  await page.goto(opt.build === 'build' ? base : `${base}?pkg=${encodeURIComponent(pkg)}`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  await page.setInputFiles('#file', archive);
  await page.waitForSelector('#tensors:not([hidden])');
  await page.click('#verify');
  await page.waitForSelector('#verify-result.good', { timeout: 30000 });
  await page.click('#run');
  await page.waitForSelector('#outputs:not([hidden])', { timeout: 60000 });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out} (${fs.statSync(out).size} bytes) from ${archive}`);
} finally {
  await browser.close();
  server.kill();
}
