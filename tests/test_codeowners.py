"""The `codeowners` check: owners from CODEOWNERS at the base ref, and the CODEOWNER sign-off."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from bot import catalog
from bot.checks import codeowners as check_mod
from bot.checks.context import CheckContext
from bot.diff import compute
from bot.engine import review
from bot.example import build_example
from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.model.owners import CODEOWNERS_PATHS, OwnersError, OwnersFile, find_codeowners
from bot.output import messages, report_json
from bot.output.messages import en, zh
from bot.output.render import render_comment
from bot.pullrequest import Comment, PullRequest
from bot.settings import Settings
from bot.sources.git import GitRepo
from tests.conftest import shared_or_skip

PHRASE = Settings().signoff_phrase

AMD_MASTER = "configs/amd-master.yaml"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"
AMD_MASTER_OWNERS = ["@amd-bench-lin", "@amd-bench-okafor", "@amd-atom-reyes"]
RECIPE_OWNERS = ["@amd-bench-lin", "@amd-atom-reyes"]


# --------------------------------------------------------------------------- helpers


class DictSnapshot:
    """An in-memory `Snapshot`."""

    def __init__(self, files: dict[str, str | bytes], label: str = "mem") -> None:
        self.files = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
        self.label = label

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)

    def list_files(self, prefix: str) -> list[str]:
        return sorted(p for p in self.files if p.startswith(prefix))

    def prefetch(self, paths: list[str]) -> None:
        """Everything is in memory already."""


def owners_of(text: str, path: str) -> list[str] | None:
    rule = OwnersFile(text).rule_for(path)
    return None if rule is None else [o.handle for o in rule.owners]


def run_check(
    codeowners: str | None,
    changed: list[str],
    pr: PullRequest | None = None,
    settings: Settings | None = None,
    where: str = ".github/CODEOWNERS",
    head_codeowners: str | None = None,
) -> list[Finding]:
    base = DictSnapshot({where: codeowners} if codeowners is not None else {})
    head = DictSnapshot({where: head_codeowners if head_codeowners is not None else codeowners or ""})
    diff = compute(base, head, changed)
    pr = pr or PullRequest(is_pull_request=True)
    return check_mod.check(CheckContext(diff, pr, settings or Settings()))


def by_id(findings: list[Finding], message_id: str) -> list[Finding]:
    return [f for f in findings if f.message_id == message_id]


def one(findings: list[Finding], message_id: str) -> Finding:
    found = by_id(findings, message_id)
    assert len(found) == 1, [(f.message_id, f.params) for f in findings]
    return found[0]


def comment(author: str, body: str = PHRASE + " no concerns.", when: str = "2026-10-30T10:00:00Z") -> Comment:
    return Comment(author=author, body=body, created_at=when)


_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)*?\1")
_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")


def bare_mentions(markdown: str) -> list[str]:
    """`@handle`s that GitHub would turn into a ping: any outside an inline code span."""
    return _MENTION.findall(_CODE_SPAN.sub("", markdown))


def assert_rendered_safely(f: Finding) -> None:
    for lang in ("en", "zh"):
        text = messages.render(f.message_id, lang, f.params, markdown=True)
        assert not bare_mentions(text), text
    assert en(f) and zh(f)


# --------------------------------------------------------------------------- real CODEOWNERS


@pytest.fixture(scope="module")
def real_codeowners() -> str:
    path = shared_or_skip("inferencex-e2e", "_repo_root", ".github", "CODEOWNERS")
    return path.read_text(encoding="utf-8")


def test_real_codeowners_owners(real_codeowners: str) -> None:
    amd = ["@billishyahao", "@chunfangamd", "@seungrokj", "@yctseng0211", "@1am9trash"]
    assert owners_of(real_codeowners, "configs/amd-master.yaml") == amd
    assert owners_of(real_codeowners, "configs/nvidia-master.yaml") == [
        "@ankur-singh",
        "@kedarpotdar-nv",
        "@InferenceX/core",
    ]
    assert owners_of(real_codeowners, "perf-changelog.yaml") == ["@InferenceX/core"]
    assert owners_of(real_codeowners, "configs/runners.yaml") == ["@InferenceX/core"]
    assert owners_of(real_codeowners, "experimental/operatorx/run.py") == ["@hbarclay"]
    # `MODELS.md` has no slash, so it matches at any depth; the stored file still names root-level
    # paths, so the newer `inferencex-e2e/` copy of the AMD master config falls back to `*`.
    assert owners_of(real_codeowners, "docs/MODELS.md")[0] == "@ankur-singh"
    assert owners_of(real_codeowners, "inferencex-e2e/configs/amd-master.yaml") == ["@InferenceX/core"]
    rule = OwnersFile(real_codeowners).catch_all()
    assert rule is not None and [o.handle for o in rule.owners] == ["@InferenceX/core"]


def test_real_codeowners_review(real_codeowners: str) -> None:
    changed = ["configs/amd-master.yaml", "configs/nvidia-master.yaml", "perf-changelog.yaml"]
    pr = PullRequest(
        is_pull_request=True,
        author="someone",
        comments=(
            comment("ankur-singh", "LGTM"),
            comment("Kedarpotdar-NV", f"> {PHRASE}\nquoting"),
            comment("chunfangamd", PHRASE + " found no issues.", "2026-08-01T00:00:00Z"),
        ),
    )
    findings = run_check(real_codeowners, changed, pr)
    listing = {f.params["files"][0]: f.params for f in by_id(findings, "codeowners-owners")}
    assert listing["configs/nvidia-master.yaml"]["beyond"] == ["@ankur-singh", "@kedarpotdar-nv"]
    assert listing["perf-changelog.yaml"]["beyond"] == []
    verified = one(findings, "codeowners-signoff-verified")
    assert verified.params["files"] == ["configs/amd-master.yaml"]
    assert verified.params["who"] == "@chunfangamd"
    assert verified.params["when"] == "2026-08-01T00:00:00Z"
    needed = one(findings, "codeowners-signoff-needed")  # a quoted phrase and a bare LGTM do not count
    assert needed.params["files"] == ["configs/nvidia-master.yaml"]
    assert needed.params["owners"] == ["@ankur-singh", "@kedarpotdar-nv"]
    for f in findings:
        assert_rendered_safely(f)


# --------------------------------------------------------------------------- GitHub's matching rules

PRECEDENCE = r"""
# Comments start with a hash; blank lines are ignored.
* @global

*.js @js-owner # an inline comment mentioning @not-an-owner
*.go @go-owner
/build/logs/ @build-logs
docs/* @docs-flat
apps/ @apps
/scripts/ @scripts
**/logs @logs-any
data/** @data
src/special.js @special
src/special.js
my\ file.txt @spaced
/root\ only.txt @root-spaced
dir\ with\ spaces/ @spaced-dir
Readme.md @readme
"""


@pytest.mark.parametrize(
    ("path", "owners"),
    [
        ("main.py", ["@global"]),  # `*` catches everything else
        ("a/b/c.js", ["@js-owner"]),  # no slash: any depth; the inline comment names nobody
        ("src/x.go", ["@go-owner"]),
        ("build/logs/x.txt", ["@logs-any"]),  # `**/logs` comes later, so it wins over /build/logs/
        ("build/logs/deep/x.txt", ["@logs-any"]),
        ("docs/guide.md", ["@docs-flat"]),  # `docs/*`: direct children only
        ("docs/deep/guide.md", ["@global"]),
        ("apps/x/y.py", ["@apps"]),  # directory pattern without leading slash: anywhere
        ("nested/apps/y.py", ["@apps"]),
        ("scripts/run.sh", ["@scripts"]),  # leading slash: root only
        ("nested/scripts/run.sh", ["@global"]),
        ("logs/today.txt", ["@logs-any"]),
        ("a/b/logs/today.txt", ["@logs-any"]),
        ("data/x/y/z.csv", ["@data"]),
        ("src/special.js", []),  # a later line with no owners removes them
        ("src/other.js", ["@js-owner"]),
        ("my file.txt", ["@spaced"]),
        ("sub/dir/my file.txt", ["@spaced"]),  # escaped space, no slash: any depth, as on GitHub
        ("root only.txt", ["@root-spaced"]),
        ("sub/root only.txt", ["@global"]),
        ("dir with spaces/a.txt", ["@spaced-dir"]),
        ("x/dir with spaces/a.txt", ["@spaced-dir"]),
        ("readme.md", ["@global"]),  # paths are case-sensitive
        ("Readme.md", ["@readme"]),
    ],
)
def test_precedence(path: str, owners: list[str]) -> None:
    assert owners_of(PRECEDENCE, path) == owners


def test_last_matching_line_wins_in_either_order() -> None:
    assert owners_of("*.yaml @a\nconfigs/ @b\n", "configs/x.yaml") == ["@b"]
    assert owners_of("configs/ @b\n*.yaml @a\n", "configs/x.yaml") == ["@a"]
    assert owners_of("* @a\n* @b\n", "x") == ["@b"]


def test_no_rule_and_catch_all() -> None:
    text = "configs/ @a\n"
    assert OwnersFile(text).rule_for("other/file") is None
    assert OwnersFile(text).catch_all() is None
    rule = OwnersFile("* @first\nx @y\n* @core @org/admins\n").catch_all()
    assert rule is not None and rule.line == 3 and [o.handle for o in rule.owners] == ["@core", "@org/admins"]
    assert [o.kind for o in rule.owners] == ["user", "team"]


def test_owner_kinds_and_line_numbers() -> None:
    rule = OwnersFile("# c\n\nfoo/ @user @org/team dev@example.org  # trailing\n").rule_for("foo/bar")
    assert rule is not None and rule.line == 3 and rule.pattern == "foo/"
    assert [(o.handle, o.kind) for o in rule.owners] == [
        ("@user", "user"),
        ("@org/team", "team"),
        ("dev@example.org", "email"),
    ]


def test_unparseable_file() -> None:
    with pytest.raises(OwnersError):
        OwnersFile("foo[ab @x\n")


def test_codeowners_location_order() -> None:
    files = {"docs/CODEOWNERS": "* @docs", "CODEOWNERS": "* @root", ".github/CODEOWNERS": "* @github"}
    assert find_codeowners(DictSnapshot(files)).path == ".github/CODEOWNERS"
    del files[".github/CODEOWNERS"]
    assert find_codeowners(DictSnapshot(files)).path == "CODEOWNERS"
    del files["CODEOWNERS"]
    assert find_codeowners(DictSnapshot(files)).path == "docs/CODEOWNERS"
    assert find_codeowners(DictSnapshot({})) is None
    assert CODEOWNERS_PATHS == (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


# --------------------------------------------------------------------------- the check on hand-made files

SMALL = """\
* @org/core
configs/amd-master.yaml @amd-a @amd-b
configs/team-only.yaml @org/vendor
configs/mixed.yaml @org/vendor @solo
configs/mail.yaml owner@example.org
configs/mine.yaml @author
configs/core.yaml @org/core @core-person
unowned/
"""


def test_missing_codeowners_is_unverified() -> None:
    findings = run_check(None, ["configs/amd-master.yaml"], head_codeowners="* @attacker\n")
    f = one(findings, "codeowners-missing")
    assert f.severity is Severity.UNVERIFIED and len(findings) == 1
    assert ".github/CODEOWNERS" in en(f) and "docs/CODEOWNERS" in zh(f)


def test_unparseable_and_too_large_are_unverified() -> None:
    f = one(run_check("foo[ab @x\n", ["a"]), "codeowners-unreadable")
    assert f.severity is Severity.UNVERIFIED and f.file == ".github/CODEOWNERS"
    big = "* @core\n" + "# padding\n" * 400_000
    f = one(run_check(big, ["a"]), "codeowners-too-large")
    assert f.severity is Severity.UNVERIFIED


def test_docs_codeowners_is_used() -> None:
    findings = run_check(SMALL, ["configs/amd-master.yaml"], where="docs/CODEOWNERS")
    assert one(findings, "codeowners-owners").params["source"] == "docs/CODEOWNERS"


def test_local_mode_is_unverified() -> None:
    findings = run_check(SMALL, ["configs/amd-master.yaml"], PullRequest(is_pull_request=False))
    f = one(findings, "codeowners-signoff-local")
    assert f.severity is Severity.UNVERIFIED and f.params["owners"] == ["@amd-a", "@amd-b"]
    assert "local mode" in en(f) and "本地模式" in zh(f)


def test_needed_tells_whom_to_ask_and_what_to_write() -> None:
    f = one(run_check(SMALL, ["configs/amd-master.yaml"]), "codeowners-signoff-needed")
    assert f.severity is Severity.INFO and f.file == "configs/amd-master.yaml"
    for lang in ("en", "zh"):
        text = messages.render(f.message_id, lang, f.params, markdown=True)
        assert "`@amd-a`" in text and "`@amd-b`" in text and f"`{PHRASE}`" in text
        assert not bare_mentions(text)
    assert f.suggestion == PHRASE


def test_verified_names_who_and_when() -> None:
    pr = PullRequest(
        is_pull_request=True,
        author="contributor",
        comments=(
            comment("stranger"),
            comment("AMD-B", "Reviewed.\n\n" + PHRASE.upper() + " no concerns", "2026-10-31T08:00:00Z"),
            comment("amd-a", "  " + PHRASE.replace(" ", "\n  ") + " ok", "2026-11-01T08:00:00Z"),
        ),
    )
    f = one(run_check(SMALL, ["configs/amd-master.yaml"], pr), "codeowners-signoff-verified")
    assert f.severity is Severity.VERIFIED
    assert f.params["who"] == "@AMD-B" and f.params["team"] is None
    assert f.params["when"] == "2026-10-31T08:00:00Z"
    assert "2026-10-31T08:00:00Z" in en(f) and "2026-10-31T08:00:00Z" in zh(f)
    assert_rendered_safely(f)


@pytest.mark.parametrize(
    "comments",
    [
        (comment("amd-a"),),  # the author, who is an owner
        (comment("stranger"),),  # not an owner
        (comment("org-core-member"),),  # core-team member: not one of the owners that must sign off
        (comment("amd-b", "Looks fine to me."),),  # an owner, without the phrase
        (comment("amd-b", f"> {PHRASE}\n\nWhat does this mean?"),),  # an owner quoting it
    ],
)
def test_signoff_ignored(comments: tuple[Comment, ...]) -> None:
    pr = PullRequest(
        is_pull_request=True,
        author="amd-a",
        comments=comments,
        team_members={"org/core": ("org-core-member",)},
    )
    findings = run_check(SMALL, ["configs/amd-master.yaml"], pr)
    f = one(findings, "codeowners-signoff-needed")
    assert f.params["owners"] == ["@amd-b"]  # the author is not asked to sign off their own PR
    assert not by_id(findings, "codeowners-signoff-verified")


def test_author_only_owner() -> None:
    pr = PullRequest(is_pull_request=True, author="Author", comments=(comment("author"),))
    f = one(run_check(SMALL, ["configs/mine.yaml"], pr), "codeowners-signoff-author-only")
    assert f.severity is Severity.INFO
    assert_rendered_safely(f)


def test_team_owner_member_signs_off() -> None:
    pr = PullRequest(
        is_pull_request=True,
        author="x",
        comments=(comment("vendor-dev"),),
        team_members={"Org/Vendor": ("Vendor-Dev", "other")},
    )
    f = one(run_check(SMALL, ["configs/team-only.yaml"], pr), "codeowners-signoff-verified")
    assert f.params["who"] == "@vendor-dev" and f.params["team"] == "@org/vendor"
    assert_rendered_safely(f)


def test_team_owner_non_member_does_not_count() -> None:
    pr = PullRequest(
        is_pull_request=True,
        author="x",
        comments=(comment("outsider"),),
        team_members={"org/vendor": ("vendor-dev",)},
    )
    f = one(run_check(SMALL, ["configs/team-only.yaml"], pr), "codeowners-signoff-needed")
    assert f.params["owners"] == ["@org/vendor"] and f.params["unreadable"] == []


def test_team_members_unknown_and_only_teams_is_unverified() -> None:
    pr = PullRequest(is_pull_request=True, author="x", comments=(comment("maybe-member"),), team_members=None)
    f = one(run_check(SMALL, ["configs/team-only.yaml"], pr), "codeowners-signoff-teams-unreadable")
    assert f.severity is Severity.UNVERIFIED
    assert f.params["candidates"] == ["@maybe-member"]
    assert "team membership" in en(f) and "团队成员" in zh(f)
    assert_rendered_safely(f)
    pr = PullRequest(is_pull_request=True, author="x", team_members=None)
    f = one(run_check(SMALL, ["configs/team-only.yaml"], pr), "codeowners-signoff-teams-unreadable")
    assert f.params["candidates"] == [] and PHRASE in en(f)


def test_team_members_unknown_with_a_user_owner() -> None:
    pr = PullRequest(is_pull_request=True, author="x", team_members=None)
    f = one(run_check(SMALL, ["configs/mixed.yaml"], pr), "codeowners-signoff-needed")
    assert f.params["owners"] == ["@org/vendor", "@solo"] and f.params["unreadable"] == ["@org/vendor"]
    assert_rendered_safely(f)
    pr = PullRequest(is_pull_request=True, author="x", team_members=None, comments=(comment("solo"),))
    f = one(run_check(SMALL, ["configs/mixed.yaml"], pr), "codeowners-signoff-verified")
    assert f.params["who"] == "@solo"


def test_email_owner_is_unverified() -> None:
    f = one(run_check(SMALL, ["configs/mail.yaml"]), "codeowners-signoff-email-owners")
    assert f.severity is Severity.UNVERIFIED
    assert_rendered_safely(f)


def test_core_only_and_unowned() -> None:
    findings = run_check(SMALL, ["perf-changelog.yaml", "unowned/readme.md"])
    assert one(findings, "codeowners-unowned").params["files"] == ["unowned/readme.md"]
    core = one(findings, "codeowners-core-only")
    assert core.severity is Severity.VERIFIED
    assert core.params["core"] == ["@org/core"] and core.params["count"] == 2
    assert one(findings, "codeowners-owners").params["beyond"] == []


def test_core_team_member_listed_individually() -> None:
    # Without membership data @core-person is outside the core team; with it, they are in it.
    findings = run_check(SMALL, ["configs/core.yaml"])
    assert one(findings, "codeowners-owners").params["beyond"] == ["@core-person"]
    pr = PullRequest(is_pull_request=True, team_members={"org/core": ("core-person",)})
    findings = run_check(SMALL, ["configs/core.yaml"], pr)
    assert one(findings, "codeowners-owners").params["beyond"] == []
    one(findings, "codeowners-core-only")


def test_core_team_and_admins_from_settings() -> None:
    settings = Settings(core_team=("@amd-a",), admins=("AMD-B",))
    findings = run_check(SMALL, ["configs/amd-master.yaml", "perf-changelog.yaml"], settings=settings)
    listing = {f.params["files"][0]: f.params["beyond"] for f in by_id(findings, "codeowners-owners")}
    assert listing == {"configs/amd-master.yaml": [], "perf-changelog.yaml": ["@org/core"]}
    # `@org/core` is now outside the core team, and with no membership data only teams own the file.
    assert one(findings, "codeowners-signoff-teams-unreadable").params["teams"] == ["@org/core"]
    assert Settings.from_yaml(b"admins: [alice]\ncore-team: ['@org/x']\n").admins == ("alice",)


def test_no_catch_all_means_empty_core_team() -> None:
    findings = run_check("configs/ @cfg\n", ["configs/a.yaml"])
    assert one(findings, "codeowners-owners").params["beyond"] == ["@cfg"]
    one(findings, "codeowners-signoff-needed")


def test_groups_by_owners_outside_core_and_caps_file_lists() -> None:
    text = "* @core\nrecipes/ @vendor\n"
    changed = [f"recipes/r{i:02}.yaml" for i in range(20)]
    findings = run_check(text, changed)
    f = one(findings, "codeowners-signoff-needed")
    assert len(f.params["files"]) == 15 and f.params["more"] == 5 and f.file is None
    assert "(+5 more)" in en(f) and "另有 5 个文件" in zh(f)


def test_signoff_phrase_is_configurable() -> None:
    settings = Settings(signoff_phrase="Approved as CODEOWNER")
    comments = (comment("amd-a"), comment("amd-b", "approved as codeowner."))
    pr = PullRequest(is_pull_request=True, comments=comments)
    f = one(run_check(SMALL, ["configs/amd-master.yaml"], pr, settings), "codeowners-signoff-verified")
    assert f.params["who"] == "@amd-b"


def test_head_codeowners_is_ignored() -> None:
    pr = PullRequest(is_pull_request=True, author="attacker", comments=(comment("friend"),))
    changed = ["configs/amd-master.yaml", ".github/CODEOWNERS"]
    findings = run_check(SMALL, changed, pr, head_codeowners="* @friend\n")
    assert one(findings, "codeowners-signoff-needed").params["owners"] == ["@amd-a", "@amd-b"]
    assert one(findings, "codeowners-edited-in-pr").params["edited"] == [".github/CODEOWNERS"]


def test_every_message_renders_in_both_languages() -> None:
    ids = [m for m in catalog.catalog() if m.startswith("codeowners-")]
    assert len(ids) == 13
    for message_id in ids:
        for lang in ("en", "zh"):
            assert catalog.catalog()[message_id][lang].strip()


# --------------------------------------------------------------------------- end to end on the example


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    date = "2026-10-30T00:00:00+00:00"
    env.update(
        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date
    )
    cmd = [
        "git",
        "-c",
        "user.name=Attacker",
        "-c",
        "user.email=a@example.org",
        "-c",
        "commit.gpgsign=false",
        "-c",
        f"core.hooksPath={os.devnull}",
        "-C",
        str(repo),
        *args,
    ]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory):
    built = build_example(tmp_path_factory.mktemp("example") / "repo")
    # A commit on top of the PR head that tries to make the author the owner of everything.
    (built.path / ".github" / "CODEOWNERS").write_text(
        "* @example-contributor\nconfigs/ @example-contributor @friend\nbenchmarks/ @friend\n",
        encoding="utf-8",
    )
    _git(built.path, "add", ".github/CODEOWNERS")
    _git(built.path, "commit", "--quiet", "--no-verify", "-m", "own everything")
    return built, _git(built.path, "rev-parse", "HEAD")


def review_example(
    example,
    comments: tuple[Comment, ...] = (),
    head: str | None = None,
    author: str = "example-contributor",
    is_pr: bool = True,
):
    built, _ = example
    repo = GitRepo.open(built.path)
    try:
        head_sha = head or built.head
        pr = PullRequest(
            title=built.title,
            body=built.body,
            labels=built.labels,
            author=author,
            comments=comments,
            is_pull_request=is_pr,
            number=7,
        )
        return review(
            repo.snapshot(built.base),
            repo.snapshot(head_sha),
            repo.changed_files(built.base, head_sha),
            pr,
            Settings(),
        )
    finally:
        repo.close()


def owner_findings(report) -> list[Finding]:
    return [f for f in report.findings if f.check == "codeowners"]


def signoffs(report) -> dict[str, tuple[str, dict]]:
    """First file of each sign-off finding -> (message id, params)."""
    return {
        f.params["files"][0]: (f.message_id, f.params)
        for f in owner_findings(report)
        if f.message_id.startswith("codeowners-signoff")
    }


def test_example_names_amd_owners(example) -> None:
    report = review_example(example)
    status = signoffs(report)
    assert status[AMD_MASTER][0] == "codeowners-signoff-needed"
    assert status[AMD_MASTER][1]["owners"] == AMD_MASTER_OWNERS
    assert status[RECIPE][1]["owners"] == RECIPE_OWNERS
    listing = {f.params["files"][0]: f.params for f in by_id(report.findings, "codeowners-owners")}
    assert listing["perf-changelog.yaml"]["beyond"] == []
    assert listing[RECIPE]["pattern"] == "benchmarks/**/mi3*"
    comment_md = render_comment(report)
    assert "`@amd-bench-okafor`" in comment_md and not bare_mentions(comment_md)
    assert PHRASE in comment_md
    assert report_json.to_json(report)["verdict"] != "blocking"


def test_example_verified_after_owner_comment(example) -> None:
    signed = comment("amd-atom-reyes", "Checked the retune.\n" + PHRASE + " approved it.")
    report = review_example(example, (signed,))
    status = signoffs(report)
    assert {k: v[0] for k, v in status.items()} == {
        AMD_MASTER: "codeowners-signoff-verified",
        RECIPE: "codeowners-signoff-verified",
    }
    assert status[AMD_MASTER][1]["who"] == "@amd-atom-reyes"
    assert not bare_mentions(render_comment(report))


def test_example_partial_signoff(example) -> None:
    status = signoffs(review_example(example, (comment("amd-bench-okafor"),)))
    assert status[AMD_MASTER][0] == "codeowners-signoff-verified"
    assert status[RECIPE][0] == "codeowners-signoff-needed"  # okafor does not own the recipe


def test_example_ignores_author_and_non_owner(example) -> None:
    comments = (comment("amd-bench-lin"), comment("example-contributor"), comment("nv-bench-sato"))
    status = signoffs(review_example(example, comments, author="amd-bench-lin"))
    assert status[AMD_MASTER][0] == "codeowners-signoff-needed"
    assert status[AMD_MASTER][1]["owners"] == ["@amd-bench-okafor", "@amd-atom-reyes"]
    assert status[RECIPE][1]["owners"] == ["@amd-atom-reyes"]


def test_example_head_edit_of_codeowners_changes_nothing(example) -> None:
    _, edited_head = example
    comments = (comment("friend"), comment("example-contributor"))
    before = review_example(example, comments)
    after = review_example(example, comments, head=edited_head)
    assert signoffs(after) == signoffs(before)
    assert one(after.findings, "codeowners-edited-in-pr").params["edited"] == [".github/CODEOWNERS"]

    def listing(report) -> dict[str, dict]:
        rows = {}
        for f in by_id(report.findings, "codeowners-owners"):
            for path in f.params["files"]:
                rows[path] = {k: v for k, v in f.params.items() if k not in ("files", "more")}
        return rows

    rows_before, rows_after = listing(before), listing(after)
    assert rows_after.pop(".github/CODEOWNERS")["owners"] == ["@example-org/core"]  # the base rule
    assert rows_after == rows_before


def test_example_local_mode(example) -> None:
    built, _ = example
    request = LocalRequest(repo=str(built.path), base=built.base, head=built.head, offline=True)
    report, _, _ = run_local(request)
    status = signoffs(report)
    assert {v[0] for v in status.values()} == {"codeowners-signoff-local"}
    assert status[AMD_MASTER][1]["owners"] == AMD_MASTER_OWNERS
    assert all(
        f.severity is Severity.UNVERIFIED
        for f in owner_findings(report)
        if f.message_id == "codeowners-signoff-local"
    )
