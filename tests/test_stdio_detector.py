"""Detectors in other processes: the JSON-lines protocol, its reference server and client."""

from __future__ import annotations

import pickle
import shlex
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT, bundled
from tcr.corpus import read_recording
from tcr.detector import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector
from tcr.detector.stdio import (
    CommandFactory,
    DetectorProcessError,
    command_factory,
    event_from_json,
    event_to_json,
)
from tcr.replay import EXIT_ERROR, run
from tcr.stream import decode
from tcr.trace import run_trace

REFERENCE_CMD = shlex.join(
    [sys.executable, "-m", "tcr.detector.stdio", "tcr.detector.core:StreamDetector"]
)
SAMPLE = ROOT / "recorded" / "tool_call_tag_json.msgpack"
# 2 MB of one block: replaying it over a pipe at random chunkings costs minutes, not seconds.
HUGE = "policy_13_block_too_long.msgpack"
CORPUS = [path for path in bundled() if path.name != HUGE]

EVENTS: list[Event] = [
    Text("hi"),
    ToolCall("get_weather", '{"city":"Paris"}', "<tool_call>…</tool_call>", "tool_call_tag"),
    ToolCall("f", "{}", None, ""),
    Reasoning("hmm", "<think>hmm</think>", "think"),
    Rejected("<tools>x</tools>", "x", "tools_tag", "malformed"),
    Rejected(None, "shown", "", "not_a_call"),
    Text("lone \ud800 surrogate and ünïcode"),
]

# A harness in plain Python, as a Go or Rust one would be: it misbehaves at chunk 2.
HARNESS = """
import json, sys, time
from tcr.detector.core import StreamDetector
from tcr.detector.stdio import event_to_json

mode = sys.argv[1]
detector, fed = None, 0
for line in sys.stdin:
    request = json.loads(line)
    op = request["op"]
    if op == "new":
        detector, fed = StreamDetector(tools=request["tools"]), 0
        answer = {"ok": True}
    elif op == "feed":
        if fed == 2 and mode == "crash":
            print("panic: index out of range", file=sys.stderr)
            sys.exit(3)
        if fed == 2 and mode == "hang":
            time.sleep(60)
        if fed == 2 and mode == "garbage":
            print("hello from a debug print", flush=True)
        fed += 1
        answer = {"events": [event_to_json(e) for e in detector.feed(request["chunk"])]}
    elif op == "finish":
        answer = {"events": [event_to_json(e) for e in detector.finish()]}
    else:
        answer = {"error": "unsupported"}
    print(json.dumps(answer), flush=True)
"""


@pytest.fixture
def reference() -> Iterator[CommandFactory]:
    with command_factory(REFERENCE_CMD) as factory:
        yield factory


def harness(tmp_path: Path, mode: str) -> str:
    script = tmp_path / "harness.py"
    script.write_text(textwrap.dedent(HARNESS))
    return shlex.join([sys.executable, str(script), mode])


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_event_type_survives_json(event: Event) -> None:
    assert event_from_json(event_to_json(event)) == event


@pytest.mark.parametrize(
    "data", [[], {"type": "bogus"}, {"type": "text"}, {"type": "tool_call", "name": 1}]
)
def test_malformed_event_is_a_value_error(data: object) -> None:
    with pytest.raises(ValueError):
        event_from_json(data)


def test_every_event_type_round_trips_through_the_process(reference: CommandFactory) -> None:
    text = (
        "Hi <think>plan</think><tool_call>"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
        "<tool_call>{broken</tool_call> <tool_call>"
        '{"name": "nope", "arguments": {}}</tool_call>'
    )
    for chunks in ([text], list(text), [text[:7], text[7:40], text[40:]]):
        local = run_trace(StreamDetector(tools=["get_weather"]), chunks, states=False)
        remote = run_trace(reference(tools=["get_weather"]), chunks, states=False)
        assert remote.events == local.events
        kinds = {type(e) for e in remote.events}
        assert kinds == {Text, ToolCall, Reasoning, Rejected}


def test_state_and_reset_pass_through(reference: CommandFactory) -> None:
    detector = reference()
    detector.feed("<tool_call>{")
    state = detector.state
    assert isinstance(state, dict) and state["fsm"] == "in_block"
    detector.reset()
    assert detector.feed("plain") == [Text("plain")]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_reference_behind_the_protocol_emits_the_same_events(
    path: Path, reference: CommandFactory
) -> None:
    recording = read_recording(path)
    chunks = decode(recording).content
    local = run_trace(StreamDetector(tools=recording.tools), chunks, states=False)
    remote = run_trace(reference(tools=recording.tools), chunks, states=False)
    assert remote.events == local.events
    assert remote.crash == local.crash


def test_reference_behind_the_protocol_gives_the_same_verdicts_over_every_corpus(
    reference: CommandFactory,
) -> None:
    options = {"strategies": ["original", "whole", "random"], "runs": 2}
    local = run(CORPUS, **options)
    remote = run(CORPUS, detector=reference, **options)

    def verdicts(report: object) -> list[tuple[object, ...]]:
        return [
            (o.path, o.strategy, o.runs, o.ok, o.error, [f.violation for f in o.failures])
            for o in report.outcomes  # type: ignore[attr-defined]
        ]

    assert verdicts(remote) == verdicts(local)
    assert remote.exit_code == local.exit_code
    assert remote.recordings == len(CORPUS)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("crash", "exited with code 3: panic: index out of range"),
        ("hang", "did not answer within 0.5 s"),
        ("garbage", "printed garbage: 'hello from a debug print'"),
    ],
)
def test_misbehaving_process_is_a_crash_at_its_chunk_and_the_run_goes_on(
    mode: str, message: str, tmp_path: Path
) -> None:
    second = ROOT / "recorded" / "tool_call_tag_two_calls.msgpack"
    with command_factory(harness(tmp_path, mode), timeout=0.5) as factory:
        report = run(
            [SAMPLE, second],
            detector=factory,
            strategies=["original"],
            checks=["crash"],
            minimize=False,
        )
    crashes = [(o, f) for o, f in report.failures if f.violation.check == "crash"]
    assert {Path(o.path).name for o, _ in crashes} == {SAMPLE.name, second.name}
    assert all(f.violation.chunk == 2 for _, f in crashes)
    assert all(message in f.violation.message for _, f in crashes)
    assert all("--detector-cmd" in f.reproducer for _, f in crashes)
    assert report.exit_code == EXIT_ERROR


def test_misbehaving_process_exits_2_via_the_cli(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            *("replay", str(SAMPLE), "--rechunk", "original", "--check", "crash"),
            *("--detector-cmd", harness(tmp_path, "garbage")),
        ],
    )
    assert result.exit_code == EXIT_ERROR, result.output
    assert "printed garbage" in result.output


def test_reference_process_passes_via_the_cli() -> None:
    result = CliRunner().invoke(
        main, ["replay", str(SAMPLE), "--rechunk", "original", "--detector-cmd", REFERENCE_CMD]
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "extra",
    [
        ["--detector", "tcr.detector.core:StreamDetector"],
        ["--jobs", "2"],
        ["--detector-timeout", "0"],
    ],
)
def test_detector_cmd_with_a_conflicting_option_exits_2_with_one_line(extra: list[str]) -> None:
    result = CliRunner().invoke(
        main, ["replay", str(SAMPLE), "--detector-cmd", REFERENCE_CMD, *extra]
    )
    assert result.exit_code == EXIT_ERROR
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_a_detector_made_earlier_refuses_once_a_later_one_started(
    reference: CommandFactory,
) -> None:
    first = reference()
    reference()
    with pytest.raises(DetectorProcessError, match="one message at a time"):
        first.feed("x")


def test_command_that_cannot_start_is_reported_by_the_factory(tmp_path: Path) -> None:
    factory = command_factory(str(tmp_path / "no-such-harness"))
    with pytest.raises(DetectorProcessError, match="cannot start"):
        factory()


def test_factory_pickles_without_its_process(reference: CommandFactory) -> None:
    reference()
    copy = pickle.loads(pickle.dumps(reference))
    with copy:
        assert copy().feed("ok") == [Text("ok")]
