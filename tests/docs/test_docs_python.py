"""The Python examples of the README and the docs pages run as written.

Each block is run on its own, in a fresh folder, as a reader pastes it. Every example
shows a call being found (``ToolCall(name='get_weather'``) and then checks chunkings,
printing a line per violation: none may print one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import PythonBlock, python_blocks

BLOCKS = python_blocks()


def test_the_docs_have_python_examples() -> None:
    assert len(BLOCKS) >= 6, [b.where for b in BLOCKS]


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_python_example_runs(
    block: PythonBlock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(block.source, block.where, "exec"), {"__name__": "__docs__"})
    out = capsys.readouterr().out
    assert "ToolCall(name='get_weather'" in out
    assert "random" not in out  # no chunking reported a violation
