"""The one registry of checks (`bot.findings.CHECKS`, DESIGN.md §4): each entry names a function
that exists, the engine runs every entry once, and what an entry needs decides how it runs."""

from __future__ import annotations

import inspect

from bot import engine
from bot.findings import CHECK_IDS, CHECKS, Need


def test_every_entry_names_a_function_of_one_context() -> None:
    assert len(set(CHECK_IDS)) == len(CHECK_IDS)
    for check in CHECKS:
        run = engine.function(check)
        assert list(inspect.signature(run).parameters) == ["ctx"], check


def test_every_registered_check_speaks_once_on_a_review(review_example) -> None:
    report = review_example()
    assert {f.check for f in report.findings} == set(CHECK_IDS)


def test_checks_that_need_master_configs_say_they_did_not_run_without_them(tmp_path) -> None:
    """A repository with no master config at either ref: every entry that needs one says so
    (`consistency` with its warning), those that need none run."""
    import subprocess

    from bot.local import LocalRequest, run_local
    from tests.conftest import commit

    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    base = commit(tmp_path, {"README.md": "a\n"})
    head = commit(tmp_path, {"README.md": "b\n"})
    report, _, _ = run_local(LocalRequest(str(tmp_path), base, head, offline=True))
    said = {f.check for f in report.findings if f.message_id in ("unchecked-no-masters", "layout-no-masters")}
    assert {c.id for c in CHECKS if Need.MASTERS in c.needs} <= said
    assert not said & {"changelog", "labels", "codeowners"}  # these need none, and ran
    assert {f.check for f in report.findings} == set(CHECK_IDS)


def test_the_checks_that_ask_the_network_run_last(review_example, monkeypatch) -> None:
    order: list[str] = []
    real = engine.function

    def spy(check):
        order.append(check.id)
        return real(check)

    monkeypatch.setattr(engine, "function", spy)
    review_example()
    network = [c.id for c in CHECKS if Need.REGISTRY in c.needs]
    assert order[-len(network) :] == network and sorted(order) == sorted(CHECK_IDS)
