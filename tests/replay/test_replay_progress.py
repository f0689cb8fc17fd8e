"""Replay progress on stderr: plain lines every few seconds when it is not a terminal."""

from __future__ import annotations

import io
import time

from tcr.replay.progress import EVERY, ReplayProgress


def test_progress_line_says_how_many_are_done_and_for_how_long() -> None:
    now = [100.0]
    progress = ReplayProgress(io.StringIO(), enabled=False, clock=lambda: now[0])
    with progress:
        assert progress.line() == "tcr replay: starting, 0 s"
        progress("regressions/a.msgpack", 12, 56)
        now[0] += 40.4
        assert progress.line() == "tcr replay: 12/56 done, 40 s (regressions/a.msgpack)"


def test_a_stream_that_is_not_a_terminal_gets_plain_lines_at_the_interval() -> None:
    stream = io.StringIO()
    with ReplayProgress(stream, every=0.02) as advance:
        advance("corpus/a.msgpack", 1, 3)
        time.sleep(0.15)
    lines = stream.getvalue().splitlines()
    assert 2 <= len(lines) <= 8
    assert all(line.startswith("tcr replay: 1/3 done, ") for line in lines)
    assert all(line.endswith(" s (corpus/a.msgpack)") for line in lines)
    assert "\x1b" not in stream.getvalue()


def test_a_run_shorter_than_the_interval_prints_no_progress() -> None:
    stream = io.StringIO()
    with ReplayProgress(stream) as advance:
        advance("corpus/a.msgpack", 0, 1)
    assert stream.getvalue() == ""
    assert EVERY <= 5


def test_disabled_progress_prints_nothing() -> None:
    stream = io.StringIO()
    with ReplayProgress(stream, enabled=False, every=0.01) as advance:
        advance("corpus/a.msgpack", 0, 1)
        time.sleep(0.05)
    assert stream.getvalue() == ""


def test_a_closed_stream_stops_the_progress_lines_not_the_replay() -> None:
    stream = io.StringIO()
    with ReplayProgress(stream, every=0.01) as advance:
        stream.close()
        advance("corpus/a.msgpack", 0, 1)
        time.sleep(0.05)
