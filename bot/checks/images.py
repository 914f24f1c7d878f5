"""Part of `digest`: every image a changed run pulls (the entry's `image`, and `model.container`
of the recipes it runs, unless that is a cluster-side alias such as `dynamo-sglang`) is checked
against its registry: the tag resolves and can be pulled without a login (InferenceX's runners
pull anonymously); a local path or a `.sqsh` file blocks without asking. Pure: the engine asks
the registry (`references`) and passes the answers in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from bot.diff import ReviewDiff
from bot.findings import Finding, Severity, finding
from bot.sources.references import TagResolution

CHECK = "digest"


class Pull(NamedTuple):
    """One image a changed key's runs pull, and where it is named."""

    image: str
    key: str
    file: str | None
    line: int | None


def pulls(diff: ReviewDiff) -> list[Pull]:
    """The images of the changed keys that still run, in order, each (image, key) once."""
    found: dict[tuple[str, str], Pull] = {}
    for change in diff.keys.values():
        if change.head is None or not change.needs_entry:
            continue
        images = [change.head.image] if isinstance(change.head.image, str) else []
        for path in sorted({p.recipe for p in change.head.points if p.recipe}):
            recipe = diff.recipes_head.get(path)
            for variant in recipe.candidates(None) if recipe else ():
                model = variant.data.get("model") if isinstance(variant.data, dict) else None
                container = model.get("container") if isinstance(model, dict) else None
                if isinstance(container, str) and not is_alias(container):
                    images.append(container)
        for image in images:
            found.setdefault((image, change.key), Pull(image, change.key, change.file, change.line))
    return list(found.values())


def is_alias(container: str) -> bool:
    """Whether a recipe's `model.container` is a name srt-slurm looks up in the cluster's own
    `srtslurm.yaml` (`dynamo-sglang`), not an image reference: a bare word with no registry, path,
    tag or enroot `#`. What it stands for is outside the repository, so it is not asked of a
    registry nor compared with the key's image."""
    return not any(mark in container for mark in "/:#@")


def _local(image: str) -> bool:
    return image.startswith(("/", "./", "~")) or ".sqsh" in image


def reference(image: str) -> str:
    """The registry reference of an image as a launcher pulls it (`nvcr.io#nvidia/x:t`, enroot's
    form, is `nvcr.io/nvidia/x:t`)."""
    return image.replace("#", "/", 1)


def references(found: list[Pull]) -> list[str]:
    return sorted({reference(p.image) for p in found if not _local(p.image)})


def check(found: list[Pull], answers: Mapping[str, TagResolution] | None, reason: str = "") -> list[Finding]:
    """One finding per distinct image (naming the keys that pull it)."""
    keys: dict[str, list[Pull]] = {}
    for pull in found:
        keys.setdefault(pull.image, []).append(pull)
    findings = []
    for image, users in keys.items():
        first = users[0]
        where = {"config_key": first.key, "file": first.file, "line": first.line}
        params = {"image": image, "keys": [p.key for p in users]}
        if _local(image):
            findings.append(finding(CHECK, Severity.BLOCKING, "image-local", **where, **params))
            continue
        if answers is None:
            findings.append(
                finding(CHECK, Severity.UNVERIFIED, "image-offline", **where, reason=reason, **params)
            )
            continue
        answer = answers.get(reference(image))
        status = answer.status if answer else "error"
        detail = (answer.message or "") if answer else ""
        if status == "ok":
            findings.append(finding(CHECK, Severity.VERIFIED, "image-public", **where, **params))
        elif status == "not_found":
            findings.append(
                finding(CHECK, Severity.BLOCKING, "image-not-found", **where, detail=detail, **params)
            )
        elif status == "auth_refused":
            findings.append(
                finding(CHECK, Severity.BLOCKING, "image-private", **where, detail=detail, **params)
            )
        else:
            findings.append(
                finding(CHECK, Severity.UNVERIFIED, "image-unreachable", **where, detail=detail, **params)
            )
    return findings
