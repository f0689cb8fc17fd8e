"""Detectors in other processes: the JSON-lines protocol, its reference server and client."""

from __future__ import annotations

import io
import json
import pickle
import shlex
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from crashing_detectors import feed_sys_exits

from tcr.cli import main
from tcr.corpora import ROOT, bundled
from tcr.corpus import read_recording
from tcr.detector import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector
from tcr.errors import EXIT_ERROR
from tcr.rechunk import parse_strategy
from tcr.replay import run
from tcr.stdio import (
    CommandFactory,
    DetectorProcessError,
    ProcessDetector,
    command_factory,
    event_from_json,
    event_to_json,
)
from tcr.stdio._wire import encode
from tcr.stdio.server import serve
from tcr.stream import decode
from tcr.trace import run_trace

REFERENCE_CMD = shlex.join([sys.executable, "-m", "tcr.stdio", "tcr.detector.core:StreamDetector"])
SAMPLE = ROOT / "recorded" / "tool_call_tag_json.msgpack"
# 2 MB of one block: replaying it over a pipe at random chunkings costs minutes, not seconds.
HUGE = "policy_13_block_too_long.msgpack"
CORPUS = [path for path in bundled() if path.name != HUGE]
PROSE = (
    "Let me check. <think>the city is Paris</think><tool_call>"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call> Done. '
)

EVENTS: list[Event] = [
    Text("hi"),
    ToolCall("get_weather", '{"city":"Paris"}', "<tool_call>…</tool_call>", "tool_call_tag"),
    ToolCall("f", "{}", None, ""),
    Reasoning("hmm", "<think>hmm</think>", "think"),
    Rejected("<tools>x</tools>", "x", "tools_tag", "malformed"),
    Rejected(None, "shown", "", "not_a_call"),
    Text("lone \ud800 surrogate and ünïcode"),
]

# A harness in plain Python, as a Go or Rust one would be: line in, line out, no
# knowledge of pipelining. It misbehaves at chunk AT (MODE: ok, crash, hang, garbage,
# raise). FLUSH "eager" writes each answer at once; "lazy" holds them until it would
# wait for input, so a crash (os._exit) or a hang also swallows earlier answers. It
# sleeps START seconds before reading anything (a big runtime loading) and PER_FEED
# seconds on each feed (a slow parser). Each process started adds a line to harness.py.starts.
HARNESS = """
import json, os, sys, time
from tcr.detector.core import StreamDetector
from tcr.stdio import event_to_json

mode, at, flush = sys.argv[1], int(sys.argv[2]), sys.argv[3]
start, per_feed = float(sys.argv[4]), float(sys.argv[5])
detector, fed, held = None, 0, []
with open(__file__ + ".starts", "a") as starts:
    starts.write(f"{os.getpid()}\\n")
time.sleep(start)

def say(answer):
    held.append(json.dumps(answer) + "\\n")
    if flush == "eager":
        put()

def put():
    sys.stdout.write("".join(held))
    sys.stdout.flush()
    held.clear()

def handle(request):
    global detector, fed
    op = request["op"]
    if op == "new":
        detector, fed = StreamDetector(tools=request["tools"]), 0
        return say({"ok": True})
    if op == "feed":
        if fed == at and mode == "crash":
            print("panic: index out of range", file=sys.stderr, flush=True)
            if flush == "lazy":
                os._exit(3)  # what it held back is lost, as in a segfault
            sys.exit(3)
        if fed == at and mode == "hang":
            time.sleep(60)
        if fed == at and mode == "garbage":
            held.append("hello from a debug print\\n")
        if per_feed:
            time.sleep(per_feed)
        fed += 1
        if fed - 1 == at and mode == "raise":
            return say({"error": "ValueError: boom"})
        return say({"events": [event_to_json(e) for e in detector.feed(request["chunk"])]})
    if op == "finish":
        return say({"events": [event_to_json(e) for e in detector.finish()]})
    say({"error": "unsupported"})

pending = b""
while data := os.read(0, 1 << 16):
    *lines, pending = (pending + data).split(b"\\n")
    for line in lines:
        handle(json.loads(line))
    put()
"""


@pytest.fixture
def reference() -> Iterator[CommandFactory]:
    with command_factory(REFERENCE_CMD) as factory:
        yield factory


def harness(
    tmp_path: Path,
    mode: str = "ok",
    at: int = 2,
    flush: str = "eager",
    *,
    start: float = 0.0,
    per_feed: float = 0.0,
) -> str:
    script = tmp_path / "harness.py"
    script.write_text(textwrap.dedent(HARNESS))
    argv = [sys.executable, str(script), mode, str(at), flush, str(start), str(per_feed)]
    return shlex.join(argv)


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


def chunkings(text: str) -> list[tuple[str, ...]]:
    made = [parse_strategy(spec).chunkings(text, runs=3) for spec in ("whole", "char", "random")]
    return [chunking.chunks for strategy in made for chunking in strategy]


@pytest.mark.parametrize("path", CORPUS[::7], ids=lambda p: p.name)
def test_pipelined_replay_gives_the_same_steps_under_whole_char_and_random_chunkings(
    path: Path, reference: CommandFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = read_recording(path)
    text = "".join(decode(recording).content)
    monkeypatch.setattr(ProcessDetector, "feed", None)  # the fast path, or this fails loudly
    for chunks in chunkings(text):
        local = run_trace(StreamDetector(tools=recording.tools), chunks, states=False)
        remote = run_trace(reference(tools=recording.tools), chunks, states=False)
        assert remote == local


# The simplest harness there is, as written before tcr pipelined: read a line, answer it.
CLASSIC = """
import json, sys
from tcr.detector.core import StreamDetector
from tcr.stdio import event_to_json

for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "new":
        detector = StreamDetector(tools=request["tools"])
        print(json.dumps({"ok": True}), flush=True)
    elif request["op"] in ("feed", "finish"):
        events = detector.feed(request["chunk"]) if "chunk" in request else detector.finish()
        print(json.dumps({"events": [event_to_json(e) for e in events]}), flush=True)
    else:
        print(json.dumps({"error": "unsupported"}), flush=True)
"""


def test_a_line_at_a_time_harness_needs_nothing_for_pipelining(tmp_path: Path) -> None:
    script = tmp_path / "classic.py"
    script.write_text(textwrap.dedent(CLASSIC))
    with command_factory(shlex.join([sys.executable, str(script)])) as factory:
        for chunks in chunkings(PROSE * 20):
            local = run_trace(StreamDetector(), chunks, states=False)
            assert run_trace(factory(), chunks, states=False) == local


def test_stepping_with_states_feeds_one_chunk_at_a_time(
    reference: CommandFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ProcessDetector, "feed_many", None)
    chunks = [PROSE[:20], PROSE[20:60], PROSE[60:]]
    trace = run_trace(reference(), chunks)
    local = run_trace(StreamDetector(), chunks, states=False)
    assert trace.events == local.events
    states = [step.state for step in trace.steps]
    assert all(isinstance(state, dict) for state in states) and len(states) == 4
    assert states[0]["fsm"] == "matching_prefix"  # type: ignore[index]  # "…<think" held


@pytest.mark.parametrize("command", ["reference", "harness"])
def test_chunks_and_answers_larger_than_a_pipe_buffer_pass_both_ways(
    command: str, tmp_path: Path
) -> None:
    big = "word " * 40_000  # 200 KB of text, answered as one 200 KB Text
    call = '<tool_call>{"name": "f", "arguments": {"blob": "' + "x" * 100_000 + '"}}</tool_call>'
    text = big + call + big
    cmd = REFERENCE_CMD if command == "reference" else harness(tmp_path)
    with command_factory(cmd) as factory:
        for chunks in ([text], [text[i : i + 70_000] for i in range(0, len(text), 70_000)]):
            local = run_trace(StreamDetector(), chunks, states=False)
            assert run_trace(factory(), chunks, states=False) == local
            detector = factory()
            assert [detector.feed(c) for c in chunks] == [list(s.events) for s in local.steps[:-1]]


def test_results_left_untaken_do_not_reach_the_next_detector(reference: CommandFactory) -> None:
    chunks = list(PROSE * 10)
    results = reference().feed_many(chunks)
    assert next(results) == [Text("L")] and next(results) == [Text("e")]
    detector = reference()
    assert detector.feed("plain") == [Text("plain")]
    with pytest.raises(DetectorProcessError, match="another detector started"):
        next(results)


def test_finish_waits_for_every_result_to_be_taken(reference: CommandFactory) -> None:
    detector = reference()
    results = detector.feed_many(["a", "b", "c"])
    assert next(results) == [Text("a")]
    with pytest.raises(DetectorProcessError, match="still running"):
        detector.finish()
    assert list(results) == [[Text("b")], [Text("c")]]
    assert detector.finish() == []


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
    options = {"strategies": ["original", "whole", "char", "random"], "runs": 2}
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


def test_reference_behind_the_protocol_gives_the_same_verdicts_on_the_huge_recording(
    reference: CommandFactory,
) -> None:
    # The 1 MiB block at per-character chunkings is left to the in-process replay.
    huge = [path for path in bundled() if path.name == HUGE]
    options = {"strategies": ["original", "whole", "random"], "runs": 1}
    local, remote = run(huge, **options), run(huge, detector=reference, **options)
    assert [(o.strategy, o.ok, o.error) for o in remote.outcomes] == [
        (o.strategy, o.ok, o.error) for o in local.outcomes
    ]
    assert remote.recordings == 1


MISBEHAVIOURS = [
    ("crash", "exited with code 3: panic: index out of range"),
    ("hang", "did not answer within 0.5 s"),
    ("garbage", "printed garbage: 'hello from a debug print'"),
    ("raise", "the detector raised ValueError: boom"),
]


@pytest.mark.parametrize("flush", ["eager", "lazy"])
@pytest.mark.parametrize(("mode", "message"), MISBEHAVIOURS)
def test_misbehaving_process_is_a_crash_at_its_chunk_and_the_run_goes_on(
    mode: str, message: str, flush: str, tmp_path: Path
) -> None:
    second = ROOT / "recorded" / "tool_call_tag_two_calls.msgpack"
    with command_factory(harness(tmp_path, mode, flush=flush), timeout=0.5) as factory:
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


@pytest.mark.parametrize("flush", ["eager", "lazy"])
@pytest.mark.parametrize(("mode", "message"), MISBEHAVIOURS)
def test_misbehaving_deep_in_a_pipelined_message_names_that_chunk(
    mode: str, message: str, flush: str, tmp_path: Path
) -> None:
    # ~150 KB of feed requests: more than one window ahead of the answers.
    chunks = list((PROSE * 60)[:5000])
    local = run_trace(StreamDetector(), chunks, states=False)
    with command_factory(harness(tmp_path, mode, at=3000, flush=flush), timeout=0.5) as factory:
        trace = run_trace(factory(), chunks, states=False)
        assert trace.crash is not None
        assert (trace.crash.index, trace.crash.offset) == (3000, 3000)
        # a hang is over the time limit, as an in-process detector's: found, not shrunk
        assert trace.crash.timed_out == (mode == "hang")
        assert trace.crash.error.startswith(
            "detector process did not answer" if mode == "hang" else "DetectorProcessError: "
        )
        assert message in trace.crash.error
        assert trace.steps == local.steps[:3000]
        after = run_trace(factory(), chunks[:2000], states=False)
    assert after.crash is None


@pytest.mark.parametrize("flush", ["eager", "lazy"])
def test_a_harness_slower_to_start_than_the_timeout_is_not_a_crash(
    flush: str, tmp_path: Path
) -> None:
    # Its first answer may take START_UP (30 s), not just the per-answer timeout.
    command = harness(tmp_path, flush=flush, start=0.8)
    with command_factory(command, timeout=0.5) as factory:
        options = {"strategies": ["original", "char"], "checks": ["crash"], "minimize": False}
        report = run([SAMPLE], detector=factory, **options)
    assert report.exit_code == 0, report.to_dict()


def test_after_a_slow_start_each_answer_has_the_timeout_again(tmp_path: Path) -> None:
    with command_factory(harness(tmp_path, "hang", start=0.8), timeout=0.5) as factory:
        detector = factory()
        assert detector.feed("a") == [Text("a")] and detector.feed("b") == [Text("b")]
        with pytest.raises(DetectorProcessError, match=r"did not answer within 0\.5 s$"):
            detector.feed("c")


def test_a_harness_holding_answers_has_the_timeout_for_a_bounded_number_of_feeds(
    tmp_path: Path,
) -> None:
    # 1000 feeds at 1 ms are 1 s of work: more than the timeout if the whole message
    # (28 KB of requests, well inside 64 KiB) went out before the first answer came back.
    # Taken for a hang, the process would be restarted to find the chunk that hung. The
    # message's own limit, 0.5 s and 2 ms a request, is 2.5 s.
    chunks = list((PROSE * 8)[:1000])
    local = run_trace(StreamDetector(), chunks, states=False)
    command = harness(tmp_path, flush="lazy", per_feed=0.001)
    with command_factory(command, timeout=0.5) as factory:
        assert run_trace(factory(), chunks, states=False) == local
    assert len((tmp_path / "harness.py.starts").read_text().splitlines()) == 1


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
        ["--detector-timeout", "0"],
        ["--detector-timeout", "nan"],  # a bad option, not a factory's crash
        ["--detector-timeout", "inf"],
        ["--detector-timeout", "-inf"],
    ],
)
def test_detector_cmd_with_a_conflicting_option_exits_2_with_one_line(extra: list[str]) -> None:
    result = CliRunner().invoke(
        main, ["replay", str(SAMPLE), "--detector-cmd", REFERENCE_CMD, *extra]
    )
    assert result.exit_code == EXIT_ERROR
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert "factory" not in result.output


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


def test_the_server_answers_a_detector_calling_sys_exit_with_an_error_and_goes_on() -> None:
    requests = [
        {"op": "new", "tools": None},
        {"op": "feed", "chunk": "<tool_call>"},
        {"op": "new", "tools": None},
        {"op": "feed", "chunk": "hi"},
    ]
    stdout = io.BytesIO()
    serve(
        feed_sys_exits, io.BytesIO(b"".join(encode(r).encode() + b"\n" for r in requests)), stdout
    )
    answers = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert answers[1] == {"error": "SystemExit: a parser calling sys.exit() on bad input"}
    assert answers[3] == {"events": [{"type": "text", "text": "hi"}]}
