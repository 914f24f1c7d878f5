"""Why a file is not valid YAML, as a catalog message in the reader's language.

libyaml (and `bot.yamlsafe`) say what is wrong in English (`did not find expected ',' or ']'`).
Each problem libyaml and the loader can report is named here by a message id, with what it
quotes (the missing tokens, an alias's name) kept as written, so the sentence reads in the
language asked for and the detail stays the parser's. A problem this table does not know is
shown as the parser wrote it, inside a sentence of the reader's language (`yaml-problem-other`).
"""

from __future__ import annotations

import re

from bot.catalog import Msg, msg
from bot.yamlsafe import YamlProblem

#: libyaml's "expected" problems that name tokens (`','`, `']'`, `':'`, `<document start>`).
_TOKENS = re.compile(
    r"(?:did not|could not) find (?:the )?expected ('[^']+'(?: or '[^']+')*|<document start>)$"
)
#: A name the loader quotes (`found undefined alias 'x'`).
_NAMED = re.compile(r"found (undefined alias|duplicate anchor) '([^']*)'$")
#: A character the reader refuses (`unacceptable character #x0007: …`).
_CHARACTER = re.compile(r"unacceptable character (#x[0-9a-fA-F]+)")
#: A tagged scalar whose text is not of its type (`'x' is not a valid int`).
_VALUE = re.compile(r"('.*') is not a valid (\w+)$")
#: A tag on the wrong kind of node (`expected a scalar node, but found sequence (…)`).
_NODE = re.compile(r"expected a (scalar|sequence|mapping) node, but found (scalar|sequence|mapping)\b")
#: A tag the loader has no constructor for.
_TAG = re.compile(r"could not determine a constructor for the tag ('.*')$")
#: Problems without anything quoted, each one message.
_FIXED = {
    "did not find expected key": "yaml-problem-key",
    "did not find expected '-' indicator": "yaml-problem-dash",
    "did not find expected node content": "yaml-problem-node",
    "did not find expected comment or line break": "yaml-problem-line-end",
    "did not find expected alphabetic or numeric character": "yaml-problem-name",
    "mapping values are not allowed in this context": "yaml-problem-colon",
    "block sequence entries are not allowed in this context": "yaml-problem-entry",
    "mapping keys are not allowed in this context": "yaml-problem-question",
    "found character that cannot start any token": "yaml-problem-character",
    "found unexpected end of stream": "yaml-problem-end",
    "found unknown escape character": "yaml-problem-escape",
    "found a tab character that violates indentation": "yaml-problem-tab",
    "found a tab character where an indentation space is expected": "yaml-problem-tab",
    "found unexpected document indicator": "yaml-problem-document-marker",
    "expected a single document in the stream": "yaml-problem-documents",
    "found an unhashable mapping key": "yaml-problem-key-collection",
    "found undefined tag handle": "yaml-problem-tag-handle",
    "`<<` (merge) is only allowed as a mapping key": "yaml-problem-merge-key",
    "expected a mapping or list of mappings for merging": "yaml-problem-merge-value",
}
#: The loader's own limits (`YamlProblem.kind`), each one message.
_KINDS = {
    "nul-byte": "yaml-problem-nul",
    "too-deep": "yaml-problem-deep",
    "alias-bomb": "yaml-problem-aliases",
}


def problem(exc: YamlProblem) -> Msg:
    """What `exc` says is wrong, as a catalog message (without the file, line and column, which
    the caller names)."""
    detail = " ".join(exc.detail.split())
    if exc.kind == "too-large":
        return msg("yaml-problem-size", size=exc.params.get("size"), limit=exc.params.get("limit"))
    if exc.kind == "invalid-utf8":
        return msg("yaml-problem-utf8")
    if exc.kind in _KINDS:
        return msg(_KINDS[exc.kind])
    tokens = _TOKENS.fullmatch(detail)
    if tokens:
        return msg("yaml-problem-expected", tokens=re.findall(r"'[^']+'|<document start>", tokens[1]))
    named = _NAMED.fullmatch(detail)
    if named:
        return msg(
            "yaml-problem-alias" if named[1] == "undefined alias" else "yaml-problem-anchor", name=named[2]
        )
    if detail in _FIXED:
        return msg(_FIXED[detail])
    character = _CHARACTER.match(detail)
    if character:
        return msg("yaml-problem-control", character=character[1])
    value = _VALUE.fullmatch(detail)
    if value:
        return msg("yaml-problem-value", value=value[1], tag=value[2])
    node = _NODE.match(detail)
    if node:
        return msg("yaml-problem-node-kind", wanted=node[1], found=node[2])
    tag = _TAG.fullmatch(detail)
    if tag:
        return msg("yaml-problem-tag", tag=tag[1])
    return msg("yaml-problem-other", detail=detail)
