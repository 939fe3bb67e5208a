// Run by tests/dist/node.sh in a project where only the npm tarball is installed:
//   node node_check.mjs ARCHIVE EXPECTED.json VERSION VIEW_OUT
// The package imported by name; every tensor's bytes (tensorData) have the SHA-256 that EXPECTED.json gives
// (numpy_helper's of the model); the package's version is VERSION; the archive's view is written to VIEW_OUT
// (beside ARCHIVE: its external data names the archive's file) for onnx to check.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { open } from 'onnxzip';

const [archivePath, expectedPath, version, viewPath] = process.argv.slice(2);
const expected = JSON.parse(fs.readFileSync(expectedPath, 'utf8'));
const pkgDir = path.dirname(createRequire(import.meta.url).resolve('onnxzip'));
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
if (pkg.version !== version) throw new Error(`the installed package says version ${pkg.version}, not ${version}`);
if (!pkgDir.includes('node_modules')) throw new Error(`onnxzip resolved outside node_modules: ${pkgDir}`);

const archive = await open(archivePath);
const names = Object.keys(expected);
let checked = 0;
for (const t of archive.tensors) {
  if (!(t.name in expected)) continue;
  const bytes = await archive.tensorData(t.name);
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== expected[t.name]) throw new Error(`tensor ${t.name}: SHA-256 ${got}, onnx's ${expected[t.name]}`);
  checked++;
}
if (checked !== names.length) throw new Error(`${checked} of the model's ${names.length} initializers found`);
await archive.verify();
const view = await archive.view();
fs.writeFileSync(viewPath, view);
console.log(`node_check: onnxzip ${pkg.version} on Node.js ${process.version}: ${checked} tensors equal onnx's, ` +
  `verify, view ${view.length} bytes`);
