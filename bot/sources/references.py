"""Container image references: parsing, Docker Hub normalisation, and what a registry answered.

Pure: no network. `bot.sources.registry` does the lookups; `bot.checks.digest` compares.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection
from typing import NamedTuple

DOCKER_HUB = "registry-1.docker.io"
# Settings read by `bot.sources.registry` and named by the `digest` check's messages.
ENV_CREDENTIALS = "PRBOT_REGISTRY_CREDENTIALS"
ENV_ALLOW_PRIVATE = "PRBOT_ALLOW_PRIVATE_REGISTRIES"
_HUB_ALIASES = frozenset(("docker.io", "index.docker.io", "registry.hub.docker.com", DOCKER_HUB))
_HOST_RE = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?", re.ASCII
)
_REPO_RE = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_TAG_RE = re.compile(r"\w[\w.-]{0,127}", re.ASCII)
_DIGEST_RE = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-f0-9]{32,}")


# ---------------------------------------------------------------- references


class ImageRef(NamedTuple):
    """A parsed image reference. `tag` is a tag or, for `repo@sha256:…`, that digest."""

    registry_host: str
    repository: str
    tag: str
    scheme: str

    def __str__(self) -> str:
        separator = "@" if ":" in self.tag else ":"
        return f"{self.registry_host}/{self.repository}{separator}{self.tag}"

    @property
    def manifest_url(self) -> str:
        return f"{self.scheme}://{self.registry_host}/v2/{self.repository}/manifests/{self.tag}"


def _split_host(host: str) -> tuple[str, str | None]:
    """`host:port` → (host, port); understands bracketed IPv6 literals."""
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :]
        return host[1:end], rest[1:] if rest.startswith(":") else None
    name, _, port = host.partition(":")
    return name, port or None


def _is_loopback(hostname: str) -> bool:
    if hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def _normalize_host(host: str) -> str:
    host = host.lower()
    return DOCKER_HUB if host in _HUB_ALIASES else host


def scheme_for(host: str, insecure_hosts: Collection[str] = ()) -> str:
    """Plain HTTP for loopback hosts with a port (as Docker does) and listed insecure hosts."""
    hostname, port = _split_host(host)
    if (port and _is_loopback(hostname)) or host in insecure_hosts or hostname in insecure_hosts:
        return "http"
    return "https"


def parse_reference(reference: str, insecure_hosts: Collection[str] = ()) -> ImageRef:
    """Parse `[host[:port]/]repo[:tag][@digest]` (also enroot's `host#repo`) with Docker Hub defaults.

    Raises ValueError for anything that is not a well-formed reference.
    """
    text = reference.strip()
    name, _, digest = text.partition("@")
    if "#" in name:
        host, _, path = name.partition("#")
    else:
        first, slash, rest = name.partition("/")
        is_host = slash and ("." in first or ":" in first or first == "localhost")
        host, path = (first, rest) if is_host else ("", name)
    tag = "latest"
    last_slash = path.rfind("/")
    colon = path.rfind(":")
    if colon > last_slash:
        path, tag = path[:colon], path[colon + 1 :]
    host = _normalize_host(host) if host else DOCKER_HUB
    if host == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    if not _HOST_RE.fullmatch(host) or not _REPO_RE.fullmatch(path) or not _TAG_RE.fullmatch(tag):
        raise ValueError(f"not an image reference: {reference!r}")
    if digest:
        if not _DIGEST_RE.fullmatch(digest):
            raise ValueError(f"not an image digest: {digest!r}")
        tag = digest
    normalized_insecure = {_normalize_host(h) for h in insecure_hosts}
    return ImageRef(host, path, tag, scheme_for(host, normalized_insecure))


def normalized_repository(name: str) -> str:
    """`host/repository` for comparing repositories; any tag or digest in `name` is ignored."""
    ref = parse_reference(name)
    return f"{ref.registry_host}/{ref.repository}"


class TagResolution(NamedTuple):
    """What the registry said about one reference."""

    reference: str
    status: str
    digest: str | None = None
    children: tuple[tuple[str, str], ...] = ()
    message: str | None = None
