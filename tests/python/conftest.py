"""What tests/python/meson.build passes to every test, as fixtures.

The suite runs under `meson test` (tests/python/pytest.sh), which sets
ONNXZIP_CLI (the built `onnxzip` tool), ONNXZIP_SHARED_CORPUS (../shared/corpus
beside the repository; it may be absent) and ONNXZIP_BUILD_ROOT, and puts the
build tree's package first on PYTHONPATH (the pip_install test runs the
installed package instead).

Fixtures shared by several test modules: `ort` (onnxruntime, or a skip) and
`remote_build` (a skip where onnxzip was built without libcurl).
"""
import os
import pathlib
import sys

import pytest


def _env_path(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through meson "
                    f"(meson test -C BUILDDIR --suite python)", pytrace=False)
    return pathlib.Path(value)


@pytest.fixture(scope="session")
def onnxzip_cli():
    """Path of the `onnxzip` command-line tool built with the package."""
    path = _env_path("ONNXZIP_CLI")
    if not os.access(path, os.X_OK):
        pytest.fail(f"ONNXZIP_CLI={path}: not an executable", pytrace=False)
    return path


@pytest.fixture(scope="session")
def shared_corpus():
    """Path of the shared read-only corpus (models/, extdata/, zip/); may not exist."""
    return _env_path("ONNXZIP_SHARED_CORPUS")


@pytest.fixture(scope="session")
def build_root():
    """The meson build directory."""
    return _env_path("ONNXZIP_BUILD_ROOT")


@pytest.fixture(scope="module")
def ort():
    """The onnxruntime module, its logging down to errors; skips the test
    where this interpreter cannot import it."""
    mod = pytest.importorskip(
        "onnxruntime", reason="onnxruntime is not importable by this interpreter (Debian has no "
                              "python3-onnxruntime; the PyPI venv runs these)")
    mod.set_default_logger_severity(3)
    return mod


@pytest.fixture(scope="module")
def remote_build():
    """Skips where the library was built without libcurl (-Dcurl=disabled)."""
    import onnxzip  # here, not at the top: a conftest failing to import stops the whole session
    try:  # nothing listens on port 1: refused at once
        onnxzip.open_url("http://127.0.0.1:1/m.onnxzip", allow_http=True, retries=0, connect_timeout=2)
    except onnxzip.UnsupportedError:  # pragma: no cover - depends on the build
        pytest.skip("this build of onnxzip has no libcurl (no remote archives)")
    except onnxzip.NetworkError:
        pass


def pytest_report_header(config):
    # Which of the two runs (Debian's interpreter, the pinned venv) a log is.
    lines = [f"python: {sys.executable} {sys.version.split()[0]}"]
    for name in ("onnxzip", "numpy", "onnx", "onnxruntime", "ml_dtypes"):
        try:
            mod = __import__(name)
        except ImportError as e:
            lines.append(f"{name}: not importable ({e})")
            continue
        where = getattr(mod, "__file__", "?")
        lines.append(f"{name}: {getattr(mod, '__version__', '?')} ({where})")
    return lines
