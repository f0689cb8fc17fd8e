"""``tcr show``: the summary of one recording, its rendering, and the command around them."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from tcr.commands.show import show
from tcr.corpus import Frame, new_header, read_recording, write_recording
from tcr.detector.core import StreamDetector
from tcr.detector.events import Detector
from tcr.errors import TcrError
from tcr.replay.show import ShowSummary, render, summarize, visible
from tcr.stream import decode

BROKEN = "tcr.detector.broken:per_chunk_markers"

# --- recordings --------------------------------------------------------------------


def openai_event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One SSE event in the shape llama-server streams for /v1/chat/completions."""
    chunk = {
        "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
        "created": 1749000000,
        "id": "chatcmpl-Qm3x8dJ1",
        "model": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "system_fingerprint": "b5600-7c0c9d45",
        "object": "chat.completion.chunk",
    }
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


# The marker arrives split the way the tokenizer splits it; a line ends in two spaces.
CONTENT = [
    "Let me check.  \n",
    "<",
    "tool",
    "_c",
    "all>",
    '\n{"name": "get_weather", ',
    '"arguments": {"city": "Paris"}}\n',
    "</tool",
    "_call>",
]
TEXT = "".join(CONTENT)
PREAMBLE = "Let me check.  \n"


def sse_body() -> list[bytes]:
    return [
        openai_event({"role": "assistant", "content": None}),
        *(openai_event({"content": piece}) for piece in CONTENT),
        openai_event({}, "stop"),
        b"data: [DONE]\n\n",
    ]


def reads(events: list[bytes]) -> list[tuple[int, bytes]]:
    """Frames as a socket returns them: two events in one read, one event split over two."""
    body = b"".join(events)
    cuts = [0, len(events[0]) + len(events[1]), len(body) - 20, len(body)]
    return [(40_000_000 + 7_000_000 * i, body[a:b]) for i, (a, b) in enumerate(pairwise(cuts))]


def llama_header(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": "llama-split-marker",
        "source": {
            "endpoint": "http://127.0.0.1:8080/v1/chat/completions",
            "backend": "llama-server",
            "model": "SmolLM2-135M-Instruct",
        },
        "request": {"messages": [{"role": "user", "content": "Weather in Paris?"}], "stream": True},
        "response": {"status": 200},
        "tools": ["get_weather"],
        "labels": {"dialect": "tool_call_tag", "origin": "handmade"},
    }
    return new_header("sse", **(fields | overrides))


@pytest.fixture
def sse_file(tmp_path: Path) -> Path:
    return write_recording(tmp_path / "llama.msgpack", llama_header(), reads(sse_body()))


@pytest.fixture
def chunks_file(tmp_path: Path) -> Path:
    frames = [
        (1_000_000 * i, c) for i, c in enumerate(["<think>hm</think>", "Hi\tthere", "  ", "\n"])
    ]
    header = new_header("chunks", id="engine-chunks", tools=None)
    return write_recording(tmp_path / "chunks.msgpack", header, frames)


@pytest.fixture
def incomplete_file(tmp_path: Path) -> Path:
    body = b"".join(sse_body()[:4]) + b'data: {"choices":[{"ind'  # cut mid-event
    frames = [(1_000_000, body[:100]), (2_000_000, body[100:])]
    path = tmp_path / "cut.msgpack"
    return write_recording(path, llama_header(), frames, complete=False, error="connection reset")


def summary_of(path: Path, **kwargs: Any) -> ShowSummary:
    result = summarize(path, **kwargs)
    json.loads(result.to_json())  # every summary is JSON data
    return result


def rendered(summary: ShowSummary, **kwargs: Any) -> str:
    console = Console(record=True, width=100, color_system=None)
    render(summary, console, **kwargs)
    return console.export_text()


def raising_factory(tools: list[str] | None = None) -> Detector:
    raise RuntimeError("no model loaded")


MADE: list[str | None] = []  # the format each counting_factory detector was seeded with


def counting_factory(tools: list[str] | None = None, format: str | None = None) -> Detector:
    MADE.append(format)
    return StreamDetector(tools, format=format)


# --- the summary -------------------------------------------------------------------


def test_summary_content_is_the_decoded_content_in_the_recorded_chunks(sse_file: Path) -> None:
    content = summary_of(sse_file).content

    assert content["text"] == decode(read_recording(sse_file)).text == TEXT
    assert [c["text"] for c in content["chunks"]] == CONTENT
    assert [c["offset"] for c in content["chunks"]][:3] == [0, len(PREAMBLE), len(PREAMBLE) + 1]
    assert (content["rechunk"], content["label"], content["recorded_chunks"]) == (
        "original",
        "original",
        len(CONTENT),
    )


def test_summary_header_and_completeness(sse_file: Path) -> None:
    summary = summary_of(sse_file)

    assert summary.header["id"] == "llama-split-marker"
    assert summary.header["tools"] == ["get_weather"]
    assert summary.complete is True and summary.incomplete_reason is None
    assert summary.expect is None


def test_frames_carry_time_since_start_time_since_previous_bytes_and_a_preview(
    sse_file: Path,
) -> None:
    frames = summary_of(sse_file).frames

    assert [(f["t_ms"], f["delta_ms"]) for f in frames] == [(40.0, 40.0), (47.0, 7.0), (54.0, 7.0)]
    assert sum(f["bytes"] for f in frames) == len(b"".join(sse_body()))
    assert frames[0]["preview"].startswith('data: {"choices":[{"finish_reason":null')
    assert frames[-1]["preview"].endswith("data: [DONE]↵↵")


def test_decoded_deltas_keep_only_the_fields_each_payload_carried(sse_file: Path) -> None:
    decoded = summary_of(sse_file).decoded
    deltas = decoded["deltas"]

    assert deltas[0] == {"index": 0, "role": "assistant"}
    assert deltas[2] == {"index": 2, "content": "<"}
    assert deltas[-2:] == [{"index": 10, "finish_reason": "stop"}, {"index": 11, "done": True}]
    assert (decoded["framing"], decoded["done"], decoded["finish_reason"]) == (
        "openai",
        True,
        "stop",
    )
    assert decoded["error"] is None and decoded["unfinished"] is None


def test_events_name_their_type_fields_chunk_and_raw_span(sse_file: Path) -> None:
    events = summary_of(sse_file).detector["events"]
    text, call = (e for e in events if e["type"] != "Text" or e["fields"]["text"])

    assert text["type"] == "Text" and text["fields"]["text"] == PREAMBLE
    assert (text["start"], text["end"]) == (0, len(PREAMBLE))
    assert call["type"] == "ToolCall"
    assert call["fields"]["name"] == "get_weather"
    assert json.loads(call["fields"]["arguments"]) == {"city": "Paris"}
    assert (call["start"], call["end"], call["chunk"]) == (len(PREAMBLE), len(TEXT), 8)
    assert "".join(e["fields"].get("raw") or e["fields"].get("text", "") for e in events) == TEXT


def test_reference_detector_passes_every_check_it_can_run(sse_file: Path) -> None:
    summary = summary_of(sse_file, rechunk="char")
    verdict = summary.verdict

    assert verdict.ok is True and verdict.violations == ()
    assert {"conservation", "invariance", "no_leak", "holdback", "warm_cold", "crash"} <= set(
        verdict.ran
    )
    assert verdict.skipped["expected"] == "no expectation"
    assert summary.detector["spec"] == "tcr.detector.core:StreamDetector"
    assert summary.exit_code == 0


def test_marker_matched_per_chunk_leaks_under_char_rechunking(sse_file: Path) -> None:
    summary = summary_of(sse_file, detector=BROKEN, rechunk="char")
    found = {v.check: v for v in summary.verdict.violations}

    assert summary.verdict.ok is False
    assert found["no_leak"].offset == len(PREAMBLE)
    assert found["no_leak"].chunk == len(PREAMBLE) + len("<tool_call>") - 1
    assert "<tool_call>" in found["no_leak"].message
    assert "invariance" in found
    assert summary.exit_code == 1


def test_original_chunking_is_the_default_and_char_makes_one_chunk_per_character(
    sse_file: Path,
) -> None:
    content = summary_of(sse_file, rechunk="char").content

    assert [c["text"] for c in content["chunks"]] == list(TEXT)
    assert content["rechunk"] == "char"


def test_transport_rechunking_redecodes_the_body_to_the_same_content(sse_file: Path) -> None:
    content = summary_of(sse_file, rechunk="bytes:7").content

    assert [c["text"] for c in content["chunks"]] == CONTENT


def test_random_rechunking_is_reproducible_from_its_seed(sse_file: Path) -> None:
    first = summary_of(sse_file, rechunk="random:4", seed=7).content
    again = summary_of(sse_file, rechunk="random:4", seed=7).content

    assert first == again and first["label"] == "random:4#0"
    assert "".join(c["text"] for c in first["chunks"]) == TEXT


def test_a_strategy_that_makes_many_chunkings_is_refused_with_the_way_out(sse_file: Path) -> None:
    with pytest.raises(TcrError, match="splits:A,B"):
        summarize(sse_file, rechunk="exhaustive")


def test_tools_override_the_recordings_declared_tools(sse_file: Path) -> None:
    summary = summary_of(sse_file, tools=[])
    types = [e["type"] for e in summary.detector["events"]]

    assert summary.detector["tools"] == []
    assert "Rejected" in types and "ToolCall" not in types


def test_chunks_recording_shows_reasoning_and_text(chunks_file: Path) -> None:
    summary = summary_of(chunks_file)
    events = summary.detector["events"]

    assert summary.decoded["framing"] == "chunks"
    assert summary.content["text"] == "<think>hm</think>Hi\tthere  \n"
    assert events[0]["type"] == "Reasoning" and events[0]["fields"]["text"] == "hm"
    assert summary.verdict.ok is True


def test_incomplete_recording_gives_its_reason_and_its_unfinished_tail(
    incomplete_file: Path,
) -> None:
    summary = summary_of(incomplete_file)

    assert summary.complete is False
    assert summary.incomplete_reason == "connection reset"
    assert summary.decoded["unfinished"] == '{"choices":[{"ind'
    assert summary.content["text"] == "Let me check.  \n<tool"


def test_interrupted_recording_without_a_trailer_is_shown(tmp_path: Path, sse_file: Path) -> None:
    cut = tmp_path / "interrupted.msgpack"
    cut.write_bytes(sse_file.read_bytes()[:-3])  # inside the trailer

    summary = summary_of(cut)

    assert summary.complete is False
    assert summary.incomplete_reason == "interrupted: no trailer"
    assert "INCOMPLETE (interrupted: no trailer)" in rendered(summary)


def test_expectation_is_shown_and_checked(tmp_path: Path) -> None:
    expect = {"text": PREAMBLE, "calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]}
    path = write_recording(tmp_path / "e.msgpack", llama_header(), reads(sse_body()), expect=expect)

    summary = summary_of(path)

    assert summary.expect == expect
    assert [v.check for v in summary.verdict.violations] == ["expected"]
    assert "expected" in summary.verdict.ran


def test_the_chunked_run_is_the_cold_run_of_warm_equals_cold(sse_file: Path) -> None:
    MADE.clear()
    summary = summary_of(sse_file, detector="test_show:counting_factory", rechunk="char")

    assert summary.verdict.ok and "warm_cold" in summary.verdict.ran
    # its claim read off one, its policies off the probes (tcr.probes), then the chunking,
    # whole, reused, seeded: no second cold run
    assert MADE[0] is None and MADE[-4:] == [None, None, None, "hermes"]


def test_detector_that_crashes_is_a_crash_finding(sse_file: Path) -> None:
    summary = summary_of(sse_file, detector="toy_detectors:RaisesOnThirdChunk")

    assert summary.detector["crash"] == {
        "chunk": 2,
        "offset": len(PREAMBLE) + 1,
        "error": "ValueError: boom",
    }
    assert [v.check for v in summary.verdict.violations] == ["crash"]
    assert "CRASH in feed() of chunk 2: ValueError: boom" in rendered(summary)


def test_detector_factory_that_raises_is_a_crash_finding(sse_file: Path) -> None:
    summary = summary_of(sse_file, detector="test_show:raising_factory")

    assert summary.detector["events"] == []
    message = summary.verdict.violations[0].message
    assert (
        message == "detector factory test_show:raising_factory raised RuntimeError: no model loaded"
    )
    assert summary.exit_code == 2  # a crash is unusable input, as in tcr replay


def test_body_that_does_not_decode_keeps_the_frames_and_what_decoded(tmp_path: Path) -> None:
    body = [openai_event({"role": "assistant"}), b"data: {not json\n\n"]
    path = write_recording(tmp_path / "bad-body.msgpack", llama_header(), [(0, b"".join(body))])

    summary = summary_of(path)

    assert "bad-body.msgpack, frame 0" in summary.decoded["error"]
    assert summary.decoded["deltas"] == [{"index": 0, "role": "assistant"}]
    assert summary.content is summary.verdict is None
    assert summary.exit_code == 2


# --- rendering ---------------------------------------------------------------------


def test_render_shows_header_frames_and_the_stream(sse_file: Path) -> None:
    text = rendered(summary_of(sse_file))

    assert "recording llama-split-marker" in text
    assert "llama-server · SmolLM2-135M-Instruct" in text
    assert "complete: 3 frames" in text
    assert "t ms" in text and "54.0" in text
    assert "framing openai: 12 deltas (9 with content), finish_reason stop" in text


def test_render_without_colour_draws_chunk_boundaries_and_invisible_characters(
    sse_file: Path,
) -> None:
    text = rendered(summary_of(sse_file))

    assert "Let me check.··↵\n¦<¦tool¦_c¦all>¦↵\n" in text
    assert "¦</tool¦_call>" in text
    assert "chunk boundaries: ¦ (a ¦ in the stream: ⟨U+00A6⟩)" in text


def test_a_broken_bar_in_the_stream_is_drawn_by_its_code_point_not_as_a_boundary(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bar.msgpack"
    write_recording(path, new_header("chunks"), [Frame(0, "a¦b"), Frame(1, "c")])

    content = rendered(summarize(path)).split("Content: ")[1].split("Detector events")[0]

    assert "a⟨U+00A6⟩b¦c" in content


def test_render_in_colour_shades_chunks_and_separates_them_as_the_tui_does(
    sse_file: Path,
) -> None:
    console = Console(record=True, width=100, color_system="truecolor", force_terminal=True)
    render(summary_of(sse_file), console)
    plain, styled = console.export_text(clear=False), console.export_text(styles=True)

    assert "Let me check.··↵\n¦<¦tool¦_c¦all>¦↵\n" in plain
    assert "chunk boundaries: ¦ over alternating shades" in plain
    assert "\x1b[" in styled and "48;" in styled  # background colours


def test_render_lists_events_and_pass(sse_file: Path) -> None:
    text = rendered(summary_of(sse_file))

    assert "Text 'Let me check.··↵'" in text
    assert 'ToolCall get_weather({"city": "Paris"})  [hermes]' in text
    assert "PASS" in text and "FAIL" not in text


def test_render_shows_each_violation_with_check_chunk_offset_and_excerpt(sse_file: Path) -> None:
    text = rendered(summary_of(sse_file, detector=BROKEN, rechunk="char"))

    assert "FAIL: 2 violations" in text
    assert f"no_leak at chunk 26, offset {len(PREAMBLE)}: Text shows the opening marker" in text
    assert "check.  \\n‸<tool_call>" in text
    assert f"Text ({len(TEXT)} events)" in text  # adjacent Text events in one row


def test_render_elides_the_middle_of_long_tables(tmp_path: Path) -> None:
    frames = [(i * 1_000_000, f"w{i} ") for i in range(100)]
    path = write_recording(tmp_path / "long.msgpack", new_header("chunks"), frames)

    text = rendered(summary_of(path), frames_limit=10)

    assert "90 frames elided" in text and "90 deltas elided" in text
    tables = text.split("Content")[0]
    assert " w4·" in tables and " w95·" in tables and " w50·" not in tables


def test_invisible_characters_are_made_visible() -> None:
    assert visible("a \tb  \nc\r\n\x00\u200b  ") == "a →b··↵c␍↵␀⟨U+200B⟩··"


# --- the command -------------------------------------------------------------------


def invoke(*args: str) -> Any:
    return CliRunner().invoke(show, [*args])


def test_command_renders_and_exits_0_when_clean(sse_file: Path) -> None:
    result = invoke(str(sse_file))

    assert result.exit_code == 0, result.output
    assert "recording llama-split-marker" in result.stdout and "PASS" in result.stdout


def test_command_exits_1_on_a_violation(sse_file: Path) -> None:
    result = invoke(str(sse_file), "--rechunk", "char", "--detector", BROKEN)

    assert result.exit_code == 1
    assert "no_leak at chunk 26" in result.stdout


def test_command_json_is_the_summary(sse_file: Path) -> None:
    result = invoke(str(sse_file), "--json", "--rechunk", "fixed:5")

    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert {"header", "complete", "frames", "decoded", "content", "detector", "verdict"} <= set(
        data
    )
    assert data["content"]["rechunk"] == "fixed:5"
    assert data["verdict"]["ok"] is True


def test_command_tools_option_declares_tools(sse_file: Path) -> None:
    result = invoke(str(sse_file), "--json", "--tools", "")

    assert json.loads(result.stdout)["detector"]["tools"] == []


@pytest.mark.parametrize(
    "data", [b"\x93\x01\x02\x03", b"\xc1\xc1\xc1", b"", b"\x81\xa3tcr"], ids=str
)
def test_corrupt_file_is_a_one_line_error_naming_it(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "corrupt.msgpack"
    path.write_bytes(data)

    result = invoke(str(path))

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("tcr show: ") and str(path) in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    result = invoke(str(tmp_path / "absent.msgpack"))

    assert result.exit_code == 2
    assert "absent.msgpack" in result.stderr and "No such file" in result.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--rechunk", "bogus"], "bad rechunk strategy 'bogus'"),
        (["--rechunk", "boundary"], "makes many chunkings"),
        (["--detector", "no_such_module:factory"], "cannot import no_such_module"),
        (["--detector", "tcr.detector.core:Nothing"], "has no attribute 'Nothing'"),
    ],
)
def test_bad_options_are_exit_2_with_one_line(sse_file: Path, args: list[str], said: str) -> None:
    result = invoke(str(sse_file), *args)

    assert result.exit_code == 2
    assert result.stderr.startswith("tcr show: ") and said in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_body_that_does_not_decode_is_shown_then_exit_2(tmp_path: Path) -> None:
    path = write_recording(tmp_path / "bad.msgpack", llama_header(), [(0, b"data: nope\n\n")])

    result = invoke(str(path))

    assert result.exit_code == 2
    assert "decode error" in result.stdout and "Frames (1)" in result.stdout
    assert result.stderr.startswith(f"tcr show: {path}, frame 0") and result.stderr.count("\n") == 1


def test_crashing_detector_is_shown_then_exit_2_with_one_line(sse_file: Path) -> None:
    result = invoke(str(sse_file), "--detector", "toy_detectors:RaisesOnThirdChunk")

    assert result.exit_code == 2, result.exception
    assert "CRASH in feed() of chunk 2" in result.stdout
    assert (
        result.stderr
        == f"tcr show: {sse_file}: the detector raised ValueError: boom in feed() of chunk 2\n"
    )


@pytest.mark.slow
def test_a_detector_over_the_time_limit_is_a_crash_then_exit_2(sse_file: Path) -> None:
    detector = "crashing_detectors:hangs_on_a_call"
    result = invoke(str(sse_file), "--detector", detector, "--timeout", "0.2")

    assert result.exit_code == 2, result.exception
    assert result.stderr.startswith(f"tcr show: {sse_file}: the detector took longer than 0.2 s")
    assert summary_of(sse_file, detector=detector, timeout=0.2).detector["crash"]["error"] == (
        "took longer than 0.2 s"
    )


def test_help_ends_with_examples() -> None:
    result = invoke("--help")

    assert result.exit_code == 0
    examples = result.output.rstrip().split("Examples:")[-1].strip().splitlines()
    assert len(examples) >= 3 and all(line.strip().startswith("tcr show ") for line in examples)


# --- a long recording, shown a few rows at a time (issue 14) -------------------------


@pytest.fixture
def long_file(tmp_path: Path) -> Path:
    frames = [(i * 1_000_000, f"w{i} ") for i in range(300)]
    return write_recording(tmp_path / "long.msgpack", new_header("chunks"), frames)


@pytest.fixture
def rows_made(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many rows of each table the summary made, counted as they are made."""
    import tcr.replay.show as show_module

    made: dict[str, int] = {}
    for name in ("_frame_row", "_delta_row", "_chunk_row", "_event_row"):
        build = getattr(show_module, name)

        def counted(*args: Any, _build: Any = build, _name: str = name) -> Any:
            made[_name] = made.get(_name, 0) + 1
            return _build(*args)

        monkeypatch.setattr(show_module, name, counted)
    return made


def test_a_summary_makes_its_rows_when_they_are_read(
    long_file: Path, rows_made: dict[str, int]
) -> None:
    summary = summarize(long_file)
    assert rows_made == {}

    assert summary.frames[299]["preview"] == "w299·"
    assert len(summary.frames) == len(summary.decoded["deltas"]) == 300
    assert rows_made == {"_frame_row": 1}


def test_show_frames_n_makes_only_the_rows_it_shows(
    long_file: Path, rows_made: dict[str, int]
) -> None:
    text = rendered(summarize(long_file), frames_limit=4, chunks_limit=4)

    assert "296 frames elided" in text and "296 chunks elided" in text
    assert rows_made["_frame_row"] <= 5 and rows_made["_chunk_row"] <= 5


def test_show_frames_n_cuts_the_content_to_its_first_and_last_chunks(long_file: Path) -> None:
    text = rendered(summarize(long_file), frames_limit=4, chunks_limit=4)
    content = text.split("Content: ")[1].split("Detector events")[0]

    assert "\nw0 ¦w1 \n… 296 chunks elided (1,374 characters)\nw298 ¦w299·\n" in content
    assert "w2 " not in content and "w297 " not in content


def test_without_frames_the_command_shows_the_whole_content(long_file: Path) -> None:
    default, cut = invoke(str(long_file)), invoke(str(long_file), "--frames", "4")

    assert (default.exit_code, cut.exit_code) == (0, 0)
    assert "260 frames elided" in default.stdout and "chunks elided" not in default.stdout
    assert "¦w150 ¦" in default.stdout.split("Content: ")[1]
    assert "296 chunks elided" in cut.stdout and "w150 " not in cut.stdout


def test_json_written_in_pieces_is_the_summary_as_json_dumps_writes_it(
    sse_file: Path, long_file: Path, incomplete_file: Path
) -> None:
    for path in (sse_file, long_file, incomplete_file):
        summary = summarize(path, rechunk="char")

        expected = json.dumps(summary.to_dict(), indent=2, ensure_ascii=False)
        assert "".join(summary.iter_json()) == summary.to_json() == expected
        assert isinstance(summary.to_dict()["frames"], list)
