"""The one seam of a review (DESIGN.md §4): both entry points, the CLI and the action, build a
`ReviewInput` and get a `Report` back, with settings read the same way, at the base ref."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from bot import engine
from bot.catalog import Msg
from bot.engine import Resolve
from bot.pullrequest import PullRequest
from bot.report import Report
from bot.settings import SETTINGS_PATH, Settings
from bot.sources.references import TagResolution
from bot.sources.snapshot import Snapshot

# Where a repository keeps its prbot settings (the action's `config` input says otherwise).


class ReviewInput(NamedTuple):
    """Everything a review looks at: the two refs, what changed between them, the PR's context
    (title, body, labels; empty in local mode unless given) and the settings."""

    base: Snapshot
    head: Snapshot
    changed_files: list[str]
    pr: PullRequest
    settings: Settings
    offline: bool = False  # no registry lookups: digest pins are reported as not checked
    offline_reason: str = "--offline"  # why, as the digest check says it ("demo": the demo)
    resolve: Resolve | None = None  # the registries' answers; None: the container registries themselves
    log: Callable[[Msg], None] | None = (
        None  # told of what the review notices outside the PR (registry logins)
    )


def settings_at(base: Snapshot, path: str = SETTINGS_PATH) -> Settings | None:
    """The settings file at the base ref (a PR cannot change the rules it is reviewed by), or
    None when there is none; a SettingsError names what is wrong with an invalid one."""
    data = base.read(path)
    return None if data is None else Settings.from_yaml(data, path, at_base=True)


def registries(log: Callable[[Msg], None] | None = None, environ: Mapping[str, str] | None = None) -> Resolve:
    """What asks the container registries about image references (`bot.sources.registry`, opened
    only when a review has something to ask, and closed after), with the logins and host lists of
    `environ` (the process environment if None); `log` hears about unused logins."""

    def resolve(references: list[str]) -> Mapping[str, TagResolution]:
        from bot.sources.registry import RegistryClient

        with RegistryClient(warn=log, environ=environ) as registry:
            return registry.resolve_many(references)

    return resolve


def run(review: ReviewInput) -> Report:
    """Review the input: every check, within the settings' deadline."""
    resolve = None if review.offline else review.resolve or registries(review.log)
    return engine.review(
        review.base,
        review.head,
        review.changed_files,
        review.pr,
        review.settings,
        resolve=resolve,
        offline_reason=review.offline_reason,
    )
