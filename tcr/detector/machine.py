"""The detector's states and legal transitions, as data (ARCHITECTURE.md §5.5; ADR 0018, §15.1).

``printing → matching_prefix → in_block``: the TUI draws this table and the
detector refuses any move it does not list, so the picture and the code
cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["FSM", "TRANSITIONS", "DetectorState", "IllegalTransition"]


class FSM(Enum):
    PRINTING = "printing"
    MATCHING_PREFIX = "matching_prefix"
    IN_BLOCK = "in_block"


# {state: {trigger: next state}}; a trigger is what the input just did.
TRANSITIONS: dict[FSM, dict[str, FSM]] = {
    FSM.PRINTING: {
        "text": FSM.PRINTING,  # no marker can start here: emitted at once
        "prefix": FSM.MATCHING_PREFIX,  # the tail could still become an opening marker
        "open": FSM.IN_BLOCK,  # an opening marker completed
    },
    FSM.MATCHING_PREFIX: {
        "prefix": FSM.MATCHING_PREFIX,
        "flush": FSM.PRINTING,  # no marker possible any more: the held text is released
        "open": FSM.IN_BLOCK,
    },
    FSM.IN_BLOCK: {
        "body": FSM.IN_BLOCK,
        "close": FSM.PRINTING,  # closing marker (or balancing bracket) seen
        "release": FSM.PRINTING,  # certain not to be a call: shown, back to printing
        "too_long": FSM.PRINTING,  # max_block reached: memory stays bounded
    },
}


class IllegalTransition(RuntimeError):
    """A bug in the detector itself: a move the table does not allow."""

    def __init__(self, state: FSM, trigger: str) -> None:
        super().__init__(f"detector: no transition from {state.value!r} on {trigger!r}")


@dataclass(frozen=True, slots=True)
class DetectorState:
    """A snapshot for tracing: what the state machine holds after a step.

    ``block`` is joined on access: the parts list is append-only while a block
    is open, so taking a snapshot per step stays O(1) instead of copying the
    whole block every time (which would make tracing quadratic).
    """

    fsm: FSM
    format: str | None  # the format learned so far (session memory)
    block_format: str | None  # the format of the block being read, if any
    pending: str  # text held back because it could still become a marker
    offset: int  # input characters consumed so far
    # The triggers of the state changes the last feed() or finish() made, in order:
    # which of a state's moves was taken (in_block → printing is close, release or
    # too_long) is known only here; the step debugger shows it.
    moves: tuple[str, ...] = ()
    _parts: tuple[list[str], int, str] = ([], 0, "")

    @property
    def block(self) -> str:
        """The block's raw text so far (opening marker included)."""
        parts, count, tail = self._parts
        return "".join(parts[:count]) + tail

    @property
    def block_length(self) -> int:
        return len(self.block)
