"""Registry trust (issue #15, finding 11): what a pull request naming a registry can make prbot do.

The PR author controls every image reference, hence which registry is asked and what it answers
(its challenge's token realm, scope and service, its redirects). Each test plays that registry
with a loopback server (`AuthProxy`, in front of the real docker-registry where an image is
needed) and checks, over real HTTP, what reached it: no login configured for another host, no
scope but `repository:<repo>:pull`, and no connection at all to loopback, private or link-local
addresses unless `PRBOT_ALLOW_PRIVATE_REGISTRIES` names them.
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from registry_fixture import LOOPBACK, AuthProxy, LocalRegistry, local_registry_fixture  # noqa: F401

from bot.catalog import Msg
from bot.checks import digest
from bot.findings import Severity
from bot.model.images import ImageUse, Pin
from bot.output.messages import en, text, zh
from bot.sources.registry import Credentials, RegistryClient, TagResolution, credentials_from_env

INDEX_TAG = "rocm/atom-dev:nightly_202610281457"
SHA = "sha256:" + "ab" * 32
SHARED_TOKEN = "tok-issued-by-another-host"


def resolve(references: list[str], **options: object) -> dict[str, TagResolution]:
    """Resolve with a client that reads only the given `environ` (default: none)."""
    settings: dict[str, object] = {"environ": {}, "retry_backoff": 0.05, "timeout": 1.0, "budget": 5.0}
    settings.update(options)
    with RegistryClient(**settings) as registry:  # type: ignore[arg-type]
        return registry.resolve_many(references)


def token_queries(proxy: AuthProxy) -> list[dict[str, list[str]]]:
    """The query of every token request the server received."""
    paths = [urlsplit(path) for _, path in proxy.settings.requests]
    return [parse_qs(path.query) for path in paths if path.path == "/token"]


def login(proxy: AuthProxy) -> Credentials:
    """The login a test proxy accepts."""
    return Credentials(proxy.settings.username, proxy.settings.password)


@pytest.fixture(name="listener")
def listener_fixture() -> Iterator[socket.socket]:
    """A TCP socket listening on 127.0.0.1 that never accepts: a connection would wait in its queue."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def connections_to(sock: socket.socket) -> int:
    """How many connections are waiting on a listening socket (each is taken off the queue)."""
    count = 0
    while True:
        try:
            peer, _ = sock.accept()
        except BlockingIOError:
            return count
        peer.close()
        count += 1


# ---------------------------------------------------------------- logins go only to their own host


def test_old_global_pair_is_ignored_with_a_warning() -> None:
    env = {"PRBOT_REGISTRY_USERNAME": "ci-bot", "PRBOT_REGISTRY_PASSWORD": "global-secret-pw"}
    told: list[Msg] = []
    assert credentials_from_env(env, told.append) == {}
    [warning] = told
    english, chinese = text(warning, "en"), text(warning, "zh")
    assert "PRBOT_REGISTRY_USERNAME, PRBOT_REGISTRY_PASSWORD are no longer used and were ignored" in english
    assert "已不再使用，本次已忽略" in chinese and "PRBOT_REGISTRY_CREDENTIALS" in chinese
    assert "global-secret-pw" not in english + chinese


@pytest.mark.parametrize("auth", ["basic", "bearer"])
def test_a_registry_the_pr_names_gets_no_login_of_another_host(
    local_registry: LocalRegistry, auth: str
) -> None:
    """The bot's login for registry A, configured both ways an admin could, never reaches registry B."""
    with AuthProxy(local_registry.url) as trusted, AuthProxy(local_registry.url, auth=auth) as hostile:
        env = {
            "PRBOT_REGISTRY_CREDENTIALS": json.dumps({trusted.host: vars(login(trusted))}),
            "PRBOT_REGISTRY_USERNAME": trusted.settings.username,
            "PRBOT_REGISTRY_PASSWORD": trusted.settings.password,
        }
        own, named = f"{trusted.host}/{INDEX_TAG}", f"{hostile.host}/{INDEX_TAG}"
        results = resolve([own, named], environ=env, allowed_private=LOOPBACK)
    assert results[own].status == "ok"  # the login still works where it belongs
    assert results[named].status == "auth_refused"
    assert hostile.settings.requests  # B was asked …
    assert set(hostile.settings.authorizations) == {""}  # … but never with a login


# ---------------------------------------------------------------- token realm, scope and service


@pytest.mark.parametrize("scope", ["repository:victim/secret:push,pull", "registry:catalog:*"])
def test_token_realm_on_another_host_gets_no_login_and_no_foreign_scope(
    local_registry: LocalRegistry, scope: str
) -> None:
    # Another host hands out the registry's token to anyone, as auth.docker.io does for Docker Hub.
    with (
        AuthProxy(local_registry.url, token=SHARED_TOKEN, challenge_scope=scope) as registry,
        AuthProxy(local_registry.url, token=SHARED_TOKEN, anonymous_tokens=True) as realm,
    ):
        registry.settings.realm = f"http://{realm.host}/token"
        reference = f"{registry.host}/{INDEX_TAG}"
        result = resolve([reference], credentials={registry.host: login(registry)}, allowed_private=LOOPBACK)
    assert result[reference].status == "ok"  # an anonymous token still works
    assert set(realm.settings.authorizations) == {""}
    assert [query["scope"] for query in token_queries(realm)] == [["repository:rocm/atom-dev:pull"]]


def test_same_host_realm_gets_the_login_but_prbots_own_scope(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, challenge_scope="registry:catalog:*") as registry:
        reference = f"{registry.host}/{INDEX_TAG}"
        result = resolve([reference], credentials={registry.host: login(registry)}, allowed_private=LOOPBACK)
    assert result[reference].status == "ok"  # this token service accepts only the login
    assert [query["scope"] for query in token_queries(registry)] == [["repository:rocm/atom-dev:pull"]]


def test_realm_on_a_listed_host_gets_the_registrys_login(local_registry: LocalRegistry) -> None:
    """The documented way to trust a token service on another host: give that host an entry too."""
    with AuthProxy(local_registry.url, token=SHARED_TOKEN) as registry:
        wanted = login(registry)
        realm_settings = {"token": SHARED_TOKEN, "username": wanted.username, "password": wanted.password}
        with AuthProxy(local_registry.url, **realm_settings) as realm:
            registry.settings.realm = f"http://{realm.host}/token"
            credentials = {registry.host: wanted, realm.host: Credentials("realm-user", "realm-password")}
            reference = f"{registry.host}/{INDEX_TAG}"
            result = resolve([reference], credentials=credentials, allowed_private=LOOPBACK)
    assert result[reference].status == "ok"
    basic = base64.b64encode(f"{wanted.username}:{wanted.password}".encode()).decode()
    assert {a for a in realm.settings.authorizations if a} == {f"Basic {basic}"}


@pytest.mark.parametrize("service", ["x" * 200, "a b&scope=registry:catalog:*"])
def test_odd_service_names_are_not_passed_on(local_registry: LocalRegistry, service: str) -> None:
    with AuthProxy(local_registry.url, anonymous_tokens=True, challenge_service=service) as registry:
        resolve([f"{registry.host}/{INDEX_TAG}"], allowed_private=LOOPBACK)
    [query] = token_queries(registry)
    assert "service" not in query
    assert query["scope"] == ["repository:rocm/atom-dev:pull"]


# ---------------------------------------------------------------- loopback, private, link-local


def test_non_public_addresses_are_refused_without_a_connection(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    references = [
        f"localhost:{port}/x/y:z",  # a name that resolves to loopback, not only literals
        f"127.0.0.1:{port}/x/y:z",
        f"[::1]:{port}/x/y:z",
        "169.254.169.254/x/y:z",  # the cloud metadata service
        "10.0.0.1/x/y:z",
    ]
    results = resolve(references)
    assert connections_to(listener) == 0
    assert {results[r].status for r in references} == {"private_address"}
    assert results[f"localhost:{port}/x/y:z"].message in ("localhost (127.0.0.1)", "localhost (::1)")
    assert [results[r].message for r in references[1:]] == ["127.0.0.1", "::1", "169.254.169.254", "10.0.0.1"]


def test_refused_address_is_reported_unverified_in_both_languages() -> None:
    image = "169.254.169.254/rocm/atom-dev:latest"
    pin = Pin("169.254.169.254/rocm/atom-dev", SHA, "recipes/a.yaml", 7, "frontend.container_image")
    use = ImageUse("key-a", image, image, "recipes/a.yaml", (pin,), (pin,))
    [finding] = digest.check([use], resolve(digest.references([use])))
    assert (finding.severity, finding.message_id) == (Severity.UNVERIFIED, "digest-private-address")
    assert "169.254.169.254 is not a public address" in en(finding)
    assert "PRBOT_ALLOW_PRIVATE_REGISTRIES" in en(finding)
    assert "169.254.169.254 不是公网地址" in zh(finding)
    assert "PRBOT_ALLOW_PRIVATE_REGISTRIES" in zh(finding)


@pytest.mark.parametrize("allow", ["127.0.0.1", "127.0.0.0/8", " 10.0.0.1 , 127.0.0.1"])
def test_the_setting_allows_listed_addresses(local_registry: LocalRegistry, allow: str) -> None:
    reference = local_registry.index_reference
    assert resolve([reference])[reference].status == "private_address"
    allowed = resolve([reference], environ={"PRBOT_ALLOW_PRIVATE_REGISTRIES": allow})[reference]
    assert (allowed.status, allowed.digest) == ("ok", local_registry.index_digest)


def test_the_setting_allows_listed_names(local_registry: LocalRegistry) -> None:
    reference = local_registry.index_reference.replace("127.0.0.1", "localhost", 1)
    assert resolve([reference])[reference].status == "private_address"
    allowed = resolve([reference], environ={"PRBOT_ALLOW_PRIVATE_REGISTRIES": "localhost"})[reference]
    assert (allowed.status, allowed.digest) == ("ok", local_registry.index_digest)


def test_token_realm_on_a_private_address_is_refused(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, realm="https://10.0.0.1/token") as registry:
        [answer] = resolve([f"{registry.host}/{INDEX_TAG}"], allowed_private=LOOPBACK).values()
    assert (answer.status, answer.message) == ("private_address", "10.0.0.1")


# ---------------------------------------------------------------- redirects


def test_redirect_to_a_private_address_is_refused(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, auth="none", redirect_to="http://169.254.169.254") as registry:
        [answer] = resolve([f"{registry.host}/{INDEX_TAG}"], allowed_private=LOOPBACK).values()
    assert (answer.status, answer.message) == ("private_address", "169.254.169.254")


def test_login_does_not_follow_a_redirect_to_another_host(local_registry: LocalRegistry) -> None:
    with (
        AuthProxy(local_registry.url, auth="none") as cdn,
        AuthProxy(local_registry.url, auth="basic") as registry,
    ):
        registry.settings.redirect_to = f"http://{cdn.host}"
        credentials = {registry.host: login(registry)}
        [answer] = resolve(
            [f"{registry.host}/{INDEX_TAG}"], credentials=credentials, allowed_private=LOOPBACK
        ).values()
    assert (answer.status, answer.digest) == ("ok", local_registry.index_digest)
    assert cdn.settings.requests and set(cdn.settings.authorizations) == {""}
