#!/usr/bin/env python3
"""Keystroke-to-diagnostics latency of `stridelint server` on a 2,000-line model file.

    scripts/bench_server_latency.py [--binary target/release/stridelint] [--keystrokes 60]
                                    [--file FILE]

The model file: by default the repository's Python fixtures one after another, their torch
oracle runs (`def _oracle_run`, `if __name__ == "__main__":`) left out, then
`benches/server/mixer_blocks.py` — about 2,000 lines of attention blocks, helpers and
layers, written to target/bench/model_2000_lines.py. `--file` times another file instead
(a model file of the real-code corpus, say).

Opens the file in the server as an editor does (initialize, didOpen), then types: each
keystroke is one incremental `didChange` (a digit typed into a size literal, then deleted
again, so the analysis really changes), sent only once the previous keystroke's
diagnostics arrived. The latency of a keystroke is the time from writing its `didChange`
to reading the `publishDiagnostics` of that version. Also times hover requests on a
tensor name. Prints median, p90 and max in milliseconds; exits 1 when the median is over
`--target-ms` (default 50). Needs only the Python standard library.
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time


class Server:
    def __init__(self, binary, cwd):
        self.proc = subprocess.Popen(
            [binary, "server"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == self.next_id and "method" not in m:
                return m
            if "method" in m and "id" in m:  # a request of the server's: accept it
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics(self, uri, version):
        while True:
            m = self.read()
            if (m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri and m["params"].get("version") == version):
                return m["params"]["diagnostics"]


def build_model_file(repo):
    """The default model file (see the module docs); returns its path."""
    parts = []
    for fixture in sorted((repo / "fixtures/python").glob("*.py")):
        kept, skipping = [], False
        for line in fixture.read_text().split("\n"):
            if line.startswith(("def _oracle", "if __name__")):
                skipping = True
                continue
            if skipping and (line.startswith((" ", "\t")) or not line):
                continue
            skipping = False
            kept.append(line)
        parts.append(f"# ---- {fixture.name} ----\n" + "\n".join(kept))
    parts.append((repo / "benches/server/mixer_blocks.py").read_text())
    out = repo / "target/bench/model_2000_lines.py"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n\n".join(parts))
    return out


def summary(name, ms):
    ms = sorted(ms)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    print(f"{name}: median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, "
          f"max {ms[-1]:.1f} ms ({len(ms)} samples)")
    return statistics.median(ms)


def main():
    repo = pathlib.Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=str(repo / "target/release/stridelint"))
    ap.add_argument("--file", help="the model file (default: built, see above)")
    ap.add_argument("--keystrokes", type=int, default=60)
    ap.add_argument("--target-ms", type=float, default=50.0)
    args = ap.parse_args()

    path = pathlib.Path(args.file).resolve() if args.file else build_model_file(repo)
    text = path.read_text()
    lines = text.split("\n")
    uri = path.as_uri()
    server = Server(args.binary, repo)
    server.request("initialize", {"processId": None, "rootUri": repo.as_uri(), "capabilities": {}})
    server.notify("initialized", {})

    started = time.perf_counter()
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}})
    found = server.diagnostics(uri, 1)
    print(f"{path.name}: {len(lines)} lines, {len(found)} diagnostics; "
          f"first analysis {1e3 * (time.perf_counter() - started):.1f} ms")

    # Where to type: before the first digit in the arguments of the first `.view(` with
    # one; the digit typed makes a different size, so the analysis is not a no-op.
    row = next(i for i, l in enumerate(lines) if ".view(" in l and any(c.isdigit() for c in l.split(".view(")[1]))
    col = next(i for i, c in enumerate(lines[row]) if c.isdigit() and i > lines[row].index(".view("))
    pos = {"line": row, "character": col}
    after = {"line": row, "character": col + 1}

    typing = []
    version = 1
    for k in range(args.keystrokes):
        version += 1
        change = ({"range": {"start": pos, "end": pos}, "text": "1"} if k % 2 == 0
                  else {"range": {"start": pos, "end": after}, "text": ""})
        t0 = time.perf_counter()
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        server.diagnostics(uri, version)
        typing.append(1e3 * (time.perf_counter() - t0))

    # Hover on the tensor the typed-in `view` reads (the analysis is current: hover makes
    # no new one).
    name_row = row
    receiver_end = lines[row].index(".view(")
    receiver = receiver_end
    while receiver > 0 and (lines[row][receiver - 1].isalnum() or lines[row][receiver - 1] == "_"):
        receiver -= 1
    hover_pos = {"line": row, "character": receiver}
    hovering = []
    for _ in range(20):
        t0 = time.perf_counter()
        r = server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": hover_pos})
        hovering.append(1e3 * (time.perf_counter() - t0))
    shown = (r.get("result") or {}).get("contents", {}).get("value", "none").split("\n")[0]
    print(f"hover at {name_row + 1}:{hover_pos['character'] + 1}: {shown}")

    median = summary("keystroke to diagnostics", typing)
    summary("hover", hovering)
    server.request("shutdown", None)
    server.notify("exit", None)
    server.proc.wait(timeout=30)
    if median > args.target_ms:
        print(f"median over the {args.target_ms:.0f} ms target", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
