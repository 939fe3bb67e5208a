// helpers.mjs — what the node --test files of tests/js share: where the
// package under test, the CLI and the test inputs are, the CLI run as an
// independent oracle, scratch directories. Nothing here imports the package.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// The assembled package directory (BUILD/src/js/package) and the CLI of the
// same build; meson's test() sets both.
export const PACKAGE_DIR = process.env.ONNXZIP_JS_PACKAGE || path.join(REPO, 'build-test', 'src', 'js', 'package');
export const CLI = process.env.ONNXZIP_CLI || path.join(REPO, 'build-test', 'tools', 'onnxzip');

// The read-only corpora, as tests/python/_helpers.py locates them.
export const CORPUS = process.env.ONNXZIP_SHARED_CORPUS || path.join(REPO, '..', 'shared', 'corpus');
export const TESTDATA = process.env.ONNXZIP_TESTDATA || '/usr/share/libonnx-testdata/data';

// The package's public module (index.js of the assembled directory).
export async function loadPackage() {
  return import(pathToFileURL(path.join(PACKAGE_DIR, 'index.js')).href);
}

// Sorted files under DIR (recursively) whose names satisfy KEEP; [] when DIR is absent.
export function walk(dir, keep) {
  const out = [];
  let names;
  try {
    names = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const d of names) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...walk(p, keep));
    else if (d.isFile() && keep(d.name)) out.push(p);
  }
  return out.sort();
}

// models/*.onnx and extdata/*/*.onnx of the shared corpus, sorted.
export function corpusModels() {
  const top = walk(path.join(CORPUS, 'models'), (n) => n.endsWith('.onnx'))
    .filter((p) => path.dirname(p) === path.join(CORPUS, 'models'));
  const ext = walk(path.join(CORPUS, 'extdata'), (n) => n.endsWith('.onnx'));
  return [...top, ...ext];
}

// Every model.onnx of Debian's libonnx-testdata, sorted.
export function testdataModels() {
  return walk(TESTDATA, (n) => n.endsWith('.onnx'));
}

// Runs the CLI; returns {status, stdout (Buffer), stderr (string)}.
export function cli(...args) {
  const r = spawnSync(CLI, args, { maxBuffer: 1 << 30, timeout: 120000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

// Runs the CLI and returns its standard output; throws with its messages on failure.
export function cliOk(...args) {
  const r = cli(...args);
  if (r.status !== 0) throw new Error(`onnxzip ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// The status name the CLI reports for a failure: its message ends "[ONNXZIP_X]".
export function cliStatus(stderr) {
  const m = stderr.match(/\[(ONNXZIP_[A-Z0-9_]+)\]\s*$/);
  return m ? m[1] : null;
}

// A scratch directory on tmpfs where there is one; removed by the caller.
export function scratch(prefix) {
  let base = os.tmpdir();
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    base = '/dev/shm';
  } catch {
    // no /dev/shm: the system's temporary directory
  }
  return fs.mkdtempSync(path.join(base, `onnxzip-js-${prefix}.`));
}

// `onnxzip ls --json` of ARCHIVE as the package names its fields (camelCase).
export function cliListing(archive) {
  const j = JSON.parse(cliOk('ls', archive, '--json').toString('utf8'));
  return {
    entries: j.entries.map((e) => ({
      name: e.name, headerOffset: e.header_offset, dataOffset: e.data_offset, size: e.size,
      crc32: e.crc32, xxh3: e.xxh3, alignment: e.alignment,
    })),
    tensors: j.tensors.map((t) => ({
      name: t.name, key: t.key, dataType: t.data_type, dtype: t.dtype, dims: t.dims,
      storage: t.storage, kind: t.kind, entry: t.entry, offset: t.offset, byteLength: t.nbytes,
      alignment: t.alignment, graphDepth: t.graph_depth,
    })),
  };
}

export const ENTRY_FIELDS = ['name', 'headerOffset', 'dataOffset', 'size', 'crc32', 'xxh3', 'alignment'];
export const TENSOR_FIELDS = ['name', 'key', 'dataType', 'dtype', 'dims', 'storage', 'kind', 'entry', 'offset',
  'byteLength', 'alignment', 'graphDepth'];

// Plain copies of the package's entry/tensor objects with only FIELDS, for
// deepStrictEqual against cliListing() (a field the package lacks shows as undefined).
export function pick(objs, fields) {
  return Array.from(objs, (o) => Object.fromEntries(fields.map((k) => [k, Array.isArray(o[k]) ? Array.from(o[k]) : o[k]])));
}
