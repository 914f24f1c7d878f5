"""The digest check end to end: the example PR pointed at a real registry on 127.0.0.1."""

from __future__ import annotations

import time

from registry_fixture import LocalRegistry, free_port, local_registry_fixture  # noqa: F401

from bot.findings import Severity
from tests.conftest import MASTER, RECIPE, replace

OLD_PIN = "rocm/atom-dev@sha256:96a9614276518c2619e88800dec5f276bc76a95691331b4abb2210184e1431af"
OLD_IMAGE = "image: rocm/atom-dev:nightly_202610281457"


def _point_at(host: str, digest: str) -> dict:
    return {
        MASTER: replace(OLD_IMAGE, f"image: {host}/rocm/atom-dev:nightly_202610281457"),
        RECIPE: replace(OLD_PIN, f"{host}/rocm/atom-dev@{digest}"),
    }


def _digest(report):
    return [f for f in report.findings if f.check == "digest"]


def test_platform_digest_of_the_tag_is_verified(review_example, local_registry: LocalRegistry) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.amd64_digest), offline=False)
    [finding] = _digest(report)
    assert finding.severity is Severity.VERIFIED and finding.message_id == "digest-match-platform"
    assert "linux/amd64" in finding.message_en


def test_index_digest_is_verified(review_example, local_registry: LocalRegistry) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.index_digest), offline=False)
    assert [f.message_id for f in _digest(report)] == ["digest-match-tag"]


def test_other_digest_is_blocking(review_example, local_registry: LocalRegistry) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.single_digest), offline=False)
    [finding] = _digest(report)
    assert finding.severity is Severity.BLOCKING and report.verdict == "blocking"


def test_closed_port_is_unverified_quickly(review_example) -> None:
    started = time.perf_counter()
    report = review_example(_point_at(f"127.0.0.1:{free_port()}", "sha256:" + "ab" * 32), offline=False)
    [finding] = _digest(report)
    assert finding.severity is Severity.UNVERIFIED
    assert time.perf_counter() - started < 20


def test_offline_never_verifies(review_example, local_registry: LocalRegistry) -> None:
    report = review_example(_point_at(local_registry.host, local_registry.amd64_digest), offline=True)
    assert [f.severity for f in _digest(report)] == [Severity.UNVERIFIED]
