"""`digest` check: does each recipe's digest pin name the image its config key's tag names?

Pure: the engine hands in the registries' answers (`CheckContext.resolve`, which asks
`bot.sources.registry.RegistryClient`; None when offline) and `run` asks it about
`references(uses)`. A pin matches when it equals the tag's manifest
digest or one of its platform manifests (image index / manifest list).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from bot.checks import images
from bot.checks.context import CheckContext
from bot.diff import image_uses
from bot.findings import Finding, Severity, finding
from bot.model.images import ImageUse, Pin
from bot.sources.references import (
    ENV_ALLOW_PRIVATE,
    ENV_CREDENTIALS,
    TagResolution,
    normalized_repository,
    parse_reference,
)

CHECK = "digest"
_UNVERIFIED = {
    "unreachable": "digest-unreachable",
    "timeout": "digest-timeout",
    "rate_limited": "digest-rate-limited",
    "auth_refused": "digest-auth-refused",
    "private_address": "digest-private-address",
    "error": "digest-registry-error",
}


def short_digest(digest: str) -> str:
    """`sha256:96a96142…` — the algorithm and the first 8 hex digits."""
    algorithm, _, hex_digits = digest.partition(":")
    return f"{algorithm}:{hex_digits[:8]}…"


def _pin_text(pin: Pin) -> str:
    return f"{pin.repository}@{short_digest(pin.digest)}"


@lru_cache(maxsize=1024)  # asked three times per pin, and most pins name a few repositories
def _repository(name: str) -> str | None:
    try:
        return normalized_repository(name)
    except ValueError:
        return None


def _distinct(pins: Sequence[Pin]) -> list[Pin]:
    """One pin per (repository, digest): the first occurrence, for its line."""
    seen: dict[tuple[str, str], Pin] = {}
    for pin in pins:
        seen.setdefault((pin.repository, pin.digest), pin)
    return list(seen.values())


def _comparable(pins: Sequence[Pin], image: str | None) -> list[Pin]:
    """The distinct pins from the same repository as `image`."""
    repository = _repository(image) if image else None
    if repository is None:
        return []
    return [pin for pin in _distinct(pins) if _repository(pin.repository) == repository]


def references(uses: Sequence[ImageUse]) -> list[str]:
    """The image references to resolve: head images that share a repository with some head pin."""
    return sorted(
        {use.image_head for use in uses if use.image_head and _comparable(use.pins_head, use.image_head)}
    )


def run(ctx: CheckContext) -> list[Finding]:
    """The check on the changed keys' images: the pins against their tags, and every image a changed
    run pulls (`bot.checks.images`), resolved by `ctx.resolve` (None: offline)."""
    uses = image_uses(ctx.diff)
    pulled = images.pulls(ctx.diff)
    found = ctx.unreadable(CHECK)
    if ctx.resolve is None:
        return found + check(uses, None, ctx.offline_reason) + images.check(pulled, None, ctx.offline_reason)
    # One lookup per distinct image: the pins' tags and every image a changed run pulls.
    answers = ctx.resolve(sorted({*references(uses), *images.references(pulled)}))
    return found + check(uses, answers) + images.check(pulled, answers)


def check(
    uses: Sequence[ImageUse],
    resolutions: Mapping[str, TagResolution] | None,
    unverified_reason: str | None = None,
) -> list[Finding]:
    """Findings for every head pin of every use, drift warnings, and a note when nothing was pinned.

    `resolutions is None` means the registry was not asked: pins are then `unverified`, and even the
    "nothing pinned" note is only `info`, so that an offline review never reports `verified`.
    """
    findings: list[Finding] = []
    seen: set[tuple[str, str | None, str | None, int | None, str]] = set()
    for use in uses:
        for item in (*_drift(use), *_pins(use, resolutions, unverified_reason)):
            key = (item.message_id, item.config_key, item.file, item.line, repr(item.params))
            if key not in seen:
                seen.add(key)
                findings.append(item)
    if not any(use.pins_head for use in uses):
        recipes = len({use.recipe_path for use in uses})
        severity = Severity.INFO if resolutions is None else Severity.VERIFIED
        findings.append(finding(CHECK, severity, "digest-no-pins", recipes=recipes))
    return findings


def _at(use: ImageUse, pin: Pin) -> dict[str, Any]:
    """Location and the pin (short and full), shared by every per-pin finding."""
    return {
        "config_key": use.config_key,
        "file": pin.file,
        "line": pin.line,
        "pin": _pin_text(pin),
        "pin_digest": pin.digest,
    }


def _emit(severity: Severity, message_id: str, where: Mapping[str, Any], **params: Any) -> Finding:
    return finding(CHECK, severity, message_id, **where, **params)


def _drift(use: ImageUse) -> list[Finding]:
    """Tag changed but pin unchanged, or pin changed but tag unchanged."""
    if not use.image_base or not use.image_head:
        return []
    base_pins = _comparable(use.pins_base, use.image_base)
    head_pins = _comparable(use.pins_head, use.image_head)
    base = {pin.digest for pin in base_pins}
    head = {pin.digest for pin in head_pins}
    if not base or not head:
        return []
    tag_changed = parse_reference(use.image_base) != parse_reference(use.image_head)
    if tag_changed and head == base:
        where = _at(use, head_pins[0])
        return [
            _emit(
                Severity.WARNING,
                "digest-tag-changed-pin-unchanged",
                where,
                old=use.image_base,
                new=use.image_head,
            )
        ]
    if not tag_changed and head != base:
        where = _at(use, next(pin for pin in head_pins if pin.digest not in base))
        old = [short_digest(d) for d in sorted(base)]
        new = [short_digest(d) for d in sorted(head)]
        return [
            _emit(
                Severity.WARNING,
                "digest-pin-changed-tag-unchanged",
                where,
                image=use.image_head,
                old=old,
                new=new,
            )
        ]
    return []


def _pins(
    use: ImageUse, resolutions: Mapping[str, TagResolution] | None, reason: str | None
) -> list[Finding]:
    """One finding per distinct head pin (or one for an unusable config image)."""
    if use.image_head and _repository(use.image_head) is None:
        where = {"config_key": use.config_key}
        return [_emit(Severity.UNVERIFIED, "digest-invalid-reference", where, value=use.image_head)]
    return [_pin(use, pin, resolutions, reason) for pin in _distinct(use.pins_head)]


def _pin(
    use: ImageUse, pin: Pin, resolutions: Mapping[str, TagResolution] | None, reason: str | None
) -> Finding:
    """What can be said about one pin of a use."""
    image, where = use.image_head, _at(use, pin)
    if _repository(pin.repository) is None:
        return _emit(
            Severity.UNVERIFIED, "digest-invalid-reference", where, value=f"{pin.repository}@{pin.digest}"
        )
    if image is None:
        return _emit(Severity.UNVERIFIED, "digest-no-config-image", where, key=use.config_key, field="image")
    if _repository(pin.repository) != _repository(image):
        return _emit(Severity.WARNING, "digest-repository-differs", where, image=image)
    if resolutions is None:
        return _emit(Severity.UNVERIFIED, "digest-offline", where, image=image, reason=reason or "offline")
    if image not in resolutions:
        return _emit(Severity.UNVERIFIED, "digest-not-resolved", where, image=image)
    return _compare(pin, image, resolutions[image], where)


def _compare(pin: Pin, image: str, resolution: TagResolution, where: Mapping[str, Any]) -> Finding:
    """The verdict on one pin given the registry's answer for its tag."""
    if resolution.status == "ok" and resolution.digest:
        tag_digest = resolution.digest
        if pin.digest == tag_digest:
            return _emit(Severity.VERIFIED, "digest-match-tag", where, image=image, tag_digest=tag_digest)
        for child, platform in resolution.children:
            if pin.digest == child:
                return _emit(
                    Severity.VERIFIED,
                    "digest-match-platform",
                    where,
                    image=image,
                    platform=platform,
                    index=short_digest(tag_digest),
                    tag_digest=tag_digest,
                )
        children = [f"{platform} {child}" for child, platform in resolution.children]
        return _emit(
            Severity.BLOCKING, "digest-mismatch", where, image=image, tag_digest=tag_digest, children=children
        )
    detail = resolution.message or ""
    if resolution.status == "not_found":
        return _emit(Severity.BLOCKING, "digest-not-found", where, image=image, detail=detail)
    message_id = _UNVERIFIED.get(resolution.status, "digest-registry-error")
    host = parse_reference(image).registry_host
    return _emit(
        Severity.UNVERIFIED,
        message_id,
        where,
        image=image,
        detail=detail,
        host=host,
        env=ENV_CREDENTIALS,
        allow=ENV_ALLOW_PRIVATE,
    )
