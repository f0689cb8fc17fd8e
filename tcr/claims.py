"""What a detector says it speaks: its claim (ARCHITECTURE.md §5.7, docs/explanation/claims.md).

tcr judges a detector against its claim, never against dialects it does not
speak: unclaimed markup is plain text for it and must pass through unchanged.

A claim is

- ``dialects``: the dialect ids it parses (``tcr dialects`` lists them); ``None``
  claims every one, as the reference does. Reasoning is the ``think`` dialect:
  a detector whose server handles reasoning elsewhere leaves it out. Whether a
  JSON answer at message start may be a call is the ``bare_json`` dialect.
- ``empty_tools``: what ``tools=[]`` (no tools offered) means: ``"reject"`` rejects
  every call (policy 7, the reference's choice), ``"text"`` parses nothing, so all
  markup is text (what a server does when a request offers no tools), ``"parse"``
  as if any tool were declared, ``"drop"`` parses and drops every call. It is one of
  the policies (``tcr.policies``); ``empty_tools`` states it as it always has.
- ``policies``: the policies it pins (``tcr.policies.Policies``; a map
  ``{policy id: choice}`` as given): enforced, never read from probes. The others
  are read from probe messages before judging (``tcr.probes``).
- ``special_tokens``: whether the dialects' special tokens (``<|call|>``,
  ``[TOOL_CALLS]``, ``Dialect.special_tokens``) reach it whole. ``"split"`` (the
  default): a proxy-side parser reads text that any re-chunking layer may have
  cut anywhere. ``"whole"``: an engine-side parser sees token ids, so no chunk
  boundary can fall inside one of the claimed dialects' special tokens, and tcr
  never makes one (every rechunking strategy, fuzz's chunkings and the shrinker
  keep them whole).

Where a claim comes from, first found wins for each part:

1. the command line: ``--dialect ID`` (repeatable), ``--empty-tools``,
   ``--special-tokens`` and ``--policy ID=CHOICE`` (repeatable);
2. the detector a factory makes, then the factory itself: an attribute
   ``tcr_claim`` holding a ``Claim``, a list of dialect ids, or a mapping with the
   keys ``dialects``, ``empty_tools``, ``special_tokens`` and ``policies``;
3. otherwise every dialect, with the reference's choices.

A claim that names an unknown dialect, names none, or has a part of the wrong
type is a ``TcrError`` in one line listing what is known.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcr.detector.formats import claimed
from tcr.errors import TcrError, did_you_mean
from tcr.policies import NONE, Policies, policy

__all__ = ["ATTRIBUTE", "EMPTY_TOOLS", "EVERYTHING", "SPECIAL_TOKENS", "Claim", "read_claim"]

ATTRIBUTE = "tcr_claim"  # the attribute a factory or detector declares its claim in
EMPTY_TOOLS = tuple(c.id for c in policy("empty_tools").choices)  # the choices for tools=[]
SPECIAL_TOKENS = ("split", "whole")  # whether special tokens may reach it cut in pieces
_KEYS = ("dialects", "empty_tools", "special_tokens", "policies")


@dataclass(frozen=True, slots=True)
class Claim:
    """The dialects a detector parses and its choices (module docstring)."""

    dialects: frozenset[str] | None = None  # None: every registered dialect
    empty_tools: str = "reject"
    special_tokens: str = "split"  # "whole": an engine-side parser, it sees token ids
    policies: Policies = NONE  # pinned and read choices (tcr.policies); empty_tools is one

    def __post_init__(self) -> None:
        if self.dialects is not None:
            ids = frozenset(d.id for d in claimed(self.dialects))  # unknown or empty: TcrError
            object.__setattr__(self, "dialects", ids)
        if self.empty_tools not in EMPTY_TOOLS:
            raise TcrError(
                f"claim: empty_tools is {self.empty_tools!r}; known: {', '.join(EMPTY_TOOLS)}"
            )
        # ``empty_tools`` and ``policies`` state one choice: the policies' when they hold
        # it, else a non-reference empty_tools is pinned (as --empty-tools always was).
        held = dict(self.policies.chosen).get("empty_tools")
        if held is not None:
            object.__setattr__(self, "empty_tools", held)
        elif self.empty_tools != "reject":
            object.__setattr__(
                self, "policies", self.policies.pinning({"empty_tools": self.empty_tools})
            )
        if self.special_tokens not in SPECIAL_TOKENS:
            raise TcrError(
                f"claim: special_tokens is {self.special_tokens!r}; "
                f"known: {', '.join(SPECIAL_TOKENS)}"
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
            empty_tools = _choice(value, "empty_tools", EMPTY_TOOLS, where)
            special_tokens = _choice(value, "special_tokens", SPECIAL_TOKENS, where)
            pinned = Policies.of(value.get("policies"), where=f"{where}: policies")
            # A non-reference empty_tools is pinned (__post_init__); "reject" is what every
            # map said before policies existed (Claim.to_map, the stdio protocol): the
            # reference's choice, read from the probes like the others.
            return cls(_ids(dialects, where), empty_tools, special_tokens, pinned)
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
    def tokens_whole(self) -> bool:
        """Whether special tokens reach the detector whole (an engine-side parser)."""
        return self.special_tokens == "whole"

    @property
    def special_markers(self) -> tuple[str, ...]:
        """The special tokens of the claimed dialects (``Dialect.special_tokens``), longest
        first: what the ``tokens`` strategy never cuts inside, and no strategy does when
        they reach the detector whole."""
        return _special_markers(self.dialects)

    @property
    def reasoning(self) -> bool:
        """Whether the detector parses reasoning (the ``think`` dialect)."""
        return self.speaks("think")

    def with_options(
        self,
        dialects: Iterable[str] | None = None,
        empty_tools: str | None = None,
        special_tokens: str | None = None,
        policies: Mapping[str, str] | None = None,
    ) -> Claim:
        """This claim with the command line's parts put over it (``None``: keep this one's);
        ``policies`` (``--policy``) and ``empty_tools`` are pinned."""
        pinned = self.policies.pinning(policies or {})
        if empty_tools is not None:
            if empty_tools not in EMPTY_TOOLS:
                hint = did_you_mean(empty_tools, EMPTY_TOOLS)
                known = ", ".join(EMPTY_TOOLS)
                raise TcrError(f"claim: empty_tools is {empty_tools!r}{hint}; known: {known}")
            pinned = pinned.pinning({"empty_tools": empty_tools})
        return Claim(
            self.dialects if dialects is None else _ids(list(dialects), "--dialect"),
            pinned.choice("empty_tools"),
            self.special_tokens if special_tokens is None else special_tokens,
            pinned,
        )

    def with_policies(self, policies: Policies) -> Claim:
        """This claim judged with ``policies`` (pinned and read: ``tcr.probes``)."""
        return Claim(self.dialects, policies.choice("empty_tools"), self.special_tokens, policies)

    def choice(self, policy_id: str) -> str:
        """The choice this claim is judged with for ``policy_id`` (``tcr.policies``)."""
        return self.policies.choice(policy_id)

    @property
    def judged_line(self) -> str:
        """The line every report starts with: the claim and the policies as read."""
        shown = "every dialect" if self.dialects is None else ", ".join(sorted(self.dialects))
        if self.tokens_whole:
            shown += " (special tokens whole)"
        return f"judged against: {shown}; {self.policies.line()}"

    def to_map(self) -> dict[str, Any]:
        """The claim as JSON data (the stdio protocol's ``claim``); ``Claim.of`` reads it back.

        ``special_tokens`` is there only when ``"whole"``, so a harness that predates it
        sees what it saw."""
        dialects = None if self.dialects is None else sorted(self.dialects)
        shown: dict[str, Any] = {"dialects": dialects, "empty_tools": self.empty_tools}
        if self.tokens_whole:
            shown["special_tokens"] = self.special_tokens
        # the top-level "empty_tools": "reject" pins nothing (every claim map said it before
        # policies existed): a pinned reject is restated with the other policies
        restated = {
            k: v for k, v in self.policies.restated().items() if k != "empty_tools" or v == "reject"
        }
        if restated:  # only when there are any, so a harness that predates them sees what it saw
            shown["policies"] = restated
        return shown

    def options(self) -> list[str]:
        """The command-line options that state this claim again (for reproducers)."""
        shown: list[str] = []
        for dialect_id in sorted(self.dialects or ()):
            shown += ["--dialect", dialect_id]
        if self.empty_tools != "reject":
            shown += ["--empty-tools", self.empty_tools]
        if self.tokens_whole:
            shown += ["--special-tokens", self.special_tokens]
        return shown + self.policies.options(skip=("empty_tools",))

    def __str__(self) -> str:
        shown = "every dialect" if self.dialects is None else ", ".join(sorted(self.dialects))
        if self.empty_tools != "reject":
            shown += f"; tools=[] means {self.empty_tools}"
        if self.tokens_whole:
            shown += "; special tokens whole"
        other = self.policies.options(skip=("empty_tools",))
        if other:
            shown += "; " + ", ".join(other[1::2])
        return shown


EVERYTHING = Claim()


@functools.cache
def _special_markers(ids: frozenset[str] | None) -> tuple[str, ...]:
    markers = {m for d in claimed(ids) for m in d.special_tokens}
    return tuple(sorted(markers, key=lambda m: (-len(m), m)))


def _choice(value: Mapping[str, object], name: str, known: tuple[str, ...], where: str) -> str:
    chosen = value.get(name, known[0])
    if not isinstance(chosen, str):
        raise TcrError(
            f"{where}: {name} is a {type(chosen).__name__}, not one of {', '.join(known)}"
        )
    return chosen


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
