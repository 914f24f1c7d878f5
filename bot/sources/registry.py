"""OCI distribution client: which manifest digests does an image tag name right now?

The only module that talks to container registries. It resolves `repo:tag` references to the
tag's manifest digest and, for an image index / manifest list, the digests of its per-platform
child manifests. It never judges: `bot.checks.digest` compares the answers with recipe pins.

Trust (see docs/checks.md, "Credentials"): a login is configured per host and sent only to that host,
and to its token service when `_login_may_go_to` allows; the token scope is prbot's own; hosts that
resolve to non-public addresses are not contacted unless a setting names them (`_AddressGuard`).
Secrets never appear in a message, an exception, a log line or a repr.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import logging
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import cache

import httpx

from bot.catalog import Msg, msg
from bot.sources.references import (  # noqa: F401 - re-exported for callers of this module
    _DIGEST_RE,
    DOCKER_HUB,
    ENV_ALLOW_PRIVATE,
    ENV_CREDENTIALS,
    ImageRef,
    TagResolution,
    _normalize_host,
    normalized_repository,
    parse_reference,
    scheme_for,
)

log = logging.getLogger(__name__)

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
ACCEPT = ", ".join((OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST))
INDEX_TYPES = frozenset((OCI_INDEX, DOCKER_LIST))

ENV_INSECURE = "PRBOT_INSECURE_REGISTRIES"
# The old login for every registry: no longer read, since it went to any registry a PR names.
ENV_LEGACY = ("PRBOT_REGISTRY_USERNAME", "PRBOT_REGISTRY_PASSWORD")
# Token services on another host than their registry that may receive its login without being listed.
_TOKEN_HOSTS = {DOCKER_HUB: "auth.docker.io"}

_NOT_FOUND_CODES = frozenset(("MANIFEST_UNKNOWN", "NAME_UNKNOWN", "TAG_UNKNOWN", "BLOB_UNKNOWN"))
_MAX_MANIFEST_BYTES = 4 * 1024 * 1024
_MAX_MESSAGE_CHARS = 200
_MAX_RETRY_AFTER = 2.0
_GRACE_SECONDS = 1.0

# A name starts a word (else `\w+` would be retried from each letter of a long word: quadratic).
_CHALLENGE_PARAM = re.compile(r'(?<!\w)(\w+)\s*=\s*(?:"([^"]*)"|([^\s,]+))')
_SERVICE = re.compile(r"[\w.:-]{1,128}", re.ASCII)  # a token service's name, as challenges give it
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


# ---------------------------------------------------------------- credentials


@dataclass(frozen=True)
class Credentials:
    """A username and password (or token) for one registry; the secret is kept out of repr."""

    username: str
    password: str = field(repr=False)


Warn = Callable[[Msg], None]


def _log(message: Msg) -> None:
    """Where a warning goes when the caller gives no log of its own: Python's logging, by id."""
    log.warning("%s %s", message.id, message.params)


def credentials_from_env(environ: Mapping[str, str], warn: Warn = _log) -> dict[str, Credentials]:
    """Per-host logins from `PRBOT_REGISTRY_CREDENTIALS`, a JSON object of host → {username, password};
    `warn` is told of entries that are not used.

    The old global pair (`ENV_LEGACY`) is ignored, with a warning: it was offered to any registry.
    """
    if any(environ.get(name) for name in ENV_LEGACY):
        warn(msg("digest-log-legacy-credentials", legacy=list(ENV_LEGACY), env=ENV_CREDENTIALS))
    raw = environ.get(ENV_CREDENTIALS, "").strip()
    if not raw:
        return {}
    try:
        table = json.loads(raw)
    except ValueError:
        table = None
    if not isinstance(table, dict):
        warn(msg("digest-log-credentials-not-json", env=ENV_CREDENTIALS))
        return {}
    found: dict[str, Credentials] = {}
    for host, entry in table.items():
        if isinstance(entry, dict) and entry.get("username") and entry.get("password"):
            found[_normalize_host(str(host))] = Credentials(str(entry["username"]), str(entry["password"]))
        else:
            warn(msg("digest-log-credentials-incomplete", env=ENV_CREDENTIALS, host=str(host)))
    return found


def _listed(environ: Mapping[str, str], name: str) -> set[str]:
    return {h.strip().lower() for h in environ.get(name, "").split(",") if h.strip()}


def insecure_from_env(environ: Mapping[str, str]) -> set[str]:
    """Hosts named in `PRBOT_INSECURE_REGISTRIES` (comma-separated)."""
    return _listed(environ, ENV_INSECURE)


def allowed_private_from_env(environ: Mapping[str, str]) -> set[str]:
    """Host names, addresses and networks named in `PRBOT_ALLOW_PRIVATE_REGISTRIES` (comma-separated)."""
    return _listed(environ, ENV_ALLOW_PRIVATE)


# ---------------------------------------------------------------- results


class _Failure(Exception):
    """A lookup ended without an answer; carries the resolution status and a secret-free reason."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class _Reply:
    """An HTTP answer whose body (if needed) has been read within the size and time limits."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes

    def json(self) -> object:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def errors(self) -> list[dict]:
        """The registry's `errors[]` entries, if the body has any."""
        data = self.json()
        errors = data.get("errors") if isinstance(data, dict) else None
        return [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []

    def message(self) -> str:
        """The registry's own `errors[].message` text, or the HTTP status."""
        texts = [str(e.get("message") or e.get("code")) for e in self.errors()]
        return "; ".join(texts) or f"HTTP {self.status} {self.reason}".strip()

    def digest(self) -> str | None:
        value = self.headers.get("Docker-Content-Digest", "").strip()
        return value if _DIGEST_RE.fullmatch(value) else None

    def media_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0].strip()


def _classify(reply: _Reply) -> _Failure:
    """A non-200 manifest answer as a failure with its status."""
    codes = {str(e.get("code")) for e in reply.errors()}
    text = reply.message()
    if reply.status == 404 or codes & _NOT_FOUND_CODES:
        return _Failure("not_found", text)
    if reply.status in (401, 403) or codes & {"DENIED", "UNAUTHORIZED"}:
        return _Failure("auth_refused", text)
    if reply.status == 429 or "TOOMANYREQUESTS" in codes:
        return _Failure("rate_limited", text)
    return _Failure("error", text if text.startswith("HTTP") else f"HTTP {reply.status}: {text}")


def _parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """`Bearer realm="…",service="…"` → ("bearer", {"realm": …, "service": …})."""
    scheme, _, rest = header.strip().partition(" ")
    params = {m[1].lower(): m[2] if m[2] is not None else m[3] for m in _CHALLENGE_PARAM.finditer(rest)}
    return scheme.lower(), params


def _basic(credentials: Credentials) -> str:
    pair = f"{credentials.username}:{credentials.password}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def _platform(entry: dict) -> str:
    platform = entry.get("platform") or {}
    parts = [platform.get("os") or "unknown", platform.get("architecture") or "unknown"]
    if platform.get("variant"):
        parts.append(platform["variant"])
    return "/".join(str(p) for p in parts)


# ---------------------------------------------------------------- addresses


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """A global unicast address; an IPv4 address inside IPv6 (mapped, NAT64) is judged as itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped:
            address = address.ipv4_mapped
        elif address in _NAT64:
            address = ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return address.is_global and not address.is_multicast


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address the system resolver gives for `host` (an address literal is itself)."""
    try:
        answers = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise _Failure("unreachable", f"cannot resolve {host}") from None
    return list(dict.fromkeys(ipaddress.ip_address(answer[4][0]) for answer in answers))


class _AddressGuard:
    """An httpx request hook: refuses, before connecting, a host that resolves to a non-public address.

    It runs on every request, redirects and token services included. Host names, addresses and
    networks named in `PRBOT_ALLOW_PRIVATE_REGISTRIES` pass. The check uses the resolver's answer of
    the moment: a name that resolves elsewhere when connecting (DNS rebinding) can still reach a
    private address, but only over HTTPS, which then fails, since no certificate there names that
    host (plain HTTP goes only to loopback names and to hosts listed as insecure).
    """

    def __init__(self, allowed: Iterable[str]) -> None:
        self._names: set[str] = set()
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allowed:
            text = entry.strip().lower().strip("[]")
            try:
                self._networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                self._names.add(text)

    def __call__(self, request: httpx.Request) -> None:
        host = request.url.host
        if host in self._names:
            return
        for address in _addresses(host):
            if not _is_public(address) and not any(address in network for network in self._networks):
                raise _Failure("private_address", host if host == str(address) else f"{host} ({address})")


# ---------------------------------------------------------------- client


@cache
def _tls_context() -> ssl.SSLContext:
    """The CA bundle is slow to load; every client shares one verifying context."""
    return httpx.create_ssl_context()


class RegistryClient:
    """Resolves image tags against OCI registries, concurrently, within a total time budget.

    One client serves one review: answers are cached for its lifetime and the budget counts from
    the first lookup. Use it as a context manager, or call `close()`. `insecure_hosts` and
    `allowed_private` add to the environment's lists; `credentials` replaces its table.
    """

    def __init__(
        self,
        *,
        timeout: float = 5.0,
        budget: float = 20.0,
        max_workers: int = 8,
        retry_backoff: float = 0.5,
        insecure_hosts: Iterable[str] = (),
        allowed_private: Iterable[str] = (),
        credentials: Mapping[str, Credentials] | None = None,
        environ: Mapping[str, str] | None = None,
        warn: Warn | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self._timeout = timeout
        self._budget = budget
        self._max_workers = max_workers
        self._backoff = retry_backoff
        self._insecure = {_normalize_host(h) for h in (*insecure_hosts, *insecure_from_env(env))}
        given = credentials_from_env(env, warn or _log) if credentials is None else credentials
        self._credentials = {_normalize_host(host): login for host, login in given.items()}
        # Everything secret that a careless registry might echo back, to be cut from messages.
        self._secrets = {s for c in self._credentials.values() for s in (c.password, _basic(c).split()[1])}
        guard = _AddressGuard((*allowed_private, *allowed_private_from_env(env)))
        # httpx drops the Authorization header when a redirect leaves the host; the guard checks each hop.
        self._http = httpx.Client(
            verify=_tls_context(),
            follow_redirects=True,
            headers={"User-Agent": "prbot-registry/1"},
            event_hooks={"request": [guard]},
        )
        self._lock = threading.Lock()
        self._cache: dict[ImageRef, TagResolution] = {}
        self._auth: dict[tuple[str, str], str] = {}
        self._deadline: float | None = None

    def __repr__(self) -> str:
        return f"RegistryClient(hosts_with_credentials={len(self._credentials)}, budget={self._budget})"

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- public

    def resolve_many(self, references: Iterable[str]) -> dict[str, TagResolution]:
        """Resolve each distinct reference once; the result is keyed by the reference as given."""
        if self._deadline is None:
            self._deadline = time.monotonic() + self._budget
        results: dict[str, TagResolution] = {}
        todo: dict[ImageRef, list[str]] = {}
        for reference in dict.fromkeys(references):
            try:
                ref = parse_reference(reference, self._insecure)
            except ValueError as exc:
                results[reference] = TagResolution(reference, "error", message=str(exc))
                continue
            with self._lock:
                cached = self._cache.get(ref)
            if cached is not None:
                results[reference] = cached._replace(reference=reference)
            else:
                todo.setdefault(ref, []).append(reference)
        if todo:
            for ref, resolution in self._run(list(todo)).items():
                with self._lock:
                    self._cache[ref] = resolution
                for reference in todo[ref]:
                    results[reference] = resolution._replace(reference=reference)
        return results

    # -- orchestration

    def _run(self, refs: list[ImageRef]) -> dict[ImageRef, TagResolution]:
        pool = ThreadPoolExecutor(max_workers=max(1, min(self._max_workers, len(refs))))
        futures = {pool.submit(self._resolve, ref): ref for ref in refs}
        wait(futures, timeout=self._remaining() + _GRACE_SECONDS)
        pool.shutdown(wait=False, cancel_futures=True)
        answers: dict[ImageRef, TagResolution] = {}
        for future, ref in futures.items():
            if not future.done() or future.cancelled():
                answers[ref] = self._failed(ref, _Failure("timeout", self._budget_message()))
            elif future.exception() is not None:
                failure = _Failure("error", f"lookup failed: {type(future.exception()).__name__}")
                answers[ref] = self._failed(ref, failure)
            else:
                answers[ref] = future.result()
        return answers

    def _failed(self, ref: ImageRef, failure: _Failure) -> TagResolution:
        return TagResolution(str(ref), failure.status, message=self._redact(failure.message))

    def _remaining(self) -> float:
        deadline = self._deadline if self._deadline is not None else time.monotonic() + self._budget
        return max(0.0, deadline - time.monotonic())

    def _budget_message(self) -> str:
        return f"the registry time budget of {self._budget:g} s was used up"

    def _redact(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            text = text.replace(secret, "***")
        return text[:_MAX_MESSAGE_CHARS]

    # -- one lookup

    def _resolve(self, ref: ImageRef) -> TagResolution:
        try:
            resolution = self._lookup(ref)
        except _Failure as failure:
            resolution = self._failed(ref, failure)
        log.info("registry lookup %s → %s", ref, resolution.status)
        return resolution

    def _lookup(self, ref: ImageRef) -> TagResolution:
        """HEAD the manifest; GET it too when the digest is missing or the children are needed."""
        head = self._send("HEAD", ref)
        digest = head.digest() if head.status == 200 else None
        if digest and head.media_type() and head.media_type() not in INDEX_TYPES:
            return TagResolution(str(ref), "ok", digest=digest)
        if head.status in (401, 403, 429) or head.status >= 500:
            raise _classify(head)
        got = self._send("GET", ref)
        if got.status != 200:
            raise _classify(got)
        manifest = got.json()
        if not isinstance(manifest, dict):
            raise _Failure("error", "the registry returned a manifest that is not a JSON object")
        digest = digest or got.digest() or "sha256:" + hashlib.sha256(got.body).hexdigest()
        entries = manifest.get("manifests")
        children = tuple(
            (str(e["digest"]), _platform(e))
            for e in (entries if isinstance(entries, list) else [])
            if isinstance(e, dict) and e.get("digest")
        )
        return TagResolution(str(ref), "ok", digest=digest, children=children)

    # -- HTTP with auth and retry

    def _send(self, method: str, ref: ImageRef) -> _Reply:
        """One manifest request, answering a 401 challenge once (Bearer token or Basic)."""
        key = (ref.registry_host, ref.repository)
        headers = {"Accept": ACCEPT}
        with self._lock:
            authorization = self._auth.get(key)
        if authorization:
            headers["Authorization"] = authorization
        reply = self._request(method, ref.manifest_url, ref.registry_host, headers)
        if reply.status != 401 or authorization:
            return reply
        authorization = self._authorize(ref, reply.headers.get("WWW-Authenticate", ""))
        with self._lock:
            self._auth[key] = authorization
        headers["Authorization"] = authorization
        reply = self._request(method, ref.manifest_url, ref.registry_host, headers)
        if reply.status in (401, 403):
            raise _Failure("auth_refused", f"{ref.registry_host} refused access: {reply.message()}")
        return reply

    def _authorize(self, ref: ImageRef, challenge: str) -> str:
        """The Authorization header value that answers the registry's challenge."""
        scheme, params = _parse_challenge(challenge)
        credentials = self._credentials.get(ref.registry_host)
        if scheme == "basic":
            if credentials is None:
                raise _Failure("auth_refused", f"{ref.registry_host} requires a login and none is configured")
            return _basic(credentials)
        if scheme != "bearer" or not params.get("realm"):
            raise _Failure("auth_refused", f"{ref.registry_host} asked for an unsupported authentication")
        return "Bearer " + self._token(ref, params, credentials)

    def _token(self, ref: ImageRef, params: dict[str, str], credentials: Credentials | None) -> str:
        """Fetch a pull token for `ref.repository` from the challenge's realm.

        The scope is always prbot's own `repository:<repo>:pull`, whatever the challenge asked for;
        the registry's login goes along only where `_login_may_go_to` allows.
        """
        try:
            realm = httpx.URL(params["realm"])
        except httpx.InvalidURL:
            raise _Failure("auth_refused", f"{ref.registry_host} named an invalid token service") from None
        realm_host = _normalize_host(realm.netloc.decode("ascii"))
        if realm.scheme != "https" and scheme_for(realm_host, self._insecure) != "http":
            raise _Failure("auth_refused", f"{ref.registry_host} named a token service that is not HTTPS")
        query = {"scope": f"repository:{ref.repository}:pull"}
        if _SERVICE.fullmatch(params.get("service", "")):
            query["service"] = params["service"]
        url = str(realm.copy_merge_params(query))
        login = credentials if self._login_may_go_to(ref.registry_host, realm_host) else None
        headers = {"Authorization": _basic(login)} if login else {}
        reply = self._request("GET", url, realm_host, headers)
        if reply.status == 429 or reply.status >= 500:
            raise _classify(reply)
        if reply.status != 200:
            raise _Failure("auth_refused", f"the token service refused: {reply.message()}")
        body = reply.json()
        token = (body.get("token") or body.get("access_token")) if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise _Failure("auth_refused", "the token service answered without a token")
        with self._lock:
            self._secrets.add(token)
        return token

    def _login_may_go_to(self, registry_host: str, token_host: str) -> bool:
        """A registry's login goes to its token service on the same host, at Docker Hub's own
        (`auth.docker.io`), or on a host that has its own entry in the credentials table."""
        own = (registry_host, _TOKEN_HOSTS.get(registry_host))
        return token_host in own or token_host in self._credentials

    def _request(self, method: str, url: str, host: str, headers: Mapping[str, str]) -> _Reply:
        """Send with a deadline-clipped timeout and one retry (with backoff) on timeouts, 5xx and 429."""
        for attempt in (1, 2):
            timeout = min(self._timeout, self._remaining())
            if timeout <= 0:
                raise _Failure("timeout", self._budget_message())
            request = self._http.build_request(method, url, headers=headers, timeout=timeout)
            try:
                response = self._http.send(request, stream=True)
                try:
                    wanted = method == "GET" or response.status_code >= 400
                    body = self._read(response) if wanted else b""
                finally:
                    response.close()
            except httpx.TimeoutException:
                if attempt == 1 and self._pause(None):
                    continue
                raise _Failure("timeout", f"{host} did not answer within {timeout:.1f} s") from None
            except httpx.ConnectError as exc:
                raise _Failure("unreachable", f"cannot connect to {host}: {exc}") from None
            except httpx.HTTPError as exc:
                raise _Failure("error", f"{host}: {type(exc).__name__}") from None
            log.debug("registry %s %s → %s", method, request.url.copy_with(query=None), response.status_code)
            reply = _Reply(response.status_code, response.reason_phrase, response.headers, body)
            transient = reply.status == 429 or reply.status >= 500
            if transient and attempt == 1 and self._pause(reply.headers.get("Retry-After")):
                continue
            return reply
        raise AssertionError("not reached")

    def _read(self, response: httpx.Response) -> bytes:
        """The body, bounded in size and by the deadline."""
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > _MAX_MANIFEST_BYTES:
                raise _Failure("error", "the registry's answer is larger than 4 MiB")
            if self._remaining() <= 0:
                raise _Failure("timeout", self._budget_message())
            chunks.append(chunk)
        return b"".join(chunks)

    def _pause(self, retry_after: str | None) -> bool:
        """Sleep before the single retry; False when the budget cannot afford it."""
        delay = self._backoff
        if retry_after and retry_after.isascii() and retry_after.strip().isdigit():
            delay = max(delay, min(float(retry_after), _MAX_RETRY_AFTER))
        if delay >= self._remaining():
            return False
        time.sleep(delay)
        return True
