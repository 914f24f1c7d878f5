"""The digest check end to end: the example PR pointed at a real registry on 127.0.0.1.

The registry client contacts 127.0.0.1 only because `allow_loopback` sets
PRBOT_ALLOW_PRIVATE_REGISTRIES; without it the same review refuses the address.
"""

from __future__ import annotations

import time

import pytest
from registry_fixture import (  # noqa: F401
    LocalRegistry,
    allow_loopback_fixture,
    free_port,
    local_registry_fixture,
)

from bot.findings import Severity
from bot.output.messages import en, zh
from bot.sources.references import ENV_ALLOW_PRIVATE
from tests.conftest import MASTER, RECIPE, replace

OLD_PIN = "rocm/atom-dev@sha256:96a9614276518c2619e88800dec5f276bc76a95691331b4abb2210184e1431af"
OLD_IMAGE = "image: rocm/atom-dev:nightly_202610281457"


def _point_at(host: str, digest: str) -> dict:
    return {
        MASTER: replace(OLD_IMAGE, f"image: {host}/rocm/atom-dev:nightly_202610281457"),
        RECIPE: replace(OLD_PIN, f"{host}/rocm/atom-dev@{digest}"),
    }


def _digest(report):
    """The pin findings (the check's image findings are tests/test_images_e2e.py's)."""
    return [f for f in report.findings if f.check == "digest" and not f.message_id.startswith("image-")]


def test_platform_digest_of_the_tag_is_verified(
    review_example, local_registry: LocalRegistry, allow_loopback
) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.amd64_digest), offline=False)
    [finding] = _digest(report)
    assert finding.severity is Severity.VERIFIED and finding.message_id == "digest-match-platform"
    assert "linux/amd64" in en(finding)


def test_index_digest_is_verified(review_example, local_registry: LocalRegistry, allow_loopback) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.index_digest), offline=False)
    assert [f.message_id for f in _digest(report)] == ["digest-match-tag"]


def test_other_digest_is_blocking(review_example, local_registry: LocalRegistry, allow_loopback) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.single_digest), offline=False)
    [finding] = _digest(report)
    assert finding.severity is Severity.BLOCKING and report.verdict == "blocking"


def test_closed_port_is_unverified_quickly(review_example, allow_loopback) -> None:
    started = time.perf_counter()
    report = review_example(_point_at(f"127.0.0.1:{free_port()}", "sha256:" + "ab" * 32), offline=False)
    [finding] = _digest(report)
    assert finding.severity is Severity.UNVERIFIED
    assert time.perf_counter() - started < 20


def test_offline_never_verifies(review_example, local_registry: LocalRegistry) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.amd64_digest), offline=True)
    assert [f.severity for f in _digest(report)] == [Severity.UNVERIFIED]


def test_loopback_registry_is_refused_without_the_setting(
    review_example, local_registry: LocalRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVATE, raising=False)
    report = review_example(_point_at(local_registry.host, local_registry.amd64_digest), offline=False)
    [finding] = _digest(report)
    assert (finding.severity, finding.message_id) == (Severity.UNVERIFIED, "digest-private-address")
    assert "127.0.0.1 is not a public address" in en(finding)
    assert "127.0.0.1 不是公网地址" in zh(finding)
