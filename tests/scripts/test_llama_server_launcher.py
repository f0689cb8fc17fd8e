"""How the llama-server launcher starts the server, and reports one that will not start."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from llama_server import TEMPLATES, ended, server_args


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


def test_the_server_starts_without_repacking_on_loopback() -> None:
    # Repacking dies with SIGILL on CPUs that advertise AMX but cannot run it (ARCHITECTURE.md §9).
    args = server_args(Path("llama-server"), Path("m.gguf"), 8080, extra=["--verbose"])
    assert "--no-repack" in args
    assert args[args.index("--host") + 1] == "127.0.0.1"
    assert args[-1] == "--verbose"


def test_a_template_is_given_as_a_chat_template_file() -> None:
    args = server_args(Path("llama-server"), Path("m.gguf"), 8080, template="hermes.jinja")
    assert args[-2:] == ["--chat-template-file", str(TEMPLATES / "hermes.jinja")]
