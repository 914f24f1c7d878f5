"""A small evaluator of GitHub Actions expressions, for testing the example workflow's `if:` and
`concurrency` on event payloads: literals, property paths, `!`, `==`, `!=`, `&&`, `||` (which, as
on GitHub, give one of their operands), parentheses and the functions `startsWith`, `endsWith`,
`contains`, `format` and `fromJSON`. As GitHub documents, string comparison ignores case, and
`false`, `0`, `''` and `null` are falsy."""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(&&|\|\||==|!=|[!(),])|(-?\d+(?:\.\d+)?)|([A-Za-z_][\w.\-]*))")


def _tokens(text: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    at, text = 0, text.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        assert match and match.end() > at, f"cannot read the expression at {text[at : at + 30]!r}"
        string, operator, number, name = match.groups()
        if string is not None:
            found.append(("value", string[1:-1].replace("''", "'")))
        elif operator is not None:
            found.append(("op", operator))
        elif number is not None:
            found.append(("value", float(number) if "." in number else int(number)))
        else:
            found.append(("name", name))
        at = match.end()
    return found


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.upper() == right.upper()
    return left == right


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "")


def _format(template: str, *args: Any) -> str:
    return re.sub(r"\{(\d+)\}", lambda m: _text(args[int(m.group(1))]), template)


def _contains(where: Any, item: Any) -> bool:
    if isinstance(where, list):
        return any(_equal(value, item) for value in where)
    return _text(item).upper() in _text(where).upper()


_FUNCTIONS = {
    "startswith": lambda a, b: _text(a).upper().startswith(_text(b).upper()),
    "endswith": lambda a, b: _text(a).upper().endswith(_text(b).upper()),
    "contains": _contains,
    "format": _format,
    "fromjson": json.loads,
}


class _Parser:
    def __init__(self, text: str, context: dict[str, Any]) -> None:
        self.tokens, self.at, self.context = _tokens(text), 0, context

    def _peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self, operator: str) -> bool:
        if self._peek() == ("op", operator):
            self.at += 1
            return True
        return False

    def parse(self) -> Any:
        value = self._or()
        assert self._peek() is None, f"unexpected {self._peek()}"
        return value

    def _or(self) -> Any:
        value = self._and()
        while self._take("||"):
            other = self._and()
            value = value if _truthy(value) else other
        return value

    def _and(self) -> Any:
        value = self._compare()
        while self._take("&&"):
            other = self._compare()
            value = other if _truthy(value) else value
        return value

    def _compare(self) -> Any:
        value = self._unary()
        while True:
            if self._take("=="):
                value = _equal(value, self._unary())
            elif self._take("!="):
                value = not _equal(value, self._unary())
            else:
                return value

    def _unary(self) -> Any:
        if self._take("!"):
            return not _truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        token = self._peek()
        assert token is not None, "the expression ends too early"
        self.at += 1
        kind, value = token
        if kind == "value":
            return value
        if token == ("op", "("):
            inner = self._or()
            assert self._take(")")
            return inner
        assert kind == "name", f"unexpected {token}"
        if self._take("("):
            args = []
            while not self._take(")"):
                args.append(self._or())
                self._take(",")
            return _FUNCTIONS[value.lower()](*args)
        if value in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[value]
        found: Any = self.context
        for part in value.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        return found


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    """The value of `expression` (without `${{ }}`) in `context` (`{"github": {...}}`)."""
    return _Parser(expression, context).parse()


def interpolate(template: str, context: dict[str, Any]) -> str:
    """A string with `${{ expression }}` parts, as GitHub fills it in."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _text(evaluate(m.group(1), context)), template, flags=re.S)
