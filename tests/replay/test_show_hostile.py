"""``tcr show`` on recordings and file names written to attack a terminal (issue 36, item 4).

A recording is outside input: its header, its frames and its file name may hold
terminal escapes (an OSC that sets the window title, a CSI that clears the screen)
or text that rich would read as markup. Show draws every one of them, never sends it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tcr.commands.show import show
from tcr.corpus import new_header, write_recording

OSC = "\x1b]0;pwned\x07"  # sets the terminal's title
CSI = "\x9b2J"  # the 8-bit CSI: clears the screen where 8-bit controls are read
HOSTILE = OSC + CSI
ESCAPES = ("\x1b", "\x07", "\x9b")


def openai_event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {"choices": [{"finish_reason": finish, "index": 0, "delta": delta}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def sse_body() -> list[bytes]:
    pieces = [
        "Let me check.",
        "<tool_call>",
        '{"name": "get_weather", "arguments": {}}',
        "</tool_call>",
    ]
    return [
        openai_event({"role": "assistant"}),
        *(openai_event({"content": piece}) for piece in pieces),
        openai_event({}, "stop"),
        b"data: [DONE]\n\n",
    ]


def reads(events: list[bytes]) -> list[tuple[int, bytes]]:
    return [(1_000_000 * (i + 1), event) for i, event in enumerate(events)]


def llama_header(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": "rec",
        "source": {"backend": "llama-server", "model": "SmolLM2"},
        "request": {"messages": [{"role": "user", "content": "Weather?"}], "stream": True},
        "response": {"status": 200},
        "tools": ["get_weather"],
        "labels": {"dialect": "tool_call_tag", "origin": "handmade"},
    }
    return new_header("sse", **(fields | overrides))


def invoke(*args: str) -> Any:
    return CliRunner(env={"COLUMNS": "400"}).invoke(show, [*args])


def sent_raw(output: str) -> list[str]:
    return [c for c in ESCAPES if c in output]


def hostile_header(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": "rec" + HOSTILE,
        "source": {
            "endpoint": "http://127.0.0.1:8080/v1/chat/completions" + HOSTILE,
            "backend": "llama-server" + HOSTILE,
            "model": "SmolLM2" + HOSTILE,
        },
        "tools": ["get_weather", "tool" + HOSTILE],
        "labels": {"dialect": "tool_call_tag", "origin": "handmade", "note": "note" + HOSTILE},
    }
    return llama_header(**(fields | overrides))


def test_terminal_escapes_in_header_fields_are_drawn_not_sent(tmp_path: Path) -> None:
    path = write_recording(tmp_path / "rec.msgpack", hostile_header(), reads(sse_body()))

    result = invoke(str(path))

    assert result.exit_code == 0, result.output
    assert sent_raw(result.stdout) == []
    assert "recording rec␛]0;pwned␇⟨U+009B⟩2J" in result.stdout
    assert "SmolLM2␛]0;pwned␇" in result.stdout and "note=note␛]0;pwned␇" in result.stdout


def test_header_fields_that_look_like_markup_are_printed_as_written(tmp_path: Path) -> None:
    header = llama_header(id="[/x]", labels={"note": "[bold red]loud[/]", "origin": "handmade"})
    path = write_recording(tmp_path / "rec.msgpack", header, reads(sse_body()))

    result = invoke(str(path))

    assert result.exit_code == 0, result.output
    assert "recording [/x]" in result.stdout and "note=[bold red]loud[/]" in result.stdout


def test_stream_fields_with_escapes_or_markup_are_drawn_not_sent(tmp_path: Path) -> None:
    call = {"index": 0, "id": "c" + OSC, "function": {"name": "f" + OSC, "arguments": "{}" + OSC}}
    body = [
        openai_event({"role": "assistant", "content": "[/x] " + HOSTILE}),
        openai_event({"tool_calls": [call]}),
        openai_event({}, "stop[/x]" + OSC),
        b"data: [DONE]\n\n",
    ]
    path = write_recording(tmp_path / "rec.msgpack", llama_header(), reads(body))

    result = invoke(str(path))

    assert "Traceback" not in result.output and result.exit_code in (0, 1), result.output
    assert sent_raw(result.stdout) == []
    assert "[/x]" in result.stdout and "f␛]0;pwned␇" in result.stdout


def test_a_file_name_with_escapes_is_drawn_not_sent(tmp_path: Path) -> None:
    path = write_recording(tmp_path / f"rec{OSC}.msgpack", llama_header(), reads(sse_body()))

    result = invoke(str(path))

    assert result.exit_code == 0, result.output
    assert sent_raw(result.stdout) == [] and "rec␛]0;pwned␇.msgpack" in result.stdout


def test_an_unreadable_file_with_escapes_in_its_name_is_one_line_drawn_not_sent(
    tmp_path: Path,
) -> None:
    path = tmp_path / f"bad{OSC}.msgpack"
    path.write_bytes(b"\xc1\xc1")

    result = invoke(str(path))

    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert sent_raw(result.stderr) == [] and "bad␛]0;pwned␇.msgpack" in result.stderr


NOT_UTF8 = b"rec\xff\xfe.msgpack"


@pytest.fixture
def not_utf8_file(tmp_path: Path) -> Path:
    path = Path(os.fsdecode(bytes(tmp_path) + b"/" + NOT_UTF8))
    return write_recording(path, llama_header(), reads(sse_body()))


def tcr_show(*args: str) -> subprocess.CompletedProcess[bytes]:
    """The installed command, its output a UTF-8 pipe that refuses what is not UTF-8."""
    tcr = Path(sys.executable).with_name("tcr")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "PYTHONUTF8": "1", "COLUMNS": "400"}
    return subprocess.run([str(tcr), "show", *args], capture_output=True, env=env, check=False)


@pytest.mark.process
def test_a_file_name_that_is_not_utf8_is_shown_in_its_escaped_form(not_utf8_file: Path) -> None:
    done = tcr_show(str(not_utf8_file))

    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"rec\\xff\\xfe.msgpack" in done.stdout


@pytest.mark.process
def test_json_names_a_file_that_is_not_utf8_in_its_escaped_form(not_utf8_file: Path) -> None:
    done = tcr_show(str(not_utf8_file), "--json")

    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert json.loads(done.stdout)["path"].endswith("rec\\xff\\xfe.msgpack")


@pytest.mark.process
def test_an_unreadable_file_that_is_not_utf8_is_one_line_in_its_escaped_form(
    tmp_path: Path,
) -> None:
    path = Path(os.fsdecode(bytes(tmp_path) + b"/bad\xff.msgpack"))
    path.write_bytes(b"\xc1\xc1")

    done = tcr_show(str(path))

    assert done.returncode == 2 and done.stderr.count(b"\n") == 1, done.stderr
    assert b"bad\\xff.msgpack" in done.stderr


@pytest.mark.process
def test_reports_of_a_file_that_is_not_utf8_name_it_in_its_escaped_form(
    not_utf8_file: Path, tmp_path: Path
) -> None:
    junit, sarif = tmp_path / "show.xml", tmp_path / "show.sarif"

    broken = ("--rechunk", "char", "--detector", "tcr.detector.broken:per_chunk_markers")
    done = tcr_show(str(not_utf8_file), *broken, "--junit", str(junit), "--sarif", str(sarif))

    assert done.returncode == 1, done.stderr.decode(errors="replace")
    # a backslash is two in JSON
    unescaped = sarif.read_text(encoding="utf-8").replace("\\\\", "\\")
    assert "rec\\xff\\xfe.msgpack" in unescaped
    assert "rec\\xff\\xfe.msgpack" in junit.read_text(encoding="utf-8")
