"""The pure `digest` check on hand-made image uses and registry answers."""

from __future__ import annotations

import pytest
import yaml

from bot.checks import digest
from bot.findings import Finding, Severity
from bot.model.images import ImageUse, Pin
from bot.output import messages
from bot.output.messages import en, zh
from bot.resources import template_dir
from bot.sources.registry import TagResolution

INDEX = "sha256:" + "11" * 32
AMD64 = "sha256:96a96142" + "22" * 28
ARM64 = "sha256:" + "33" * 32
OTHER = "sha256:" + "44" * 32
IMAGE = "rocm/atom-dev:nightly_202610281457"
OLD_IMAGE = "rocm/atom-dev:nightly_202610270000"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom.yaml"
OK = TagResolution(IMAGE, "ok", INDEX, ((AMD64, "linux/amd64"), (ARM64, "linux/arm64/v8")))


def pin(digest_: str, line: int = 12, repository: str = "rocm/atom-dev") -> Pin:
    return Pin(repository, digest_, RECIPE, line, "frontend.container_image")


def use(
    head: tuple[Pin, ...],
    base: tuple[Pin, ...] = (),
    image_head: str | None = IMAGE,
    image_base: str | None = IMAGE,
    key: str = "kimik3-fp4-mi355x-atom",
) -> ImageUse:
    return ImageUse(key, image_base, image_head, RECIPE, base, head)


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, [f.message_id for f in findings]
    return findings[0]


def rendered(item: Finding) -> str:
    """Both languages, plain and markdown: every finding must render without errors."""
    texts = [
        messages.render(item.message_id, lang, item.params, markdown=md)
        for lang in ("en", "zh")
        for md in (False, True)
    ]
    assert all(texts)
    return "\n".join(texts)


# ---------------------------------------------------------------- what to resolve


def test_references_are_deduplicated_sorted_and_only_where_comparable() -> None:
    uses = [
        use((pin(AMD64),)),
        use((pin(AMD64, repository="docker.io/rocm/atom-dev"),), key="other-key"),
        use((pin(AMD64),), image_head="lmsysorg/sglang:v1"),  # different repository: nothing to compare
        use(()),  # no pins
        use((pin(AMD64),), image_head=None),
        use((pin(AMD64),), image_head=OLD_IMAGE),
    ]
    assert digest.references(uses) == [OLD_IMAGE, IMAGE]


# ---------------------------------------------------------------- outcomes


def test_pin_is_the_tag_manifest() -> None:
    item = only(digest.check([use((pin(INDEX),))], {IMAGE: OK}))
    assert (item.severity, item.message_id) == (Severity.VERIFIED, "digest-match-tag")
    assert (item.check, item.config_key, item.file, item.line) == (
        "digest",
        "kimik3-fp4-mi355x-atom",
        RECIPE,
        12,
    )
    assert "sha256:11111111…" in en(item)


def test_pin_is_a_platform_manifest() -> None:
    item = only(digest.check([use((pin(AMD64),))], {IMAGE: OK}))
    assert (item.severity, item.message_id) == (Severity.VERIFIED, "digest-match-platform")
    assert "rocm/atom-dev@sha256:96a96142…" in en(item)
    assert "linux/amd64" in en(item) and "linux/amd64" in zh(item)
    assert AMD64 not in en(item)  # short forms in the sentence …
    assert item.params["pin_digest"] == AMD64  # … full digests in the params
    assert item.params["tag_digest"] == INDEX


def test_mismatch_is_blocking_and_names_both_digests() -> None:
    item = only(digest.check([use((pin(OTHER),))], {IMAGE: OK}))
    assert (item.severity, item.message_id) == (Severity.BLOCKING, "digest-mismatch")
    for text in (en(item), zh(item)):
        assert "sha256:44444444…" in text
        assert INDEX in text and f"linux/amd64 {AMD64}" in text


def test_unknown_tag_is_blocking() -> None:
    missing = TagResolution(IMAGE, "not_found", message="manifest unknown")
    item = only(digest.check([use((pin(AMD64),))], {IMAGE: missing}))
    assert (item.severity, item.message_id) == (Severity.BLOCKING, "digest-not-found")
    assert "manifest unknown" in en(item) and "manifest unknown" in zh(item)


@pytest.mark.parametrize(
    ("status", "message_id"),
    [
        ("unreachable", "digest-unreachable"),
        ("timeout", "digest-timeout"),
        ("rate_limited", "digest-rate-limited"),
        ("auth_refused", "digest-auth-refused"),
        ("private_address", "digest-private-address"),
        ("error", "digest-registry-error"),
        ("something-new", "digest-registry-error"),
    ],
)
def test_registry_trouble_is_unverified_with_reason(status: str, message_id: str) -> None:
    answer = TagResolution(IMAGE, status, message=f"registry said {status}")
    item = only(digest.check([use((pin(AMD64),))], {IMAGE: answer}))
    assert (item.severity, item.message_id) == (Severity.UNVERIFIED, message_id)
    assert f"registry said {status}" in en(item) and f"registry said {status}" in zh(item)
    if status != "private_address":  # that one names the address it refused, not the registry
        assert "registry-1.docker.io" in en(item) and "registry-1.docker.io" in zh(item)


def test_private_address_says_how_to_allow_it() -> None:
    answer = TagResolution("10.0.0.1/rocm/atom-dev:x", "private_address", message="10.0.0.1")
    pinned = use((pin(AMD64, repository="10.0.0.1/rocm/atom-dev"),), image_head="10.0.0.1/rocm/atom-dev:x")
    item = only(digest.check([pinned], {"10.0.0.1/rocm/atom-dev:x": answer}))
    assert item.severity is Severity.UNVERIFIED
    assert "10.0.0.1 is not a public address" in en(item)
    assert "10.0.0.1 不是公网地址" in zh(item)
    for text in (en(item), zh(item)):
        assert "PRBOT_ALLOW_PRIVATE_REGISTRIES" in text


def test_auth_refused_names_the_action_input() -> None:
    answer = TagResolution(IMAGE, "auth_refused", message="denied")
    item = only(digest.check([use((pin(AMD64),))], {IMAGE: answer}))
    for text in (en(item), zh(item)):
        assert "registry-credentials" in text and "PRBOT_REGISTRY_CREDENTIALS" in text


def test_ok_answer_without_digest_is_not_a_pass() -> None:
    item = only(digest.check([use((pin(AMD64),))], {IMAGE: TagResolution(IMAGE, "ok")}))
    assert item.severity == Severity.UNVERIFIED


def test_offline_never_verifies() -> None:
    uses = [use((pin(INDEX),)), use((pin(AMD64, 20), pin(OTHER, 30))), use((pin(AMD64),), base=(pin(OTHER),))]
    findings = digest.check(uses, None, "--offline")
    assert findings
    assert all(f.severity != Severity.VERIFIED for f in findings)
    offline = [f for f in findings if f.message_id == "digest-offline"]
    assert len(offline) == 4
    assert all("--offline" in en(f) and "--offline" in zh(f) for f in offline)
    assert {f.severity for f in findings} == {Severity.UNVERIFIED, Severity.WARNING}
    assert only(digest.check([use((pin(AMD64),))], None)).params["reason"] == "offline"


def test_missing_answer_is_unverified() -> None:
    item = only(digest.check([use((pin(AMD64),))], {}))
    assert (item.severity, item.message_id) == (Severity.UNVERIFIED, "digest-not-resolved")


# ---------------------------------------------------------------- drift and repositories


def test_tag_changed_but_pin_unchanged_warns() -> None:
    item, verdict = digest.check([use((pin(AMD64),), base=(pin(AMD64),), image_base=OLD_IMAGE)], {IMAGE: OK})
    assert (item.severity, item.message_id) == (Severity.WARNING, "digest-tag-changed-pin-unchanged")
    assert OLD_IMAGE in en(item) and IMAGE in en(item)
    assert (item.file, item.line) == (RECIPE, 12)
    assert verdict.message_id == "digest-match-platform"


def test_pin_changed_but_tag_unchanged_warns() -> None:
    item, verdict = digest.check([use((pin(AMD64),), base=(pin(OTHER),))], {IMAGE: OK})
    assert (item.severity, item.message_id) == (Severity.WARNING, "digest-pin-changed-tag-unchanged")
    assert "sha256:44444444…" in en(item) and "sha256:96a96142…" in zh(item)
    assert verdict.severity == Severity.VERIFIED


@pytest.mark.parametrize(
    ("base", "image_base"),
    [
        ((pin(OTHER),), OLD_IMAGE),  # both changed together
        ((), IMAGE),  # a new recipe: nothing drifted
        ((pin(AMD64),), IMAGE),  # neither changed
        ((pin(AMD64),), None),  # a new config key
        ((pin(AMD64),), "docker.io/rocm/atom-dev:nightly_202610281457"),  # same tag, spelled differently
    ],
)
def test_no_drift_warning(base: tuple[Pin, ...], image_base: str | None) -> None:
    findings = digest.check([use((pin(AMD64),), base=base, image_base=image_base)], {IMAGE: OK})
    assert [f.message_id for f in findings] == ["digest-match-platform"]


def test_pin_from_another_repository_warns_and_is_not_compared() -> None:
    findings = digest.check([use((pin(AMD64), pin(OTHER, 40, "ghcr.io/rocm/atom-dev")))], {IMAGE: OK})
    assert [(f.severity, f.message_id, f.line) for f in findings] == [
        (Severity.VERIFIED, "digest-match-platform", 12),
        (Severity.WARNING, "digest-repository-differs", 40),
    ]


def test_repository_comparison_is_normalised() -> None:
    pins = (
        pin(AMD64, repository="docker.io/rocm/atom-dev"),
        pin(INDEX, 30, "rocm/atom-dev:nightly_202610281457"),
    )
    findings = digest.check([use(pins)], {IMAGE: OK})
    assert [f.message_id for f in findings] == ["digest-match-platform", "digest-match-tag"]


def test_tag_and_digest_in_the_config_image() -> None:
    image = f"lmsysorg/sglang:v0.5.19-cu130@{INDEX}"
    answer = TagResolution(image, "ok", INDEX, ((AMD64, "linux/amd64"),))
    uses = [use((pin(AMD64, repository="lmsysorg/sglang"),), image_head=image, image_base=image)]
    assert digest.references(uses) == [image]
    assert only(digest.check(uses, {image: answer})).message_id == "digest-match-platform"


# ---------------------------------------------------------------- edge cases


def test_repeated_pins_and_uses_report_once() -> None:
    pins = (pin(AMD64, 12), pin(AMD64, 50), pin(AMD64, 80))
    findings = digest.check([use(pins), use(pins)], {IMAGE: OK})
    assert [(f.message_id, f.line) for f in findings] == [("digest-match-platform", 12)]


def test_each_config_key_gets_its_own_finding() -> None:
    findings = digest.check([use((pin(AMD64),), key="a"), use((pin(AMD64),), key="b")], {IMAGE: OK})
    assert [f.config_key for f in findings] == ["a", "b"]


@pytest.mark.parametrize("resolutions", [None, {}])
def test_no_pins_is_never_silent(resolutions: dict | None) -> None:
    item = only(digest.check([use(()), use((), key="b")], resolutions))
    assert item.message_id == "digest-no-pins"
    assert item.severity == (Severity.INFO if resolutions is None else Severity.VERIFIED)
    assert "1" in en(item)
    assert only(digest.check([], resolutions)).message_id == "digest-no-pins"


def test_invalid_references_are_unverified() -> None:
    bad_image = only(digest.check([use((pin(AMD64),), image_head="Not An Image")], {}))
    assert (bad_image.severity, bad_image.message_id) == (Severity.UNVERIFIED, "digest-invalid-reference")
    bad_pin = only(digest.check([use((pin(AMD64, repository="Bad Repo"),))], {IMAGE: OK}))
    assert (bad_pin.severity, bad_pin.line) == (Severity.UNVERIFIED, 12)


def test_config_key_without_image() -> None:
    item = only(digest.check([use((pin(AMD64),), image_head=None)], {IMAGE: OK}))
    assert (item.severity, item.message_id) == (Severity.UNVERIFIED, "digest-no-config-image")


def test_registry_text_is_escaped_in_markdown() -> None:
    hostile = TagResolution(IMAGE, "error", message="<img src=x> @org/team `code`")
    item = only(digest.check([use((pin(AMD64),))], {IMAGE: hostile}))
    markdown = messages.render(item.message_id, "en", item.params, markdown=True)
    assert "<img" not in markdown and "@org" not in markdown


def test_every_message_is_used_and_renders() -> None:
    """Run every outcome once; each catalog entry of digest.yaml must be reachable and render.

    The `digest-log-` entries are the registry client's log warnings (tests/test_registry*.py)."""
    answers = {
        IMAGE: OK,
        OLD_IMAGE: TagResolution(OLD_IMAGE, "not_found", message="manifest unknown"),
        "rocm/atom-dev:down": TagResolution("rocm/atom-dev:down", "unreachable", message="refused"),
        "rocm/atom-dev:slow": TagResolution("rocm/atom-dev:slow", "timeout"),
        "rocm/atom-dev:busy": TagResolution("rocm/atom-dev:busy", "rate_limited"),
        "rocm/atom-dev:priv": TagResolution("rocm/atom-dev:priv", "auth_refused"),
        "rocm/atom-dev:lan": TagResolution("rocm/atom-dev:lan", "private_address", message="10.0.0.1"),
        "rocm/atom-dev:odd": TagResolution("rocm/atom-dev:odd", "error"),
    }
    uses = [
        use((pin(INDEX), pin(AMD64, 13), pin(OTHER, 14), pin(OTHER, 15, "ghcr.io/x/y"))),
        use((pin(AMD64),), base=(pin(AMD64),), image_base="rocm/atom-dev:old"),
        use((pin(AMD64),), base=(pin(OTHER),), key="pin-changed"),
        *(use((pin(AMD64),), image_head=image, key=image) for image in answers if image != IMAGE),
        use((pin(AMD64),), image_head="rocm/atom-dev:unasked", key="unasked"),
        use((pin(AMD64),), image_head=None, key="no-image"),
        use((pin(AMD64),), image_head="Bad Image", key="bad"),
    ]
    findings = digest.check(uses, answers) + digest.check(uses, None) + digest.check([], answers)
    for item in findings:
        rendered(item)
    catalog = yaml.safe_load((template_dir() / "messages" / "digest.yaml").read_text(encoding="utf-8"))
    assert all(message_id.startswith("digest-") for message_id in catalog)
    assert {f.message_id for f in findings} == {m for m in catalog if not m.startswith("digest-log-")}
