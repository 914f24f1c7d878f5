"""Claims of the PR's own text checked against what the runs serve (DESIGN.md §2 `consistency`).

The seed PR's text holds; each other test edits the seed PR (its body, or a commit on top of its
head) so that one claim stops holding, and reviews it from the seed's base."""

from __future__ import annotations

from collections.abc import Callable

from bot.checks.claims import MAX_CHARS, MAX_CLAIMS, parse, same_value
from bot.example import ExampleRepo
from bot.findings import Finding, Severity
from bot.report import Report
from tests.conftest import CHANGELOG, RECIPE, replace

CLAIM_IDS = ("consistency-claim-setting", "consistency-claim-as-before")
C14_TAIL = (  # the end of C14's variant in the seed recipe
    "        LMCACHE_MAX_LOCAL_CPU_SIZE: '128'\n        ATOM_MONO_ENABLE: '0'\n"
    "  benchmark:\n    env:\n      CONC: '14'\n"
)
C1_SEQS = "`max-num-seqs` 2"  # in the seed body's C1 bullet


def _claims(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.message_id in CLAIM_IDS]


def _one(report: Report, message_id: str) -> Finding:
    [found] = [f for f in report.findings if f.message_id == message_id]
    return found


def test_every_claim_of_the_seed_pr_holds(review_example: Callable[..., Report]) -> None:
    """Its body names seven settings (C1's mono decode, C48-C72's DRAM figure, the herd GEMMs,
    `ATOM_MONO_ENABLE=0` at C4/C14/C16), says C4, C14 and C16 serve as before, and its changelog
    entry states C1's `max-num-seqs 2`: eleven claims, all true."""
    report = review_example()
    assert _claims(report) == []
    ok = _one(report, "consistency-ok")
    assert ok.severity is Severity.VERIFIED and ok.params["claims"] == 11


def test_an_as_before_point_that_changes_an_unnamed_setting_is_a_warning(
    review_example: Callable[..., Report],
) -> None:
    """C14 also moves its LMCache pool, which the text never names: only C14 is flagged, and
    only for that setting (C4 and C16 still change just `ATOM_MONO_ENABLE`, which it names)."""
    edit = C14_TAIL.replace("SIZE: '128'", "SIZE: '160'")
    report = review_example({RECIPE: replace(C14_TAIL, edit)})
    [warning] = _claims(report)
    assert warning.message_id == "consistency-claim-as-before" and warning.severity is Severity.WARNING
    assert warning.params["concurrency"] == 14
    assert warning.params["settings"] == [["roles.agg.env.LMCACHE_MAX_LOCAL_CPU_SIZE", "128", "160"]]
    assert warning.config_key == "kimik3-fp4-mi355x-atom-agentic-mtp"


def test_a_setting_stated_for_a_concurrency_must_be_what_its_run_has(
    example: ExampleRepo, review_example: Callable[..., Report]
) -> None:
    """The body says C1 runs `max-num-seqs: 4`; C1's variant has 2."""
    body = example.body.replace(C1_SEQS, "`max-num-seqs: 4`")
    [warning] = _claims(review_example(body=body))
    assert warning.message_id == "consistency-claim-setting"
    assert warning.params["claim"] == "max-num-seqs: 4" and warning.params["scope"] == [1]
    assert warning.params["have"] == [[1, ["2"]]]
    assert warning.file is None


def test_a_change_written_with_an_arrow_states_the_new_value(
    example: ExampleRepo, review_example: Callable[..., Report]
) -> None:
    """`max-num-seqs 8 → 2` claims 2 (the head), not 8: it holds; `8 → 3` does not."""
    holds = example.body.replace(C1_SEQS, "`max-num-seqs` 8 → 2")
    assert _claims(review_example(body=holds)) == []
    wrong = example.body.replace(C1_SEQS, "`max-num-seqs` 8 → 3")
    [warning] = _claims(review_example(body=wrong))
    assert warning.params["claim"] == "max-num-seqs 8 → 3" and warning.params["have"] == [[1, ["2"]]]


def test_a_claim_in_a_new_changelog_description_is_checked(
    example: ExampleRepo, review_example: Callable[..., Report]
) -> None:
    """The appended entry says C1 runs `max-num-seqs 3`; the warning points at its description."""
    report = review_example({CHANGELOG: replace("at C1 with max-num-seqs 2", "at C1 with max-num-seqs 3")})
    [warning] = _claims(report)
    assert warning.params["claim"] == "max-num-seqs 3" and warning.params["have"] == [[1, ["2"]]]
    assert warning.file == CHANGELOG
    line = (example.path / CHANGELOG).read_text(encoding="utf-8").splitlines()[warning.line - 1]
    assert line == "  description:"


def test_names_that_are_not_settings_are_not_claims(
    example: ExampleRepo, review_example: Callable[..., Report]
) -> None:
    """`NOT_A_SETTING=5` names no env or serving arg of any run, and "method is" (a real arg
    name, in prose) states no value: only the false `ATOM_MONO_ENABLE=7` is flagged."""
    extra = "\n- C1: `NOT_A_SETTING=5`, the draft method is new, and `ATOM_MONO_ENABLE=7`.\n"
    [warning] = _claims(review_example(body=example.body + extra))
    assert warning.params["claim"] == "ATOM_MONO_ENABLE=7" and warning.params["have"] == [[1, ["1"]]]


def test_a_hostile_body_is_read_only_up_to_its_bounds(
    example: ExampleRepo, review_example: Callable[..., Report]
) -> None:
    """10,000 bullets of distinct claims, odd unicode, 1 MB in all: the review finishes, checks
    at most MAX_CLAIMS claims, and says which part of the text went unchecked."""
    bullets = "".join(
        f"- C1: `max-num-seqs` {n} \u202e\u0301ＡＴＯＭ_MONO_ENABLE=١ C\u0661\n" for n in range(10_000)
    )
    body = example.body + bullets + "\ufeff𝐂𝟏 unchanged " * 40_000
    assert len(body) > 1_000_000
    report = review_example(body=body)
    assert not [f for f in report.findings if f.check == "consistency" and f.severity is Severity.BLOCKING]
    claims = _claims(report)
    assert 0 < len(claims) < MAX_CLAIMS
    unchecked = _one(report, "consistency-claims-unchecked")
    assert unchecked.severity is Severity.UNVERIFIED and unchecked.params["cut"] is True
    assert unchecked.params["skipped"] > 1_000


def test_the_parser_scopes_a_claim_by_its_sentence_or_bullet() -> None:
    """The design's own example, and a line whose second sentence names no concurrency."""
    known = {"max-num-seqs", "ATOM_MONO_ENABLE"}.__contains__
    claims = parse(
        ["Concurrency 1: mono decode, max-num-seqs: 2.\n- C4: unchanged. ATOM_MONO_ENABLE=0"], known
    )
    assert [(c.name, c.value, c.scope) for c in claims.settings] == [
        ("max-num-seqs", "2", (1,)),
        ("ATOM_MONO_ENABLE", "0", (4,)),
    ]
    assert [c.concurrency for c in claims.as_before] == [4]
    assert not claims.cut and parse(["x" * (MAX_CHARS + 1)], known).cut


def test_an_as_before_claim_is_a_list_of_concurrencies_the_phrase_is_about() -> None:
    """Sentences of real InferenceX changelog entries: "unchanged" about something else (a grid,
    an eval score, `conc-end`) names no run as before."""
    said = {
        "Concurrency 1, 4 and 14 are unchanged.": [1, 4, 14],
        "C4、C14 和 C16 保持不变": [4, 14, 16],
        "- C4 / C14 / C16: unchanged.": [4, 14, 16],
        "TP8/EP1 conc-start 4 -> 1 (conc-end 4 unchanged).": [],
        "recipe settings and the c4/8/12/16 grid are unchanged.": [],
        "C1, C4 and C16: gsm8k is unchanged at 0.9719 strict-match.": [],
    }
    for sentence, concurrencies in said.items():
        assert [c.concurrency for c in parse([sentence], lambda name: False).as_before] == concurrencies


def test_a_setting_claim_states_the_new_value_and_never_a_reference_or_a_range() -> None:
    """Also from real entries: `from OLD to NEW`, a value per concurrency, `=CONC`, `conc 4-64`."""
    known = {"mem_fraction_static", "cuda_graph_max_bs", "CONC"}.__contains__
    text = (
        "Lower mem-fraction-static from 0.8 to 0.7.\n"
        "conc=2048 cuda-graph-max-bs 288, mem 0.87; conc=4096 cuda-graph-max-bs 544\n"
        "cuda-graph-max-bs=CONC, TP4/EP1 CONC 4-64 -> 1-128\n"
    )
    claims = parse([text], lambda name: known(name.replace("-", "_")))
    assert [(c.name, c.value, c.scope) for c in claims.settings] == [
        ("mem-fraction-static", "0.7", ()),
        ("cuda-graph-max-bs", "288", (2048,)),
        ("cuda-graph-max-bs", "544", (4096,)),
    ]


def test_a_run_value_too_long_to_write_is_compared_not_crashed() -> None:
    """A run whose value is an integer of over 4,300 digits (a hex literal in a recipe): a claim
    about it is simply not that value; comparing it raised ValueError."""
    huge = int("f" * 5000, 16)
    assert not same_value("1", huge)
    assert not same_value("[1]", [huge])
