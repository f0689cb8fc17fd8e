"""Pythonic call lists, ``[get_weather(city="Paris"), f(x=1)]``: reading and writing.

vLLM's ``pythonic`` and ``llama4_pythonic`` parsers
(``vllm/tool_parsers/pythonic_tool_parser.py``,
``vllm/entrypoints/openai/tool_parsers/llama4_pythonic_tool_parser.py``) run
``ast.parse`` on the text and accept an ``ast.List`` whose every element is an
``ast.Call`` of a bare name with keyword arguments whose values are literals:
constants, lists, and dicts with constant keys. The reference reads the same
with ``ast.parse(mode="eval")`` and ``ast.literal_eval`` per argument, the
library's own reader of literals, rather than a hand-written one: both quote
styles, escapes, implicit string concatenation and numbers all mean what Python
says they mean. It is stricter where vLLM is lax in ways that lose data:
a positional argument (which vLLM drops silently), a tuple, set, bytes or
complex value, or a non-string dict key (none has a JSON form) makes the body
no call list; a negative number (``ast.UnaryOp``, which vLLM refuses) is a
number, as ``literal_eval`` has it.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from tcr.dialects._calls import BodyError, ParsedCall, canonical_arguments
from tcr.dialects._record import BodyLexer, Call, Closing, Draws, Head, Tools
from tcr.dialects._writing import MAX_CALLS, BodyText, Calls

__all__ = [
    "AT_START_BRACKET",
    "FLAVORS",
    "HEAD",
    "MARKUP",
    "call_list",
    "call_text",
    "owns_call_list",
    "write_call_list",
]

# How the dialects opening on "[" at message start (pythonic, xlam) read a block: they
# must agree (``tcr.detector.formats.SHARING``), so they share one spelling of it. A
# ``[`` also starts prose and JSON answers (policy 8): each dialect adds its ``Head``.
AT_START_BRACKET: dict[str, Any] = {
    "opens": ("[",),
    "closes": (),
    "closing": Closing.BALANCED,
    "anywhere": False,
    "keep": 1,
    "answer_like": True,
    "first_lexer": BodyLexer.PYTHON,
}

# A call list opens with "[" then a name and "(" (white space between, as Python allows).
HEAD = Head(
    viable=re.compile(r"\[\s*(?:[^\W\d]\w*(?:\s*\()?)?"),
    done=re.compile(r"\[\s*[^\W\d]\w*\s*\("),
)
_OWNS_RE = re.compile(r"\s*\[\s*[^\W\d]")
# How a call list goes wrong; shrinking ends on "call". Each is no call list to ast.
FLAVORS = ("call", "call", "call", "bare_name", "positional", "variable", "nested_call")
# Argument strings that bite a lexer which ignores quotes or escapes.
MARKUP = ("')]", '")]', "\\'")


def owns_call_list(body: str) -> bool:
    """A ``[`` body whose first item starts with a name: a pythonic call list's."""
    return _OWNS_RE.match(body) is not None


# --- reading ---------------------------------------------------------------------------


def call_list(body: str) -> list[ParsedCall]:
    """The calls of a pythonic call list that is all of ``body`` (white space around)."""
    try:
        tree = ast.parse(body.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise BodyError("malformed", f"not a Python expression: {exc}") from None
    node = tree.body
    if not isinstance(node, ast.List) or not node.elts:
        raise BodyError("not_a_call", "not a non-empty list")
    return [_call(item) for item in node.elts]


def _call(node: ast.expr) -> ParsedCall:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise BodyError("not_a_call", "an item of the list is not a call of a name")
    if node.args:
        raise BodyError("not_a_call", f"{node.func.id}() has a positional argument")
    arguments: dict[str, object] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise BodyError("not_a_call", f"{node.func.id}() unpacks **arguments")
        if kw.arg in arguments:  # ast.parse lets it through; Python's compiler does not
            raise BodyError("malformed", f"{node.func.id}() repeats {kw.arg}=")
        try:
            value = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise BodyError("not_a_call", f"{kw.arg}= is not a literal") from None
        arguments[kw.arg] = _json_value(value, kw.arg)
    return ParsedCall(node.func.id, canonical_arguments(arguments))


def _json_value(value: object, where: str) -> object:
    """``value`` if it has a JSON form as it is (no tuple, set, bytes, non-string key)."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, list):
        return [_json_value(item, where) for item in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _json_value(v, where) for k, v in value.items()}
    raise BodyError("not_a_call", f"{where}= holds a {type(value).__name__}, which JSON has not")


# --- writing ---------------------------------------------------------------------------


def _literal(value: object, double: bool) -> str:
    """``value`` as a Python literal; strings in double quotes (JSON's escapes) or repr's."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if double else repr(value)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item, double) for item in value) + "]"
    if isinstance(value, dict):
        fields = (f"{_literal(k, double)}: {_literal(v, double)}" for k, v in value.items())
        return "{" + ", ".join(fields) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def _identifier(word: str) -> bool:
    """Python reads ``word`` back as this very name (no keyword, no NFKC change)."""
    plain = word.isidentifier() and not keyword.iskeyword(word)
    return plain and unicodedata.normalize("NFKC", word) == word


def _keyword(key: str, k: int) -> str:
    """``key`` if Python reads it back as that keyword argument name, else ``argK``."""
    return key if _identifier(key) else f"arg{k}"


def _keywords(arguments: dict[str, Any]) -> dict[str, Any]:
    return {_keyword(key, k): value for k, (key, value) in enumerate(arguments.items())}


def _item(draws: Draws, name: str, flavor: str, markup: bool) -> tuple[str, Call | None]:
    src = draws.tail
    double = src.flag()
    arguments = _keywords(draws.arguments(markup=markup))
    spaced = src.flag()
    pairs = [f"{key}={_literal(value, double)}" for key, value in arguments.items()]
    if flavor == "bare_name":
        return name, None
    if flavor == "positional":
        return f"{name}({_literal(draws.string(markup=False), double)})", None
    if flavor == "variable":
        pairs.append("city=paris")
    elif flavor == "nested_call":
        pairs.append("when=now()")
    written = f"{name}({(', ' if spaced else ',').join(pairs)})"
    return written, (Call(name, arguments) if flavor == "call" else None)


def write_call_list(
    draws: Draws, tools: Tools, *, most: int = MAX_CALLS
) -> tuple[BodyText, tuple[Call, ...], bool]:
    """A drawn call list (the first item may be a near miss), the calls it holds, and
    whether a correct detector accepts it."""
    calls = Calls(draws, tools, most=most, flavors=FLAVORS)
    # "server.tool(…)" is an attribute call, "shell-exec(…)" a subtraction: no call list.
    accepted = calls.accepted() and all(_identifier(name) for name in calls.names)
    # A rejected list may be released before its end (policy 8): what follows the cut is
    # printed, so it must hold no marker of its own.
    items = [
        _item(draws, name, flavor, accepted)
        for name, flavor in zip(calls.names, calls.flavors(), strict=True)
    ]
    inner, between = draws.option(0, (("", ", "), ("", ","), ("\n  ", ",\n  ")))
    body = BodyText()
    text = "[" + inner + between.join(written for written, _ in items)
    body.add(text + inner.rstrip(" ") + "]", fragile=True)
    found = tuple(call for _, call in items if call is not None)
    return body, found, accepted


def call_text(calls: Sequence[tuple[str, dict[str, Any]]], double: bool = True) -> str:
    """``[name(key=value, …), …]`` for fixed calls (examples and cases)."""
    items = (
        f"{name}({', '.join(f'{k}={_literal(v, double)}' for k, v in args.items())})"
        for name, args in calls
    )
    return "[" + ", ".join(items) + "]"
