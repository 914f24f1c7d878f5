"""A benchmark script's code id (`bot.model.script_code`): what a throughput run executes.

A script edited only in its comments, its layout or the branches an eval job takes keeps its id
(so its keys' runs do not change and need no changelog entry); any other edit changes it."""

from __future__ import annotations

import pytest

from bot.model.script_code import blob_id, code_id
from bot.model.shell import MAX_BYTES

SCRIPT = """#!/usr/bin/env bash
# Fixed-sequence-length benchmark for an FP8 model on one node.

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC ISL OSL RESULT_FILENAME

export SGLANG_USE_AITER=1
SERVER_LOG=/workspace/server.log

CONTEXT_ARGS=""
if [ "${EVAL_ONLY}" = "true" ]; then
    setup_eval_context
    CONTEXT_ARGS="--context-length $EVAL_MAX_MODEL_LEN"
fi

python3 -m sglang.launch_server \\
    --model-path $MODEL \\
    --tensor-parallel-size $TP \\
    --mem-fraction-static 0.8 $CONTEXT_ARGS > $SERVER_LOG 2>&1 &

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG"

run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC" --result-dir /workspace/

cat > /tmp/patch.py <<'PY'
# keep this line
def fix():
    return 1
PY
"""


def _edit(old: str, new: str, text: str = SCRIPT) -> bytes:
    assert old in text, old
    return text.replace(old, new, 1).encode()


BASE = code_id(SCRIPT.encode())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("# Fixed-sequence-length benchmark", "# A benchmark, reworded,"),
        (
            "export SGLANG_USE_AITER=1\n",
            "# tuned on 2026-08-01\nexport SGLANG_USE_AITER=1  # AITER kernels\n",
        ),
        ("SERVER_LOG=/workspace/server.log\n", "\n\nSERVER_LOG=/workspace/server.log   \n"),
        ("    --tensor-parallel-size $TP \\\n", "        --tensor-parallel-size $TP \\\n"),
        ("    --model-path $MODEL \\\n    --tensor", "    --model-path $MODEL --tensor"),
        ("    setup_eval_context\n", "    setup_eval_context\n    export EVAL_MAX_MODEL_LEN=65536\n"),
    ],
    ids=["comment", "trailing-comment", "blank-lines", "indent", "continuation-joined", "eval-branch"],
)
def test_an_edit_that_changes_no_throughput_command_keeps_the_id(old: str, new: str) -> None:
    assert code_id(_edit(old, new)) == BASE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("--mem-fraction-static 0.8", "--mem-fraction-static 0.85"),
        ("export SGLANG_USE_AITER=1\n", "export SGLANG_USE_AITER=1\nexport NCCL_MIN_NCHANNELS=32\n"),
        ('CONTEXT_ARGS=""', 'CONTEXT_ARGS="--disable-radix-cache"'),
        ("--model-path $MODEL", '--model-path "$MODEL "'),
        ("    return 1\n", "        return 1\n"),  # Python's indentation inside a heredoc
        ("# keep this line\n", "# a heredoc line is data, not a comment\n"),
        ("run_benchmark_serving --model", "run_benchmark_serving --use-chat-template --model"),
    ],
    ids=[
        "flag-value",
        "new-export",
        "else-path-value",
        "string-spaces",
        "heredoc-indent",
        "heredoc-hash",
        "flag",
    ],
)
def test_an_edit_to_what_a_throughput_run_executes_changes_the_id(old: str, new: str) -> None:
    assert code_id(_edit(old, new)) != BASE


WRAPPED = """
if [ "${EVAL_ONLY}" = "true" ]; then
    run_eval --port "$PORT"
else
    run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC" --result-dir /workspace/
fi
"""


@pytest.mark.parametrize(
    "condition",
    [
        '[ "${EVAL_ONLY}" = "true" ]',
        '[ "$EVAL_ONLY" = "true" ]',
        '[[ "${EVAL_ONLY:-false}" == "true" ]]',
        '[ "${EVAL_ONLY:-}" = true ]',
        '[[ "${EVAL_ONLY:-false}" == "true" && -n "${EVAL_CONFIG_FILE:-}" ]]',
        '[ "${EVAL_ONLY:-false}" = "true" ] && [ "$scenario_is_agentic" = "1" ]',
    ],
)
def test_wrapping_the_benchmark_in_an_eval_only_branch_keeps_the_id(condition: str) -> None:
    """#1947 wrapped each agentic script's replay in `if EVAL_ONLY … else <replay> fi`."""
    line = 'run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC" --result-dir /workspace/\n'
    wrapped = WRAPPED.replace('[ "${EVAL_ONLY}" = "true" ]', condition)
    assert code_id(_edit(line, wrapped.lstrip("\n"))) == BASE


def test_a_negated_eval_test_keeps_its_then_branch() -> None:
    line = 'run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC" --result-dir /workspace/\n'
    gated = f'if [[ "${{EVAL_ONLY:-false}}" != "true" ]]; then\n    {line}fi\n'
    assert code_id(_edit(line, gated)) == BASE
    assert code_id(_edit(line, gated.replace("--result-dir", "--save-result --result-dir"))) != BASE


@pytest.mark.parametrize(
    ("condition", "why"),
    [
        ('[ "${EVAL_ONLY:-true}" = "true" ]', "unset means true here"),
        ('[[ "${RUN_EVAL:-false}" == "true" || "${EVAL_ONLY:-false}" == "true" ]]', "RUN_EVAL decides it"),
        ('[ "${EVAL_ONLY}" = "yes" ]', "another value"),
    ],
)
def test_a_branch_a_throughput_run_may_take_is_not_cut(condition: str, why: str) -> None:
    line = 'run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC" --result-dir /workspace/\n'
    wrapped = WRAPPED.replace('[ "${EVAL_ONLY}" = "true" ]', condition)
    assert code_id(_edit(line, wrapped.lstrip("\n"))) != BASE, why


def test_a_script_that_sets_eval_only_itself_has_no_branch_cut() -> None:
    line = 'run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC" --result-dir /workspace/\n'
    wrapped = "EVAL_ONLY=true\n" + WRAPPED.lstrip("\n")
    both = _edit(line, wrapped)
    assert code_id(both) != code_id(_edit(line, "EVAL_ONLY=true\n" + line))
    # The workflow's own default is no assignment of another value: cutting stays on.
    kept = 'export EVAL_ONLY="${EVAL_ONLY:-false}"\n'
    assert code_id(_edit(line, kept + WRAPPED.lstrip("\n"))) == code_id(_edit(line, kept + line))


def test_an_elif_chain_is_not_cut() -> None:
    line = 'run_benchmark_serving --model "$MODEL" --max-concurrency "$CONC" --result-dir /workspace/\n'
    chain = WRAPPED.replace("else\n", 'elif [ "$TP" = 8 ]; then\n    true\nelse\n').lstrip("\n")
    assert code_id(_edit(line, chain)) != BASE


def test_a_script_too_large_to_read_is_named_by_its_bytes() -> None:
    big = SCRIPT.encode() + b"#" * MAX_BYTES
    assert code_id(big) == blob_id(big)
    assert code_id(big + b"#") != code_id(big)  # a comment now counts: its bytes were not read


def test_an_unparsable_script_still_gets_an_id_that_sees_its_edits() -> None:
    broken = _edit("fi\n", "")  # an `if` left open
    assert code_id(broken) != code_id(_edit("fi\n", "", _edit("0.8", "0.9").decode()))
