"""Generate and mutate streams with ground truth, and fuzz a detector with them (``tcr fuzz``).

* :func:`messages` draws a message with its ground truth (what a correct detector
  shows, the calls with their arguments, the reasoning), built with the text from
  the contract of ARCHITECTURE.md §5, never by running a detector;
* :func:`chunkings` draws split points of a text; :func:`mutations` bends a
  recording's content where detectors break;
* :func:`run` fuzzes a detector with both against every oracle and returns a
  :class:`FuzzReport`; the first failure is shrunk and saved as a recording.

``messages``, ``mutations`` and ``run`` take a claim (``tcr.claims.Claim``):
calls are written in the dialects a detector claims, other dialects' markup is
mixed in as text it must show unchanged, and the checks look for claimed markers
only (``tcr.fuzz.repertoire``).
"""

from __future__ import annotations

from .model import Case, Finding, FuzzReport
from .mutate import mutations
from .runner import DEFAULT_SAVE, run
from .strategies import chunkings, messages, tool_lists
from .truth import Call, Message, Truth

__all__ = [
    "DEFAULT_SAVE",
    "Call",
    "Case",
    "Finding",
    "FuzzReport",
    "Message",
    "Truth",
    "chunkings",
    "messages",
    "mutations",
    "run",
    "tool_lists",
]
