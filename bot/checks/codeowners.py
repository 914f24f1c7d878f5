"""`codeowners`: who owns the changed files, and whether the owners outside the core team signed off.

Owners always come from the CODEOWNERS file at the BASE ref (`ReviewDiff.codeowners`): a PR
must not choose its own owners. A sign-off is a PR comment or review body, by one of the
owners outside the core team (for a team owner, by a listed member of the team), that contains
`Settings.signoff_phrase`. The PR author cannot sign off their own PR. Handles are only ever
rendered through the `code` filter, so the review never pings anybody.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.checks.context import CheckContext
from bot.findings import Finding, Severity, finding
from bot.model.owners import CODEOWNERS_PATHS, MAX_BYTES, Owner, OwnersError, OwnersFile, Rule, handle_key
from bot.pullrequest import Comment, PullRequest
from bot.settings import Settings

CHECK = "codeowners"
#: At most this many file names in one message; the rest are counted.
MAX_FILES = 15


def _as_tuple(value: Iterable[str] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


def _signs_off(body: str, phrase: str) -> bool:
    """True when the body, quoted lines (`> ...`) left out, contains the phrase (any spacing or case)."""
    own = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith(">"))
    return bool(phrase.strip()) and _words(phrase) in _words(own)


def _files(paths: list[str]) -> dict[str, object]:
    return {"files": paths[:MAX_FILES], "more": max(0, len(paths) - MAX_FILES)}


def _location(paths: list[str]) -> str | None:
    return paths[0] if len(paths) == 1 else None


@dataclass
class _Team:
    """Who counts as the core team: handles (users, teams) and users known to be in a core team."""

    handles: set[str]
    shown: list[str]
    members: set[str] = field(default_factory=set)

    def owns(self, owner: Owner) -> bool:
        return owner.key in self.handles or (owner.kind == "user" and owner.key in self.members)


def _core_team(owners: OwnersFile, settings: Settings, pr: PullRequest) -> _Team:
    configured = _as_tuple(settings.core_team)
    if configured:
        shown = ["@" + h.strip().lstrip("@") for h in configured]
    else:
        catch_all = owners.catch_all()
        shown = [o.handle for o in catch_all.owners] if catch_all else []
    shown += ["@" + h.strip().lstrip("@") for h in _as_tuple(settings.admins)]
    shown = list(dict.fromkeys(shown))
    handles = {handle_key(h) for h in shown}
    members: set[str] = set()
    for team, logins in _team_members(pr).items():
        if team in handles:
            members.update(handle_key(login) for login in logins)
    return _Team(handles, shown, members)


def _team_members(pr: PullRequest) -> dict[str, set[str]]:
    if pr.team_members is None:
        return {}
    return {handle_key(team): {handle_key(m) for m in members} for team, members in pr.team_members.items()}


def check(ctx: CheckContext) -> list[Finding]:
    diff, pr, settings = ctx.diff, ctx.pr, ctx.settings
    source = diff.codeowners
    if source is None:
        return [finding(CHECK, Severity.UNVERIFIED, "codeowners-missing", paths=list(CODEOWNERS_PATHS))]
    if source.size > MAX_BYTES:
        return [
            finding(
                CHECK,
                Severity.UNVERIFIED,
                "codeowners-too-large",
                file=source.path,
                source=source.path,
                size=source.size,
            )
        ]
    try:
        owners = OwnersFile(source.text)
    except OwnersError as exc:
        return [
            finding(
                CHECK,
                Severity.UNVERIFIED,
                "codeowners-unreadable",
                file=source.path,
                source=source.path,
                detail=str(exc),
            )
        ]
    core = _core_team(owners, settings, pr)
    changed = list(dict.fromkeys(diff.changed_files))
    out: list[Finding] = []

    # Per changed file, its owners: files decided by the same CODEOWNERS line are listed together.
    by_rule: dict[int, tuple[Rule, list[str]]] = {}
    unowned: list[str] = []
    for path in changed:
        rule = owners.rule_for(path)
        if rule is None or not rule.owners:
            unowned.append(path)
        else:
            by_rule.setdefault(rule.line, (rule, []))[1].append(path)
    # Files needing a sign-off, grouped by the set of owners outside the core team.
    needs: dict[tuple[Owner, ...], list[str]] = {}
    for rule, paths in by_rule.values():  # in the order of the changed files
        beyond = tuple(o for o in rule.owners if not core.owns(o))
        out.append(
            finding(
                CHECK,
                Severity.INFO,
                "codeowners-owners",
                file=_location(paths),
                **_files(paths),
                owners=[o.handle for o in rule.owners],
                beyond=[o.handle for o in beyond],
                source=source.path,
                line_no=rule.line,
                pattern=rule.pattern,
            )
        )
        if beyond:
            needs.setdefault(beyond, []).extend(paths)
    if unowned:
        out.append(
            finding(
                CHECK,
                Severity.INFO,
                "codeowners-unowned",
                file=_location(unowned),
                **_files(unowned),
                source=source.path,
            )
        )
    edited = [p for p in changed if p in CODEOWNERS_PATHS]
    if edited:
        out.append(finding(CHECK, Severity.INFO, "codeowners-edited-in-pr", file=edited[0], edited=edited))

    for group, paths in needs.items():
        out.append(_signoff(group, paths, pr, settings))
    if not needs:
        out.append(
            finding(
                CHECK,
                Severity.VERIFIED,
                "codeowners-core-only",
                count=len(changed),
                source=source.path,
                core=core.shown,
            )
        )
    return out


def _signoff(group: tuple[Owner, ...], paths: list[str], pr: PullRequest, settings: Settings) -> Finding:
    """The sign-off status of files whose owners outside the core team are `group`."""
    handles = [o.handle for o in group]
    where = {"file": _location(paths), **_files(paths)}
    phrase = settings.signoff_phrase
    if not pr.is_pull_request:
        return finding(CHECK, Severity.UNVERIFIED, "codeowners-signoff-local", owners=handles, **where)
    author = handle_key(pr.author) if pr.author else None
    known = _team_members(pr)
    # login -> the team it signs for (None: an owner in its own name)
    eligible: dict[str, str | None] = {}
    unreadable: list[Owner] = []
    for owner in sorted(group, key=lambda o: o.kind != "user"):  # a direct owner first
        if owner.kind == "user":
            eligible.setdefault(owner.key, None)
        elif owner.kind == "team" and owner.key in known:
            for login in sorted(known[owner.key]):
                eligible.setdefault(login, owner.handle)
        else:
            unreadable.append(owner)
    eligible.pop(author, None)
    candidates = sorted(
        (c for c in pr.comments if _signs_off(c.body, phrase) and handle_key(c.author) != author),
        key=lambda c: c.created_at,
    )
    signer: Comment | None = next((c for c in candidates if handle_key(c.author) in eligible), None)
    if signer is not None:
        who = "@" + signer.author.lstrip("@")
        return finding(
            CHECK,
            Severity.VERIFIED,
            "codeowners-signoff-verified",
            who=who,
            team=eligible[handle_key(signer.author)],
            when=signer.created_at,
            **where,
        )
    ask = [o.handle for o in group if not (o.kind == "user" and o.key == author)]
    if not ask:
        return finding(CHECK, Severity.INFO, "codeowners-signoff-author-only", owners=handles, **where)
    if not eligible and unreadable:
        others = ["@" + c.author.lstrip("@") for c in candidates]
        teams = [o.handle for o in unreadable if o.kind == "team"]
        if teams:
            return finding(
                CHECK,
                Severity.UNVERIFIED,
                "codeowners-signoff-teams-unreadable",
                teams=teams,
                owners=ask,
                candidates=list(dict.fromkeys(others)),
                phrase=phrase,
                **where,
            )
        return finding(
            CHECK, Severity.UNVERIFIED, "codeowners-signoff-email-owners", owners=ask, phrase=phrase, **where
        )
    return finding(
        CHECK,
        Severity.INFO,
        "codeowners-signoff-needed",
        owners=ask,
        phrase=phrase,
        unreadable=[o.handle for o in unreadable],
        suggestion=phrase,
        **where,
    )
