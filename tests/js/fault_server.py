#!/usr/bin/python3
"""fault_server.py DOCROOT — tests/remote/servers.py's FaultServer for the
node --test files: serves DOCROOT on 127.0.0.1, prints its base URL as the
first line, then answers one command per line of standard input with one
line of JSON: "requests" (what it answered so far: [mode, path, range,
status, sent] each), "reset" (forgets them: null). Stops at end of input."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "remote"))
from servers import FaultServer  # noqa: E402


def main() -> None:
    with FaultServer(sys.argv[1]) as fs:
        print(fs.base_url, flush=True)
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "requests":
                out = [list(r) for r in fs.requests()]
            elif cmd == "reset":
                fs.reset()
                out = None
            else:
                out = {"error": f"unknown command {cmd!r}"}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
