"""What one decoded payload says (``Delta``), and native tool calls assembled from it.

A backend streams a native tool call (the ``tool_calls`` field, not markup in
the content) as fragments: OpenAI-style servers send the id and name once and
the arguments as string pieces, all tagged with the call's ``index``; Ollama
sends each call whole. :class:`CallAssembler` turns either into complete
:class:`NativeCall` values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Final

__all__ = [
    "CallAssembler",
    "Delta",
    "NativeCall",
    "SurrogateJoiner",
    "ToolCallFragment",
    "printable_delta",
    "scrub_surrogates",
]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_HIGH_SURROGATES: Final = ("\ud800", "\udbff")


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None  # isascii: fast


def scrub_surrogates(text: str) -> str:
    """``text`` with each surrogate pair joined into its character and each lone
    surrogate as U+FFFD.

    JSON's ``\\uXXXX`` escapes can spell surrogates; a Python str holding one
    cannot be encoded (printed, written as UTF-8 or msgpack), so none may leave
    the decoder.
    """
    if not _has_surrogate(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class SurrogateJoiner:
    """Rejoins a surrogate pair split between consecutive pieces of one text.

    Engines stream an emoji as ``"\\ud83d"`` in one event and ``"\\ude00"`` in
    the next (legal JSON). A piece ending in a high surrogate keeps it back
    until the next piece; :meth:`finish` gives what is still held, as U+FFFD.
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text, self._held = self._held + piece, ""
        if text and _HIGH_SURROGATES[0] <= text[-1] <= _HIGH_SURROGATES[1]:
            text, self._held = text[:-1], text[-1]
        return scrub_surrogates(text)

    def finish(self) -> str:
        held, self._held = self._held, ""
        return scrub_surrogates(held)


@dataclass(frozen=True, slots=True)
class ToolCallFragment:
    """One ``tool_calls`` entry of one payload.

    ``index`` is ``None`` for a call that arrived whole and takes the next
    free index (Ollama); ``arguments`` is this fragment's piece of the JSON
    arguments text (``""`` if it carried none).
    """

    index: int | None
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class NativeCall:
    """A native tool call, assembled; ``arguments`` is the concatenated JSON text."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True)
class Delta:
    """What one payload (SSE event, NDJSON line or engine chunk) said.

    ``done`` marks an in-band end of stream (``[DONE]``, Ollama ``done: true``,
    llama.cpp ``stop: true``); ``error`` an error the server reported in the
    stream. Fields the payload did not carry are ``None`` (or empty).
    """

    role: str | None = None
    content: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCallFragment, ...] = ()
    finish_reason: str | None = None
    done: bool = False
    error: str | None = None


class _CallBuilder:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []


class CallAssembler:
    """Gathers tool-call fragments by ``index`` into complete calls.

    The first non-empty ``id`` and ``name`` win: servers differ on whether
    they repeat them on later fragments, and a repeated name must not be
    concatenated. Argument pieces are concatenated in arrival order.
    """

    def __init__(self) -> None:
        self._builders: dict[int, _CallBuilder] = {}

    def add(self, fragment: ToolCallFragment) -> None:
        index = fragment.index
        if index is None:
            index = max(self._builders, default=-1) + 1
        builder = self._builders.get(index)
        if builder is None:
            builder = self._builders[index] = _CallBuilder()
        if fragment.id and builder.id is None:
            builder.id = fragment.id
        if fragment.name and builder.name is None:
            builder.name = fragment.name
        if fragment.arguments:
            builder.arguments.append(fragment.arguments)

    def calls(self) -> list[NativeCall]:
        """The calls so far, by index (a surrogate pair split between two argument
        pieces is rejoined; a lone surrogate anywhere becomes U+FFFD)."""
        return [
            NativeCall(
                index=index,
                id=_scrub_optional(b.id),
                name=_scrub_optional(b.name),
                arguments=scrub_surrogates("".join(b.arguments)),
            )
            for index, b in sorted(self._builders.items())
        ]


def _scrub_optional(text: str | None) -> str | None:
    return None if text is None else scrub_surrogates(text)


def printable_delta(delta: Delta, *, content: str | None, reasoning: str | None) -> Delta:
    """``delta`` with ``content`` and ``reasoning`` (their pairs already rejoined by
    a :class:`SurrogateJoiner`) and lone surrogates elsewhere as U+FFFD."""
    unchanged = content == delta.content and reasoning == delta.reasoning
    if unchanged and not any(map(_has_surrogate, _other_texts(delta))):
        return delta  # the usual case, kept cheap: replay decodes every delta
    return replace(
        delta,
        role=_scrub_optional(delta.role),
        content=content,
        reasoning=reasoning,
        tool_calls=tuple(
            replace(
                fragment,
                id=_scrub_optional(fragment.id),
                name=_scrub_optional(fragment.name),
                arguments=scrub_surrogates(fragment.arguments),
            )
            for fragment in delta.tool_calls
        ),
        finish_reason=_scrub_optional(delta.finish_reason),
        error=_scrub_optional(delta.error),
    )


def _other_texts(delta: Delta) -> Iterator[str]:
    """Every string of ``delta`` but its content and reasoning."""
    yield from (text for text in (delta.role, delta.finish_reason, delta.error) if text)
    for fragment in delta.tool_calls:
        yield from (text for text in (fragment.id, fragment.name, fragment.arguments) if text)
