"""Replay progress on stderr: plain lines every few seconds when it is not a terminal."""

from __future__ import annotations

import io
import itertools
import time

from tcr.replay.progress import EVERY, LONGEST, ReplayProgress, gaps


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


def test_the_gap_between_plain_lines_doubles_up_to_a_minute() -> None:
    # a piped run stays short to read however long it takes (issue 15: at most 25 lines
    # for a passing replay), and is never silent for more than a minute
    assert list(itertools.islice(gaps(5, 60), 8)) == [5, 5, 10, 20, 40, 60, 60, 60]
    at = list(itertools.takewhile(lambda t: t <= 30 * 60, itertools.accumulate(gaps())))
    assert sum(t <= 180 for t in at) <= 6 and len(at) <= 35
    assert max(gaps_ for gaps_, _ in zip(gaps(), range(100), strict=False)) == LONGEST
