"""A real OCI registry on 127.0.0.1 for tests, plus a small auth proxy in front of it.

The `local_registry` fixture (import `local_registry_fixture` into a test module to use it)
starts Debian's `docker-registry` (distribution) on a free loopback port with a temporary
storage folder and pushes two images over plain HTTP:

- `rocm/atom-dev:nightly_202610281457`: an OCI image index with linux/amd64 and linux/arm64/v8
  children;
- `lmsysorg/sglang:v0.5.19-cu130` (also tagged `latest`): a single Docker v2 manifest.

`AuthProxy` answers 401 with a Bearer (or Basic) challenge, hands out tokens, and forwards
authorised requests to the real registry; it can also strip `Docker-Content-Digest`, delay,
redirect, or answer a fixed status, to exercise the client's error paths, and it records the
`Authorization` header of every request. Nothing here leaves 127.0.0.1.

The client refuses loopback addresses unless `PRBOT_ALLOW_PRIVATE_REGISTRIES` names them: tests
that review through the engine use the `allow_loopback` fixture (clients built in a test pass
`allowed_private=LOOPBACK` instead).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from bot.sources.references import ENV_ALLOW_PRIVATE

REGISTRY_BINARIES = ("docker-registry", "registry")
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "server", "date"}
LOOPBACK = ("127.0.0.1",)


@pytest.fixture(name="allow_loopback")
def allow_loopback_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the engine's registry client contact the test registries on 127.0.0.1."""
    monkeypatch.setenv(ENV_ALLOW_PRIVATE, ",".join(LOOPBACK))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (right now)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class LocalRegistry:
    """Where the test registry listens and what was pushed to it."""

    host: str
    index_reference: str
    index_digest: str
    amd64_digest: str
    arm64_digest: str
    single_reference: str
    single_digest: str

    @property
    def url(self) -> str:
        return f"http://{self.host}"


def _registry_binary() -> str | None:
    for name in REGISTRY_BINARIES:
        found = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
        if found:
            return found
    return None


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must not skip the registry tests)")
    pytest.skip(reason)


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _push_blob(http: httpx.Client, repo: str, data: bytes) -> dict:
    start = http.post(f"/v2/{repo}/blobs/uploads/")
    assert start.status_code == 202, start.text
    location = http.base_url.join(start.headers["Location"]).copy_merge_params({"digest": _digest(data)})
    done = http.put(location, content=data, headers={"Content-Type": "application/octet-stream"})
    assert done.status_code == 201, done.text
    return {"digest": _digest(data), "size": len(data)}


def _push_manifest(http: httpx.Client, repo: str, reference: str, media_type: str, manifest: dict) -> str:
    body = json.dumps(manifest, indent=2).encode()
    response = http.put(
        f"/v2/{repo}/manifests/{reference}", content=body, headers={"Content-Type": media_type}
    )
    assert response.status_code == 201, response.text
    assert response.headers["Docker-Content-Digest"] == _digest(body)
    return _digest(body)


def _image(
    http: httpx.Client, repo: str, arch: str, media_type: str, config_type: str, layer_type: str
) -> dict:
    """Push one platform image's config and layer blobs; return its manifest."""
    config = json.dumps({"architecture": arch, "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}})
    layer = f"prbot test layer for {repo} {arch}".encode()
    return {
        "schemaVersion": 2,
        "mediaType": media_type,
        "config": {"mediaType": config_type, **_push_blob(http, repo, config.encode())},
        "layers": [{"mediaType": layer_type, **_push_blob(http, repo, layer)}],
    }


def _populate(url: str) -> LocalRegistry:
    with httpx.Client(base_url=url, timeout=10) as http:
        repo = "rocm/atom-dev"
        children = {}
        for arch, variant in (("amd64", None), ("arm64", "v8")):
            manifest = _image(
                http,
                repo,
                arch,
                OCI_MANIFEST,
                "application/vnd.oci.image.config.v1+json",
                "application/vnd.oci.image.layer.v1.tar+gzip",
            )
            body = json.dumps(manifest, indent=2).encode()
            children[arch] = (
                _push_manifest(http, repo, _digest(body), OCI_MANIFEST, manifest),
                len(body),
                variant,
            )
        index = {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {
                    "mediaType": OCI_MANIFEST,
                    "digest": digest,
                    "size": size,
                    "platform": {
                        "os": "linux",
                        "architecture": arch,
                        **({"variant": variant} if variant else {}),
                    },
                }
                for arch, (digest, size, variant) in children.items()
            ],
        }
        index_digest = _push_manifest(http, repo, "nightly_202610281457", OCI_INDEX, index)
        single_repo = "lmsysorg/sglang"
        single = _image(
            http,
            single_repo,
            "amd64",
            DOCKER_MANIFEST,
            "application/vnd.docker.container.image.v1+json",
            "application/vnd.docker.image.rootfs.diff.tar.gzip",
        )
        single_digest = _push_manifest(http, single_repo, "v0.5.19-cu130", DOCKER_MANIFEST, single)
        _push_manifest(http, single_repo, "latest", DOCKER_MANIFEST, single)
    host = url.removeprefix("http://")
    return LocalRegistry(
        host=host,
        index_reference=f"{host}/{repo}:nightly_202610281457",
        index_digest=index_digest,
        amd64_digest=children["amd64"][0],
        arm64_digest=children["arm64"][0],
        single_reference=f"{host}/{single_repo}:v0.5.19-cu130",
        single_digest=single_digest,
    )


@pytest.fixture(scope="session", name="local_registry")
def local_registry_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    """Debian's docker-registry on a free 127.0.0.1 port, populated; stopped after the session."""
    binary = _registry_binary()
    if binary is None:
        _skip_or_fail("docker-registry is not installed (apt-get install -y docker-registry)")
    root: Path = tmp_path_factory.mktemp("registry")
    port = free_port()
    config = root / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'storage'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n",
        encoding="utf-8",
    )
    log_path = root / "registry.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen([binary, "serve", str(config)], stdout=log_file, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process, log_path)
        yield _populate(url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_up(url: str, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"docker-registry exited early: {log_path.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(f"{url}/v2/", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    pytest.fail(f"docker-registry did not answer on {url}: {log_path.read_text(errors='replace')[-2000:]}")


# ---------------------------------------------------------------- auth proxy


@dataclass
class ProxySettings:
    """How the proxy behaves; tests change these freely between lookups."""

    upstream: str
    auth: str = "bearer"  # "bearer" | "basic" | "none"
    username: str = "ci-bot"
    password: str = field(default_factory=lambda: "pw-" + secrets.token_hex(12))
    token: str = field(default_factory=lambda: "tok-" + secrets.token_hex(16))
    token_field: str = "token"
    anonymous_tokens: bool = False
    reject_tokens: bool = False
    realm: str | None = None
    challenge_scope: str | None = None  # default: the repository of the request, pull
    challenge_service: str = "test"
    redirect_to: str | None = None  # answer authorised requests with a 307 to this origin
    strip_digest: bool = False
    fixed_status: int | None = None
    delay: float = 0.0
    requests: list[tuple[str, str]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)  # one per request, "" when none
    in_flight: int = 0
    peak_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: _ProxyServer

    def log_message(self, format: str, *args: object) -> None:  # silence stderr
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def _handle(self, method: str) -> None:
        settings = self.server.settings
        with settings.lock:
            settings.requests.append((method, self.path))
            settings.authorizations.append(self.headers.get("Authorization", ""))
            settings.in_flight += 1
            settings.peak_in_flight = max(settings.peak_in_flight, settings.in_flight)
        try:
            self._answer(method)
        finally:
            with settings.lock:
                settings.in_flight -= 1

    def _answer(self, method: str) -> None:
        settings = self.server.settings
        if settings.delay:
            time.sleep(settings.delay)
        split = urlsplit(self.path)
        if split.path == "/token":
            self._token(parse_qs(split.query))
        elif settings.fixed_status:
            code = "TOOMANYREQUESTS" if settings.fixed_status == 429 else "UNAVAILABLE"
            self._json(settings.fixed_status, {"errors": [{"code": code, "message": f"test says {code}"}]})
        elif not self._authorized():
            self._challenge(split.path)
        elif settings.redirect_to:
            self.send_response(307)
            self.send_header("Location", settings.redirect_to + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._forward(method)

    def _login_ok(self) -> bool:
        settings = self.server.settings
        expected = base64.b64encode(f"{settings.username}:{settings.password}".encode()).decode()
        return self.headers.get("Authorization") == f"Basic {expected}"

    def _authorized(self) -> bool:
        settings = self.server.settings
        if settings.auth == "none":
            return True
        if settings.auth == "basic":
            return self._login_ok()
        return not settings.reject_tokens and self.headers.get("Authorization") == f"Bearer {settings.token}"

    def _challenge(self, path: str) -> None:
        settings = self.server.settings
        if settings.auth == "basic":
            challenge = 'Basic realm="test registry"'
        else:
            repo = path.removeprefix("/v2/").partition("/manifests/")[0]
            realm = settings.realm or f"http://127.0.0.1:{self.server.server_address[1]}/token"
            scope = settings.challenge_scope or f"repository:{repo}:pull"
            challenge = f'Bearer realm="{realm}",service="{settings.challenge_service}",scope="{scope}"'
        self._json(
            401,
            {"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]},
            {"WWW-Authenticate": challenge},
        )

    def _token(self, query: dict[str, list[str]]) -> None:
        settings = self.server.settings
        if query.get("service") != ["test"] or not query.get("scope"):
            self._json(400, {"errors": [{"code": "UNSUPPORTED", "message": "bad token request"}]})
        elif self._login_ok() or (settings.anonymous_tokens and "Authorization" not in self.headers):
            self._json(200, {settings.token_field: settings.token, "expires_in": 300})
        else:
            # A careless token service that echoes the login it was given: the client must redact it.
            sent = self.headers.get("Authorization", "").removeprefix("Basic ")
            echoed = base64.b64decode(sent).decode(errors="replace") if sent else "anonymous"
            self._json(401, {"errors": [{"code": "UNAUTHORIZED", "message": f"login {echoed} refused"}]})

    def _forward(self, method: str) -> None:
        settings = self.server.settings
        headers = {"Accept": self.headers.get("Accept", "")}
        try:
            upstream = httpx.request(method, settings.upstream + self.path, headers=headers, timeout=10)
        except httpx.HTTPError:
            self._json(502, {"errors": [{"code": "UNAVAILABLE", "message": "upstream registry is gone"}]})
            return
        drop = HOP_BY_HOP | ({"docker-content-digest"} if settings.strip_digest else set())
        self.send_response(upstream.status_code)
        for name, value in upstream.headers.items():
            if name.lower() not in drop:
                self.send_header(name, value)
        self.send_header("Content-Length", upstream.headers.get("Content-Length", str(len(upstream.content))))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(upstream.content)

    def _json(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (timeout tests) is expected; keep stderr quiet."""

    def __init__(self, settings: ProxySettings) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.settings = settings


class AuthProxy:
    """A loopback reverse proxy with its own auth in front of the test registry."""

    def __init__(self, upstream: str, **settings: object) -> None:
        self.settings = ProxySettings(upstream=upstream, **settings)  # type: ignore[arg-type]
        self._server = _ProxyServer(self.settings)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> AuthProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
