// zip_errors.test.mjs — the package's verdict on damaged and foreign zips is
// the C library's for the same access mode (spec 17.7). A path, bytes or a
// Blob is parsed as the local reader parses a file (every local header read
// in its order), so open() + verify() fails with the status name that
// `onnxzip verify FILE` reports (its message ends "[ONNXZIP_X]"), or both
// succeed. A URL is opened as the C library opens one (spec 17.1: end
// records, directory and model; local headers on first read), so its rule is
// `onnxzip verify --allow-http URL`, the file served by a range server in
// this process. The two CLI modes meet a file's defects in another order, so
// they may name different ones first; how many files they name differently
// is printed. Never a crash or a hang (each file has a time limit); every
// failure an OnnxzipError with a status and a code.
// Files: the shared corpus's zip robustness cases (zip/**/*.zip: libzip's
// inconsistent archives, yauzl's failures and successes), the fuzz seed
// corpus of tests/fuzz (in the repository: archives and cut or flipped
// copies), and hand-made damage to a packed archive (below).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import * as h from './helpers.mjs';
import { File as BufferFile } from 'node:buffer';

// Node.js 18 (Debian 12's) has File only in node:buffer, not as a global
const FileCtor = globalThis.File ?? BufferFile;

const oz = await h.loadPackage();
const FUZZ_SEEDS = path.join(h.REPO, 'tests', 'fuzz', 'corpus', 'fuzz_open');
const LIMIT_MS = 20000;
let server;
let served = 0;

before(async () => { server = await h.rangeServer(); });
after(() => server?.close());

// The package's verdict: null (opened and verified) or the status name.
async function packageStatus(source, options) {
  let archive;
  try {
    archive = await oz.open(source, options);
    await archive.verify();
    return null;
  } catch (e) {
    assert.ok(e instanceof oz.OnnxzipError, `not an OnnxzipError: ${e && e.stack}`);
    assert.match(e.status, /^ONNXZIP_[A-Z0-9_]+$/);
    assert.equal(typeof e.code, 'number');
    assert.notEqual(e.code, 0);
    return e.status;
  } finally {
    archive?.close();
  }
}

// `onnxzip verify ...ARGS`'s verdict: null (exit 0) or the status name.
async function cliStatus(...args) {
  const r = await h.cliAsync('verify', ...args);
  if (r.status === 0) return null;
  assert.equal(r.status, 1, `onnxzip verify ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  const s = h.cliStatus(r.stderr);
  assert.ok(s, `onnxzip verify ${args.join(' ')}: no [ONNXZIP_...] in: ${r.stderr}`);
  return s;
}

// Checks FILE; returns {remote, local}: the CLI's verdicts over HTTP and on
// the file (also handed to NOTE before the package is checked).
async function sameVerdict(file, note = () => {}) {
  const url = server.serve(`${served++}-${path.basename(file)}`, file);
  const remote = await cliStatus('--allow-http', '--retries', '0', url);
  const local = await cliStatus(file);
  note({ remote, local });
  const bytes = new Uint8Array(fs.readFileSync(file));
  const name = path.basename(file);
  const cases = [
    ['path', await packageStatus(file), local],
    ['bytes', await packageStatus(bytes, { name }), local],
    ['Blob', await packageStatus(new Blob([bytes]), { name }), local],
    ['url', await packageStatus(url), remote],
  ];
  for (const [how, got, want] of cases) {
    assert.equal(got, want, `open(${how}) + verify() of ${file}: ${got ?? 'OK'}; onnxzip verify `
      + `${how === 'url' ? url : 'FILE'}: ${want ?? 'OK'}`);
  }
  return { remote, local };
}

async function checkFiles(t, files, idOf) {
  const counts = {};
  const differ = [];
  for (const file of files) {
    await t.test(idOf(file), { timeout: LIMIT_MS }, async () => {
      await sameVerdict(file, ({ remote, local }) => {
        const s = local || 'OK';
        counts[s] = (counts[s] || 0) + 1;
        if (remote !== local) differ.push(`${idOf(file)} (local ${local ?? 'OK'}, http ${remote ?? 'OK'})`);
      });
    });
  }
  t.diagnostic(`${files.length} files: ${Object.entries(counts).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
  t.diagnostic(`${differ.length} of them get another status from onnxzip verify FILE than over HTTP`
    + (differ.length ? `: ${differ.join('; ')}` : ''));
}

test('shared zip robustness corpus', async (t) => {
  const files = h.walk(path.join(h.CORPUS, 'zip'), (n) => n.endsWith('.zip'));
  if (!files.length) {
    t.skip(`shared corpus absent: no zip/**/*.zip under ${h.CORPUS} (set ONNXZIP_SHARED_CORPUS)`);
    return;
  }
  await checkFiles(t, files, (f) => path.relative(path.join(h.CORPUS, 'zip'), f));
});

test('fuzz seed corpus (tests/fuzz/corpus/fuzz_open)', async (t) => {
  // not its classic .onnx seeds: `onnxzip verify` checks a classic model
  // too, which the package does not read (it says ONNXZIP_ENOTZIP)
  const files = h.walk(FUZZ_SEEDS, (n) => !n.endsWith('.onnx'));
  assert.ok(files.length > 0, `no files in ${FUZZ_SEEDS}`);
  await checkFiles(t, files, (f) => path.basename(f));
});

// ---- hand-made damage ----------------------------------------------------------

// A plain stored zip of ENTRIES ([{name, data}]) with no padding: the data
// offsets fall where the headers end, not on 64-byte boundaries.
function unalignedZip(entries) {
  const parts = [];
  const cd = [];
  let at = 0;
  for (const { name, data } of entries) {
    const n = Buffer.from(name, 'utf8');
    const crc = h.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(n.length, 28);
    central.writeUInt32LE(at, 42);
    parts.push(local, n, data);
    cd.push(central, n);
    at += 30 + n.length + data.length;
  }
  const cdBytes = Buffer.concat(cd);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cdBytes.length, 12);
  eocd.writeUInt32LE(at, 16);
  return Buffer.concat([...parts, cdBytes, eocd]);
}

// Damaged copies of the archive BYTES whose `ls --json` entries are ENTRIES: {label: Buffer}.
function damaged(bytes, entries) {
  const flip = (at, mask = 0x01) => {
    const b = Buffer.from(bytes);
    b[at] ^= mask;
    return b;
  };
  const eocd = bytes.length - 22;
  assert.equal(bytes.readUInt32LE(eocd), 0x06054b50, 'the packed archive ends with a plain end record');
  const cd = bytes.readUInt32LE(eocd + 16);
  const model = entries[entries.length - 1];
  assert.equal(model.name, '__MODEL_PROTO');
  const [e0, e1] = entries;
  return {
    'cut by 1 byte': bytes.subarray(0, bytes.length - 1),
    'cut in half': bytes.subarray(0, bytes.length >> 1),
    'cut inside the model': bytes.subarray(0, model.dataOffset + (model.size >> 1)),
    'cut before the directory': bytes.subarray(0, cd),
    'directory: signature': flip(cd, 0xff),
    'directory: CRC-32 of entry 0': flip(cd + 16),
    'directory: name of entry 0': flip(cd + 46),
    'directory: local header offset of entry 0': flip(cd + 42, 0x40),
    'end record: entry count': flip(eocd + 10),
    'local header of entry 1: signature': flip(e1.headerOffset, 0xff),
    'local header of entry 1: name': flip(e1.headerOffset + 30),
    'local header of entry 1: CRC-32': flip(e1.headerOffset + 14),
    'local header of entry 1: extra length': flip(e1.headerOffset + 28, 0x02),
    'data of entry 0': flip(e0.dataOffset + (e0.size >> 1)),
    'model bytes': flip(model.dataOffset + (model.size >> 1)),
    'unaligned (no padding)': unalignedZip(entries.map((e) => ({
      name: e.name, data: bytes.subarray(e.dataOffset, e.dataOffset + e.size),
    }))),
  };
}

test('hand-made damage to a packed archive', async (t) => {
  const model = path.join(FUZZ_SEEDS, 'classic_simple.onnx');
  const dir = h.scratch('errors');
  try {
    for (const align of [[], ['--align', '4096']]) {
      const good = path.join(dir, `simple${align.length ? '-4096' : ''}.onnxzip`);
      h.cliOk('pack', model, '-o', good, '--size-threshold', '0', ...align);
      const { entries } = h.cliListing(good);
      assert.ok(entries.length >= 3, 'two tensor entries and the model');
      assert.deepEqual(await sameVerdict(good), { remote: null, local: null }, 'the intact archive verifies');
      const cases = damaged(fs.readFileSync(good), entries);
      const files = Object.entries(cases).map(([label, b], i) => {
        const f = path.join(dir, `case${i}-${path.basename(good)}`);
        fs.writeFileSync(f, b);
        return [f, label];
      });
      const labels = new Map(files);
      await checkFiles(t, files.map(([f]) => f), (f) => `${path.basename(good)}: ${labels.get(f)}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// ---- an archive larger than open()'s window --------------------------------------------------

// The package's error for SOURCE: {status, message} (null when it opens and verifies).
async function packageError(source, options) {
  try {
    const a = await oz.open(source, options);
    try { await a.verify(); } finally { a.close(); }
    return null;
  } catch (e) {
    assert.ok(e instanceof oz.OnnxzipError, `not an OnnxzipError: ${e && e.stack}`);
    return { status: e.status, message: e.message };
  }
}

test('damage to a package larger than the 64 KiB tail open() reads first: the CLI\'s status and message', async (t) => {
  // a path, bytes and a Blob are read through open()'s window of the file's last 64 KiB, then by reads: a
  // file cut short must still be ONNXZIP_ETRUNC, as `onnxzip verify FILE` (which maps it whole) says,
  // in the same words (the source named as the package names it), not "not a zip archive"
  const dir = h.scratch('errors-big');
  try {
    const repo = path.join(dir, 'repo');
    fs.mkdirSync(path.join(repo, 'onnx'), { recursive: true });
    fs.copyFileSync(path.join(FUZZ_SEEDS, 'classic_simple.onnx'), path.join(repo, 'onnx', 'model.onnx'));
    fs.writeFileSync(path.join(repo, 'weights.bin'), Buffer.alloc(300 << 10, 7));  // 300 KiB: the window is 64
    fs.writeFileSync(path.join(repo, 'config.json'), '{"model_type": "test"}\n');
    const good = path.join(dir, 'pkg.onnxzip');
    h.cliOk('pack', repo, '-o', good, '-q');
    const bytes = fs.readFileSync(good);
    const eocd = bytes.length - 22;
    assert.equal(bytes.readUInt32LE(eocd), 0x06054b50, 'the package ends with a plain end record');
    const cd = bytes.readUInt32LE(eocd + 16);
    const weights = h.cliListing(good).entries.find((e) => e.name === 'weights.bin');
    const cases = {
      'cut by 100 bytes': bytes.subarray(0, bytes.length - 100),
      'cut by 1 byte': bytes.subarray(0, bytes.length - 1),
      'cut before the directory': bytes.subarray(0, cd),
      'cut inside weights.bin': bytes.subarray(0, weights.dataOffset + 1000),
      'cut inside a local header': bytes.subarray(0, weights.headerOffset + 10),
      'end record: signature': Buffer.concat([bytes.subarray(0, eocd), Buffer.from([0, 0, 0, 0]), bytes.subarray(eocd + 4)]),
      'no zip: the bytes shifted by one': Buffer.concat([Buffer.from([0]), bytes.subarray(0, bytes.length - 1)]),
    };
    const statuses = {};
    for (const [label, b] of Object.entries(cases)) {
      const file = path.join(dir, `${label.replace(/[^a-z0-9]+/gi, '-')}.onnxzip`);
      fs.writeFileSync(file, b);
      const r = await h.cliAsync('verify', file);
      assert.equal(r.status, 1, `onnxzip verify (${label}): exit ${r.status}: ${r.stderr}`);
      const want = h.cliStatus(r.stderr);
      const m = new RegExp(`^onnxzip: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: (.*) \\[${want}\\]\\s*$`).exec(r.stderr);
      assert.ok(m, `onnxzip verify (${label}): not "onnxzip: FILE: MESSAGE [STATUS]": ${r.stderr}`);
      statuses[label] = want;
      const u8 = new Uint8Array(b);
      for (const [how, src, shown] of [['path', file, file], ['bytes', u8, 'the bytes given'],
        ['Blob', new Blob([u8]), 'the Blob given'], ['File', new FileCtor([u8], 'picked.onnxzip'), 'picked.onnxzip'],
        ['bytes named', u8, 'named.onnxzip']]) {
        const got = await packageError(src, how === 'bytes named' ? { name: 'named.onnxzip' } : undefined);
        // no zip at all: `onnxzip verify` also tries it as a classic ONNX model, which the package does not read
        if (label.startsWith('no zip')) {
          assert.deepEqual(got, { status: want, message: `${shown}: not a zip archive (no end of central directory record)` },
            `${label}, from ${how}`);
        } else assert.deepEqual(got, { status: want, message: `${shown}: ${m[1]}` }, `${label}, from ${how}`);
      }
      // a URL is opened from its tail as the C library opens one (spec 17.1): `onnxzip verify URL`'s verdict
      const url = server.serve(`${served++}-${path.basename(file)}`, file);
      const rr = await h.cliAsync('verify', '--allow-http', '--retries', '0', url);
      const mu = new RegExp(`^onnxzip: ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: (.*) \\[(ONNXZIP_[A-Z0-9_]+)\\]\\s*$`).exec(rr.stderr);
      assert.ok(mu, `onnxzip verify ${url} (${label}): ${rr.stderr}`);
      assert.deepEqual(await packageError(url, { retries: 0 }), { status: mu[2], message: `${url}: ${mu[1]}` }, `${label}, from a URL`);
    }
    t.diagnostic(JSON.stringify(statuses));
    assert.equal(statuses['cut by 100 bytes'], 'ONNXZIP_ETRUNC');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
