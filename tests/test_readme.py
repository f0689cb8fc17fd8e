"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("source", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_example_runs(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(source, str(README), "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "ToolCall(name='get_weather'" in out
    assert "random" not in out  # no chunking reported a violation


def test_readme_names_the_test_command_that_ci_runs() -> None:
    ci = (README.parent / ".ci" / "run").read_text()
    command = (
        "python scripts/test_tools.py && \\\n"
        '  LLAMA_CPP_BUILD_JOBS=2 CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \\\n'
        "  python -m pip install -e '.[test]' && python -m pytest"
    )
    assert command in README.read_text()
    assert command in ci


def test_worked_example_output_is_what_tcr_prints() -> None:
    from tcr.corpora import ROOT
    from tcr.replay import run

    path = ROOT / "recorded" / "tool_call_tag_json.msgpack"
    report = run(
        [path],
        strategies=["original"],
        checks=["no_leak"],
        detector="tcr.detector.broken:per_chunk_markers",
    )
    (_, failure), *_ = report.failures
    readme = README.read_text()
    reproducer = failure.reproducer.replace(str(path), "corpora/recorded/" + path.name)
    assert reproducer.split(" --rechunk ")[1] in readme
    assert f"chunks = {list(failure.chunks)!r}" in readme
    assert f"shrunk from {failure.original_splits} to {len(failure.splits)} split points" in readme


def test_readme_names_the_main_job_command() -> None:
    assert "python -m pip install . && tcr replay" in README.read_text()
