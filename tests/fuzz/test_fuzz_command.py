"""``tcr fuzz``: a thin command over ``tcr.fuzz.run`` with the exit codes of every command."""

from __future__ import annotations

import shlex
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from sarif_checks import load_sarif, location_uri

from tcr.cli import main
from tcr.commands.fuzz import fuzz, parse_budget
from tcr.corpora import ROOT, bundled

REGRESSIONS = str(ROOT / "regressions")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(fuzz, list(args), prog_name="tcr fuzz")
    return result.exit_code, result.output


def invoke_main(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_help_ends_with_examples() -> None:
    code, out = invoke("--help")
    assert code == 0
    assert out.rstrip().splitlines()[-1].strip().startswith("tcr fuzz ")
    assert "Examples:" in out


@pytest.mark.slow
def test_reference_detector_passes_with_exit_code_0() -> None:
    code, out = invoke("--max-examples", "300", "--seed", "4", "--corpus", REGRESSIONS)
    assert code == 0, out
    assert "300 examples" in out and "no violation" in out


def test_a_passing_run_is_four_lines_and_names_what_it_left_out_in_its_first() -> None:
    # The bundled policy_13 recording is too long to mutate: said in the header, every run.
    code, out = invoke("--max-examples", "50", "--seed", "0", "--corpus", REGRESSIONS)
    assert code == 0, out
    judged, *lines = out.splitlines()
    assert judged.startswith("judged against: every dialect; "), out  # the policies, first
    assert len(lines) == 4, out  # header, counts, cost, verdict
    assert "(not: " in lines[0] and "policy_13_block_too_long.msgpack" in lines[0]
    assert lines[-1] == "no violation"


@pytest.mark.slow
def test_violation_exits_1_and_prints_the_case_and_how_to_reproduce_it(tmp_path: Path) -> None:
    spec = "tcr.detector.broken:per_chunk_markers"
    junit = tmp_path / "fuzz.xml"
    code, out = invoke(
        "--detector", spec, "--budget", "20s", "--save", str(tmp_path), "--junit", str(junit), "-x"
    )
    assert code == 1, out
    saved = next(tmp_path.glob("*.msgpack"))
    assert f"tcr replay {saved} --rechunk original --detector {spec}" in out
    assert f"tcr tui {saved} --detector {spec}" in out
    assert "chunks: [" in out and "ground truth:" in out
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"

    # the printed reproducer, run as printed, fails the same way
    line = next(x.strip() for x in out.splitlines() if x.strip().startswith("tcr replay "))
    check = next(x.split()[0] for x in out.splitlines() if " violated after " in x)
    replayed = CliRunner().invoke(main, shlex.split(line)[1:])
    assert replayed.exit_code == 1, replayed.output
    # the same check fails: its case line starts with the check, or with its signature
    # when the finding's heading names a cause of several signatures
    cases = [x for x in replayed.output.splitlines() if x.startswith((f"{check} in ", f"{check}/"))]
    assert cases, replayed.output


@pytest.mark.slow
def test_sarif_result_points_at_the_saved_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = "tcr.detector.broken:per_chunk_markers"
    code, out = invoke(
        "--detector", spec, "--budget", "20s", "--save", "found", "--sarif", "f.sarif", "-x"
    )

    assert code == 1, out
    saved = next((tmp_path / "found").glob("*.msgpack"))
    (result,) = load_sarif(tmp_path / "f.sarif")["results"]
    assert location_uri(result) == f"found/{saved.name}"
    check = saved.name.split("-")[0]  # files are named CHECK-DIGEST.msgpack
    assert result["ruleId"] == check
    replay = f"tcr replay found/{saved.name} --rechunk original --detector {spec}"
    assert result["message"]["text"].endswith(f"reproduce with: {replay}")
    assert result["properties"]["reproducer"] == replay


def test_no_violation_gives_a_valid_sarif_with_no_results(tmp_path: Path) -> None:
    sarif = tmp_path / "fuzz.sarif"
    code, out = invoke("--max-examples", "50", "--corpus", REGRESSIONS, "--sarif", str(sarif))

    assert code == 0, out
    run = load_sarif(sarif)
    assert run["results"] == []
    assert run["properties"]["examples"] == 50
    assert run["invocations"][0]["exitCode"] == 0


def test_unwritable_sarif_is_exit_2_with_one_line_after_the_report(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        fuzz, ["--max-examples", "20", "--corpus", REGRESSIONS, "--sarif", str(tmp_path)]
    )

    assert result.exit_code == 2
    assert "no violation" in result.stdout
    assert result.stderr == f"tcr fuzz: cannot write SARIF to {tmp_path}: Is a directory\n"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--budget", "soon"], "--budget"),
        (["--budget", "0s"], "--budget"),
        (["--max-examples", "0"], "max examples"),
        (["--detector", "nope"], "package.module:factory"),
        (["--corpus", "/no/such/dir"], "/no/such/dir"),
    ],
)
def test_bad_options_exit_2_with_one_line(args: list[str], words: str) -> None:
    code, out = invoke(*args)
    assert code == 2
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tcr fuzz: ") and words in lines[0], out


def test_unknown_format_is_a_usage_error() -> None:
    code, out = invoke("--format", "klingon")
    assert code == 2 and "klingon" in out


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("60s", 60.0),
        ("90", 90.0),
        ("1.5m", 90.0),
        ("2h", 7200.0),
        ("250ms", 0.25),
        (" 10 min", 600.0),
    ],
)
def test_budget_takes_units(text: str, seconds: float) -> None:
    assert parse_budget(text) == seconds


@pytest.mark.slow
def test_findings_go_to_a_folder_git_ignores_and_replay_reads_only_when_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    code, out = invoke(
        "--detector", "tcr.detector.broken:per_chunk_markers", "--corpus", REGRESSIONS, "-x"
    )
    assert code == 1, out
    (saved,) = (tmp_path / ".tcr" / "found").glob("*.msgpack")
    assert (tmp_path / ".tcr" / ".gitignore").read_text().splitlines()[-1] == "*"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(saved)], check=False)
    assert ignored.returncode == 0  # git ignores it: no finding lands in a commit
    status = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == ""
    assert saved not in bundled()  # the default replay and the pytest plugin do not read it
    code, out = invoke_main(
        "replay", ".tcr/found", "--detector", "tcr.detector.broken:per_chunk_markers", "--json"
    )
    assert code == 1 and saved.name in out  # named, it is replayed


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        (40, 12, "from 40 to 12 characters"),
        (3, 3, "keeping its 3 characters"),
        (1, 2, "to 2 characters (the case as found had 1)"),
    ],
)
def test_a_shrunk_count_is_told_as_it_went(before: int, after: int, said: str) -> None:
    from tcr.findings import shrunk

    assert shrunk(before, after, "character") == said
