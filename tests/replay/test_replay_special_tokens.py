"""Replay tells a finding that needs a split inside a special token ("only when a proxy
re-chunks") from one an engine's own chunking shows, in every output, and never cuts a
special token for a detector that claims they reach it whole (issue 13, "Chunking as
engines really chunk")."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT
from tcr.errors import EXIT_OK, EXIT_VIOLATION
from tcr.replay import run
from tcr.replay.report import to_sarif
from tcr.signature import PROXY_ONLY

HERMES = ROOT / "regressions" / "format_tool_call_tag_json.msgpack"
PER_CHUNK = "tcr.detector.broken:per_chunk_markers"
QUICK = ["original", "char", "tokens"]


def test_a_split_opener_that_is_a_special_token_is_found_only_when_a_proxy_re_chunks() -> None:
    report = run([HERMES], strategies=QUICK, runs=2, detector=PER_CHUNK)
    assert report.exit_code == EXIT_VIOLATION
    assert report.findings
    for group in report.findings:
        assert group.signature.proxy, group.signature
        assert group.signature.shape == "split-in-opener"
    # an engine's chunking (tokens) keeps <tool_call> whole: nothing fails there
    assert all(o.strategy != "tokens" for o, _ in report.failures)


def test_a_detector_that_sees_special_tokens_whole_is_never_given_a_split_one() -> None:
    report = run([HERMES], strategies=[*QUICK, "random", "exhaustive", "boundary"], runs=3,
                 detector=PER_CHUNK, special_tokens="whole")  # fmt: skip
    assert report.exit_code == EXIT_OK, [str(f.signature) for _, f in report.failures]
    assert "special tokens whole" in str(report.claim)


def test_a_finding_an_engine_chunking_shows_too_needs_no_proxy(tmp_path: Path) -> None:
    # The fenced JSON opener is no special token: a split in it is an engine's split too.
    fenced = ROOT / "regressions" / "format_fenced_json.msgpack"
    report = run([fenced], strategies=["char"], detector=PER_CHUNK)
    assert report.findings
    assert not any(group.signature.proxy for group in report.findings)


def replay_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["replay", str(HERMES), "--rechunk", "char",
                                       "--detector", PER_CHUNK, *args])  # fmt: skip
    return result.exit_code, result.output


def test_the_text_report_says_only_when_a_proxy_re_chunks() -> None:
    code, output = replay_cli()
    assert code == EXIT_VIOLATION
    assert f"@split-in-opener ({PROXY_ONLY})" in output


def test_json_says_proxy_only_beside_the_unchanged_signature() -> None:
    code, output = replay_cli("--json", "-q")
    assert code == EXIT_VIOLATION
    data = json.loads(output)
    assert data["findings"]
    for finding in data["findings"]:
        assert finding["proxy_only"] is True
        assert finding["signature"].endswith("@split-in-opener")
    rows = [f for row in data["outcomes"] for f in row["failures"]]
    assert rows and all(f["proxy_only"] for f in rows)


def test_json_states_a_claim_of_whole_special_tokens() -> None:
    _, output = replay_cli("--json", "-q", "--special-tokens", "whole")
    assert json.loads(output)["claim"]["special_tokens"] == "whole"


def test_junit_and_sarif_say_it_too(tmp_path: Path) -> None:
    junit, sarif = tmp_path / "replay.xml", tmp_path / "replay.sarif"
    code, _ = replay_cli("-q", "--junit", str(junit), "--sarif", str(sarif))
    assert code == EXIT_VIOLATION
    failures = list(ET.parse(junit).iter("failure"))
    assert failures and all(PROXY_ONLY in (f.text or "") for f in failures)
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert results
    assert all(r["properties"]["proxyOnly"] is True for r in results)
    assert all("Only when a proxy re-chunks" in r["message"]["text"] for r in results)


def test_sarif_of_a_finding_without_a_proxy_says_so() -> None:
    fenced = ROOT / "regressions" / "format_fenced_json.msgpack"
    report = run([fenced], strategies=["char"], detector=PER_CHUNK)
    results = to_sarif(report)["runs"][0]["results"]
    assert results and all(r["properties"]["proxyOnly"] is False for r in results)


def test_a_matrix_cell_shows_proxy_only_when_every_signature_of_the_finding_is() -> None:
    """The same missed split is one bug whether the marker is one token or several
    (tcr.findings.Cause): one finding, proxy only while every sighting of it is."""
    from tcr.commands.matrix import Cell, Sighting
    from tcr.findings import cause
    from tcr.signature import Signature

    cell = Cell("pass")
    proxied = Signature("no_leak", "<tool_call>", "hermes", "split-in-opener", proxy=True)
    cell.add(cause(proxied), [Sighting(proxied, "replay", 2, "tcr replay …")])
    cell.add(cause(proxied), [Sighting(proxied, "fuzz", 1, "tcr replay …")])
    assert [(f.label, f.failures, f.examples) for f in cell.findings] == [
        (f"{proxied} ({PROXY_ONLY})", 2, 1)
    ]
    whole = Signature("no_leak", "<tool_call>", "hermes", "split-in-opener")
    cell.add(cause(whole), [Sighting(whole, "fuzz", 1, "tcr replay …")])
    assert [(f.label, f.examples) for f in cell.findings] == [(str(whole), 2)]
