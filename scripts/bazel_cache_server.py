#!/usr/bin/env python3
"""A small HTTP cache for Bazel's `--remote_cache=http://…` (tests/it/bazel.rs uses it).

Bazel's HTTP cache protocol is plain GET, HEAD and PUT of `/ac/<hash>` (action results) and
`/cas/<hash>` (file contents); this server stores each path as a file under DIR. `GET
/_stats` answers the counts so far as JSON: the hits and misses of GET and HEAD per kind (`ac`,
`cas`) and the PUTs. It binds 127.0.0.1 (port 0: any free one) and prints
`listening on http://127.0.0.1:PORT` once it accepts connections.

    scripts/bazel_cache_server.py --dir /tmp/cache [--port 0]
"""

import argparse
import http.server
import json
import os
import re
import sys
import tempfile
import threading

_PATH = re.compile(r"^/(?:[A-Za-z0-9_.-]+/)*(ac|cas)/[0-9a-fA-F]{16,128}$")


class Cache:
    def __init__(self, root):
        self.root = root
        self.lock = threading.Lock()
        self.stats = {}

    def count(self, key):
        with self.lock:
            self.stats[key] = self.stats.get(key, 0) + 1


def handler(cache):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            pass

        def _file(self):
            path = self.path.split("?", 1)[0]
            match = _PATH.match(path)
            if not match:
                return None, None
            return match.group(1), os.path.join(cache.root, path.lstrip("/"))

        def _answer(self, code, body=b"", content_type="application/octet-stream"):
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _read(self, with_body):
            if self.path == "/_stats":
                with cache.lock:
                    body = json.dumps(cache.stats, sort_keys=True).encode()
                return self._answer(200, body, "application/json")
            kind, file = self._file()
            if file is None:
                return self._answer(400)
            try:
                with open(file, "rb") as f:
                    body = f.read()
            except FileNotFoundError:
                cache.count(f"{kind}_miss")
                return self._answer(404)
            cache.count(f"{kind}_hit")
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)

        def do_GET(self):
            self._read(True)

        def do_HEAD(self):
            self._read(False)

        def do_PUT(self):
            kind, file = self._file()
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = bytearray()
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    body += self.rfile.read(size)
                    self.rfile.readline()
            else:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if file is None:
                return self._answer(400)
            os.makedirs(os.path.dirname(file), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(file))
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            os.replace(tmp, file)
            cache.count(f"{kind}_put")
            self._answer(200)

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="where the entries are stored")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler(Cache(args.dir)))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
