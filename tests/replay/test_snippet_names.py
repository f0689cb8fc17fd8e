"""The pytest snippets of one report paste into one module: each defines its own test."""

from __future__ import annotations

import ast

import pytest

from tcr.corpora import ROOT
from tcr.detector.broken import BROKEN
from tcr.replay import run
from tcr.replay.model import Report
from tcr.snippet import regression_test, snippet_name


def pasted_together(report: Report) -> tuple[list[str], list[str]]:
    """(every printed snippet, the test names of the module they make pasted one after another).

    The report prints a snippet per finding, under its first failure."""
    snippets = [group.first[1].snippet for group in report.findings if group.first[1].snippet]
    module = "\n\n".join(snippets)
    compile(module, "pasted.py", "exec")
    tree = ast.parse(module)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    return snippets, names


@pytest.mark.slow  # every recorded stream per character; the naming alone is pinned below
def test_snippets_of_one_report_define_distinct_test_names() -> None:
    report = run(
        [ROOT / "recorded"],
        strategies=["original", "char"],
        detector="tcr.detector.broken:per_chunk_markers",
        checks=["no_leak", "invariance", "expected"],
    )
    snippets, names = pasted_together(report)

    assert len(snippets) > 3  # one bug, several findings: the case this is about
    assert len(names) == len(snippets) == len(set(names))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_snippet_of_a_report_over_a_broken_detector_compiles_together(name: str) -> None:
    small = [p for p in sorted(ROOT.rglob("*.msgpack")) if p.stat().st_size < 200_000]
    report = run(small, strategies=["original", "char"], detector=f"tcr.detector.broken:{name}")
    snippets, names = pasted_together(report)

    if not snippets:
        pytest.skip(f"{name} shows no finding over the small bundled recordings")
    assert len(names) == len(snippets) == len(set(names))
    namespace: dict[str, object] = {}
    exec(compile("\n\n".join(snippets), "pasted.py", "exec"), namespace)
    assert sorted(k for k in namespace if k.startswith("test_")) == sorted(names)


def test_a_snippet_keeps_its_name_from_run_to_run() -> None:
    def made() -> str:
        return regression_test(
            ["<", "tool_call>"],
            check="no_leak",
            found="no_leak/<tool_call>/hermes@split-in-opener",
            origin="tcr replay from a.msgpack",
        )

    assert made() == made()
    assert "def test_no_leak_tool_call_hermes_split_in_opener_" in made()


def test_signatures_that_read_alike_as_identifiers_get_distinct_names() -> None:
    body = "    assert False\n"
    assert snippet_name("no_leak/<tool_call>@whole", body) != snippet_name(
        "no_leak/<|tool_call>@whole", body
    )
    assert snippet_name("x@whole", body).isidentifier()
