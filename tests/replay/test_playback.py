"""What tcr serve sends: the same stream whatever the chunking (replay/playback.py)."""

from __future__ import annotations

import functools
import gc
import json
from pathlib import Path
from typing import Any

import pytest

from tcr.corpora import bundled
from tcr.corpus import Recording, new_header, read_recording, write_recording
from tcr.errors import TcrError
from tcr.rechunk import parse_strategy
from tcr.replay import playback as playback_module
from tcr.replay.playback import Playback, Write, playback, playing
from tcr.stream import Decoded, Delta, decode, decode_bytes

BIG = 200_000  # bytes
RECORDINGS = bundled()
STRATEGIES = [
    None,
    "original",
    "whole",
    "char",
    "fixed:3",
    "random",
    "boundary",
    "splits:1,5,9",
    "bytes:1",
    "bytes:7",
    "bytes-random",
]


def _decoded(played: Playback) -> Decoded:
    return decode_bytes("sse", [write.data for write in played.writes])


def _calls(decoded: Decoded) -> list[tuple[str | None, str]]:
    return [(call.name, call.arguments) for call in decoded.calls]


def _sse_recording(path: Path, deltas: list[dict[str, Any]], *, complete: bool = True) -> Recording:
    """An OpenAI chat stream of these deltas, one frame per SSE event, 1 ms apart."""
    frames = []
    for n, delta in enumerate(deltas):
        finish = delta.pop("finish_reason", None)
        chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        frames.append((n * 1_000_000, f"data: {json.dumps(chunk)}\n\n".encode()))
    if complete:
        frames.append((len(deltas) * 1_000_000, b"data: [DONE]\n\n"))
    header = new_header("sse", id=path.stem, response={"status": 200, "headers": {}})
    write_recording(path, header, frames, complete=complete)
    return read_recording(path)


def _interleaved(path: Path) -> Recording:
    """Reasoning, then content, then a native call, then content again."""
    return _sse_recording(
        path,
        [
            {"role": "assistant"},
            {"reasoning_content": "Weather "},
            {"reasoning_content": "in Paris?"},
            {"content": "Let me "},
            {"content": "check."},
            {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "get_weather"}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
            {"content": " Done."},
            {"finish_reason": "tool_calls"},
        ],
    )


def _channels(played: Playback) -> list[str]:
    """The order of the channels in a chat stream, runs collapsed."""
    order: list[str] = []
    for delta in _decoded(played).deltas:
        for name, present in (
            ("reasoning", delta.reasoning),
            ("content", delta.content),
            ("call", delta.tool_calls),
        ):
            if present and (not order or order[-1] != name):
                order.append(name)
    return order


# --- the same stream under every chunking ---------------------------------------------------------


def _recordings(spec: str | None) -> list[Path]:
    """Every recording, but not the 1 MiB one per character (minutes of JSON; its other
    chunkings still run)."""
    slow = {"char", "bytes:1", "boundary"}
    return [p for p in RECORDINGS if not (spec in slow and p.stat().st_size > BIG)]


@functools.cache
def _original(path: Path) -> tuple[Recording, Decoded]:
    """A recording and its decoding, read once for every chunking it is played under."""
    recording = read_recording(path)
    return recording, decode(recording)


def _chat_differs(path: Path, spec: str | None) -> str:
    recording, original = _original(path)
    played = playback(recording, "chat", strategy=spec and parse_strategy(spec))
    decoded = _decoded(played)
    for what, got, expected in (
        ("text", decoded.text, original.text),
        ("reasoning", decoded.reasoning_text, original.reasoning_text),
        ("calls", _calls(decoded), _calls(original)),
        ("errors", decoded.errors, original.errors),
    ):
        if got != expected:
            return f"{what}: {got!r} != {expected!r}"
    if decoded.done != original.done and recording.kind == "sse":
        return f"done: {decoded.done} != {original.done}"
    return ""


def _completion_differs(path: Path, spec: str | None) -> str:
    recording, original = _original(path)
    played = playback(recording, "completion", strategy=spec and parse_strategy(spec))
    decoded = _decoded(played)
    if decoded.text != original.text:
        return f"text: {decoded.text!r} != {original.text!r}"
    if (decoded.framing, decoded.done) != ("llamacpp", True):
        return f"framing {decoded.framing}, done {decoded.done}"
    return ""


# One test per chunking, each over every recording: a chunking that breaks playback
# breaks it on many recordings at once, and every one is named in the failure.
@pytest.mark.parametrize("spec", STRATEGIES)
@pytest.mark.slow
def test_chat_stream_says_the_same_under_every_chunking(spec: str | None) -> None:
    paths = _recordings(spec)
    failures = [f"{p.stem}: {why}" for p in paths if (why := _chat_differs(p, spec))]
    assert not failures, f"{len(failures)} of {len(paths)} recordings:\n" + "\n".join(failures)


@pytest.mark.parametrize("spec", [None, "char", "random", "bytes:5"])
@pytest.mark.slow
def test_completion_stream_has_the_same_content(spec: str | None) -> None:
    paths = _recordings(spec)
    failures = [f"{p.stem}: {why}" for p in paths if (why := _completion_differs(p, spec))]
    assert not failures, f"{len(failures)} of {len(paths)} recordings:\n" + "\n".join(failures)


def test_a_recording_made_on_the_endpoint_is_sent_as_recorded() -> None:
    for path in RECORDINGS:
        recording = read_recording(path)
        if recording.kind != "sse" or decode(recording).framing != "openai":
            continue
        played = playback(recording, "chat")
        assert [(w.t_ns, w.data) for w in played.writes] == [
            (f.t_ns, f.data) for f in recording.frames
        ]
        assert (played.status, played.chunking) == (200, "original")


def test_llama_cpp_recordings_are_sent_as_recorded_on_completion() -> None:
    recording = read_recording(next(p for p in RECORDINGS if p.stem == "format_mistral_v13"))
    played = playback(recording, "completion")
    assert played.body == b"".join(
        f.data if isinstance(f.data, bytes) else b"" for f in recording.frames
    )


def _writes_alive() -> int:
    gc.collect()
    return sum(isinstance(o, Write) for o in gc.get_objects())


@pytest.mark.slow
@pytest.mark.parametrize("spec", [None, "char", "random", "bytes:3"])
def test_playing_makes_each_write_as_it_is_taken(tmp_path: Path, spec: str | None) -> None:
    recording = _sse_recording(tmp_path / "r.msgpack", [{"content": "xy" * 500}] * 4)
    strategy = spec and parse_strategy(spec)
    played = playing(recording, "chat", strategy=strategy)
    alive = _writes_alive()
    first = next(played.writes)
    assert _writes_alive() - alive == 1  # made: the one taken, not the 1,000s after it
    whole = playback(recording, "chat", strategy=strategy)
    assert (first, *played.writes) == whole.writes
    assert (played.status, played.chunking) == (whole.status, whole.chunking)


def _alive(kind: type | tuple[type, ...]) -> int:
    gc.collect()
    return sum(isinstance(o, kind) for o in gc.get_objects())


@pytest.mark.slow  # gc.get_objects() scans the heap of a process holding the suite
@pytest.mark.parametrize("spec", ["original-content", "char", "random", "fixed:7"])
def test_a_client_holds_no_decoded_delta_of_the_recording(tmp_path: Path, spec: str) -> None:
    # tcr serve: per client, memory must not grow with the recording (issue 14); the
    # recording is decoded as its writes are taken, not held as deltas and pieces.
    deltas = [{"content": f"piece {n} "} for n in range(300)]
    recording = _sse_recording(tmp_path / "r.msgpack", deltas)
    strategy = None if spec == "original-content" else parse_strategy(spec)
    endpoint = "completion" if strategy is None else "chat"  # content level either way
    pieces = (Delta, playback_module._Text)  # a delta, and its text as cut
    alive = _alive(pieces)
    played = playing(recording, endpoint, strategy=strategy)
    first = next(played.writes)
    assert _alive(pieces) - alive <= 3  # the frame being decoded, not the 301 of the stream
    whole = playback(recording, endpoint, strategy=strategy)
    assert (first, *played.writes) == whole.writes


# --- content-level re-chunking ------------------------------------------------------------------


def test_char_sends_one_character_per_delta(tmp_path: Path) -> None:
    played = playback(_interleaved(tmp_path / "r.msgpack"), "chat", strategy=parse_strategy("char"))
    decoded = _decoded(played)
    assert all(len(piece) == 1 for piece in [*decoded.content, *decoded.reasoning])
    pieces = [f.arguments for d in decoded.deltas for f in d.tool_calls if f.arguments]
    assert pieces == list('{"city": "Paris"}')


def test_whole_joins_each_uninterrupted_run_into_one_delta(tmp_path: Path) -> None:
    played = playback(
        _interleaved(tmp_path / "r.msgpack"), "chat", strategy=parse_strategy("whole")
    )
    decoded = _decoded(played)
    assert decoded.content == ["Let me check.", " Done."]
    assert decoded.reasoning == ["Weather in Paris?"]


@pytest.mark.parametrize("spec", ["whole", "char", "fixed:2", "random", "splits:3"])
def test_channels_keep_their_order(tmp_path: Path, spec: str) -> None:
    recording = _interleaved(tmp_path / "r.msgpack")
    expected = ["reasoning", "content", "call", "content"]
    assert _channels(playback(recording, "chat")) == expected
    assert _channels(playback(recording, "chat", strategy=parse_strategy(spec))) == expected


def test_a_piece_is_sent_when_the_recorded_piece_it_starts_in_arrived(tmp_path: Path) -> None:
    recording = _interleaved(tmp_path / "r.msgpack")
    played = playback(recording, "chat", strategy=parse_strategy("char"))
    times = [write.t_ns for write in played.writes]
    assert times == sorted(times)
    content = [
        (w.t_ns, d.content) for w in played.writes for d in _decoded_one(w.data) if d.content
    ]
    assert content[:7] == [(3_000_000, c) for c in "Let me "]
    assert content[7] == (4_000_000, "c")


def _decoded_one(data: bytes) -> list[Any]:
    return decode_bytes("sse", [data]).deltas


def test_the_nth_request_gets_the_nth_random_chunking() -> None:
    recording = read_recording(next(p for p in RECORDINGS if p.stem == "think_then_call"))
    random = parse_strategy("random")
    first, again, second = (playback(recording, "chat", strategy=random, turn=t) for t in (0, 0, 1))
    assert first.writes == again.writes
    assert first.writes != second.writes
    assert (first.chunking, second.chunking) == ("random:8#0", "random:8#1")
    assert playback(recording, "chat", strategy=random, seed=1).writes != first.writes


def test_a_strategy_with_several_chunkings_goes_round_and_names_each(tmp_path: Path) -> None:
    recording = _sse_recording(tmp_path / "r.msgpack", [{"content": "abc"}])
    exhaustive = parse_strategy("exhaustive")
    played = [playback(recording, "chat", strategy=exhaustive, turn=turn) for turn in range(3)]
    assert [_decoded(p).content for p in played] == [["a", "bc"], ["ab", "c"], ["a", "bc"]]
    assert [p.chunking for p in played] == ["exhaustive@1", "exhaustive@2", "exhaustive@1"]


def test_a_transport_chunking_of_a_re_encoded_stream_says_so(tmp_path: Path) -> None:
    recording = _sse_recording(tmp_path / "r.msgpack", [{"content": "abc"}])
    bytes_3 = parse_strategy("bytes:3")
    assert playback(recording, "chat", strategy=bytes_3).chunking == "bytes:3"
    re_encoded = playback(recording, "completion", strategy=bytes_3).chunking
    assert re_encoded == "bytes:3 of the re-encoded stream"


@pytest.mark.slow
def test_a_role_in_every_delta_still_gives_one_character_per_piece(tmp_path: Path) -> None:
    # A server that repeats "role" in every delta makes each piece a run of its own;
    # each run finds its cuts by bisection (it was a scan of every cut per run).
    deltas = [{"role": "assistant", "content": "ab"} for _ in range(3000)]
    recording = _sse_recording(tmp_path / "r.msgpack", deltas)
    decoded = _decoded(playback(recording, "chat", strategy=parse_strategy("char")))
    assert decoded.content == list("ab" * 3000)


# --- transport-level re-chunking -------------------------------------------------------------------


def test_bytes_n_sends_the_recorded_bytes_in_writes_of_n() -> None:
    recording = read_recording(next(p for p in RECORDINGS if p.stem == "split_marker_llama_server"))
    exact = playback(recording, "chat")
    played = playback(recording, "chat", strategy=parse_strategy("bytes:7"))
    assert played.body == exact.body
    assert {len(w.data) for w in played.writes[:-1]} == {7}
    assert played.chunking == "bytes:7"


def test_bytes_on_a_re_encoded_stream_splits_the_encoded_bytes(tmp_path: Path) -> None:
    recording = read_recording(next(p for p in RECORDINGS if p.stem == "split_marker_mlx"))
    assert recording.kind == "chunks"
    played = playback(recording, "chat", strategy=parse_strategy("bytes:3"))
    assert played.body == playback(recording, "chat").body
    assert _decoded(played).text == decode(recording).text


# --- without streaming, interrupted, undecodable -----------------------------------------------------


def test_without_streaming_chat_answers_one_message(tmp_path: Path) -> None:
    played = playback(_interleaved(tmp_path / "r.msgpack"), "chat", stream=False)
    assert played.content_type == "application/json"
    choice = json.loads(played.body)["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"] == {
        "role": "assistant",
        "content": "Let me check. Done.",
        "reasoning_content": "Weather in Paris?",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }


def test_without_streaming_completion_answers_the_content(tmp_path: Path) -> None:
    played = playback(_interleaved(tmp_path / "r.msgpack"), "completion", stream=False)
    assert json.loads(played.body)["content"] == "Let me check. Done."


def test_an_interrupted_recording_plays_back_interrupted(tmp_path: Path) -> None:
    recording = _sse_recording(tmp_path / "r.msgpack", [{"content": "cut "}], complete=False)
    for spec in (None, "char", "bytes:2"):
        played = playback(recording, "chat", strategy=spec and parse_strategy(spec))
        assert not played.complete
        assert not _decoded(played).done


def test_a_recorded_error_answer_is_sent_as_it_came(tmp_path: Path) -> None:
    body = b'{"error": {"code": 500, "message": "context size exceeded"}}'
    response = {"status": 500, "headers": {"Content-Type": "application/json; charset=utf-8"}}
    header = new_header("sse", id="failed", response=response)
    write_recording(tmp_path / "e.msgpack", header, [(1_000_000, body)])
    played = playback(read_recording(tmp_path / "e.msgpack"), "chat")
    assert (played.status, played.content_type, played.body) == (
        500,
        "application/json; charset=utf-8",
        body,
    )


def test_a_recording_that_cannot_be_decoded_is_named(tmp_path: Path) -> None:
    header = new_header("sse", id="garbled")
    write_recording(tmp_path / "g.msgpack", header, [(0, b"data: {not json\n\n")])
    recording = read_recording(tmp_path / "g.msgpack")
    assert playback(recording, "chat").body == b"data: {not json\n\n"  # as recorded: not decoded
    with pytest.raises(TcrError, match=r"recording 'garbled', frame 0"):
        playback(recording, "chat", strategy=parse_strategy("char"))
