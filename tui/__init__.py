"""Textual step debugger for the detector state machine (``tcr tui``).

``make_app`` builds the debugger for one recording (the command and the tests
share it); ``open_at_failure`` runs it positioned at the first violation (what
``tcr replay --debug`` calls). The model underneath knows nothing of Textual:
``tcr.tui.model`` (the session), ``tcr.tui.source`` (the content, read
incrementally), ``tcr.tui.run`` (one chunking, traced step by step),
``tcr.tui.navigation`` (where each key moves) and ``tcr.tui.diff`` (what should
have been shown).
"""

from __future__ import annotations

from .app import DebuggerApp, make_app, open_at_failure
from .model import Session, open_session

__all__ = ["DebuggerApp", "Session", "make_app", "open_at_failure", "open_session"]
