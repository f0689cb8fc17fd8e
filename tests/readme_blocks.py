"""The shell blocks of the README and the docs pages, read as a newcomer reads them:
commands and what they print.

Not tests: ``test_readme_commands.py`` runs the commands, ``tests/docs`` the Python
blocks. A ``console`` block holds
``$ command`` lines (a trailing ``\\`` continues one), each followed by the output the
README shows for it; ``...`` stands for lines left out. In ``sh`` and ``yaml`` blocks
every line that is not a comment is a command (``- run: CMD`` in YAML), and ``#`` lines
right after a command are the output it shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DOCUMENTS", "README", "Block", "Command", "PythonBlock", "blocks", "every_block", "in_order",
    "python_blocks", "shows",
]  # fmt: skip

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# What a newcomer reads: the README, then the docs site's pages.
DOCUMENTS = (README, *sorted((ROOT / "docs").rglob("*.md")))
_FENCE = re.compile(r"^```(console|sh|yaml)\n(.*?)^```", re.M | re.S)
_PYTHON = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
ELIDED = "..."


@dataclass(frozen=True, slots=True)
class Command:
    line: str  # as written, continuations joined with a space
    output: tuple[str, ...]  # what the README shows it printing


@dataclass(frozen=True, slots=True)
class Block:
    language: str
    at: int  # the line of its fence
    commands: tuple[Command, ...]
    page: Path = README

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.at}"

    @property
    def first(self) -> str:
        return self.commands[0].line


def blocks(text: str | None = None, page: Path = README) -> list[Block]:
    text = page.read_text() if text is None else text
    found = []
    for match in _FENCE.finditer(text):
        language, body = match.group(1), match.group(2)
        at = text.count("\n", 0, match.start()) + 1
        read = _console if language == "console" else _script
        found.append(Block(language, at, tuple(read(body.splitlines(), language)), page))
    return found


def every_block() -> list[Block]:
    """The shell blocks of the README and of every docs page."""
    return [found for page in DOCUMENTS for found in blocks(page=page)]


@dataclass(frozen=True, slots=True)
class PythonBlock:
    page: Path
    at: int  # the line of its fence
    source: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.at}"


def python_blocks() -> list[PythonBlock]:
    """The Python blocks of the README and of every docs page."""
    found = []
    for page in DOCUMENTS:
        text = page.read_text(encoding="utf-8")
        for match in _PYTHON.finditer(text):
            at = text.count("\n", 0, match.start()) + 1
            found.append(PythonBlock(page, at, match.group(1)))
    return found


def _console(lines: list[str], language: str) -> list[Command]:
    commands: list[Command] = []
    command: list[str] = []
    output: list[str] = []
    for line in lines:
        if line.startswith("$ ") or (command and command[-1].endswith("\\")):
            if line.startswith("$ ") and command and not command[-1].endswith("\\"):
                commands.append(Command(_joined(command), tuple(output)))
                command, output = [], []
            command.append(line.removeprefix("$ "))
        else:
            output.append(line)
    if command:
        commands.append(Command(_joined(command), tuple(output)))
    return commands


def _script(lines: list[str], language: str) -> list[Command]:
    commands: list[Command] = []
    after_command = False  # a comment right under a command is its output, else a heading
    for line in lines:
        stripped = line.strip()
        if language == "yaml":
            if stripped.startswith("- run: "):
                commands.append(Command(stripped.removeprefix("- run: "), ()))
            continue
        if stripped.startswith("#"):
            if after_command and not commands[-1].line.endswith("\\"):
                last = commands[-1]
                commands[-1] = Command(last.line, (*last.output, stripped.removeprefix("# ")))
            continue
        after_command = bool(stripped)
        if not stripped:
            continue
        elif commands and commands[-1].line.endswith("\\"):
            last = commands[-1]
            commands[-1] = Command(last.line[:-1].rstrip() + " " + stripped, last.output)
        else:
            commands.append(Command(_without_comment(stripped), ()))
    return commands


def _joined(parts: list[str]) -> str:
    return " ".join(p.removesuffix("\\").strip() for p in parts)


def _without_comment(line: str) -> str:
    return re.sub(r"\s+#\s.*$", "", line)


# Numbers that differ from run to run: timings, measured growths and the cost probe's sizes.
_VARYING = re.compile(  # in re.escape()d text
    r"\d[\d,.\\]*(?=\\ s\b)"  # 0.03 s
    r"|\d[\d.\\]*(?=x\b)"  # growth 1.1x
    r"|(?<=from\\ )\d[\d,]*|(?<=to\\ )\d[\d,]*(?=\\ characters)"  # the probe's sizes
)


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(_VARYING.sub(r"[\\d,.]+", re.escape(line)) + r"\Z")


def shows(expected: str, printed: str) -> bool:
    """``printed`` is the ``expected`` line, except for the timings and growths it carries
    and trailing spaces (rich pads and wraps at them)."""
    return _pattern(expected.rstrip()).match(printed.rstrip()) is not None


def in_order(expected: tuple[str, ...], printed: list[str]) -> list[str]:
    """The expected lines (``...`` left out) not found in ``printed`` in their order;
    without a ``...`` between two, they must be adjacent."""
    missing: list[str] = []
    at, adjacent = 0, False
    for line in expected:
        if line == ELIDED:
            adjacent = False
            continue
        window = range(at, at + 1) if adjacent else range(at, len(printed))
        hit = next((i for i in window if i < len(printed) and shows(line, printed[i])), None)
        if hit is None:
            missing.append(line)
            adjacent = False
            continue
        at, adjacent = hit + 1, True
    return missing
