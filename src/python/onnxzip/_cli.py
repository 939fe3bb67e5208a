"""The wheel's `onnxzip` command (pyproject.toml's [project.scripts]): the C
command-line tool, installed in the package as onnxzip/_bin/onnxzip
(-Dpython_cli=true), run in this process's place, as the ninja and cmake
wheels run theirs. The same binary, so the same options, output and exit
statuses as a built `onnxzip`."""
import os
import sys
from typing import NoReturn


def executable() -> str:
    """Path of the tool in the installed package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "onnxzip")


def main() -> NoReturn:
    exe = executable()
    if not os.access(exe, os.X_OK):
        sys.exit(f"onnxzip: {exe}: no command-line tool in this installation of the package "
                 "(built without -Dpython_cli=true, as the build tree's package is)")
    sys.stdout.flush()
    # argv[0] "onnxzip": the name its usage and messages print
    os.execv(exe, ["onnxzip", *sys.argv[1:]])
