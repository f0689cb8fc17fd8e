"""Hostile harness processes: whatever a detector process does, tcr stays bounded and tidy.

A harness may be buggy or hostile: a bad ``--detector-cmd`` line is one error
line, an endless answer line or a stderr flood costs tcr a bounded amount of
memory and disk, and the processes a harness starts end with it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT
from tcr.detector import Text
from tcr.errors import EXIT_ERROR, TcrError
from tcr.replay import run
from tcr.replay.model import Failure
from tcr.signature import TIMEOUT
from tcr.stdio import (
    LINE_LIMIT,
    STDERR_TAIL,
    DetectorProcessError,
    command_factory,
)

pytestmark = [pytest.mark.process, pytest.mark.slow]

SAMPLE = ROOT / "recorded" / "tool_call_tag_json.msgpack"

# A line-at-a-time harness echoing each chunk back as text, which misbehaves on
# request: MODE "huge" answers the feed at chunk AT with an endless event of SIZE
# bytes, written a MiB at a time (the harness itself stays small); "flood" writes
# SIZE bytes to stderr before answering ``new`` and dies with last words at chunk
# AT; "spawn" starts a grandchild (its pid in PIDFILE) that outlives it unless
# killed, then hangs (SIZE 1) or exits (SIZE 2) at chunk AT. From chunk AT on, "big"
# adds SIZE bytes of text to each answer, "many" SIZE empty texts, "slow" waits SIZE ms
# before each, and "stops" answers no more. Each start adds a line to PIDFILE.starts.
HARNESS = """
import json, os, subprocess, sys, time

mode, at, size, pidfile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with open(pidfile + ".starts", "a") as starts:
    starts.write("started\\n")
if mode == "spawn":
    child = subprocess.Popen(["sleep", "120"])
    with open(pidfile, "w") as out:
        out.write(str(child.pid))
fed = 0

def say(answer):
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()

for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "new":
        if mode == "flood":
            for _ in range(size >> 16):
                sys.stderr.write("noise " * 10922 + "\\n")
        fed = 0
        say({"ok": True})
    elif request["op"] == "feed":
        if fed == at and mode == "huge":
            sys.stdout.write('{"events":[{"type":"text","text":"')
            for _ in range(size >> 20):
                sys.stdout.write("x" * (1 << 20))
            sys.stdout.write('"}]}\\n')
            sys.stdout.flush()
        if fed == at and mode == "flood":
            print("panic: last words", file=sys.stderr, flush=True)
            sys.exit(3)
        if fed == at and mode == "spawn" and size == 1:
            time.sleep(120)
        if fed == at and mode == "spawn" and size == 2:
            sys.exit(3)
        events = [{"type": "text", "text": request["chunk"]}]
        if fed >= at and mode == "big":
            events.append({"type": "text", "text": "x" * size})
        if fed >= at and mode == "many":
            events += [{"type": "text", "text": ""}] * size
        if fed >= at and mode == "slow":
            time.sleep(size / 1000)
        if fed >= at and mode == "stops":
            time.sleep(120)
        fed += 1
        say({"events": events})
    elif request["op"] == "finish":
        say({"events": []})
    else:
        say({"error": "unsupported"})
"""


def hostile(tmp_path: Path, mode: str, *, at: int = 2, size: int = 0) -> str:
    script = tmp_path / "hostile.py"
    script.write_text(textwrap.dedent(HARNESS))
    pidfile = tmp_path / "grandchild.pid"
    return shlex.join([sys.executable, str(script), mode, str(at), str(size), str(pidfile)])


def crashes(command: str, *, timeout: float = 5.0) -> list[tuple[int | None, str]]:
    """The crash findings of a replay of SAMPLE through ``command``: (chunk, message)."""
    return [(f.violation.chunk, f.violation.message) for f in crash_failures(command, timeout)]


def crash_failures(command: str, timeout: float = 5.0, **options: Any) -> list[Failure]:
    """The crash failures of a replay of SAMPLE through ``command``."""
    options = {"strategies": ["original"], **options}
    with command_factory(command, timeout=timeout) as factory:
        report = run([SAMPLE], detector=factory, checks=["crash"], **options)
    return [f for _, f in report.failures if f.violation.check == "crash"]


def starts(tmp_path: Path) -> int:
    """How many times the hostile harness was started."""
    return len((tmp_path / "grandchild.pid.starts").read_text().splitlines())


# --detector-cmd that shlex cannot split


@pytest.mark.parametrize("command", ["python 'abc", 'python "abc', "python abc\\"])
def test_detector_cmd_that_cannot_be_split_is_a_tcr_error_naming_the_option(command: str) -> None:
    with pytest.raises(TcrError, match=r"^--detector-cmd: .*(quotation|escape)"):
        command_factory(command)


def test_detector_cmd_that_cannot_be_split_exits_2_with_one_line() -> None:
    result = CliRunner().invoke(main, ["replay", str(SAMPLE), "--detector-cmd", "python 'abc"])
    assert result.exit_code == EXIT_ERROR
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert "--detector-cmd" in result.output and "No closing quotation" in result.output


# An answer line without end


def test_an_answer_line_over_the_limit_is_a_crash_at_its_chunk(tmp_path: Path) -> None:
    found = crashes(hostile(tmp_path, "huge", size=LINE_LIMIT + (1 << 20)))
    assert len(found) == 1
    chunk, message = found[0]
    assert chunk == 2
    assert f"printed garbage: an answer line over {LINE_LIMIT >> 20} MiB" in message


def test_an_answer_line_under_the_limit_is_read(tmp_path: Path) -> None:
    command = hostile(tmp_path, "huge", at=0, size=LINE_LIMIT - (1 << 20))
    with command_factory(command) as factory:
        [event] = factory().feed("a")
    assert isinstance(event, Text) and len(event.text) == LINE_LIMIT - (1 << 20)


def test_an_answer_as_long_as_a_large_message_asks_for_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit grows with what the message sent: an echo of a huge chunk is an answer.
    monkeypatch.setattr("tcr.stdio._pipe.LINE_LIMIT", 1 << 10)
    with command_factory(hostile(tmp_path, "ok")) as factory:
        detector = factory()
        assert detector.feed("y" * 100_000) == [Text("y" * 100_000)]
        assert list(detector.feed_many(["z" * 50_000] * 3)) == [[Text("z" * 50_000)]] * 3


MEASURE = """
import json, sys
from tcr.replay import run
from tcr.stdio import command_factory

with command_factory(sys.argv[1]) as factory:
    report = run([sys.argv[2]], detector=factory, strategies=["original"], checks=["crash"])
# VmHWM, not ru_maxrss: that one keeps the peak of the process that started this one.
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) << 10 for line in status if line.startswith("VmHWM:"))
messages = [f.violation.message for _, f in report.failures]
print(json.dumps({"peak": peak, "messages": messages}))
"""


def test_memory_stays_bounded_when_a_harness_answers_an_endless_line(tmp_path: Path) -> None:
    # 256 MiB in one line: tcr read it all before the limit (and 100 MB took it to 1.6 GB).
    # The harness writes a MiB at a time and is killed once tcr has read 16 of them.
    size = 16 * LINE_LIMIT
    command = hostile(tmp_path, "huge", size=size)
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, command, str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    measured = json.loads(result.stdout)
    assert measured["peak"] < 4 * LINE_LIMIT, measured  # the interpreter, tcr and the limit
    assert len(measured["messages"]) == 1 and "line over 16 MiB" in measured["messages"][0]


# A stderr flood


def open_file_bytes() -> int:
    """The bytes of the regular files this process holds open (an unlinked temp file too)."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            stat = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if (stat.st_mode & 0o170000) == 0o100000:
            total += stat.st_size
    return total


def test_a_stderr_flood_keeps_only_a_bounded_tail(tmp_path: Path) -> None:
    before = open_file_bytes()
    with command_factory(hostile(tmp_path, "flood", size=8 << 20)) as factory:
        detector = factory()
        assert detector.feed("a") == [Text("a")] and detector.feed("b") == [Text("b")]
        assert open_file_bytes() - before < STDERR_TAIL
        with pytest.raises(DetectorProcessError, match=r"exited with code 3: panic: last words$"):
            detector.feed("c")


def test_a_crash_after_a_stderr_flood_still_names_its_last_words(tmp_path: Path) -> None:
    found = crashes(hostile(tmp_path, "flood", size=1 << 20))
    assert len(found) == 1 and found[0][0] == 2
    assert "exited with code 3: panic: last words in feed() of chunk 2" in found[0][1]


# Processes the harness starts


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def grandchild(tmp_path: Path) -> Iterator[Path]:
    pidfile = tmp_path / "grandchild.pid"
    yield pidfile
    if pidfile.exists() and alive(pid := int(pidfile.read_text())):
        os.kill(pid, 9)  # what a failing test leaves behind


def gone(pidfile: Path) -> bool:
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_closing_the_factory_ends_what_the_harness_started(
    tmp_path: Path, grandchild: Path
) -> None:
    with command_factory(hostile(tmp_path, "spawn", at=99)) as factory:
        assert factory().feed("a") == [Text("a")]
    assert gone(grandchild)


@pytest.mark.parametrize(
    ("size", "message"), [(1, r"did not answer within 0\.5 s$"), (2, "exited with code 3$")]
)
def test_a_hanging_or_crashing_harness_is_ended_with_what_it_started(
    size: int, message: str, tmp_path: Path, grandchild: Path
) -> None:
    command = hostile(tmp_path, "spawn", size=size)
    with command_factory(command, timeout=0.5) as factory:
        detector = factory()
        assert detector.feed("a") == [Text("a")] and detector.feed("b") == [Text("b")]
        with pytest.raises(DetectorProcessError, match=message):
            detector.feed("c")
        assert gone(grandchild)


# Answers bounded in all, not only each line (issue 36, item 5)


def test_answers_over_the_limit_in_all_are_a_crash_however_short_each_line(
    tmp_path: Path,
) -> None:
    # 12 MB an answer on this 160-character recording took 248 s and 1.06 GB: each line
    # was under the limit, their sum was not bounded.
    command = hostile(tmp_path, "big", at=0, size=6 << 20)
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, command, str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    measured = json.loads(result.stdout)
    # the interpreter, tcr, and what the limit lets in: two answers, read and parsed
    assert measured["peak"] < 6 * LINE_LIMIT, measured
    assert measured["messages"], measured
    assert all("answers over 16 MiB to one message" in m for m in measured["messages"])


def test_more_events_than_the_input_allows_are_a_bad_event_crash_at_once(
    tmp_path: Path,
) -> None:
    # 200,000 events an answer was killed at 500 s: the bound is in proportion to the input
    (failure,) = crash_failures(hostile(tmp_path, "many", at=1, size=20_000), minimize=False)
    assert failure.violation.chunk == 1
    assert failure.signature.kind == "bad event"
    assert re.search(
        r"returned 20,002 events in all for \d+ characters, over the bound of ",
        failure.violation.message,
    )


# The time limit bounds the message, not each answer (issue 36, item 6)


def test_a_harness_answering_each_request_in_time_but_slowly_is_over_time_once(
    tmp_path: Path,
) -> None:
    # 0.3 s an answer is within a 0.5 s timeout, but the message's 67 answers took 20 s:
    # one such harness cost 130 timeouts. Now the message is over its limit in about one.
    command = hostile(tmp_path, "slow", at=0, size=300)
    failures = crash_failures(command, 0.5, strategies=["original", "random"], runs=3)
    assert [f.signature.kind for f in failures] == [TIMEOUT, TIMEOUT]  # one per strategy
    assert all(f.violation.chunk is not None and f.violation.chunk <= 2 for f in failures)
    assert "took longer than 0.5 s over one message" in failures[0].violation.message


def test_a_harness_that_stops_mid_message_is_found_over_time_and_not_shrunk(
    tmp_path: Path,
) -> None:
    # Each shrinking step would wait the whole timeout again, and restart the harness.
    (failure,) = crash_failures(hostile(tmp_path, "stops", at=3), 0.5)
    assert failure.violation.chunk == 3
    assert failure.signature.kind == TIMEOUT
    assert failure.original_splits == len(failure.splits)  # not shrunk
    assert starts(tmp_path) <= 4  # the whole run's, then the hang's, its revival's, the next
