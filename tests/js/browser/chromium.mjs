// Debian's chromium, headless, through playwright-core (whose own browser
// downloads are not used): shared by tests/js/browser.test.mjs,
// tools/bench/bench_browser_memory.mjs and tools/web's screenshot.
import fs from 'node:fs';
import { createRequire } from 'node:module';

export const CHROMIUM = process.env.ONNXZIP_CHROMIUM || '/usr/bin/chromium';

const require = createRequire(import.meta.url);

/** Why the browser cannot run here, or null. */
export function unavailable() {
  if (!fs.existsSync(CHROMIUM)) return `${CHROMIUM} absent (Debian: apt-get install chromium)`;
  try {
    require.resolve('playwright-core');
  } catch {
    return 'playwright-core absent: run .ci/install-deps (or cd tests/js && npm ci --ignore-scripts)';
  }
  return null;
}

/** A headless chromium (playwright Browser). root cannot use its sandbox. */
export async function launch(extraArgs = []) {
  const { chromium } = require('playwright-core');
  const args = ['--disable-gpu', ...extraArgs];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: CHROMIUM, args, headless: true });
}
