"""``python scripts/llama_server.py`` as the README runs it: a server until Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llama_server.py"


def _as_a_background_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a script inherits


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_the_script_serves_on_loopback_until_stopped(stop: signal.Signals) -> None:
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=_as_a_background_job,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once the server is healthy
        assert line.startswith("llama-server on http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url + "/health", timeout=10) as response:
            assert response.status == 200
        process.send_signal(stop)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    port = url.rsplit(":", 1)[1]
    survivors = subprocess.run(
        ["pgrep", "-f", f"llama-server .*--port {port}"], capture_output=True, text=True
    )
    assert survivors.stdout == ""  # the server went with the script
