// The entry names of a zip as Node's zip readers read them: yauzl (the
// central directory, names decoded by general purpose bit 11 or the Info-ZIP
// Unicode Path field) and fflate's unzipSync (bit 11 only). Prints
// {"yauzl": [...], "fflate": [...]} for tests/cli/zip_readers.py.
import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import yauzl from 'yauzl';

function yauzlNames(path) {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const names = [];
      zip.on('entry', (e) => { names.push(e.fileName); zip.readEntry(); });
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

const path = process.argv[2];
const fflate = Object.keys(unzipSync(new Uint8Array(readFileSync(path))));
process.stdout.write(JSON.stringify({ yauzl: await yauzlNames(path), fflate }) + '\n');
