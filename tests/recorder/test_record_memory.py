"""What ``tcr record`` and ``tcr import`` hold beside the stream: its content at most,
never a frame or a delta per event (issue 36, item 8). Figures at 50 MB are in
benchmarks/RESULTS.md (bench_memory.py); here, traced memory on a small stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import traced_peak

from tcr.corpus import new_header, write_recording
from tcr.recorder import import_file, summarize

EVENTS = 5_000  # one character each: a frame or a delta kept per event is over 0.5 MB
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'


@pytest.fixture(scope="module")
def many_events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("many") / "many.msgpack"
    frames = [(n, EVENT) for n in range(EVENTS)] + [(EVENTS, b"data: [DONE]\n\n")]
    return write_recording(path, new_header("sse", id="many"), frames)


def test_a_summary_holds_no_frame_or_delta_per_event(many_events: Path) -> None:
    # Before: 1.5 MB here (a frame list and a delta per event), 5.9 MB at 20,000 events.
    assert traced_peak(lambda: summarize(many_events)) < 600_000


def test_a_summary_read_a_frame_at_a_time_says_what_the_whole_recording_says(
    many_events: Path,
) -> None:
    summary = summarize(many_events)

    assert (summary.frames, summary.bytes) == (EVENTS + 1, EVENTS * len(EVENT) + 14)
    assert (summary.ttfb_ms, summary.duration_ms) == (0.0, EVENTS / 1e6)
    assert summary.chars == EVENTS and summary.done and summary.complete


def test_a_body_that_does_not_decode_is_previewed_raw_and_counted_whole(tmp_path: Path) -> None:
    html = [b"<html><body>" + b"Bad gateway " * 40, b"</body></html>", b"x" * 1000]
    path = write_recording(tmp_path / "html.msgpack", new_header("sse"), list(enumerate(html)))

    summary = summarize(path)

    assert summary.preview.startswith("<html><body>Bad gateway") and len(summary.preview) == 120
    assert (summary.frames, summary.bytes) == (3, sum(map(len, html)))


def test_an_import_grows_by_the_dump_and_no_frame_per_event(tmp_path: Path) -> None:
    def import_peak(events: int) -> tuple[int, int]:
        dump = tmp_path / f"dump-{events}.sse"
        dump.write_bytes(EVENT * events + b"data: [DONE]\n\n")
        peak = traced_peak(lambda: import_file(dump, tmp_path / f"out-{events}.msgpack"))
        return dump.stat().st_size, peak

    (small, small_peak), (large, large_peak) = import_peak(EVENTS), import_peak(4 * EVENTS)

    # The dump is held once; before, its pieces too, in a list: 3.7 times its growth.
    assert large_peak - small_peak < 1.3 * (large - small)


@pytest.mark.parametrize("last", [0, 5], ids=["exactly-a-preview", "one-piece-more"])
def test_a_preview_read_from_the_deltas_ends_as_the_whole_text_does(
    tmp_path: Path, last: int
) -> None:
    def event(text: str) -> bytes:
        return b'data: {"choices":[{"index":0,"delta":{"content":"%s"}}]}\n\n' % text.encode()

    frames = [(0, event("a" * 120))] + ([(1, event("b" * last))] if last else [])
    path = write_recording(tmp_path / "p.msgpack", new_header("sse"), frames)

    summary = summarize(path)

    assert summary.chars == 120 + last
    assert summary.preview == ("a" * 120 if not last else "a" * 119 + "…")
