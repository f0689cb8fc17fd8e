"""How the llama-server launcher reports a server that will not start."""

from __future__ import annotations

import signal
import subprocess
import sys

from llama_server import ended


def _died_of(sig: signal.Signals) -> int:
    code = f"import os, signal; os.kill(os.getpid(), signal.{sig.name})"
    return subprocess.run([sys.executable, "-c", code], check=False).returncode


def test_a_server_killed_by_sigill_is_named_with_the_way_out() -> None:
    assert ended(_died_of(signal.SIGILL)) == (
        "was killed by SIGILL (see ARCHITECTURE.md §9 on --no-repack)"
    )


def test_another_signal_is_named() -> None:
    assert ended(_died_of(signal.SIGTERM)) == "was killed by SIGTERM"


def test_an_exit_code_is_given_as_it_is() -> None:
    assert ended(3) == "exited with 3"
