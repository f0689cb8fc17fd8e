"""The recorder's one error type."""

from __future__ import annotations

from tcr.errors import TcrError

__all__ = ["RecordError"]


class RecordError(TcrError):
    """A recording or an import that could not be made: a bad option, an endpoint
    that never answered, a file in no format tcr can import. The message is one
    line naming what and where."""
