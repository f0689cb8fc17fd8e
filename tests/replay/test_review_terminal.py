"""``tcr review`` at a real terminal (a pty): one keypress per answer, no Enter."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tcr.corpora import ROOT
from tcr.corpus import read_recording, write_expectation

SOURCE = ROOT / "recorded" / "tool_call_tag_json.msgpack"
TCR = Path(sys.executable).parent / "tcr"
pytestmark = pytest.mark.skipif(not TCR.is_file(), reason="the tcr script is not installed")


class Pty:
    """A process on the slave side of an 80-column pty; the test types on the master."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = dict(os.environ, TERM="xterm-256color")
        env.pop("COLUMNS", None)
        self.process = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = b""

    def read_until(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {text!r} in:\n{self.seen.decode(errors='replace')}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:  # the process ended and closed the slave side
                    break
        return self.seen.decode(errors="replace")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> int:
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


def stale_copy(folder: Path, name: str) -> Path:
    path = folder / name
    shutil.copy(SOURCE, path)
    stale = {"name": "get_weather", "arguments": {"city": "London"}}
    write_expectation(path, {"text": "stale", "calls": [stale], "reasoning": ""})
    return path


def test_review_answers_with_one_keypress_each_without_enter(tmp_path: Path) -> None:
    first, second = stale_copy(tmp_path, "a.msgpack"), stale_copy(tmp_path, "b.msgpack")
    term = Pty([str(TCR), "review", "a.msgpack", "b.msgpack"], tmp_path)
    try:
        term.read_until("q quit: ")
        term.type("a")  # no Enter
        term.read_until("2/2 b.msgpack")
        term.type("r")
        out = term.read_until("accepted 1, rejected 1, of 2 changed")
    finally:
        code = term.close()
    assert code == 0, out
    assert read_recording(first).expect == read_recording(SOURCE).expect
    assert read_recording(second).expect is not None
    assert read_recording(second).expect["text"] == "stale"


def test_review_at_a_terminal_shows_words_and_arguments_that_changed(tmp_path: Path) -> None:
    stale_copy(tmp_path, "a.msgpack")
    term = Pty([str(TCR), "review", "a.msgpack"], tmp_path)
    try:
        out = term.read_until("q quit: ")
        term.type("q")
        out = term.read_until("accepted 0, rejected 0, of 1 changed")
    finally:
        code = term.close()
    assert code == 0
    plain = _without_escapes(out)
    assert "[-stale-]{+The weather in the city" in plain
    assert '~ call 0 (get_weather) argument \'city\': "London" → "Paris"' in plain
    assert "\x1b[" in out  # coloured, at a terminal


def test_review_asks_again_after_a_key_that_is_not_an_answer(tmp_path: Path) -> None:
    stale_copy(tmp_path, "a.msgpack")
    term = Pty([str(TCR), "review", "a.msgpack"], tmp_path)
    try:
        term.read_until("q quit: ")
        term.type("x")
        term.read_until("'x'? one of a, r, s, A, q")
        term.type("s")
        out = term.read_until("accepted 0, rejected 0, of 1 changed")
    finally:
        code = term.close()
    assert code == 0 and "skip" in out


def test_review_piped_reads_one_answer_per_line(tmp_path: Path) -> None:
    path = stale_copy(tmp_path, "a.msgpack")
    done = piped_review(tmp_path, "a\n")
    assert done.returncode == 0, done.stderr
    assert "accepted 1, rejected 0, of 1 changed" in done.stdout
    assert "\x1b[" not in done.stdout
    assert read_recording(path).expect == read_recording(SOURCE).expect


def test_review_piped_at_end_of_input_quits(tmp_path: Path) -> None:
    stale_copy(tmp_path, "a.msgpack")
    done = piped_review(tmp_path, "")
    assert done.returncode == 0, done.stderr
    assert "quit (end of input)" in done.stdout


def piped_review(folder: Path, answers: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TCR), "review", "a.msgpack"], cwd=folder, input=answers, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip


def _without_escapes(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")
