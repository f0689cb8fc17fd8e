"""What one decoded payload says (``Delta``), and native tool calls assembled from it.

A backend streams a native tool call (the ``tool_calls`` field, not markup in
the content) as fragments: OpenAI-style servers send the id and name once and
the arguments as string pieces, all tagged with the call's ``index``; Ollama
sends each call whole. :class:`CallAssembler` turns either into complete
:class:`NativeCall` values.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CallAssembler", "Delta", "NativeCall", "ToolCallFragment"]


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
        """The calls so far, by index."""
        return [
            NativeCall(index=index, id=b.id, name=b.name, arguments="".join(b.arguments))
            for index, b in sorted(self._builders.items())
        ]
