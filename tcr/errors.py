"""The one permitted failure: every kind of bad input raises a ``TcrError``."""

from __future__ import annotations

__all__ = ["CorpusError", "DecodeError", "TcrError"]


class TcrError(Exception):
    """Bad input of any kind. The message says what, where, and what to do."""


class CorpusError(TcrError):
    """A recording file that cannot be read (corrupt, truncated mid-header, too new)."""


class DecodeError(TcrError):
    """A transport body (SSE, NDJSON, JSON chunk) that cannot be decoded."""
