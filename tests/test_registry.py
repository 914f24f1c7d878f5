"""The registry client against a real OCI registry (Debian's docker-registry) on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import time
from http import HTTPStatus

import pytest
from registry_fixture import LOOPBACK, AuthProxy, LocalRegistry, free_port, local_registry_fixture  # noqa: F401

from bot.catalog import Msg
from bot.checks import digest
from bot.model.images import ImageUse, Pin
from bot.output.messages import en, text
from bot.sources.registry import (
    Credentials,
    ImageRef,
    RegistryClient,
    credentials_from_env,
    insecure_from_env,
    normalized_repository,
    parse_reference,
)

SHA = "sha256:" + "ab" * 32


def client(**options: object) -> RegistryClient:
    """A client that ignores the real environment, may contact 127.0.0.1, and retries quickly."""
    settings: dict[str, object] = {
        "environ": {},
        "allowed_private": LOOPBACK,
        "retry_backoff": 0.05,
        "timeout": 2.0,
        "budget": 10.0,
    }
    settings.update(options)
    return RegistryClient(**settings)  # type: ignore[arg-type]


def resolve_one(reference: str, **options: object):
    with client(**options) as registry:
        return registry.resolve_many([reference])[reference]


# ---------------------------------------------------------------- references (no network)


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("ubuntu", ImageRef("registry-1.docker.io", "library/ubuntu", "latest", "https")),
        ("docker.io/ubuntu:24.04", ImageRef("registry-1.docker.io", "library/ubuntu", "24.04", "https")),
        (
            "rocm/atom-dev:nightly_202610281457",
            ImageRef("registry-1.docker.io", "rocm/atom-dev", "nightly_202610281457", "https"),
        ),
        ("index.docker.io/rocm/atom-dev:x", ImageRef("registry-1.docker.io", "rocm/atom-dev", "x", "https")),
        ("Docker.IO/rocm/atom-dev", ImageRef("registry-1.docker.io", "rocm/atom-dev", "latest", "https")),
        ("ghcr.io/org/img:1.0", ImageRef("ghcr.io", "org/img", "1.0", "https")),
        (
            "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc24",
            ImageRef("nvcr.io", "nvidia/tensorrt-llm/release", "1.3.0rc24", "https"),
        ),
        (
            "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14",
            ImageRef("nvcr.io", "nvidia/tensorrt-llm/release", "1.3.0rc14", "https"),
        ),
        ("quay.io/a/b", ImageRef("quay.io", "a/b", "latest", "https")),
        ("localhost:5000/foo:bar", ImageRef("localhost:5000", "foo", "bar", "http")),
        ("127.0.0.1:5000/a/b", ImageRef("127.0.0.1:5000", "a/b", "latest", "http")),
        ("[::1]:5000/a:1", ImageRef("[::1]:5000", "a", "1", "http")),
        ("localhost/foo", ImageRef("localhost", "foo", "latest", "https")),
        ("myhost:5000/foo", ImageRef("myhost:5000", "foo", "latest", "https")),
        (
            f"lmsysorg/sglang:v0.5.19-cu130@{SHA}",
            ImageRef("registry-1.docker.io", "lmsysorg/sglang", SHA, "https"),
        ),
        (f"vllm/vllm-openai@{SHA}", ImageRef("registry-1.docker.io", "vllm/vllm-openai", SHA, "https")),
    ],
)
def test_parse_reference(reference: str, expected: ImageRef) -> None:
    assert parse_reference(reference) == expected


@pytest.mark.parametrize(
    "reference", ["", "Foo/Bar", "a b", "repo:bad tag", "repo@sha256:xyz", "../etc/passwd", "a/b?x=1", "a:ü"]
)
def test_parse_reference_rejects(reference: str) -> None:
    with pytest.raises(ValueError):
        parse_reference(reference)


def test_normalized_repository_is_docker_hub_aware() -> None:
    names = [
        "rocm/atom-dev",
        "docker.io/rocm/atom-dev",
        "registry-1.docker.io/rocm/atom-dev:tag",
        f"rocm/atom-dev@{SHA}",
    ]
    assert {normalized_repository(n) for n in names} == {"registry-1.docker.io/rocm/atom-dev"}
    assert normalized_repository("ubuntu") == normalized_repository("docker.io/library/ubuntu:24.04")
    assert normalized_repository("ghcr.io/rocm/atom-dev") != normalized_repository("rocm/atom-dev")


def test_insecure_hosts_use_plain_http() -> None:
    assert parse_reference("reg.internal:5000/a:b").scheme == "https"
    assert parse_reference("reg.internal:5000/a:b", {"reg.internal:5000"}).scheme == "http"
    assert parse_reference("reg.internal/a", {"reg.internal"}).scheme == "http"
    assert insecure_from_env({"PRBOT_INSECURE_REGISTRIES": " reg.internal:5000, Other.Host ,"}) == {
        "reg.internal:5000",
        "other.host",
    }


def test_credentials_from_env_without_leaking() -> None:
    env = {
        "PRBOT_REGISTRY_CREDENTIALS": '{"docker.io": {"username": "hub", "password": "hub-secret"}, "x": 1}',
    }
    told: list[Msg] = []
    found = credentials_from_env(env, told.append)
    assert found == {"registry-1.docker.io": Credentials("hub", "hub-secret")}
    assert "secret" not in repr(found)
    [warning] = told
    assert "the entry for x lacks a username or a password" in text(warning, "en")
    assert "x 的条目缺少用户名或密码" in text(warning, "zh")
    told.clear()
    assert credentials_from_env({"PRBOT_REGISTRY_CREDENTIALS": '{"a": "broken-secret'}, told.append) == {}
    [warning] = told
    assert "PRBOT_REGISTRY_CREDENTIALS is not a JSON object" in text(warning, "en")
    assert "secret" not in text(warning, "en") + text(warning, "zh")


def test_invalid_reference_needs_no_network() -> None:
    result = resolve_one("Not A Reference")
    assert result.status == "error"
    assert result.reference == "Not A Reference"


# ---------------------------------------------------------------- the real registry


def test_index_digest_and_children(local_registry: LocalRegistry) -> None:
    result = resolve_one(local_registry.index_reference)
    assert result.status == "ok"
    assert result.digest == local_registry.index_digest
    assert result.children == (
        (local_registry.amd64_digest, "linux/amd64"),
        (local_registry.arm64_digest, "linux/arm64/v8"),
    )


def test_single_docker_manifest_and_implicit_latest(local_registry: LocalRegistry) -> None:
    untagged = f"{local_registry.host}/lmsysorg/sglang"
    with client() as registry:
        results = registry.resolve_many([local_registry.single_reference, untagged])
    for reference in (local_registry.single_reference, untagged):
        assert results[reference].status == "ok"
        assert results[reference].digest == local_registry.single_digest
        assert results[reference].children == ()
        assert results[reference].reference == reference


def test_unknown_tag_and_repository_are_not_found(local_registry: LocalRegistry) -> None:
    tag = f"{local_registry.host}/rocm/atom-dev:does-not-exist"
    repo = f"{local_registry.host}/nobody/nothing:1.0"
    with client() as registry:
        results = registry.resolve_many([tag, repo])
    assert results[tag].status == "not_found"
    assert results[repo].status == "not_found"
    assert results[tag].message  # the registry's own errors[].message


def test_registry_down_finishes_quickly() -> None:
    started = time.monotonic()
    result = resolve_one(f"127.0.0.1:{free_port()}/rocm/atom-dev:x")
    assert result.status == "unreachable"
    assert time.monotonic() - started < 2


def test_answers_are_cached_and_lookups_concurrent(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, auth="none", delay=0.3) as proxy, client() as registry:
        references = [f"{proxy.host}/lmsysorg/sglang:{tag}" for tag in ("v0.5.19-cu130", "latest", "a", "b")]
        first = registry.resolve_many([*references, references[0]])
        asked = len(proxy.settings.requests)
        second = registry.resolve_many(references)
    assert proxy.settings.peak_in_flight >= 2  # slow lookups ran side by side, not one after another
    assert first == second
    assert len(proxy.settings.requests) == asked  # the second round was answered from the cache
    assert [first[r].status for r in references] == ["ok", "ok", "not_found", "not_found"]


# ---------------------------------------------------------------- authentication


def test_bearer_token_flow_with_credentials(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url) as proxy:
        login = {proxy.host: Credentials(proxy.settings.username, proxy.settings.password)}
        result = resolve_one(f"{proxy.host}/rocm/atom-dev:nightly_202610281457", credentials=login)
        paths = [path for _, path in proxy.settings.requests]
    assert result.status == "ok"
    assert result.digest == local_registry.index_digest
    assert len(result.children) == 2
    token_requests = [p for p in paths if p.startswith("/token")]
    assert len(token_requests) == 1
    assert "scope=repository%3Arocm%2Fatom-dev%3Apull" in token_requests[0]


def test_bearer_anonymous_token_in_access_token_field(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, anonymous_tokens=True, token_field="access_token") as proxy:
        result = resolve_one(f"{proxy.host}/lmsysorg/sglang:v0.5.19-cu130")
    assert result.status == "ok"
    assert result.digest == local_registry.single_digest


def test_per_host_credentials_from_env(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url) as proxy:
        login = {"username": proxy.settings.username, "password": proxy.settings.password}
        env = {"PRBOT_REGISTRY_CREDENTIALS": json.dumps({proxy.host: login})}
        result = resolve_one(f"{proxy.host}/lmsysorg/sglang:v0.5.19-cu130", environ=env)
    assert result.status == "ok"


def test_refused_token_is_auth_refused(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url) as proxy:
        wrong = {proxy.host: Credentials(proxy.settings.username, "wrong-password-123")}
        result = resolve_one(f"{proxy.host}/rocm/atom-dev:nightly_202610281457", credentials=wrong)
    assert result.status == "auth_refused"
    assert "refused" in (result.message or "")
    assert "wrong-password-123" not in repr(result)  # the token service echoed it; the client redacts it


def test_token_rejected_by_registry_is_auth_refused(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, anonymous_tokens=True, reject_tokens=True) as proxy:
        result = resolve_one(f"{proxy.host}/rocm/atom-dev:nightly_202610281457")
    assert result.status == "auth_refused"
    assert proxy.settings.token not in repr(result)


def test_token_service_over_plain_http_elsewhere_is_refused(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, realm="http://192.0.2.1/token") as proxy:
        login = {proxy.host: Credentials(proxy.settings.username, proxy.settings.password)}
        result = resolve_one(f"{proxy.host}/rocm/atom-dev:nightly_202610281457", credentials=login)
    assert result.status == "auth_refused"
    assert "HTTPS" in (result.message or "")


def test_basic_challenge(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, auth="basic") as proxy:
        reference = f"{proxy.host}/lmsysorg/sglang:v0.5.19-cu130"
        login = {proxy.host: Credentials(proxy.settings.username, proxy.settings.password)}
        assert resolve_one(reference, credentials=login).digest == local_registry.single_digest
        anonymous = resolve_one(reference)
    assert anonymous.status == "auth_refused"


def test_missing_content_digest_is_computed_from_body(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, auth="none", strip_digest=True) as proxy:
        with client() as registry:
            results = registry.resolve_many(
                [
                    f"{proxy.host}/lmsysorg/sglang:v0.5.19-cu130",
                    f"{proxy.host}/rocm/atom-dev:nightly_202610281457",
                ]
            )
        methods = [method for method, _ in proxy.settings.requests]
    single, index = results.values()
    assert single.digest == local_registry.single_digest
    assert index.digest == local_registry.index_digest
    assert index.children[0] == (local_registry.amd64_digest, "linux/amd64")
    assert methods.count("GET") == 2


# ---------------------------------------------------------------- retries, timeouts, budget


@pytest.mark.parametrize(("status", "expected"), [(429, "rate_limited"), (503, "error")])
def test_one_retry_then_give_up(local_registry: LocalRegistry, status: int, expected: str) -> None:
    with AuthProxy(local_registry.url, auth="none", fixed_status=status) as proxy:
        result = resolve_one(f"{proxy.host}/rocm/atom-dev:nightly_202610281457")
        requests = len(proxy.settings.requests)
    assert result.status == expected
    assert requests == 2
    assert result.message == f"HTTP {status} {HTTPStatus(status).phrase}"  # HEAD answers have no body


def test_slow_registry_times_out(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, auth="none", delay=1.5) as proxy:
        started = time.monotonic()
        result = resolve_one(f"{proxy.host}/rocm/atom-dev:nightly_202610281457", timeout=0.3)
        elapsed = time.monotonic() - started
        requests = len(proxy.settings.requests)
    assert result.status == "timeout"
    assert requests == 2
    assert elapsed < 1.5


def test_total_budget_bounds_the_wait(local_registry: LocalRegistry) -> None:
    with AuthProxy(local_registry.url, auth="none", delay=3) as proxy:
        references = [f"{proxy.host}/lmsysorg/sglang:t{i}" for i in range(12)]
        started = time.monotonic()
        with client(budget=1.0, timeout=5.0, max_workers=4) as registry:
            results = registry.resolve_many(references)
        elapsed = time.monotonic() - started
    assert {r.status for r in results.values()} == {"timeout"}
    assert elapsed < 2.5


# ---------------------------------------------------------------- secrets


def test_credentials_and_tokens_never_appear_in_output(
    local_registry: LocalRegistry,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    outputs: list[str] = []
    with caplog.at_level(logging.DEBUG), AuthProxy(local_registry.url) as proxy:
        secrets = (proxy.settings.password, proxy.settings.token)
        for password in (proxy.settings.password, "another-wrong-secret"):
            login = {proxy.host: Credentials(proxy.settings.username, password)}
            with client(credentials=login) as registry:
                results = registry.resolve_many(
                    [f"{proxy.host}/rocm/atom-dev:nightly_202610281457", f"{proxy.host}/nobody/none:1"]
                )
                outputs += [repr(registry), repr(results), repr(login)]
        outputs += [str(r.message) for r in results.values()]
    captured = capsys.readouterr()
    outputs += [caplog.text, captured.out, captured.err]
    text = "\n".join(outputs)
    for secret in (*secrets, "another-wrong-secret"):
        assert secret not in text
    assert "auth_refused" in text


# ---------------------------------------------------------------- end to end with the check


def test_check_with_real_resolutions(local_registry: LocalRegistry) -> None:
    repository = f"{local_registry.host}/rocm/atom-dev"
    pins = (
        Pin(repository, local_registry.amd64_digest, "recipes/a.yaml", 7, "frontend.container_image"),
        Pin(repository, SHA, "recipes/b.yaml", 9, "frontend.container_image"),
    )
    use = ImageUse(
        "key-a", local_registry.index_reference, local_registry.index_reference, "recipes/a.yaml", pins, pins
    )
    with client() as registry:
        resolutions = registry.resolve_many(digest.references([use]))
    findings = digest.check([use], resolutions)
    assert [(f.severity, f.line) for f in findings] == [("verified", 7), ("blocking", 9)]
    assert "linux/amd64" in en(findings[0])
    assert local_registry.index_digest in en(findings[1])
