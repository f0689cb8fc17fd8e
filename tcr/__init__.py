"""tcr: replay-and-fuzz debugging for recorded LLM token streams."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from tcr.errors import CorpusError, DecodeError, TcrError

try:
    __version__ = version("tcr")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0+unknown"

__all__ = ["CorpusError", "DecodeError", "TcrError", "__version__"]
