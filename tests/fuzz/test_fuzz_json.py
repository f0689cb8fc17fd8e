"""``tcr fuzz --json``: the report as data, in the schema ``tcr replay --json`` follows
(docs/reference/report.schema.json), checked here on both commands' output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT
from tcr.fuzz import run
from tcr.fuzz.report import to_dict, to_json
from tcr.replay import run as replay
from tcr.replay.report import to_json as replay_json

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "docs" / "reference" / "report.schema.json").read_text()
)
BROKEN = "tcr.detector.broken:per_chunk_markers"


def valid(data: Any) -> Any:
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    return data


def test_a_fuzz_report_as_json_holds_each_finding_with_its_shrunk_case(tmp_path: Path) -> None:
    report = run(
        detector=BROKEN,
        dialects=["hermes"],
        max_examples=100,
        seed=0,
        save=tmp_path,
        corpus=[],
        exitfirst=True,
    )
    data = valid(json.loads(to_json(report)))
    assert data == valid(to_dict(report)) | {"seconds": data["seconds"]}
    assert (data["detector"], data["seed"], data["examples"]) == (BROKEN, 0, report.examples)
    assert data["claim"]["dialects"] == ["hermes"]
    assert data["exit_code"] == report.exit_code == 1
    assert [f["signature"] for f in data["findings"]] == [str(f.signature) for f in report.findings]
    first, finding = data["findings"][0], report.findings[0]
    assert first["case"]["chunks"] == list(finding.case.chunks)
    assert first["reproducer"] == finding.replay_command and first["reproducer"].startswith(
        "tcr replay "
    )
    assert first["saved"] == str(finding.saved) and Path(first["saved"]).exists()
    assert data["cost"]["measured"][0]["probe"] == "every claimed dialect"
    with pytest.raises(jsonschema.ValidationError):  # the schema holds the keys it names
        valid({k: v for k, v in data.items() if k != "examples"})


def test_replay_json_follows_the_same_schema() -> None:
    case = ROOT / "regressions" / "closing_marker_in_json_string.msgpack"
    report = replay([case], detector=BROKEN, dialects=["hermes"], strategies=["whole", "char"])
    data = valid(json.loads(replay_json(report)))
    assert data["findings"] and data["cost"] is not None


def test_tcr_fuzz_json_prints_the_report_alone_on_stdout() -> None:
    result = CliRunner().invoke(
        main,
        [
            *("fuzz", "--dialect", "hermes", "--max-examples", "50", "--check", "conservation"),
            *("--corpus", str(ROOT / "regressions" / "closing_marker_in_json_string.msgpack")),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = valid(json.loads(result.stdout))
    assert (data["findings"], data["checks"], data["cost"]) == ([], ["conservation"], None)
    assert data["examples"] == 50
