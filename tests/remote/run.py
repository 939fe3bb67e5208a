#!/usr/bin/python3
"""Remote archives end to end: nginx and the fault server (servers.py) serve
one temporary document root; test_remote checks the C API against them, then
the CLI's `ls URL`, `verify URL` and `fetch URL` are compared with the local
file on every archive (the shared corpus, packed here, and test_remote's),
with the status of each misbehaving server and a download killed and
resumed. `ls` and `ls --json` must print the same bytes, the archive's name
aside, from a path, over HTTP and through the Hub's redirect, also for
archives of inline tensors at offsets of every alignment.

    run.py --test-remote EXE --onnxzip EXE [--corpus DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hub import HubRedirector  # noqa: E402
from servers import FaultServer, Nginx  # noqa: E402

passed = failed = 0


def check(what: str, ok: bool, detail: str = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}{': ' + detail if detail else ''}")


def run(*args: str, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`args` run with os.environ (main() cleared its Hugging Face variables)
    and `env` added."""
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def ls_out(oz: str, target: str, *flags: str) -> str:
    r = run(oz, "ls", "--allow-http", target, *flags)
    if r.returncode:
        raise RuntimeError(f"ls {target}: {r.stderr.strip()}")
    return r.stdout


def ls_json(oz: str, target: str) -> dict:
    doc = json.loads(ls_out(oz, target, "--json"))
    doc.pop("archive", None)
    return doc


def listing_diff(oz: str, a: str, b: str) -> str:
    """"" when `ls` and `ls --json` of targets `a` and `b` (paths, or URLs
    without a query, which ls shows as they are) print the same bytes but
    for the archive's name; else where they first differ."""
    for flags in ((), ("--json",)):
        cmd, out = " ".join(("ls",) + flags), []
        for target in (a, b):
            text, shown = ls_out(oz, target, *flags), json.dumps(target)[1:-1] if flags else target
            head = '{"archive": "NAME",\n' if flags else "NAME: "
            text = text.replace(shown, "NAME", 1)
            if not text.startswith(head):
                return f"{cmd} {target}: does not start with its name: {text[:80]!r}"
            out.append(text)
        if out[0] != out[1]:
            lines = zip(out[0].splitlines(keepends=True), out[1].splitlines(keepends=True))
            x, y = next(((x, y) for x, y in lines if x != y), (f"{len(out[0])} bytes", f"{len(out[1])} bytes"))
            return f"{cmd}: {x!r} != {y!r}"
    return ""


def pack_corpus(oz: str, corpus: str | None, docroot: str) -> list[str]:
    models = os.path.join(corpus or "", "models")
    if not corpus or not os.path.isdir(models):
        print(f"remote: the shared corpus is absent ({models}): only test_remote's archives are served")
        return []
    names = []
    for m in sorted(os.listdir(models)):
        if m.endswith(".onnx"):
            name = m[:-5] + ".onnxzip"
            r = run(oz, "pack", os.path.join(models, m), "-o", os.path.join(docroot, name))
            check(f"pack {m}", r.returncode == 0, r.stderr.strip())
            names.append(name)
    return names


SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fuzz", "corpus", "fuzz_open")


def pack_inline(oz: str, corpus: str | None, docroot: str) -> list[str]:
    """Archives whose tensors sit inline in the model at offsets of every
    alignment (the corpus models packed with --size-threshold 1G) and the
    fuzz seed archives (every storage, odd names), for listing_diff()."""
    names = []
    models = os.path.join(corpus or "", "models")
    for m in sorted(os.listdir(models)) if corpus and os.path.isdir(models) else []:
        if m.endswith(".onnx"):
            name = "inline-" + m[:-5] + ".onnxzip"
            r = run(oz, "pack", os.path.join(models, m), "-o", os.path.join(docroot, name), "--size-threshold", "1G")
            check(f"pack {m} --size-threshold 1G", r.returncode == 0, r.stderr.strip())
            names.append(name)
    for seed in sorted(os.listdir(SEEDS)):
        if seed.endswith(".onnxzip"):
            shutil.copyfile(os.path.join(SEEDS, seed), os.path.join(docroot, "seed-" + seed))
            names.append("seed-" + seed)
    return names


def cli_listings(oz: str, ng: Nginx, hub: HubRedirector, docroot: str, names: list[str]) -> None:
    """ls and ls --json of each archive are the same bytes, the name aside,
    from its path, its URL and through the Hub's redirect."""
    for name in names:
        path = os.path.join(docroot, name)
        diff = listing_diff(oz, path, ng.url("files", name)) or listing_diff(oz, path, hub.url("org", name))
        check(f"ls and ls --json: FILE == URL == Hub URL, byte for byte: {name}", not diff, diff)


def cli_archive(oz: str, ng: Nginx, docroot: str, out: str, name: str) -> None:
    """ls, verify and fetch of one archive over HTTP, against the local file."""
    url = ng.url("files", name)
    path = os.path.join(docroot, name)
    size = os.path.getsize(path)
    ng.requests()  # flush
    before = len(ng.requests())
    ls_out(oz, url, "--json")
    log = ng.requests(wait_for=before + 1)[before:]
    sent = sum(e["bytes"] for e in log)
    check(f"ls URL: {name} ({len(log)} requests, {sent} of {size} bytes)", len(log) <= 2 and (sent <= size))
    diff = listing_diff(oz, path, url)
    check(f"ls and ls --json of URL == of FILE, byte for byte: {name}", not diff, diff)
    r = run(oz, "verify", "--allow-http", url)
    check(f"verify URL: {name}", r.returncode == 0 and r.stdout.startswith("OK: "), r.stderr.strip())
    dst = os.path.join(out, name)
    r = run(oz, "fetch", "-q", "--allow-http", url, "-o", dst)
    with open(path, "rb") as a, open(dst, "rb") as b:
        identical = a.read() == b.read()
    check(f"fetch URL: {name} byte for byte", r.returncode == 0 and identical, r.stderr.strip())
    os.unlink(dst)


FAULTS = [  # mode, CLI command, status the CLI must report ("" = success)
    ("ok", "verify", ""),
    ("flaky503", "verify", ""),
    ("truncfirst", "verify", ""),
    ("noranges", "ls", "ONNXZIP_ENORANGE"),
    ("trunc", "ls", "ONNXZIP_ENETWORK"),
    ("stall", "ls", "ONNXZIP_ETIMEOUT"),
    ("stallbody", "ls", "ONNXZIP_ETIMEOUT"),
    ("liar_total", "ls", "ONNXZIP_EREPLY"),
    ("wrong_range", "ls", "ONNXZIP_EREPLY"),
    ("extra", "ls", "ONNXZIP_EREPLY"),
    ("noetag", "ls", "ONNXZIP_EHTTP"),
    ("status500", "ls", "ONNXZIP_EHTTP"),
    ("changing", "verify", "ONNXZIP_ECHANGED"),
]


def cli_faults(oz: str, fs: FaultServer, ng: Nginx, name: str) -> None:
    for mode, cmd, want in FAULTS:
        fs.reset()
        r = run(oz, cmd, "--allow-http", "--timeout", "1000", "--retries", "2", fs.url(mode, name))
        got = "" if r.returncode == 0 else r.stderr.strip().rsplit("[", 1)[-1].rstrip("]")
        check(f"CLI {cmd} over '{mode}': {want or 'success'}", got == want and r.returncode == (1 if want else 0),
              r.stderr.strip())
    r = run(oz, "ls", ng.url("files", name))
    check("CLI refuses http:// without --allow-http", r.returncode == 1 and "[ONNXZIP_EINVAL]" in r.stderr,
          r.stderr.strip())
    r = run(oz, "ls", "--allow-http", ng.url("files", name) + "?X-Amz-Signature=secret")
    check("CLI never prints a URL's query", r.returncode == 0 and "secret" not in r.stdout + r.stderr)


# A reply that is no HTTP reply, or whose framing contradicts itself: the
# status, what the message must say, and what it said before (wrongly).
MALFORMED = [
    ("nostatus", "ls", "ONNXZIP_EREPLY", "malformed status line", "scheme is refused"),
    ("status2060", "ls", "ONNXZIP_EREPLY", "invalid status code", "scheme is refused"),
    ("longheader", "ls", "ONNXZIP_EREPLY", "header too long", "Out of memory"),
    ("slowheaders", "ls", "ONNXZIP_ETIMEOUT", "headers were not complete after 1000 ms", "no byte for"),
    ("overlong", "verify", "ONNXZIP_EREPLY", "Content-Length", "does not serve byte ranges"),
]


def cli_malformed(oz: str, fs: FaultServer, name: str) -> None:
    """Each says what happened, naming the URL without its query, within
    the stall timeout per attempt; no request asks an inverted range."""
    # Behind a redirect (/to/MODE: a 302 to MODE) the same, not the 302's
    # status ("HTTP status 302 for bytes -65536", "scheme is refused").
    behind = [(f"to/{m}", c, w, s, (bad, "status 302", "scheme is refused")) for m, c, w, s, bad in MALFORMED]
    for mode, cmd, want, says, wrong in [(m, c, w, s, (bad,)) for m, c, w, s, bad in MALFORMED] + behind:
        fs.reset()
        t = time.monotonic()
        r = run(oz, cmd, "--allow-http", "--timeout", "1000", "--retries", "1", fs.url(mode, name) + "?sig=secret")
        took, err = time.monotonic() - t, r.stderr.strip()
        inverted = [q.range for q in fs.requests() if (m := re.fullmatch(r"bytes=(\d+)-(\d+)", q.range or ""))
                    and int(m[1]) > int(m[2])]
        check(f"CLI {cmd} over '{mode}': [{want}] saying '{says}' in {took:.1f} s", r.returncode == 1
              and err.endswith(f"[{want}]") and says in err and not any(w in err for w in wrong) and fs.url(mode, name) in err
              and "secret" not in err and not inverted and took < 2 * 1.0 + 2, f"{err} {inverted}")


def wait_for_file(path: str, least: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path) and os.path.getsize(path) >= least:
            return True
        time.sleep(0.05)
    return False


def cli_resume(oz: str, ng: Nginx, docroot: str, out: str, name: str) -> None:
    """A download killed half way resumes each of its parts where it stopped."""
    dst = os.path.join(out, "resumed.onnxzip")
    size = os.path.getsize(os.path.join(docroot, name))
    p = subprocess.Popen([oz, "fetch", "-q", "--allow-http", ng.url("throttled", name), "-o", dst],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = wait_for_file(dst + ".part", 1 << 20, 30)
    time.sleep(2.5)  # past the first MiB of each part: slow now; the progress record is rewritten every second
    p.send_signal(signal.SIGKILL)
    p.wait()
    with open(dst + ".part.etag") as f:
        record = f.read().split("\n")
    parts = [tuple(map(int, line.split())) for line in record[1:] if line]
    check(f"fetch killed: {len(parts)} parts recorded ({', '.join(f'{a}+{c}' for a, b, c in parts)}), no output",
          started and len(parts) >= 2 and all(c > 0 for a, b, c in parts) and not os.path.exists(dst))
    before = len(ng.requests())
    r = run(oz, "fetch", "-q", "--allow-http", ng.url("files", name), "-o", dst)
    # nginx logs the killed download's throttled requests only when it next
    # writes to their closed connections: they may come after `before`
    log = [e for e in ng.requests(wait_for=before + 1)[before:] if e["path"].startswith("/files/")]
    sent = sum(e["bytes"] for e in log)
    starts = sorted(int(e["range"][6:].split("-")[0]) for e in log
                    if (e["range"] or "").startswith("bytes=") and e["range"][6:7] != "-")
    with open(os.path.join(docroot, name), "rb") as a, open(dst, "rb") as b:
        identical = a.read() == b.read()
    check(f"fetch resumed: parts from {starts}, {sent} of {size} bytes sent again; byte for byte, .part gone",
          r.returncode == 0 and identical and len(starts) >= 2 and all(x > a for x, (a, b, c) in zip(starts, parts))
          and sent < size - sum(c for a, b, c in parts) + 2 * 65536 and not os.path.exists(dst + ".part")
          and not os.path.exists(dst + ".part.etag"), r.stderr.strip())


def cli_shard(oz: str, ng: Nginx, out: str, name: str, pattern: str, checker: bool = True) -> None:
    """fetch --tensors: only the kept entries transferred, and (`checker`:
    the source is a valid ONNX model) a valid ONNX model whose unselected
    initializers are graph inputs."""
    shard, model = os.path.join(out, "shard.onnxzip"), os.path.join(out, "shard.onnx")
    before = len(ng.requests())
    r = run(oz, "fetch", "-q", "--allow-http", ng.url("files", name), "-o", shard, "--tensors", pattern)
    log = ng.requests(wait_for=before + 1)[before:]
    if r.returncode:
        check(f"fetch --tensors '{pattern}' {name}", False, r.stderr.strip())
        return
    src = ls_json(oz, ng.url("files", name))
    kept = ls_json(oz, shard)
    kept_bytes = sum(e["size"] for e in kept["entries"] if e["name"] != "__MODEL_PROTO")
    sent = sum(e["bytes"] for e in log)
    tail = sum(e["bytes"] for e in log if (e["range"] or "").startswith("bytes=-"))
    check(f"fetch --tensors '{pattern}' {name}: {sent - tail} bytes after the open for {kept_bytes} bytes of "
          f"entries ({len(kept['entries']) - 1} of {len(src['entries']) - 1})",
          kept_bytes <= sent - tail <= kept_bytes + 4096 * len(kept["entries"]) + 2 * 65536)
    if not checker:
        return
    r = run(oz, "unpack", "-q", shard, "-o", model)
    code = ("import onnx, sys; m = onnx.load(sys.argv[1]); onnx.checker.check_model(m); "
            "print(len(m.graph.initializer), len(m.graph.input))")
    c = subprocess.run(["/usr/bin/python3", "-c", code, model], capture_output=True, text=True)
    check(f"shard of {name}: onnx.checker passes (initializers, inputs: {c.stdout.strip()})",
          r.returncode == 0 and c.returncode == 0, r.stderr.strip() + c.stderr.strip()[-300:])


def cli_fetch_dirs(oz: str, ng: Nginx, fs: FaultServer, docroot: str, out: str, name: str) -> None:
    """fetch -o into missing directories: made as mkdir -p, whole or --tensors;
    a fetch refused after it made them (the file changed under it: ECHANGED,
    the .part discarded) leaves none behind."""
    dst = os.path.join(out, "new", "sub", name)
    r = run(oz, "fetch", "-q", "--allow-http", ng.url("files", name), "-o", dst)
    with open(os.path.join(docroot, name), "rb") as a, open(dst if os.path.isfile(dst) else os.devnull, "rb") as b:
        identical = os.path.isfile(dst) and b.read() == a.read()
    check(f"fetch -o new/sub/{name}: directories made, byte for byte", r.returncode == 0 and identical,
          r.stderr.strip())
    shard = os.path.join(out, "new", "other", "shard.onnxzip")
    r = run(oz, "fetch", "-q", "--allow-http", ng.url("files", name), "-o", shard, "--tensors", "w1")
    check("fetch --tensors -o new/other/shard.onnxzip: directories made",
          r.returncode == 0 and os.path.isfile(shard), r.stderr.strip())
    shutil.rmtree(os.path.join(out, "new"))
    before = sorted(os.listdir(out))
    fs.reset()
    r = run(oz, "fetch", "-q", "--allow-http", "--retries", "0", fs.url("changing", name), "-o",
            os.path.join(out, "gone", "sub", name))
    check("fetch refused (ECHANGED) into new directories: none left",
          r.returncode == 1 and "[ONNXZIP_ECHANGED]" in r.stderr and sorted(os.listdir(out)) == before,
          r.stderr.strip() + f" {sorted(os.listdir(out))}")


def cli_fetch_chunks(oz: str, ng: Nginx, docroot: str, out: str, name: str) -> None:
    """fetch spreads a small file over its connections: with the default
    options an 18 MiB archive goes in chunks of 2 MiB, two per connection
    at most (8 MiB chunks kept 13 of 16 idle); --chunk-size is honoured."""
    size = os.path.getsize(os.path.join(docroot, name))
    dst = os.path.join(out, "chunks-" + name)
    for extra, chunk in (((), 2 << 20), (("--chunk-size", "8M"), 8 << 20)):
        want = -(-size // chunk)
        before = len(ng.requests())
        r = run(oz, "fetch", "-q", "--allow-http", ng.url("files", name), "-o", dst, *extra)
        ranges = [e["range"][6:].split("-") for e in ng.requests(wait_for=before + 1 + want)[before:]
                  if (e["range"] or "bytes=-")[6:7] != "-"]  # the tail (a suffix range) aside
        lengths = sorted(int(b) - int(a) + 1 for a, b in ranges)
        check(f"fetch {' '.join(extra) or '(default chunks)'}: {name} ({size} bytes) in {len(lengths)} requests of "
              f"at most {chunk >> 20} MiB", r.returncode == 0 and len(lengths) == want and lengths[-1] == chunk
              and sum(lengths) == size, f"{r.stderr.strip()} {lengths}")
        os.unlink(dst)


def _quiet(hub: HubRedirector, text: str) -> bool:
    """No signature, no query and no password in `text`."""
    sigs = [r.query for r in hub.requests() if r.query]
    return not any(s in text for s in ("X-Amz", "Signature=", "Expires=", "hunter2", *sigs))


def cli_hub(oz: str, ng: Nginx, hub: HubRedirector, out: str, name: str) -> None:
    """ls, verify, fetch and fetch --tensors through the Hub's redirect give
    what the origin gives directly, at one redirect per command; every
    request after the first goes to the CDN URL, under the CDN's ETag."""
    url, direct = hub.url("org", name), ng.url("files", name)
    hub.reset()
    r = run(oz, "ls", "--allow-http", url)
    diff = listing_diff(oz, os.path.join(ng.docroot, name), url) or listing_diff(oz, direct, url)
    check(f"hub: ls and ls --json of the Hub URL == of the file and of the origin's URL: {name}",
          r.returncode == 0 and not diff and _quiet(hub, r.stdout), diff or r.stderr.strip())
    for what, args in (("verify", ("verify",)), ("fetch", ("fetch", "-q", "-o", os.path.join(out, "hub.whole"))),
                       ("fetch --tensors w1", ("fetch", "-q", "-o", os.path.join(out, "hub.shard"), "--tensors", "w1"))):
        hub.reset()
        r = run(oz, args[0], "--allow-http", url, *args[1:])
        hubs, cdn = hub.requests("hub"), hub.requests("cdn")
        check(f"hub: {what} {name}: {len(hubs)} redirect(s), {len(cdn)} CDN requests "
              f"({sum(c.sent for c in cdn)} bytes), all 206",
              r.returncode == 0 and len(hubs) == 1 and cdn and all(c.status == 206 for c in cdn)
              and _quiet(hub, r.stdout + r.stderr), r.stderr.strip())
    head = urllib.request.Request(direct, method="HEAD")
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(head, timeout=10) as reply:
        etag = reply.headers["ETag"]  # the origin's, which the CDN relays
    r2 = run(oz, "fetch", "-q", "--allow-http", direct, "-o", os.path.join(out, "direct.shard"), "--tensors", "w1")
    with open(os.path.join(ng.docroot, name), "rb") as a, open(os.path.join(out, "hub.whole"), "rb") as b:
        whole = a.read() == b.read()
    with open(os.path.join(out, "direct.shard"), "rb") as a, open(os.path.join(out, "hub.shard"), "rb") as b:
        shard = r2.returncode == 0 and a.read() == b.read()
    check(f"hub: fetch {name} byte for byte; its --tensors shard == the origin's", whole and shard)
    pins = {c.if_match for c in hub.requests("cdn")}
    check("hub: requests after the first carry If-Match of the CDN's ETag, never the redirect's",
          len(pins - {None}) == 1 and not any(p and p.startswith('"hub-') for p in pins)
          and etag in pins, f"{pins} {etag}")
    for f in ("hub.whole", "hub.shard", "direct.shard"):
        os.unlink(os.path.join(out, f))


def cli_hub_open_read(oz: str, hub: HubRedirector, out: str, name: str) -> None:
    """The cost of opening and reading one tensor through the redirect."""
    hub.reset()
    r = run(oz, "fetch", "-q", "--allow-http", hub.url("org", name), "-o", os.path.join(out, "one.shard"),
            "--tensors", "w0")
    hubs, cdn = hub.requests("hub"), hub.requests("cdn")
    check(f"hub: open + one tensor read (fetch --tensors w0 {name}): {len(hubs)} redirect(s) "
          f"({sum(h.sent for h in hubs)} bytes), {len(cdn)} CDN requests ({sum(c.sent for c in cdn)} bytes)",
          r.returncode == 0 and len(hubs) == 1 and len(cdn) >= 2, r.stderr.strip())
    os.unlink(os.path.join(out, "one.shard"))


def cli_hub_signatures(oz: str, hub: HubRedirector, out: str, name: str) -> None:
    """The CDN URL the Hub signs is resolved once per transfer and shared by
    every connection, and again only when the CDN refuses it (403, "Request
    has expired"), by one request while the others wait: with a CDN that
    honours only a file's newest signature, requests resolving it each for
    itself refuse each other. rotating: each signature serves USES requests
    (more than the connections) and a resolve follows only its refusal, so
    every signature but the last serves exactly USES requests (requests
    under an older one that was superseded meanwhile are refused and sent
    again: counted, not an error)."""
    dst = os.path.join(out, "signed.whole")
    for org in ("newest", "rotating"):
        hub.reset()
        r = run(oz, "fetch", "-q", "--allow-http", "--chunk-size", "64K", "--retries", "1", hub.url(org, name),
                "-o", dst)
        hubs, served = hub.requests("hub"), sum(c.status == 206 for c in hub.requests("cdn"))
        want = 1 if org == "newest" else -(-served // hub.USES)
        with open(os.path.join(hub.docroot, name), "rb") as a:
            same = r.returncode == 0 and open(dst, "rb").read() == a.read()
        check(f"hub {org}: fetch --chunk-size 64K {name}: {len(hubs)} resolve(s) (want {want}) for {served} CDN "
              f"replies ({hub.superseded} refused as superseded); byte for byte",
              same and len(hubs) == want and _quiet(hub, r.stderr), r.stderr.strip())
        for f in (dst, dst + ".part", dst + ".part.etag"):
            if os.path.exists(f):
                os.unlink(f)


HUB_FAULTS = [("wrongsize", "ONNXZIP_EREPLY", "X-Linked-Size"), ("forbidden", "ONNXZIP_EHTTP", "403"),
              ("deadcdn", "ONNXZIP_ENETWORK", "redirects to")]


def cli_hub_messages(oz: str, hub: HubRedirector, name: str) -> None:
    """Failures through the redirect name the Hub URL, without the query of
    either URL or the password of the Hub's; credentials go to the Hub's
    host only."""
    for org, want, says in HUB_FAULTS:
        for cred in ("", "user:hunter2@"):
            url = hub.url(org, name).replace("http://", "http://" + cred)
            r = run(oz, "ls", "--allow-http", "--retries", "0", url)
            check(f"hub {org} {cred or 'plain'}: [{want}], says '{says}', no signature or password",
                  r.returncode == 1 and f"[{want}]" in r.stderr and says in r.stderr
                  and "/resolve/main/" + name in r.stderr and _quiet(hub, r.stderr + r.stdout), r.stderr.strip())
    hub.reset()
    r = run(oz, "ls", "--allow-http", hub.url("org", name).replace("http://", "http://user:hunter2@"))
    auth = [(x.server, x.authorization) for x in hub.requests()]
    check("hub: ls http://user:hunter2@...: not printed; Authorization to the hub only",
          r.returncode == 0 and _quiet(hub, r.stdout + r.stderr) and "...@127.0.0.1" in r.stdout
          and all((a is not None) == (s == "hub") for s, a in auth), f"{auth} {r.stderr.strip()}")


def cli_hub_tokens(oz: str, hub: HubRedirector, tmp: str, name: str) -> None:
    """A private and a gated repository through the CLI: the token of
    $HF_TOKEN, of $HF_HOME/token or of --token-file reaches the Hub and never
    the CDN; without one, the Hub's refusal is explained; the token is never
    printed."""
    url, gated = hub.url("private", name), hub.url("gated", name)
    home, files = os.path.join(tmp, "hf-home"), os.path.join(tmp, "tokens")
    os.makedirs(home)
    os.makedirs(files)
    for f, text in (("good", f"\n  {hub.token}\r\n"), ("wrong", "hf_wrongTokenValue123\n"), ("empty", " \n")):
        with open(os.path.join(files, f), "w") as fh:
            fh.write(text)
    at_hub = {"HF_ENDPOINT": hub.base_url}
    cases = [  # what, args, env, exit status, what stderr says
        ("no token (not a Hub URL)", ["ls", url], {"HF_TOKEN": hub.token}, 1,
         ["[ONNXZIP_EHTTP]", "401", "RepoNotFound", "no token was sent"]),
        ("HF_TOKEN, HF_ENDPOINT", ["ls", "--json", url], {**at_hub, "HF_TOKEN": hub.token}, 0, []),
        ("$HF_HOME/token", ["fetch", "-q", url, "-o", os.path.join(tmp, "out", "private.onnxzip")],
         {**at_hub, "HF_HOME": home}, 0, []),
        ("--no-token", ["ls", "--no-token", url], {**at_hub, "HF_TOKEN": hub.token}, 1,
         ["[ONNXZIP_EHTTP]", "none was to be sent"]),
        ("--token-file", ["verify", "--token-file", os.path.join(files, "good"), url], {}, 0, []),
        ("--token-file over HF_TOKEN", ["ls", "--token-file", os.path.join(files, "good"), gated],
         {**at_hub, "HF_TOKEN": "hf_wrongTokenValue123"}, 0, []),
        ("a wrong --token-file", ["ls", "--token-file", os.path.join(files, "wrong"), url], {}, 1,
         ["[ONNXZIP_EHTTP]", "Invalid credentials", "the token given was refused"]),
        ("a wrong HF_TOKEN, gated", ["ls", gated], {**at_hub, "HF_TOKEN": "hf_wrongTokenValue123"}, 1,
         ["403", "GatedRepo", "not in the authorized list", "the token from $HF_TOKEN was refused"]),
        ("gated, no token", ["ls", gated], {**at_hub, "HF_HOME": os.path.join(tmp, "nowhere")}, 1,
         ["401", "GatedRepo", "Please log in", "set HF_TOKEN or run `hf auth login`"]),
        ("HF_HUB_DISABLE_IMPLICIT_TOKEN", ["ls", url],
         {**at_hub, "HF_TOKEN": hub.token, "HF_HUB_DISABLE_IMPLICIT_TOKEN": "yes"}, 1,
         ["HF_HUB_DISABLE_IMPLICIT_TOKEN is set"]),
        ("--token-file missing", ["ls", "--token-file", os.path.join(files, "none"), url], {}, 1,
         ["--token-file", "No such file"]),
        ("--token-file empty", ["ls", "--token-file", os.path.join(files, "empty"), url], {}, 2, ["empty"]),
    ]
    os.makedirs(os.path.join(tmp, "out"), exist_ok=True)
    with open(os.path.join(home, "token"), "w") as fh:
        fh.write(hub.token + "\n")
    for what, args, env, status, says in cases:
        hub.reset()
        r = run(oz, args[0], "--allow-http", *args[1:], env=env)
        text = r.stdout + r.stderr
        cdn = [c.authorization for c in hub.requests("cdn")]
        sent = [h.authorization for h in hub.requests("hub")]
        check(f"hub tokens, {what}: exit {status}, {len(sent)} hub request(s) "
              f"({sum(a == 'Bearer ' + hub.token for a in sent)} with the token), {len(cdn)} CDN requests, "
              "none with Authorization; the token never printed",
              r.returncode == status and all(w in r.stderr for w in says) and cdn.count(None) == len(cdn)
              and (status != 0 or (len(cdn) > 0 and all(a == "Bearer " + hub.token for a in sent)))
              and hub.token not in text and "hf_wrongTokenValue123" not in text, r.stderr.strip())
    r = run(oz, "ls", "--help")
    check("ls --help documents --token-file and --no-token",
          "--token-file FILE" in r.stdout and "--no-token" in r.stdout and "HF_TOKEN" in r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--test-remote", required=True)
    ap.add_argument("--test-remote-hub", required=True)
    ap.add_argument("--onnxzip", required=True)
    ap.add_argument("--corpus")
    a = ap.parse_args()
    for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_ENDPOINT", "HF_HUB_DISABLE_IMPLICIT_TOKEN"):
        os.environ.pop(k, None)  # a developer's own token: never sent to the test servers, never relied on
    if not shutil.which("nginx") and not os.path.exists("/usr/sbin/nginx"):
        print("remote: nginx is not installed (Debian: nginx-light): cannot test", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="oz-remote-") as tmp:
        docroot, out = os.path.join(tmp, "www"), os.path.join(tmp, "out")
        os.mkdir(docroot)
        os.mkdir(out)
        os.environ["HF_HOME"] = os.path.join(tmp, "no-hf-home")  # not the user's ~/.cache/huggingface
        names = pack_corpus(a.onnxzip, a.corpus, docroot)
        inline = pack_inline(a.onnxzip, a.corpus, docroot)
        with Nginx(docroot) as ng, FaultServer(docroot) as fs:
            r = subprocess.run([a.test_remote, ng.base_url, fs.base_url, docroot], timeout=400)
            check("test_remote (the C API)", r.returncode == 0)
            for name in names + ["syn.onnxzip", "many.onnxzip"]:
                cli_archive(a.onnxzip, ng, docroot, out, name)
            cli_faults(a.onnxzip, fs, ng, "f.onnxzip")
            cli_malformed(a.onnxzip, fs, "f.onnxzip")
            cli_resume(a.onnxzip, ng, docroot, out, "syn.onnxzip")
            cli_fetch_dirs(a.onnxzip, ng, fs, docroot, out, "syn.onnxzip")
            cli_fetch_chunks(a.onnxzip, ng, docroot, out, "syn.onnxzip")
            cli_shard(a.onnxzip, ng, out, "syn.onnxzip", "w1", checker=False)  # a minimal model, not valid ONNX
            if "silero_vad_legacy.onnxzip" in names:  # its weights are initializers in entries
                cli_shard(a.onnxzip, ng, out, "silero_vad_legacy.onnxzip", "*first_layer*")
            with HubRedirector(docroot, ng.url("files")) as hub:
                r = subprocess.run([a.test_remote_hub, hub.base_url, docroot, str(hub.SHORT), hub.token], timeout=200)
                cdn_auth = [x for x in hub.requests("cdn") if x.authorization is not None]
                check("test_remote_hub (the C API through the Hub's redirect); the CDN never got an Authorization",
                      r.returncode == 0 and not cdn_auth, str(cdn_auth[:2]))
                for name in ["syn.onnxzip", "many.onnxzip"]:
                    cli_hub(a.onnxzip, ng, hub, out, name)
                cli_listings(a.onnxzip, ng, hub, docroot, inline)
                cli_hub_open_read(a.onnxzip, hub, out, "syn.onnxzip")
                cli_hub_signatures(a.onnxzip, hub, out, "syn.onnxzip")
                cli_hub_messages(a.onnxzip, hub, "syn.onnxzip")
                cli_hub_tokens(a.onnxzip, hub, tmp, "syn.onnxzip")
    print(f"remote: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
