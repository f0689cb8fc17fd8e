"""What a detector says it speaks: its claim (ARCHITECTURE.md §5.7, DESIGN §5 "Claims").

tcr judges a detector against its claim, never against dialects it does not
speak: unclaimed markup is plain text for it and must pass through unchanged.

A claim is

- ``dialects``: the dialect ids it parses (``tcr dialects`` lists them); ``None``
  claims every one, as the reference does. Reasoning is the ``think`` dialect:
  a detector whose server handles reasoning elsewhere leaves it out. Whether a
  JSON answer at message start may be a call is the ``bare_json`` dialect.
- ``empty_tools``: what ``tools=[]`` (no tools offered) means, the one choice
  where correct parsers differ: ``"reject"`` rejects every call (policy 7, the
  reference's choice), ``"text"`` parses nothing, so all markup is text (what a
  server does when a request offers no tools).

Where a claim comes from, first found wins for each part:

1. the command line: ``--dialect ID`` (repeatable) and ``--empty-tools``;
2. the detector a factory makes, then the factory itself: an attribute
   ``tcr_claim`` holding a ``Claim``, a list of dialect ids, or a mapping with the
   keys ``dialects`` and ``empty_tools``;
3. otherwise every dialect, with the reference's choices.

A claim that names an unknown dialect, names none, or has a part of the wrong
type is a ``TcrError`` in one line listing what is known.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcr.detector.formats import claimed
from tcr.errors import TcrError

__all__ = ["ATTRIBUTE", "EMPTY_TOOLS", "EVERYTHING", "Claim", "read_claim"]

ATTRIBUTE = "tcr_claim"  # the attribute a factory or detector declares its claim in
EMPTY_TOOLS = ("reject", "text")  # the choices for tools=[]
_KEYS = ("dialects", "empty_tools")


@dataclass(frozen=True, slots=True)
class Claim:
    """The dialects a detector parses and its choices (module docstring)."""

    dialects: frozenset[str] | None = None  # None: every registered dialect
    empty_tools: str = "reject"

    def __post_init__(self) -> None:
        if self.dialects is not None:
            ids = frozenset(d.id for d in claimed(self.dialects))  # unknown or empty: TcrError
            object.__setattr__(self, "dialects", ids)
        if self.empty_tools not in EMPTY_TOOLS:
            raise TcrError(
                f"claim: empty_tools is {self.empty_tools!r}; known: {', '.join(EMPTY_TOOLS)}"
            )

    @classmethod
    def of(cls, value: object, *, where: str = "claim") -> Claim:
        """A ``Claim`` from what a user wrote: a ``Claim``, a list of ids or a mapping.

        ``None`` is every dialect. Anything else is a ``TcrError`` naming ``where``.
        """
        if value is None:
            return EVERYTHING
        if isinstance(value, Claim):
            return value
        if isinstance(value, Mapping):
            unknown = [k for k in value if k not in _KEYS]
            if unknown:
                raise TcrError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(_KEYS)}")
            dialects = value.get("dialects")
            empty_tools = value.get("empty_tools", "reject")
            if not isinstance(empty_tools, str):
                raise TcrError(
                    f"{where}: empty_tools is a {type(empty_tools).__name__}, "
                    f"not one of {', '.join(EMPTY_TOOLS)}"
                )
            return cls(_ids(dialects, where), empty_tools)
        return cls(_ids(value, where))

    @property
    def everything(self) -> bool:
        """Whether every dialect is claimed (the reference's claim)."""
        return self.dialects is None

    def speaks(self, dialect_id: str) -> bool:
        """Whether this claim parses the dialect ``dialect_id``."""
        return self.dialects is None or dialect_id in self.dialects

    def parses(self, tools: Sequence[str] | None) -> frozenset[str] | None:
        """The dialect ids parsed in a message offering ``tools`` (``None``: every one).

        Empty when ``tools=[]`` means text: nothing is parsed at all.
        """
        if self.empty_tools == "text" and tools is not None and not tools:
            return frozenset()
        return self.dialects

    @property
    def reasoning(self) -> bool:
        """Whether the detector parses reasoning (the ``think`` dialect)."""
        return self.speaks("think")

    def with_options(
        self, dialects: Iterable[str] | None = None, empty_tools: str | None = None
    ) -> Claim:
        """This claim with the command line's parts put over it (``None``: keep this one's)."""
        return Claim(
            self.dialects if dialects is None else _ids(list(dialects), "--dialect"),
            self.empty_tools if empty_tools is None else empty_tools,
        )

    def to_map(self) -> dict[str, Any]:
        """The claim as JSON data (the stdio protocol's ``claim``); ``Claim.of`` reads it back."""
        dialects = None if self.dialects is None else sorted(self.dialects)
        return {"dialects": dialects, "empty_tools": self.empty_tools}

    def options(self) -> list[str]:
        """The command-line options that state this claim again (for reproducers)."""
        shown: list[str] = []
        for dialect_id in sorted(self.dialects or ()):
            shown += ["--dialect", dialect_id]
        if self.empty_tools != "reject":
            shown += ["--empty-tools", self.empty_tools]
        return shown

    def __str__(self) -> str:
        ids = "every dialect" if self.dialects is None else ", ".join(sorted(self.dialects))
        return ids if self.empty_tools == "reject" else f"{ids}; tools=[] means {self.empty_tools}"


EVERYTHING = Claim()


def _ids(value: object, where: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TcrError(
            f"{where}: dialects must be a list of dialect ids, not {type(value).__name__} "
            f"{_short(value)}"
        )
    ids = list(value)
    wrong = [i for i in ids if not isinstance(i, str)]
    if wrong:
        raise TcrError(f"{where}: dialect id {_short(wrong[0])} is not a string")
    try:
        return frozenset(d.id for d in claimed(ids))
    except TcrError as error:
        raise TcrError(f"{where}: {error}") from None


def read_claim(*holders: Any) -> Claim | None:
    """The claim declared by the first of ``holders`` (detector, factory) that declares one.

    ``None`` when none does. A declared claim of the wrong shape is a ``TcrError``
    naming the holder's attribute.
    """
    for holder in holders:
        try:
            value = getattr(holder, ATTRIBUTE, None)
        except Exception as error:  # a property that raises is still the user's claim
            raise TcrError(f"{_name(holder)}.{ATTRIBUTE}: reading it raised {error!r}") from None
        if value is not None:
            return Claim.of(value, where=f"{_name(holder)}.{ATTRIBUTE}")
    return None


def _name(holder: object) -> str:
    return getattr(holder, "__qualname__", None) or type(holder).__name__


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
