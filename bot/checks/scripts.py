"""`scripts`: the rules InferenceX asks its LLM reviewers to check (`AGENTS.md`, the PR reviewer
`.github/workflows/claude-pr-review.yml`, the sign-off verifier
`.github/codeowner-signoff-verify-prompt.md`, `.github/AGENT_OPERATIONS.md`), decided exactly on
what the PR adds or changes: its scripts read with a real bash grammar (`bot.model.shell`), its
master-config entries, its metadata. A rule that cannot be decided exactly says "not checked" with
the reason; a rule that needs judgement is not attempted. docs/checks.md lists each rule's source.
"""

from __future__ import annotations

import difflib

from bot.checks import deprecations, engine_order, retirements, script_configs, script_rules
from bot.checks.context import CheckContext
from bot.checks.script_rules import CHECK, Source
from bot.findings import Finding, Severity, finding
from bot.model.prfiles import PrFiles
from bot.model.shell import MAX_BYTES, ScriptTooLarge, parse
from bot.pullrequest import PullRequest

# Above this many (base line × head line) pairs, the changed middle of a script is compared with
# difflib's junk heuristic instead of exactly (a 2,000-line script is 4 million).
EXACT_DIFF_CELLS = 4_000_000
# Who writes a PR when its head commit names them as co-author (the trailer agents add), by the
# first word of the name or by the address.
AGENT_NAMES = ("claude", "cursor", "codex", "copilot", "devin", "gemini", "aider", "openhands")
AGENT_ADDRESSES = ("noreply@anthropic.com", "cursoragent@cursor.com")


def touched_lines(base: bytes | None, head: bytes) -> set[int] | None:
    """The head's line numbers the PR added or changed; None when the file is new. Lines the two
    versions share at the start and the end are set aside first; a middle too large for an exact
    comparison in bounded time (hostile input: thousands of repeated lines) is compared with
    difflib's heuristic for popular lines, whose alignment may differ from the exact one."""
    if base is None:
        return None
    old = base.decode("utf-8", "replace").splitlines()
    new = head.decode("utf-8", "replace").splitlines()
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    old, new = old[start : len(old) - end], new[start : len(new) - end]
    exact = len(old) * len(new) <= EXACT_DIFF_CELLS
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=not exact)
    touched: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            touched.update(range(start + j1 + 1, start + j2 + 1))
    return touched


def _sources(files: PrFiles) -> tuple[list[Source], list[Finding]]:
    sources, out = [], []
    for changed in files.scripts:
        if changed.head is None or changed.base == changed.head:
            continue  # deleted, or only its mode changed
        try:
            script = parse(changed.head)  # refuses by `len()` first, so an `Oversized` file too
        except ScriptTooLarge as exc:
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "scripts-too-large",
                    file=changed.path,
                    script=changed.path,
                    reason=str(exc),
                )
            )
            continue
        base = changed.base if changed.base is not None and len(changed.base) <= MAX_BYTES else None
        lines = changed.head.decode("utf-8", "replace").splitlines()
        sources.append(Source(changed.path, lines, touched_lines(base, changed.head), script))
    return sources, out


def _patches(sources: list[Source], files: PrFiles) -> list[Finding]:
    """Verifier Check 10: engine patches only with a waiver `docs/waiver/<PR>.md` filed in the PR."""
    found = []
    for source in sources:  # one finding per script: its first patch, and how many there are
        patches = script_rules.engine_patches(source)
        if patches:
            found.append((source.path, patches[0][0], patches[0][1], len(patches)))
    found += [(path, None, path, 1) for path in files.patches]
    if not found:
        return []
    name = f"{files.pr_number}.md" if files.pr_number is not None else None
    out = []
    for path, line, what, count in found:
        where = {"file": path, "line": line, "what": what, "count": count}
        if name is None:
            out.append(finding(CHECK, Severity.UNVERIFIED, "scripts-patch-no-pr", **where))
        elif name in files.waivers_head:
            out.append(finding(CHECK, Severity.INFO, "scripts-patch-waived", waiver=name, **where))
        else:
            out.append(finding(CHECK, Severity.BLOCKING, "scripts-patch", waiver=name, **where))
    return out


def _generator(files: PrFiles) -> list[Finding]:
    """PR reviewer "Line Count Report": when the PR changes the sweep generator, its line counts."""
    changed = files.sweep_generator
    if changed is None or changed.head is None:
        return []
    head = changed.head.count(b"\n")
    base = changed.base.count(b"\n") if changed.base is not None else 0
    return [
        finding(
            CHECK,
            Severity.INFO,
            "scripts-generator-lines",
            file=changed.path,
            total=head,
            base=base,
            change=head - base,
        )
    ]


def _agent(pr: PullRequest) -> str | None:
    """Who says the PR was written by an agent: a co-author trailer of the head commit, or a bot
    author. None for a person's PR."""
    for line in pr.head_message.splitlines():
        key, _, who = line.partition(":")
        if key.strip().lower() != "co-authored-by":
            continue
        who = who.strip()
        first = who.split()[0].lower() if who.split() else ""
        if first.startswith(AGENT_NAMES) or "[bot]" in who or any(a in who.lower() for a in AGENT_ADDRESSES):
            return who.split("<")[0].strip() or who
    if pr.author and pr.author.endswith("[bot]"):
        return pr.author
    return None


def _has_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _bilingual(pr: PullRequest) -> list[Finding]:
    """AGENTS.md "Agent-specific policy": an agent's PR has its title and description in English
    and Simplified Chinese. Info, and only on a PR that says an agent wrote it."""
    agent = _agent(pr)
    if agent is None:
        return []
    missing = [
        part
        for part, text in (("title", pr.title), ("body", pr.body))
        if text.strip() and not _has_chinese(text)
    ]
    if not missing:
        return []
    return [finding(CHECK, Severity.INFO, "scripts-bilingual", agent=agent, parts=missing)]


def _conflicts(pr: PullRequest) -> list[Finding]:
    """AGENT_OPERATIONS.md "Sweep labels and reuse": sweeps do not start while the PR has merge
    conflicts. GitHub's `mergeable` in the action; not known locally."""
    if not pr.is_pull_request:
        return [finding(CHECK, Severity.UNVERIFIED, "scripts-conflicts-local")]
    if pr.mergeable is None:
        return [finding(CHECK, Severity.UNVERIFIED, "scripts-conflicts-unknown")]
    if pr.mergeable is False:
        return [finding(CHECK, Severity.INFO, "scripts-conflicts")]
    return []


def check(ctx: CheckContext) -> list[Finding]:
    files = ctx.files or PrFiles()
    sources, out = _sources(files)
    for source in sources:
        for rule in script_rules.RULES:
            out += rule(source)
    out += _patches(sources, files)
    out += script_configs.check(ctx.diff, files, sources)
    out += engine_order.check(ctx.diff)
    out += retirements.check(ctx.diff, files, ctx.pr.review_date)
    out += deprecations.check(ctx.diff, files, ctx.pr.review_date)
    out += _generator(files)
    out += _bilingual(ctx.pr)
    out += _conflicts(ctx.pr)
    if not any(f.severity in (Severity.BLOCKING, Severity.WARNING) for f in out):
        out.append(finding(CHECK, Severity.VERIFIED, "scripts-ok", scripts=len(sources)))
    return out
