"""A Hermes parser that never checks tool names: every call is accepted, even with ``tools=[]``.

SGLang's streaming detectors take the request's tools but, for many dialects,
only log a name the request did not declare and return the call anyway; with
no tools offered the parser still runs. That is a choice, not a bug (issue 32,
policies ``undeclared: accepted`` and ``empty_tools: parse``): a correct parser
may make it. Everything else is ``parsers.hermes``'s incremental parser, in
SGLang's shape (normal text, then per tool index the name and argument
fragments as they arrive), with the same ``Bug`` switches.

``tcr replay --detector parsers.undeclared:factory --dialect hermes``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from parsers.hermes import Bug, HermesParser
from tcr.adapters import IncrementalCallDetector

__all__ = ["Bug", "UndeclaredHermesParser", "factory", "factory_with"]


class UndeclaredHermesParser(HermesParser):
    """``HermesParser`` reading every call, whatever ``tools`` declares."""

    def __init__(self, bugs: Collection[Bug] = (), tools: Collection[str] | None = None) -> None:
        super().__init__(bugs, tools=None)  # the names are never checked
        self.declared = None if tools is None else tuple(tools)  # kept, as an engine logs them


def factory_with(bugs: Collection[Bug] = ()) -> Callable[..., IncrementalCallDetector]:
    """A factory of adapted ``UndeclaredHermesParser``s with ``bugs`` on."""

    def make(tools: Collection[str] | None = None) -> IncrementalCallDetector:
        parser = UndeclaredHermesParser(bugs, tools)
        return IncrementalCallDetector(
            parser.parse_streaming_increment, parser.flush, format="hermes"
        )

    return make


def factory(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The correct parser; it declares no claim: ``--dialect hermes`` says what it speaks."""
    return factory_with()(tools)


def __getattr__(name: str) -> Callable[..., IncrementalCallDetector]:
    """``parsers.undeclared:per_chunk_marker`` and the like: the parser with that one ``Bug`` on,
    for ``tcr replay``/``tcr fuzz --detector`` (each Bug's value names it)."""
    bug = next((b for b in Bug if b.value == name), None)
    if bug is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return factory_with([bug])
