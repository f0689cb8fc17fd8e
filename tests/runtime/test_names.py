"""Names as tcr writes them (tcr._runtime.names) and the report files they go into: valid
UTF-8, valid XML and valid JSON whatever a file name or a message holds (issue 36, item 3)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tcr._runtime import junit
from tcr._runtime.names import SafeOutput, safe_data, safe_text, shell_join, xml_text
from tcr._runtime.report_files import write_sarif_log
from tcr.errors import TcrError
from tcr.sarif import Result, artifact_location, to_sarif

BAD = os.fsdecode(b"bad\xff.msgpack")

# Any text, lone surrogates and control characters included: what a file name, a
# recording's field or a detector's message may hold.
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


def test_an_undecodable_byte_is_written_as_its_escape() -> None:
    assert safe_text(BAD) == "bad\\xff.msgpack"
    assert safe_text(BAD) == os.fsencode(BAD).decode("utf-8", "backslashreplace")


def test_text_that_encodes_is_left_as_it_is() -> None:
    assert safe_text("naïve\n<tool_call>") == "naïve\n<tool_call>"


def test_a_surrogate_no_byte_escapes_is_written_as_its_code_point() -> None:
    assert safe_text("a\ud800b") == "a\\ud800b"


def test_xml_text_escapes_what_xml_cannot_hold_even_as_a_reference() -> None:
    assert xml_text("a\x00b\x1bc\tok\n") == "a\\x00b\\x1bc\tok\n"


def test_safe_data_reaches_keys_and_nested_values() -> None:
    assert safe_data({BAD: [BAD, 1, None]}) == {"bad\\xff.msgpack": ["bad\\xff.msgpack", 1, None]}


def test_a_sarif_uri_percent_encodes_the_byte_itself() -> None:
    assert artifact_location(f"corpus/{BAD}", PurePosixPath("/w")) == {
        "uri": "corpus/bad%FF.msgpack",
        "uriBaseId": "%SRCROOT%",
    }
    assert artifact_location(f"/elsewhere/{BAD}", PurePosixPath("/w")) == {
        "uri": "file:///elsewhere/bad%FF.msgpack"
    }


def test_safe_output_writes_each_string_in_its_safe_form() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    SafeOutput(stream).write(BAD)
    stream.flush()
    assert stream.buffer.getvalue() == b"bad\\xff.msgpack"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name",
    [
        BAD,
        "plain.msgpack",
        "it's here",
        "back\\slash",
        "tab\there",
        os.fsdecode(b"\xc3(\x1b]0;t\x07"),
    ],
)
def test_a_shell_word_reads_back_as_the_name_s_bytes(name: str) -> None:
    command = shell_join(["printf", "%s", name])
    command.encode("utf-8")  # printable anywhere
    assert "\n" not in command
    out = subprocess.run(["bash", "-c", command], capture_output=True, check=True).stdout
    assert out == os.fsencode(name)


def test_a_plain_command_is_quoted_as_shlex_joins_it() -> None:
    assert shell_join(["tcr", "replay", "a b.msgpack", "--rechunk", "splits:3"]) == (
        "tcr replay 'a b.msgpack' --rechunk splits:3"
    )


@given(name=texts, message=texts, kind=texts)
def test_a_junit_file_is_valid_xml_whatever_its_names_hold(
    tmp_path_factory: pytest.TempPathFactory, name: str, message: str, kind: str
) -> None:
    path = tmp_path_factory.mktemp("junit") / "out.xml"
    case = junit.Case(name, kind, 0.5, junit.Outcome.FAILURE, message, kind, message)
    try:
        junit.write_suite(path, name, [case], properties=[(kind, message)])
    except TcrError:
        return
    path.read_bytes().decode("utf-8")
    root = ET.parse(path).getroot()
    (read,) = root.iter("testcase")
    assert read.get("classname") == xml_text(name)


@given(name=texts, message=texts)
@example(name="\ud800", message="")  # no byte stands for it: os.fsencode raised (CI found it)
@example(name="/elsewhere/\ud800", message="")  # outside the root: a file URI
def test_a_sarif_file_is_valid_utf8_json_whatever_its_names_hold(
    tmp_path_factory: pytest.TempPathFactory, name: str, message: str
) -> None:
    path = tmp_path_factory.mktemp("sarif") / "out.sarif"
    result = Result("crash", message, name or "x", (name, message))
    try:
        write_sarif_log(path, to_sarif([result], root=Path("/w")))
    except TcrError:
        return
    log = json.loads(path.read_bytes().decode("utf-8"))
    (read,) = log["runs"][0]["results"]
    assert read["message"]["text"] == safe_text(message)
