#!/usr/bin/env node
// tools/web/screenshot.mjs — serves the repository root with the command the
// README gives (python3 -m http.server), opens tools/web/ in headless
// chromium (Debian's, through tests/js's playwright-core), chooses a package
// (tests/packages/make_repos.py's transformers_js repository, packed with
// the CLI), shows its config.json, sets the sequence length, verifies and
// runs it, and saves the page (1,280 px wide) as a PNG.
//   node tools/web/screenshot.mjs [OUT.png] [--build build]
// (default tools/web/screenshot.png; --build: the build directory whose
// src/js/package, tools/onnxzip and pyvenv (make_repos.py needs the
// `tokenizers` package: tests/python/venv.sh) to use).
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

const MODEL = 'onnx/model.onnx';
const dir = fs.mkdtempSync('/tmp/oz-web-shot-');
const archive = path.join(dir, 'transformers_js.onnxzip');
execFileSync(path.join(REPO, opt.build, 'pyvenv/bin/python'),
  [path.join(REPO, 'tests/packages/make_repos.py'), 'transformers_js', path.join(dir, 'repo')]);
execFileSync(path.join(REPO, opt.build, 'tools/onnxzip'), ['pack', path.join(dir, 'repo'), '-o', archive, '-q']);

const port = await freePort();
const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1'], { cwd: REPO, stdio: 'ignore' });
const browser = await launch();
try {
  const base = `http://127.0.0.1:${port}/tools/web/`;
  await waitHttp(base);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => console.error(`page error: ${e}`));
  const pkg = `../../${opt.build}/src/js/package/index.js`;
  await page.goto(opt.build === 'build' ? base : `${base}?pkg=${encodeURIComponent(pkg)}`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  await page.setInputFiles('#file', archive);
  await page.waitForSelector('#package:not([hidden])');
  await page.selectOption('#model', MODEL);
  await page.waitForFunction((m) => document.getElementById('summary').textContent.includes(`${m}:`), MODEL);
  await page.click('#files button[data-path="config.json"]');
  await page.waitForFunction(() => document.getElementById('file-note').textContent.startsWith('JSON'));
  await page.fill('#inputs input[data-input="input_ids"][data-dim="1"]', '8');
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
  fs.rmSync(dir, { recursive: true, force: true });
}
