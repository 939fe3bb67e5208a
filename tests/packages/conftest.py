"""What tests/packages/meson.build passes to the package tests, as fixtures
(helpers.py has the functions both test modules use).

The suite runs under `meson test` (tests/python/pytest.sh with
ONNXZIP_PYTEST_DIR pointing here), which sets ONNXZIP_CLI (the built
`onnxzip`), ONNXZIP_BUILD_ROOT and ONNXZIP_SOURCE_ROOT. The oracles are
other programs: Python's zipfile, Info-ZIP's unzip, the onnx package, ONNX
Runtime, and the CLI of format 1.1 (commit d9f55d9) built from this
repository's history.
"""
import fcntl
import importlib.util
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "cli"))      # zipbuild, zipcheck: the crafting tools of tests/cli

from helpers import OLD_COMMIT, old_cli_build  # noqa: E402


# tests/python's conftest: _env_path() and the onnxzip_cli fixture, the same here
_spec = importlib.util.spec_from_file_location("python_conftest", HERE.parent / "python" / "conftest.py")
_python_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_python_conftest)
_env_path = _python_conftest._env_path
onnxzip_cli = _python_conftest.onnxzip_cli


@pytest.fixture(scope="session")
def ort():
    import onnxruntime
    onnxruntime.set_default_logger_severity(3)
    return onnxruntime


@pytest.fixture(scope="session")
def old_cli():
    """The onnxzip CLI of commit d9f55d9 (format 1.1), built once into
    BUILDDIR/tests/packages/cli-d9f55d9; skipped only where git or that
    commit is not available."""
    source_root = _env_path("ONNXZIP_SOURCE_ROOT")
    cache = _env_path("ONNXZIP_BUILD_ROOT") / "tests" / "packages" / f"cli-{OLD_COMMIT}"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache.parent / f"cli-{OLD_COMMIT}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        got = old_cli_build(source_root, cache)
    if isinstance(got, str):
        pytest.skip(f"the format-1.1 CLI cannot be built: {got}")
    # linked statically: never today's libonnxzip.so (meson test's LD_LIBRARY_PATH)
    dynamic = subprocess.run(["readelf", "-d", str(got)], capture_output=True, text=True, check=True).stdout
    assert "libonnxzip" not in dynamic, f"{got} loads libonnxzip dynamically:\n{dynamic}"
    return got


def pytest_report_header(config):
    lines = [f"python: {sys.executable} {sys.version.split()[0]}"]
    for name in ("numpy", "onnx", "onnxruntime", "tokenizers"):
        try:
            mod = __import__(name)
            lines.append(f"{name}: {mod.__version__}")
        except ImportError as e:
            lines.append(f"{name}: not importable ({e})")
    return lines

