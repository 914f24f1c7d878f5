"""A real smart-HTTP git server on 127.0.0.1 for the tests and the bench.

`git http-backend` (Debian's git) runs as a CGI program behind a small `http.server`. Every request
must carry HTTP Basic credentials whose password is the token, else it is answered 401 with a
`WWW-Authenticate` challenge, as GitHub does. Requests are counted (401s included), and `delay`
seconds can be added to each to approach the round trips of a real host.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


def serve_repository(source: Path, root: Path, full_name: str, pulls: dict[int, str]) -> Path:
    """A bare copy of `source` at `<root>/<full_name>.git`, with a `refs/pull/<n>/head` for each
    pull request and the settings that let a client fetch by SHA with a filter (as GitHub allows)."""
    target = root / f"{full_name}.git"
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(target)], check=True)
    for number, sha in pulls.items():
        subprocess.run(["git", "-C", str(target), "update-ref", f"refs/pull/{number}/head", sha], check=True)
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant", "http.receivepack"):
        value = "false" if key == "http.receivepack" else "true"
        subprocess.run(["git", "-C", str(target), "config", key, value], check=True)
    return target


class GitHttpServer:
    """`git http-backend` for the repositories under `root`; a context manager."""

    def __init__(self, root: Path, token: str, delay: float = 0.0) -> None:
        self.root = Path(root)
        self.token = token
        self.delay = delay
        self.requests: list[tuple[str, str, int]] = []  # (method, path and query, status)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> GitHttpServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def authorized(self, header: str) -> bool:
        scheme, _, encoded = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            _user, _, password = base64.b64decode(encoded).decode().partition(":")
        except ValueError:
            return False
        return password == self.token

    def record(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.requests.append((method, path, status))

    def cgi(self, method: str, path: str, query: str, headers: Any, body: bytes) -> bytes:
        """The raw output of `git http-backend` for one request (CGI headers, blank line, body)."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.root),
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "x-access-token",
            "REMOTE_ADDR": "127.0.0.1",
        }
        if headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = headers["Content-Encoding"]
        if headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = headers["Git-Protocol"]
        done = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env, check=False)
        return done.stdout


class _Handler(BaseHTTPRequestHandler):
    owner: GitHttpServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()  # the blank line after the last chunk
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        server = self.owner
        body = self._body()
        if server.delay:
            time.sleep(server.delay)
        if not server.authorized(self.headers.get("Authorization", "")):
            server.record(self.command, self.path, 401)
            self._send(401, {"WWW-Authenticate": 'Basic realm="git"', "Content-Type": "text/plain"}, b"")
            return
        url = urlsplit(self.path)
        raw = server.cgi(self.command, url.path, url.query, self.headers, body)
        head, _, content = raw.partition(b"\r\n\r\n")
        status, headers = 200, {}
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers[name] = value.strip()
        server.record(self.command, self.path, status)
        self._send(status, headers, content)

    def _send(self, status: int, headers: dict[str, str], content: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    do_GET = do_POST = _serve
