"""Fixtures of the signing tests (tests/sign): the CLI, the reference tool
`model_signing` 1.1.1 of the pinned venv, keys and certificates made by the
`openssl` command, and the four repository layouts of tests/packages.

Run through `meson test -C BUILDDIR sign` (tests/sign/meson.build), which
sets ONNXZIP_CLI and runs pytest in BUILDDIR/pyvenv.
"""
import importlib.util
import pathlib
import shutil
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "packages"))  # make_repos
sys.path.insert(2, str(HERE.parent / "cli"))       # zipbuild, zipcheck
sys.path.insert(3, str(HERE.parent / "remote"))    # servers (nginx)

from pki import Pki  # noqa: E402

_spec = importlib.util.spec_from_file_location("python_conftest", HERE.parent / "python" / "conftest.py")
_python_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_python_conftest)
onnxzip_cli = _python_conftest.onnxzip_cli

LAYOUTS = ("transformers_js", "encoder_decoder", "genai", "diffusers")


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.fail("the openssl command is missing (Debian: apt-get install openssl)", pytrace=False)
    return Pki(tmp_path_factory.mktemp("pki") / "pki")


@pytest.fixture(scope="session")
def model_signing():
    """The reference tool's command, from the venv running these tests."""
    exe = pathlib.Path(sys.executable).parent / "model_signing"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: the venv lacks model_signing (tests/python/venv.sh)", pytrace=False)
    return exe


@pytest.fixture(scope="session")
def repos(tmp_path_factory):
    """The four layouts of tests/packages, made once (read-only: copy them)."""
    import make_repos
    base = tmp_path_factory.mktemp("repos")
    return {k: make_repos.make(k, base / k) for k in LAYOUTS}


def pytest_report_header(config):
    try:
        import model_signing
        return [f"model_signing: {model_signing.__version__}"]
    except ImportError as e:
        return [f"model_signing: not importable ({e})"]
