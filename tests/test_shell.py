"""The shell-script reader (`bot.model.shell`): commands, flags, arrays, branches and lines, on
scripts shaped like InferenceX's benchmark scripts and launchers."""

from __future__ import annotations

import pytest

from bot.model.shell import MAX_BYTES, ScriptTooLarge, parse

ATOM_MTP = b"""#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"

if [ "$EP_SIZE" -gt 1 ]; then
  EP=" --enable-expert-parallel"
else
  EP=" "
fi

python3 -m atom.entrypoints.openai_server \\
    --model $MODEL \\
    -tp $TP \\
    --kv_cache_dtype fp8 $EP \\
    --method mtp \\
    > $SERVER_LOG 2>&1 &

run_benchmark_serving \\
    --model "$MODEL" \\
    --max-concurrency "$CONC" \\
    --result-dir /workspace/ \\
    --use-chat-template
"""


def test_commands_flags_and_lines_across_continuations() -> None:
    script = parse(ATOM_MTP)
    (server,) = script.runs("atom")
    (client,) = script.runs("client")
    assert server.line == 10 and server.end_line == 14  # its redirects follow on line 15
    args = {w.text: w.line for w in server.arguments()}
    assert args["--method"] == 14 and args["-tp"] == 12
    assert [w.text for w in client.arguments()][-1] == "--use-chat-template"
    assert client.words[-1].line == 21


def test_a_flag_from_a_branch_carries_the_branch_it_was_assigned_in() -> None:
    (server,) = parse(ATOM_MTP).runs("atom")
    (ep,) = [w for w in server.words if w.text == "--enable-expert-parallel"]
    assert ep.line == 5 and ep.via == "EP"
    assert [(g.condition, g.taken) for g in ep.gates] == [('[ "$EP_SIZE" -gt 1 ]', True)]
    assert ep.gates[0].reads == ("EP_SIZE",)


def test_arrays_appends_and_a_command_kept_in_an_array() -> None:
    script = parse(
        b"""EP_ARGS=()
if [ "${EP_SIZE:-1}" -gt 1 ]; then
    EP_ARGS+=(--enable-expert-parallel)
fi
VLLM_CMD=(
    vllm serve "$MODEL"
    --tensor-parallel-size "$TP"
    "${EP_ARGS[@]}"
)
"${VLLM_CMD[@]}" > "$LOG" 2>&1 &
"""
    )
    (server,) = script.runs("vllm")
    assert server.line == 10
    texts = [w.text for w in server.arguments()]
    assert texts == ["$MODEL", "--tensor-parallel-size", "$TP", "--enable-expert-parallel"]
    ep = server.arguments()[-1]
    assert ep.line == 3 and ep.gates[0].reads == ("EP_SIZE",)


def test_a_later_unconditional_assignment_replaces_the_earlier_values() -> None:
    script = parse(b'X="--a"\nX="--b"\nvllm serve m $X\n')
    assert [w.text for w in script.runs("vllm")[0].arguments()] == ["m", "--b"]


def test_elif_else_and_case_branches_are_gates() -> None:
    script = parse(
        b"""if [ "$DP_ATTENTION" = "true" ]; then
    A=(--dp)
elif [ "$EP_SIZE" -gt 1 ]; then
    A=(--enable-expert-parallel)
else
    A=()
fi
case "$SPEC_DECODING" in
    mtp) S=(--speculative-algorithm EAGLE) ;;
esac
python3 -m sglang.launch_server --model-path m "${A[@]}" "${S[@]}"
"""
    )
    (server,) = script.runs("sglang")
    gates = {w.text: [(g.condition, g.taken) for g in w.gates] for w in server.arguments()}
    assert gates["--enable-expert-parallel"] == [
        ('[ "$DP_ATTENTION" = "true" ]', False),
        ('[ "$EP_SIZE" -gt 1 ]', True),
    ]
    assert gates["EAGLE"] == [('"$SPEC_DECODING" matches mtp', True)]


def test_a_condition_reads_variables_in_every_form() -> None:
    script = parse(
        b"""if (( EP_SIZE > 1 )); then A=(--e); fi
if [[ ${EP_SIZE:-1} -gt 1 && "$DP" == true ]]; then B=(--f); fi
vllm serve m "${A[@]}" "${B[@]}"
"""
    )
    gates = {w.text: set(w.gates[0].reads) for w in script.runs("vllm")[0].arguments()[1:]}
    assert gates == {"--e": {"EP_SIZE"}, "--f": {"EP_SIZE", "DP"}}


def test_and_list_gates_its_right_side() -> None:
    script = parse(b'[ "$EP_SIZE" -gt 1 ] && EP="--enable-expert-parallel"\nvllm serve m $EP\n')
    (ep,) = [w for w in script.runs("vllm")[0].words if w.text == "--enable-expert-parallel"]
    assert ep.gates[0].reads == ("EP_SIZE",) and ep.gates[0].taken


def test_commands_inside_bash_c_strings_are_read_at_their_lines() -> None:
    script = parse(
        b"""srun --jobid=$JOB_ID bash -c "
    if unsquashfs -l \\"$SQUASH_FILE\\" > /dev/null 2>&1; then
        echo ok
    else
        enroot import -o \\"$SQUASH_FILE\\" docker://$IMAGE
    fi
"
"""
    )
    (enroot,) = [c for c in script.commands if c.texts[:2] == ["enroot", "import"]]
    assert enroot.line == 5
    assert enroot.texts[-1] == "docker://$IMAGE" and enroot.texts[3] == "$SQUASH_FILE"
    assert not enroot.gates[-1].taken


def test_a_variable_never_assigned_is_marked_unresolved() -> None:
    (client,) = parse(b"run_benchmark_serving --model m $EXTRA_ARGS\n").runs("client")
    assert client.words[-1].unresolved and not client.words[1].unresolved


def test_heredocs_and_redirect_targets() -> None:
    script = parse(b"python3 - <<'EOF'\nimport vllm\nEOF\ncat > /tmp/x.py <<EOF\nprint(1)\nEOF\n")
    first, second = script.commands
    assert first.heredocs[0].body.startswith("import vllm") and first.heredocs[0].line == 2
    assert second.redirects == ("/tmp/x.py",)


def test_hostile_input_is_bounded() -> None:
    with pytest.raises(ScriptTooLarge):
        parse(b"#" * (MAX_BYTES + 1))
    # a variable that names itself, and deep nesting, finish quickly
    script = parse(
        b'A="$A"\nB=("${B[@]}" x)\nvllm serve "${B[@]}" $A\n' + b"if true; then " * 200 + b"fi " * 200
    )
    assert script.runs("vllm")
    # a syntax error is recovered from, the rest still read
    broken = parse(b'if [ "$X" ; then\nvllm serve m --a\n')
    assert broken.errors == 1


def test_variables_that_multiply_are_refused_quickly() -> None:
    """Each array holds the previous one many times: expanding the last would make 64^8 words."""
    import time

    lines = [b"A0=(x)"]
    for i in range(1, 9):
        item = '"${A' + str(i - 1) + '[@]}"'
        lines.append(f"A{i}=({' '.join([item] * 64)})".encode())
    started = time.monotonic()
    with pytest.raises(ScriptTooLarge):
        parse(b"\n".join([*lines, b'vllm serve "${A8[@]}"']))
    assert time.monotonic() - started < 5


def test_lazy_import_of_tree_sitter() -> None:
    import subprocess
    import sys

    code = "import sys, bot.model.shell; print('tree_sitter' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
