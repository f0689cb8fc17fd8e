"""What the README says of the project and the code is true.

Its Python examples, the dialect table and the holdback bound moved to the docs pages:
``tests/docs`` runs and checks them there (and the README's, should it show some again).
"""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_names_the_test_command_that_ci_runs() -> None:
    ci = (README.parent / ".ci" / "run").read_text()
    command = (
        "python scripts/test_tools.py && \\\n"
        '  LLAMA_CPP_BUILD_JOBS=2 CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \\\n'
        "  python -m pip install -e '.[test]' && python -m pytest -n auto\n"
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
    from tcr.findings import shrunk

    assert (
        f"shrunk {shrunk(failure.original_splits, len(failure.splits), 'split point')};" in readme
    )


def test_readme_names_the_main_job_command() -> None:
    assert "python -m pip install . && tcr replay" in README.read_text()
