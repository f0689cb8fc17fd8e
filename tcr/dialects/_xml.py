"""Calls written as XML-ish elements with named parameters, described by their spellings.

Qwen3-Coder's ``<function=N><parameter=K>V</parameter></function>``, Seed-OSS's
(the same body in other tags), MiniMax M2's ``<invoke name="N"><parameter
name="K">V</parameter></invoke>``, Step-3's ``<steptml:invoke>`` and DeepSeek V3.2's
DSML elements differ only in how the two elements are spelled; one ``XmlCalls``
row per dialect gives the parser and the renderer. DSML alone says each value's
type in the parameter element (``string="true"``: text, ``"false"``: JSON,
``typed_by``), so its values need no schema.
"""

from __future__ import annotations

import dataclasses
import json
import re
from functools import cache
from typing import Any

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    Trim,
    canonical_arguments,
    check_name,
    decode_whole,
    matches,
    text_call,
    walk,
)
from tcr.dialects._record import Call, Closing, Dialect, Draws, Rendered, Tools
from tcr.dialects._writing import (
    MAX_CALLS,
    XML_FLAVORS,
    BodyText,
    Calls,
    rendered,
    xml_arguments,
)

__all__ = ["XmlCalls", "without_cut_closer"]

# A near miss: the parameters written without the element that names the tool.
_BARE = "bare_parameters"


@cache
def _element(opening: str, quote: str, closing: str, scanned: bool = False) -> re.Pattern[str]:
    """``opening`` + quoted name + ``>``, the inner text, and ``closing``.

    The lookahead makes a closing tag count only where the structure may go on, so a
    value that mentions it in passing does not end early (vLLM's non-greedy
    ``<invoke name=(.*?)</invoke>`` does). ``scanned``: the first closing tag ends the
    element, as every engine reads MiniMax M2's.
    """
    name = r'[^"\n>]*' if quote else r"[^>\n]*"
    after = r"\s*" if scanned else rf"\s*(?={re.escape(opening)}|\Z)"
    return re.compile(
        rf"{re.escape(opening + quote)}({name}){re.escape(quote)}>(.*?){re.escape(closing)}"
        + after,
        re.S,
    )


@cache
def _typed_parameter(opening: str, attribute: str, closing: str) -> re.Pattern[str]:
    """``opening`` + quoted key + ``attribute="true|false"`` + ``>``, the value, ``closing``;
    the lookahead as in ``_element``."""
    return re.compile(
        rf'{re.escape(opening)}"([^"\n>]*)" {re.escape(attribute)}="(true|false)">(.*?)'
        rf"{re.escape(closing)}\s*(?={re.escape(opening)}|\Z)",
        re.S,
    )


def without_cut_closer(body: str, closer: str) -> str:
    """``body`` less a prefix of ``closer`` the end of the message cut it at (``</tool_``).

    At least ``</``: a lone ``<`` may as well begin the next element, which leaves the
    block unterminated (policy 5). A body that is nothing more is still no call.
    """
    for k in range(len(closer) - 1, 1, -1):
        if body.endswith(closer[:k]):
            body = body[:-k]
            if not body.strip():
                raise BodyError("malformed", "the block is empty")
            return body
    return body


@dataclasses.dataclass(frozen=True, slots=True)
class XmlCalls:
    """The spellings of one XML-ish dialect's body: one call element per call, each
    holding one parameter element per argument, values written as text."""

    call: str  # the call element up to its name: "<function=", '<invoke name='
    call_close: str
    parameter: str  # the parameter element up to its key
    quote: str  # around names and keys: "" or '"'
    variant: str  # the rendered variant's name
    call_what: str  # the call element and the parameter element, as errors name them
    parameter_what: str
    name_where: str  # where a bad tool name was found, as errors say it
    # The complaint about a body without a call element; None: an empty body is no call.
    no_call: str | None = None
    bare_parameters: bool = False  # render the near miss "parameters without a call"
    wrapped: bool | None = None  # values on their own lines: always, or drawn (None)
    parameter_close: str = "</parameter>"
    # The parameter attribute that types each value: "true" text as written, "false"
    # JSON; "": every value is text that the tool's schema types.
    typed_by: str = ""
    trim: Trim = Trim.ONE_NEWLINE  # what the engines cut from a value's ends
    # Read the way every engine reads the dialect: the first closing tag ends an element
    # (a value cannot hold one) and text between elements is skipped. False: elements
    # follow one another, and a closing tag counts only where the structure goes on.
    scanned: bool = False

    @property
    def tokens(self) -> tuple[str, ...]:
        return (self.call, self.call_close, self.parameter, self.parameter_close)

    def parse(self, body: str) -> list[ParsedCall]:
        """The calls of ``body``: call elements, one or more, and nothing else."""
        pattern = _element(self.call, self.quote, self.call_close, self.scanned)
        elements = self._read(pattern, body.strip(), self.call_what, whole=self.call)
        if not elements and self.no_call is not None:
            raise BodyError("malformed", self.no_call)
        parameter = _element(self.parameter, self.quote, self.parameter_close, self.scanned)
        calls: list[ParsedCall] = []
        for name, inner in elements:
            checked = check_name(name.strip(), self.name_where)
            if self.typed_by:
                calls.append(self._typed_call(checked, inner.strip()))
            else:
                pairs = self._read(parameter, inner.strip(), self.parameter_what)
                calls.append(text_call(checked, pairs, self.trim))
        return calls

    def _read(
        self, pattern: re.Pattern[str], text: str, what: str, whole: str = ""
    ) -> list[tuple[str, str]]:
        """The elements of ``text``. Scanned, text between them is skipped; ``whole``: the
        opening of an element that may not be left cut short after the last one (a block
        the end of the message cut inside its next call is no call, policy 5)."""
        if not self.scanned:
            return walk(pattern, text, what)
        found = list(pattern.finditer(text))
        tail = text[found[-1].end() :] if found else text
        if whole and (whole in tail or any(tail.endswith(whole[:k]) for k in range(1, len(whole)))):
            raise BodyError("malformed", f"{what} cut short: {tail[-30:]!r}")
        return [(m.group(1), m.group(2)) for m in found]

    def _typed_call(self, name: str, inner: str) -> ParsedCall:
        """A call whose parameters say their type: text kept verbatim, or one JSON value."""
        pattern = _typed_parameter(self.parameter, self.typed_by, self.parameter_close)
        arguments: dict[str, object] = {}
        for match in matches(pattern, inner, self.parameter_what):
            key, is_text, value = match.groups()
            if not key.strip():
                raise BodyError("malformed", "an argument with an empty name")
            arguments[key.strip()] = value if is_text == "true" else decode_whole(value)
        return ParsedCall(name, canonical_arguments(arguments))

    def _written(self, params: list[tuple[str, str, object]]) -> str:
        q, close = self.quote, self.parameter_close
        return "".join(
            f"{self.parameter}{q}{key}{q}{self._type_attribute(meant)}>{value}{close}\n"
            for key, value, meant in params
        )

    def _element(self, name: str, params: list[tuple[str, str, object]]) -> str:
        q = self.quote
        return f"{self.call}{q}{name}{q}>\n{self._written(params)}{self.call_close}"

    def body(self, *calls: Call) -> str:
        """A body of ``calls`` as the renderer writes one: each element on its own line,
        string values as they are, others as JSON."""
        elements = (
            self._element(
                call.name,
                [
                    (key, value if isinstance(value, str) else json.dumps(value), value)
                    for key, value in call.arguments.items()
                ],
            )
            + "\n"
            for call in calls
        )
        return "\n" + "".join(elements)

    def _type_attribute(self, meant: object) -> str:
        if not self.typed_by:
            return ""
        return f' {self.typed_by}="{"true" if isinstance(meant, str) else "false"}"'

    def render(self, dialect: Dialect, draws: Draws, tools: Tools) -> Rendered:
        """A block of ``dialect`` spelled by ``draws``: calls, or near misses of them."""
        flavors = (*XML_FLAVORS, _BARE) if self.bare_parameters else XML_FLAVORS
        calls = Calls(draws, tools, most=MAX_CALLS, flavors=flavors)
        body = BodyText()
        body.add("\n")
        found: list[Call] = []
        for name, flavor in zip(calls.names, calls.flavors(), strict=True):
            params = xml_arguments(draws, wrapped=self.wrapped, trim=self.trim)
            if flavor == _BARE:
                body.add(self._written(params) or self._written([("x", "1", 1)]), fragile=True)
                continue
            written = "" if flavor == "missing_name" else name
            body.add(self._element(written, params), fragile=True)
            body.add("\n")
            if flavor == "call":
                found.append(Call(name, {key: meant for key, _, meant in params}))
        return rendered(dialect, self.variant, body, calls.accepted(), tuple(found))

    def dialect(self, opens: str, closes: str, **fields: Any) -> Dialect:
        """The record of a dialect whose blocks are these call elements between ``opens`` and
        ``closes``: parsed and rendered by this row; ``fields`` are the dialect's own."""
        record: Dialect

        def render(draws: Draws, tools: Tools) -> Rendered:
            return self.render(record, draws, tools)

        record = Dialect(
            opens=(opens,),
            closes=(closes,),
            closing=Closing.MARKER,
            parse=self.parse,
            render=render,
            **fields,
        )
        return record
