"""Replay recordings through any detector under every rechunking (``tcr replay``).

``run()`` replays files or directories (or the bundled corpora) and returns a
``Report``; every failing chunking in it is shrunk to a minimal one, with a
one-line reproducer and a pytest snippet. ``check_chunks()`` is what such a
snippet calls.
"""

from __future__ import annotations

from .model import Failure, InputError, Outcome, Report
from .runner import DEFAULT_TRANSPORT_STRATEGIES, LAYERS, check_chunks, run

__all__ = [
    "DEFAULT_TRANSPORT_STRATEGIES",
    "LAYERS",
    "Failure",
    "InputError",
    "Outcome",
    "Report",
    "check_chunks",
    "run",
]
