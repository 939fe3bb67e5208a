"""Run by tests/dist/bare_checks.sh in the venv where the wheel was installed:

    bare_checks.py VERSION URL

The installed onnxzip against onnx (from PyPI) as the oracle: a model made by
tools/make_example_model.py, saved as an archive, its tensors read back as
views over the mapping and compared with onnx's arrays; verify; a package
signed by the wheel's `onnxzip sign` opened with trust= (and refused with
another key); fetch() and open_url() of what URL (the host's nginx serving
/work/bare/www) serves. An exception ends it with a traceback (exit 1)."""
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import onnxzip

version, url = sys.argv[1], sys.argv[2]
here = pathlib.Path("/work/bare")
work = here / "py"
work.mkdir()
os.chdir(work)
bindir = pathlib.Path(sys.executable).parent


def ok(what: str) -> None:
    print(f"ok: {what}", flush=True)


assert onnxzip.__version__ == version, (onnxzip.__version__, version)
assert pathlib.Path(onnxzip.__file__).is_relative_to(pathlib.Path(sys.prefix)), onnxzip.__file__
ok(f"import onnxzip {onnxzip.__version__} from {pathlib.Path(onnxzip.__file__).parent}")

subprocess.run([sys.executable, str(here / "make_example_model.py"), "model.onnx"], check=True,
               stdout=subprocess.DEVNULL)
m = onnx.load("model.onnx")
want = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
onnxzip.save(m, "model.onnxzip")
with onnxzip.open("model.onnxzip") as a:
    for name, arr in want.items():
        got = a.tensors[name]
        assert not got.flags.writeable, name
        np.testing.assert_array_equal(got, arr)
    view = onnx.ModelProto()
    view.ParseFromString(a.view())
    external = [t.name for t in view.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert "fc1.weight" in external and "fc2.weight" in external, external
    a.verify()
ok(f"save, open: {len(want)} initializers equal onnx's, read-only; view() refers to {len(external)} entries; verify")
onnxzip.verify("model.onnxzip")
shutil.copy("model.onnxzip", "bad.onnxzip")
with open("bad.onnxzip", "r+b") as f:  # a byte of fc1.weight's data, in its entry
    with onnxzip.open("model.onnxzip") as a:
        off = a.info("fc1.weight").offset
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 1]))
try:
    onnxzip.verify("bad.onnxzip")
    raise AssertionError("verify of a changed archive passed")
except onnxzip.Error as e:
    assert isinstance(e, ValueError) and e.status in ("ECRC", "EDIGEST"), (type(e), e.status, e)
    ok(f"a changed byte: {e.status}: {e}")

# a package, signed by the wheel's onnxzip command
repo = work / "repo"
repo.mkdir()
shutil.copy("model.onnx", repo / "model.onnx")
(repo / "config.json").write_text('{"model_type": "mlp"}\n')
onnxzip.pack(repo, "pkg.onnxzip")
subprocess.run([str(bindir / "onnxzip"), "sign", "pkg.onnxzip", "--private-key", str(here / "keys/key.pem")],
               check=True)
trust = onnxzip.Trust(public_key=str(here / "keys/pub.pem"))
with onnxzip.open("pkg.onnxzip", trust=trust) as a:
    assert bytes(a.files["config.json"]) == (repo / "config.json").read_bytes()
    np.testing.assert_array_equal(a.tensors["fc1.weight"], want["fc1.weight"])
try:
    onnxzip.open("pkg.onnxzip", trust=onnxzip.Trust(public_key=str(here / "keys/other.pub.pem")))
    raise AssertionError("a package opened with another key's trust")
except onnxzip.SignatureError as e:
    assert e.status == "ESIGNATURE", e.status
ok("pack, onnxzip sign, open(trust=) with the key; another key: ESIGNATURE")

# over HTTP from the host's nginx
for f in ("model.onnxzip", "pkg.onnxzip"):
    shutil.copy(f, here / "www" / ("py-" + f))
onnxzip.fetch(url + "py-model.onnxzip", "fetched.onnxzip", allow_http=True)
assert pathlib.Path("fetched.onnxzip").read_bytes() == pathlib.Path("model.onnxzip").read_bytes()
with onnxzip.open_url(url + "py-model.onnxzip", allow_http=True) as r:
    np.testing.assert_array_equal(r.tensors["fc2.weight"], want["fc2.weight"])
onnxzip.fetch(url + "py-pkg.onnxzip", "fetched-pkg.onnxzip", allow_http=True, trust=trust)
assert pathlib.Path("fetched-pkg.onnxzip").read_bytes() == pathlib.Path("pkg.onnxzip").read_bytes()
ok("fetch, open_url and fetch(trust=) over HTTP")
print("bare_checks.py: all passed")
