"""The one permitted failure (every kind of bad input raises a ``TcrError``), and exit codes.

The exit codes are those of every command (ARCHITECTURE.md §8): 0 all checks pass, 1 a
violation was found, 2 usage or input error (a detector that crashes is unusable
input too), 130 interrupted by Ctrl-C.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_VIOLATION",
    "CorpusError",
    "DecodeError",
    "FactoryError",
    "TcrError",
    "did_you_mean",
]

EXIT_OK: Final = 0
EXIT_VIOLATION: Final = 1
EXIT_ERROR: Final = 2
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as a shell reports it: not 1, a violation


class TcrError(Exception):
    """Bad input of any kind. The message says what, where, and what to do."""


class CorpusError(TcrError):
    """A recording file that cannot be read (corrupt, truncated mid-header, too new)."""


class DecodeError(TcrError):
    """A transport body (SSE, NDJSON, JSON chunk) that cannot be decoded."""


class FactoryError(TcrError):
    """A detector factory that raised, or returned something that is not a detector."""


def did_you_mean(word: str, known: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to a mistyped ``word``, else ``""``."""
    close = difflib.get_close_matches(word, [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
