"""Every image a changed run pulls, asked of a real registry on 127.0.0.1 (the `digest` check's
image part, bot/checks/images.py): the example PR's key is pointed at images that exist, do not
exist, need a login, or are local files."""

from __future__ import annotations

import pytest
from registry_fixture import (  # noqa: F401
    AuthProxy,
    LocalRegistry,
    allow_loopback_fixture,
    local_registry_fixture,
)

from bot.findings import Severity
from tests.conftest import MASTER, replace

OLD_IMAGE = "image: rocm/atom-dev:nightly_202610281457"


def _images(report, image: str) -> list[tuple[Severity, str]]:
    return [
        (f.severity, f.message_id)
        for f in report.findings
        if f.params.get("image") == image and f.message_id.startswith("image-")
    ]


def _review(review_example, image: str, offline: bool = False):
    return review_example({MASTER: replace(OLD_IMAGE, f"image: {image}")}, offline=offline)


def test_a_public_tag_passes(review_example, local_registry: LocalRegistry, allow_loopback) -> None:
    image = f"{local_registry.host}/lmsysorg/sglang:v0.5.19-cu130"
    assert _images(_review(review_example, image), image) == [(Severity.VERIFIED, "image-public")]


def test_a_missing_tag_blocks(review_example, local_registry: LocalRegistry, allow_loopback) -> None:
    image = f"{local_registry.host}/lmsysorg/sglang:v0.5.19-no-such-tag"
    report = _review(review_example, image)
    assert _images(report, image) == [(Severity.BLOCKING, "image-not-found")]
    assert report.verdict == "blocking"


def test_an_image_that_needs_a_login_blocks(
    review_example, local_registry: LocalRegistry, allow_loopback
) -> None:
    with AuthProxy(local_registry.url) as proxy:  # a Bearer challenge, and no anonymous token
        image = f"{proxy.host}/lmsysorg/sglang:v0.5.19-cu130"
        report = _review(review_example, image)
    assert _images(report, image) == [(Severity.BLOCKING, "image-private")]


@pytest.mark.parametrize("image", ["/mnt/images/sglang", "sglang_v0.5.19.sqsh"])
def test_a_local_path_and_a_sqsh_file_block_without_asking(review_example, image: str) -> None:
    report = _review(review_example, image, offline=True)
    assert _images(report, image) == [(Severity.BLOCKING, "image-local")]


def test_offline_is_unverified_never_a_pass(review_example, local_registry: LocalRegistry) -> None:
    image = f"{local_registry.host}/lmsysorg/sglang:v0.5.19-cu130"
    assert _images(_review(review_example, image, offline=True), image) == [
        (Severity.UNVERIFIED, "image-offline")
    ]
