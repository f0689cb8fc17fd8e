"""``tcr tui`` in a real terminal: tmux at 80x24, keys sent, the screen read back.

Runs on a private tmux server (``-L``), so it touches no one's sessions.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len
from tui_helpers import DROPS_PENDING, END_IN_PREFIX

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed (apt-get install -y tmux)"
)
WIDTH, HEIGHT = 80, 24


def installed_tcr() -> str | None:
    """The ``tcr`` script of the Python running the tests (a venv not on PATH included),
    else the one on PATH: not another checkout's."""
    beside = Path(sys.executable).parent / "tcr"
    return str(beside) if beside.is_file() else shutil.which("tcr")


def tui_command() -> list[str]:
    """``tcr tui`` once the command is registered, else the same click command run directly."""
    tcr = installed_tcr()
    if tcr is not None:
        done = subprocess.run([tcr, "tui", "--help"], capture_output=True, timeout=60)
        if done.returncode == 0:
            return [tcr, "tui"]
    return [sys.executable, "-c", "from tcr.commands.tui import tui; tui()"]


class Terminal:
    def __init__(self, socket: str, config: Path) -> None:
        self.socket = socket
        self.config = config

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert TMUX is not None
        return subprocess.run(
            [TMUX, "-L", self.socket, "-f", str(self.config), *args],
            capture_output=True,
            text=True,
            check=check,
        )

    def screen(self) -> list[str]:
        lines = self.tmux("capture-pane", "-p", "-t", "tui").stdout.split("\n")
        return lines[:-1] if lines and lines[-1] == "" else lines  # the final line break

    def wait_for(self, ready: Callable[[list[str]], bool], what: str) -> list[str]:
        deadline = time.monotonic() + 30
        screen: list[str] = []
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(screen))

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", "tui", check=False).returncode == 0


def _shows(screen: list[str], text: str) -> bool:
    return any(text in line for line in screen)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    config = tmp_path / "tmux.conf"
    config.write_text("set-option -g status off\n")  # the pane is the whole 80x24 window
    term = Terminal(f"tcr-tui-test-{os.getpid()}", config)
    command = shlex.join([*tui_command(), str(END_IN_PREFIX), "--detector", DROPS_PENDING])
    term.tmux("new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), "-s", "tui", command)
    try:
        yield term
    finally:
        term.tmux("kill-server", check=False)


def box(screen: list[str], title: str) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of the pane whose top border carries ``title``."""
    top = next(i for i, line in enumerate(screen) if f"╭─ {title} " in line)
    left = screen[top].index(f"╭─ {title} ")
    right = screen[top].index("╮", left)
    bottom = next(i for i in range(top + 1, len(screen)) if screen[i][left] == "╰")
    return top, left, bottom, right


_SCROLL_BAR = str.maketrans("", "", "▁▂▃▄▅▆▇█")


def words(text: str) -> str:
    """``text`` without white space or scroll bar: the same however a pane wraps it."""
    return "".join(text.translate(_SCROLL_BAR).split())


def detail_words(screen: list[str]) -> str:
    if not any("╭─ Detail " in line for line in screen):
        return ""
    top, left, bottom, right = box(screen, "Detail")
    return words("".join(line[left + 1 : right] for line in screen[top + 1 : bottom]))


def assert_layout(screen: list[str]) -> None:
    assert len(screen) == HEIGHT
    assert all(cell_len(line) <= WIDTH for line in screen), "a line overflows the terminal"
    assert screen[0].startswith(" end_inside_marker_prefix.msgpack · original 1/2 · step ")
    footer = screen[-1]
    for words in ("np step", "][ change", "v fail", "gG ends", "r rechunk", "/ find"):
        assert words in footer
    for words in ("d diff", "bcC break", "? help", "q quit"):
        assert words in footer
    for title in ("Stream", "Steps", "Detail"):
        top, left, bottom, right = box(screen, title)
        assert screen[bottom][right] == "╯"
        for line in screen[top + 1 : bottom]:  # no wrapped garbage: every row inside its box
            assert line[left] == "│" and line[right] == "│", f"{title}: {line!r}"
    assert box(screen, "Stream")[1:4:2] == (0, WIDTH - 1)
    assert box(screen, "Detail")[3] == WIDTH - 1


def test_the_debugger_keeps_its_layout_in_an_80x24_terminal(terminal: Terminal) -> None:
    screen = terminal.wait_for(
        lambda s: "violations" in s[0] and "quit" in s[-1], "the first screen and the verdict"
    )
    assert_layout(screen)
    assert "step 0/12" in screen[0]

    terminal.tmux("send-keys", "-t", "tui", "v")
    # The header repaints before the detail pane, and the pane wraps again once its
    # scroll bar appears: wait for the whole of both violations to be in view.
    violations = (
        "conservation: lost 7 characters at end: finish() never emitted '<tool_c'",
        "expected: shown text differs at character 18: got '', expected '<tool_c'",
    )
    screen = terminal.wait_for(
        lambda s: "step fin/12" in s[0] and all(words(v) in detail_words(s) for v in violations),
        "the jump to the violation, with both violations whole in the detail pane",
    )
    assert_layout(screen)
    assert words("finish() after 12 chunks") in detail_words(screen)
    stream = box(screen, "Stream")
    assert "¦<¦t¦oo¦l¦_¦c" in screen[stream[0] + 2]

    terminal.tmux("send-keys", "-t", "tui", "?")
    screen = terminal.wait_for(lambda s: any("╭─ Help " in line for line in s), "the help")
    assert all(cell_len(line) <= WIDTH for line in screen)
    terminal.tmux("send-keys", "-t", "tui", "Escape")
    screen = terminal.wait_for(lambda s: not any("Help" in line for line in s), "the help to close")
    assert_layout(screen)

    terminal.tmux("send-keys", "-t", "tui", "q")
    deadline = time.monotonic() + 15
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not terminal.alive(), "q did not quit"


def test_replay_debug_opens_the_debugger_at_the_first_failure(tmp_path: Path) -> None:
    tcr = installed_tcr()
    assert tcr is not None, "the tcr command is installed with the package"
    config = tmp_path / "tmux.conf"
    config.write_text("set-option -g status off\n")
    term = Terminal(f"tcr-replay-debug-{os.getpid()}", config)
    command = shlex.join(
        [tcr, "replay", str(END_IN_PREFIX), "--detector", DROPS_PENDING, "--rechunk", "original",
         "--check", "conservation", "--debug"]
    )  # fmt: skip
    term.tmux("new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), "-s", "tui", command)
    try:
        screen = term.wait_for(
            lambda s: "step fin/" in s[0] and _shows(s, "conservation: lost 7"),
            "the debugger at the failing step",
        )
        # drops_pending_at_finish fails unsplit too: the shrunk chunking is "whole".
        assert screen[0].startswith(" end_inside_marker_prefix.msgpack · whole 1/3 · step fin/")
        assert any("conservation: lost 7" in line for line in screen)
        term.tmux("send-keys", "-t", "tui", "q")
        deadline = time.monotonic() + 15
        while term.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not term.alive(), "q did not quit"
    finally:
        term.tmux("kill-server", check=False)
