"""What a benchmark script runs in a throughput run, as a short id.

Two versions of a script with one id run the same benchmark, so a PR that changes only a
script's comments or layout, or only the branches an eval job takes (`EVAL_ONLY=true`, which
InferenceX's workflow sets on eval jobs alone), changes no run. Everything else counts: a
changed word, string or heredoc line, or a command split into two, is a change (the id errs
towards "changed", never towards "the same").
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from bot.model import bash
from bot.model.bash import MAX_BYTES, MAX_NODES

if TYPE_CHECKING:
    from tree_sitter import Node

_EVAL = b"EVAL_ONLY"
#: `$EVAL_ONLY`, `${EVAL_ONLY}`, `${EVAL_ONLY:-false}`, quoted or not: the workflow's value.
_WORKFLOW_EVAL = re.compile(rb'"?\$\{?EVAL_ONLY(?::?-(?:false)?)?\}?"?')
#: Nodes whose whole text is data: the spaces inside a string or a heredoc count.
_VERBATIM = frozenset(
    {"string", "raw_string", "ansi_c_string", "translated_string", "heredoc_body", "regex", "extglob_pattern"}
)


def blob_id(data: bytes) -> str:
    """A file's git blob id, shortened (what `git log` shows of it)."""
    known = getattr(data, "blob", None)  # an `Oversized` file: its id is known, its bytes are not
    if known:
        return str(known)[:12]
    return hashlib.sha1(b"blob %d\0" % len(data) + bytes(data), usedforsecurity=False).hexdigest()[:12]


def code_id(data: bytes) -> str:
    """The id of what a script runs in a throughput run: its syntax tree without comments and
    eval-only branches, with the text of every word, string and heredoc. Layout between words
    (indentation, blank lines, line continuations) does not count. A script too large or too
    deep to read is named by its blob id (every change of its bytes counts)."""
    if getattr(data, "blob", None) or len(data) > MAX_BYTES:
        return blob_id(data)
    try:
        root = bash.parse(data)
    except bash.ScriptTooLarge:  # more syntax nodes than a review walks
        return blob_id(data)
    cut_eval = _eval_is_the_workflows(root)
    digest = hashlib.sha1(usedforsecurity=False)
    stack: list[Node | bytes] = [root]
    walked = 0
    while stack:
        node = stack.pop()
        if isinstance(node, bytes):
            digest.update(node)
            continue
        walked += 1
        if walked > MAX_NODES:
            return blob_id(data)
        if node.type == "comment":
            continue
        taken = _benchmark_branch(node) if cut_eval and node.type == "if_statement" else None
        if taken is not None:
            stack.extend(reversed(taken))
        elif not node.children or _verbatim(node):
            digest.update(b"%s=%s\x00" % (node.type.encode(), node.text or b""))
        else:
            digest.update(b"(%s " % node.type.encode())
            stack.append(b")")
            stack.extend(reversed(node.children))
    return "c" + digest.hexdigest()[:11]


def _verbatim(node: Node) -> bool:
    """Whether a node's own text counts as it is: a string or heredoc, or a node with text
    (besides spaces and line continuations) that its children do not cover."""
    if node.type in _VERBATIM:
        return True
    text, start, at = node.text or b"", node.start_byte, node.start_byte
    for child in [*node.children, None]:
        end = child.start_byte if child is not None else node.end_byte
        if text[at - start : end - start].replace(b"\\\n", b"").strip():
            return True
        if child is not None:
            at = child.end_byte
    return False


def _eval_is_the_workflows(root: Node) -> bool:
    """Whether `EVAL_ONLY` keeps the workflow's value (no assignment in the script gives it
    another), so that branches on it can be cut."""
    stack, walked = [root], 0
    while stack:
        node = stack.pop()
        walked += 1
        if walked > MAX_NODES:
            return False
        if node.type == "variable_assignment":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            ours = value is not None and _WORKFLOW_EVAL.fullmatch(value.text or b"")
            if name is not None and name.text == _EVAL and not ours:
                return False
        stack.extend(node.children)
    return True


def _benchmark_branch(node: Node) -> list[Node] | None:
    """For an `if` whose condition a throughput run decides (`EVAL_ONLY` is not "true"): the
    statements that run; None when it is not so decided (an `elif`, a condition on anything
    else, a syntax error)."""
    children = node.children
    if node.has_error or any(child.type == "elif_clause" for child in children):
        return None
    conditions = [
        child
        for i, child in enumerate(children)
        if node.field_name_for_child(i) == "condition" and child.type not in (";", "&", "\n")
    ]
    taken = _value(conditions[0]) if len(conditions) == 1 else None
    if taken is None:
        return None
    if taken:
        then = next(i for i, child in enumerate(children) if child.type == "then")
        body = []
        for child in children[then + 1 :]:
            if child.type in ("else_clause", "fi"):
                break
            body.append(child)
        return body
    other = next((child for child in children if child.type == "else_clause"), None)
    return other.children[1:] if other is not None else []  # the statements after `else`


def _value(node: Node) -> bool | None:
    """A condition's value in a throughput run (`EVAL_ONLY` unset or "false"), or None when
    that does not decide it."""
    if node.type in ("test_command", "parenthesized_expression"):
        inner = [child for child in node.children if child.is_named]
        return _value(inner[0]) if len(inner) == 1 else None
    if node.type not in ("list", "binary_expression") or len(node.children) != 3:
        return None
    left, op, right = node.children
    if op.type in ("&&", "-a", "||", "-o"):
        return _both(_value(left), _value(right), op.type in ("&&", "-a"))
    compared = (_is_eval(left) and _is_true(right)) or (_is_eval(right) and _is_true(left))
    if op.type in ("=", "==", "!=") and compared:
        return op.type == "!="
    return None


def _both(left: bool | None, right: bool | None, conjunction: bool) -> bool | None:
    """Three-valued `and`/`or`: decided when one side decides it, or both are known."""
    if conjunction:
        return False if False in (left, right) else (True if left and right else None)
    return True if True in (left, right) else (False if left is False and right is False else None)


def _is_eval(node: Node) -> bool:
    """`$EVAL_ONLY`, `${EVAL_ONLY}` or `${EVAL_ONLY:-false}`, quoted or not."""
    if node.type == "string":
        inner = [child for child in node.children if child.is_named]
        return len(inner) == 1 and _is_eval(inner[0]) and node.text.strip(b'"') == inner[0].text
    if node.type not in ("simple_expansion", "expansion"):
        return False
    named = any(child.type == "variable_name" and child.text == _EVAL for child in node.children)
    return named and bool(_WORKFLOW_EVAL.fullmatch(node.text or b""))


def _is_true(node: Node) -> bool:
    """The literal `true`, quoted or not."""
    return node.type in ("string", "raw_string", "word") and (node.text or b"").strip(b"\"'") == b"true"
