"""Fuzzing against a claim: calls only in claimed dialects, unclaimed markup as text (ARCHITECTURE.md §5.7)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from tcr.claims import Claim
from tcr.cli import main
from tcr.corpora import ROOT
from tcr.detector.core import StreamDetector
from tcr.detector.events import ToolCall
from tcr.dialects import DIALECTS
from tcr.errors import TcrError
from tcr.expectation import expectation_of
from tcr.fuzz import Message, Truth, messages, run
from tcr.fuzz.repertoire import Repertoire
from tcr.probes import control_probe, probes_for

HERMES = Claim(frozenset({"hermes"}))
MANY = settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))


def restricted_run(message: Message, dialects: list[str]) -> list[object]:
    detector = StreamDetector(message.tools, dialects=dialects)
    return [*detector.feed(message.text), *detector.finish()]


# --- what is written for a claim ----------------------------------------------------


def test_markup_that_opens_on_a_claimed_marker_is_not_written_as_text() -> None:
    repertoire = Repertoire.of(HERMES)
    assert repertoire.blocks == ("hermes",)
    # Qwen3-Coder XML and GLM bodies open on <tool_call> too: a hermes parser reads malformed blocks
    assert "qwen3_coder" not in repertoire.as_text and "glm45" not in repertoire.as_text
    assert {"gemma4", "tools_tag", "mistral", "mistral_v13", "think"} <= set(repertoire.as_text)
    assert Repertoire.of().as_text == ()  # claiming everything, nothing is text


@MANY
@given(messages(claim=HERMES))
def test_generated_truth_for_a_hermes_claim_holds_hermes_calls_only(message: Message) -> None:
    blocks = [p for p in message.parts if p != "prose" and not p.endswith(" as text")]
    assert all(p.startswith("hermes/") for p in blocks), message.parts
    events = restricted_run(message, ["hermes"])
    assert all(e.format == "hermes" for e in events if isinstance(e, ToolCall))
    assert expectation_of(events).to_map() == message.truth.expectation(), message.text


@pytest.mark.slow
def test_unclaimed_markup_is_mixed_in_as_text() -> None:
    def written(dialect: str) -> Message:
        # By the part's dialect, not a substring: "think/" is inside "seed_think/".
        return find(
            messages(claim=HERMES), lambda m: any(p.startswith(f"{dialect}/") for p in m.parts)
        )

    mistral = written("mistral")
    assert mistral.truth == Truth(text=mistral.text), mistral.parts
    think = written("think")
    assert think.truth == Truth(text=think.text), think.parts
    assert "<think>" in think.text and think.truth.reasoning == ""


def test_claimed_markers_never_appear_inside_text_markup() -> None:
    @MANY
    @given(messages(claim=HERMES))
    def no_hermes_opener_outside_blocks(message: Message) -> None:
        if not any(p.startswith("hermes/") for p in message.parts):
            assert "<tool_call>" not in message.text, message.parts

    no_hermes_opener_outside_blocks()


@given(messages(claim=Claim(frozenset({"hermes"}), "text"), tools=st.just([])))
@settings(max_examples=100, deadline=None)
def test_no_tools_meaning_text_makes_every_message_text(message: Message) -> None:
    assert message.truth == Truth(text=message.text)


def test_formats_outside_the_claim_are_refused() -> None:
    from hypothesis.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        messages(claim=HERMES, formats=["tools_tag"])


# --- fuzzing a detector against its claim -------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("dialect", [d.id for d in DIALECTS])
def test_the_reference_restricted_to_one_dialect_survives(dialect: str, seed: int) -> None:
    factory = partial(StreamDetector, dialects=[dialect])
    report = run(detector=factory, max_examples=2000, budget_s=10, seed=seed, save=None)
    assert report.claim == Claim(frozenset({dialect}))
    assert report.finding is None, report.finding


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_hermes_only_detector_claiming_on_its_factory_survives(seed: int) -> None:
    report = run(detector="claimed_detectors:hermes_only", max_examples=2000, seed=seed, save=None)
    assert report.claim == HERMES  # read from the factory's tcr_claim
    assert report.finding is None, report.finding
    assert report.generated and report.mutated


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_detector_that_swallows_unclaimed_markup_is_found(seed: int, tmp_path: Path) -> None:
    report = run(
        detector="claimed_detectors:swallows_mistral", max_examples=3000, seed=seed, save=tmp_path
    )
    finding = report.finding
    assert finding is not None
    assert finding.check in {"conservation", "holdback", "expected"}
    assert "[TOOL_CALLS" in finding.case.text
    assert "--dialect hermes" in finding.replay_command


@pytest.mark.slow
def test_no_tools_meaning_text_is_judged_as_the_detector_chose() -> None:
    chose_text = run(
        detector="claimed_detectors:hermes_text_without_tools", max_examples=2000, save=None
    )
    assert chose_text.claim == Claim(frozenset({"hermes"}), "text")
    assert chose_text.finding is None, chose_text.finding
    # a detector that rejects every call when tools=[] does not make that choice: pinned,
    # the choice is enforced, and the probe with tools=[] finds it first
    rejects = run(
        detector="claimed_detectors:hermes_only", empty_tools="text", max_examples=2000, save=None
    )
    assert rejects.finding is not None
    assert rejects.finding.violation.message.startswith("policy/empty_tools: "), rejects.finding
    assert '"tools": []' in rejects.finding.case.origin


def test_the_reference_is_restricted_to_a_claim_given_on_the_command_line() -> None:
    report = run(dialects=["hermes"], max_examples=200, corpus=[ROOT / "regressions"], save=None)
    assert report.claim == HERMES and report.formats == ("hermes",)
    assert report.finding is None, report.finding
    unlabelled = [line for line in report.skipped if "the claim cannot read" in line]
    assert len(unlabelled) == 1 and unlabelled[0].startswith("6 recordings"), report.skipped


def test_a_claim_given_whole_replaces_the_detectors() -> None:
    claim = Claim(frozenset({"hermes", "think"}))
    report = run(detector="claimed_detectors:hermes_only", claim=claim, max_examples=1, save=None)
    assert report.claim == claim


# --- the command line ---------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["fuzz", *args])
    return result.exit_code, result.output


@pytest.mark.slow
def test_fuzz_dialect_hermes_for_ten_seconds_finds_nothing(tmp_path: Path) -> None:
    code, out = invoke("--dialect", "hermes", "--budget", "10s", "--save", str(tmp_path))
    assert code == 0, out
    assert "judged against: hermes; " in out and "no violation" in out


def test_format_is_a_hidden_name_of_dialect(tmp_path: Path) -> None:
    assert "--format" not in invoke("--help")[1]
    code, out = invoke("--format", "hermes", "--max-examples", "20", "--save", str(tmp_path))
    assert code == 0 and "judged against: hermes; " in out, out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--dialect", "klingon"], "unknown dialect 'klingon'; known: gemma4"),
        (["--detector", "claimed_detectors:wrong_claim"], "dialects must be a list"),
    ],
)
def test_a_bad_claim_is_one_line_and_exit_2(args: list[str], words: str) -> None:
    code, out = invoke(*args, "--max-examples", "5")
    lines = out.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], out


def test_empty_tools_takes_reject_or_text() -> None:
    code, out = invoke("--empty-tools", "maybe", "--max-examples", "5")
    assert code == 2 and "maybe" in out


@pytest.mark.slow
@pytest.mark.process
def test_jobs_judge_against_the_same_claim(tmp_path: Path) -> None:
    spec = "claimed_detectors:swallows_mistral"
    report = run(detector=spec, max_examples=20_000, seed=1, save=tmp_path, jobs=2)
    assert report.claim == HERMES and report.jobs == 2
    finding = report.finding
    assert finding is not None and "[TOOL_CALLS" in finding.case.text
    survivor = run(dialects=["hermes"], max_examples=600, seed=1, save=None, jobs=2)
    assert survivor.finding is None and survivor.examples == 600


def test_writing_one_claimed_dialect_generates_its_blocks_only() -> None:
    # What `tcr matrix` runs per cell: judged against the whole claim, written in one row.
    claim = Claim(frozenset({"hermes", "qwen3_coder"}))
    fed: list[list[str]] = []  # each detector's chunks

    class Recorder(StreamDetector):
        def feed(self, chunk: str) -> list[object]:  # type: ignore[override]
            fed[-1].append(chunk)
            return super().feed(chunk)  # type: ignore[return-value]

    def factory(tools: object = None) -> Recorder:
        fed.append([])
        return Recorder(tools, dialects=sorted(claim.dialects or ()))

    report = run(
        detector=factory, claim=claim, writing=["qwen3_coder"], max_examples=400, corpus=[],
        save=None,
    )  # fmt: skip
    assert report.formats == ("qwen3_coder",) and not report.findings
    # The policy probes are written in every claimed dialect: they are not the search's.
    probes = {p.text for p in probes_for(claim.dialects)}
    probes |= {control_probe(d).text for d in sorted(claim.dialects or ())}
    seen = [chunk for chunks in fed if "".join(chunks) not in probes for chunk in chunks]
    formats = {
        e.format
        for text in seen
        for e in StreamDetector(dialects=["hermes", "qwen3_coder"]).feed(text)
        if isinstance(e, ToolCall)
    }
    assert formats <= {"qwen3_coder"} and "qwen3_coder" in formats


@pytest.mark.parametrize("writing", [["hermes", "glm45"], [], "hermes"])
def test_writing_names_claimed_dialects(writing: object) -> None:
    with pytest.raises(TcrError, match=r"^writing: "):
        run(claim=HERMES, writing=writing, max_examples=1, corpus=[], save=None)  # type: ignore[arg-type]
