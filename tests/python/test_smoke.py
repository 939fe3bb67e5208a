"""The package imports and is the library the CLI was built from."""
import re
import subprocess

import onnxzip


def test_version_matches_cli(onnxzip_cli):
    out = subprocess.run([str(onnxzip_cli), "--version"], check=True,
                         capture_output=True, text=True).stdout
    # onnxzip X.Y.Z (library X.Y.Z, archive format M.N)
    m = re.match(r"onnxzip (\S+) \(library (\S+),", out)
    assert m, f"unexpected `onnxzip --version` output: {out!r}"
    assert onnxzip.__version__ == m.group(2)
    assert onnxzip.__version__ == m.group(1)
