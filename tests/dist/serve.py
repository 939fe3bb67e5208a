#!/usr/bin/python3
"""serve.py DOCROOT URLFILE [CERT KEY]: tests/remote/servers.py's private nginx on
127.0.0.1 serving DOCROOT (its /files/ location), for the install tests of
tests/dist: writes the base URL of DOCROOT's files to URLFILE, then serves
until SIGTERM or SIGINT; with CERT and KEY (PEM files), over HTTPS. A chroot shares the host's network, so a command in
it reaches this server at the URL written."""
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "remote"))
import servers  # noqa: E402


def main() -> int:
    if len(sys.argv) not in (3, 5):
        print(__doc__, file=sys.stderr)
        return 2
    docroot, urlfile = sys.argv[1], sys.argv[2]
    tls = (sys.argv[3], sys.argv[4]) if len(sys.argv) == 5 else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with servers.Nginx(docroot, tls=tls) as n:
        tmp = urlfile + ".tmp"
        with open(tmp, "w") as f:
            f.write(n.url("files") + "\n")
        os.rename(tmp, urlfile)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
