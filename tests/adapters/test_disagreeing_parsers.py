"""Correct parsers that choose differently from the reference (issue 32, item 4).

Each parser in ``tests/parsers`` named here is correct, in an engine's shape, and
makes legitimate choices the reference does not: undeclared names accepted and
``tools=[]`` parsed (``undeclared``); strict arguments, malformed and unterminated
blocks dropped (``strict``); white space around calls trimmed and a closer's
prefix held (``trimming``); Qwen3-Coder values all strings, ``<tool_call>`` read
only before a newline (``qwen3_coder``). Claiming only its dialect, each must get
no finding from replay and fuzz once tcr reads such choices as policies; each
``Bug`` switched on must still be one finding, named for the bug.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import pytest
from helpers import chunkings
from parsers import qwen3_coder, strict, trimming, undeclared
from parsers.hermes import Bug

from tcr.claims import Claim
from tcr.corpora import bundled
from tcr.detector import Event, Rejected, Text, ToolCall
from tcr.detector.events import merge_text
from tcr.fuzz import run as fuzz
from tcr.fuzz.report import findings
from tcr.probes import read_policies
from tcr.replay import run as replay

POLICY_XFAIL = pytest.mark.xfail(reason="policy inference (issue 32) not yet built", strict=False)


@dataclass(frozen=True, slots=True)
class Parser:
    module: ModuleType
    dialect: str
    bugs: tuple[Bug, ...]

    @property
    def spec(self) -> str:
        return f"{self.module.__name__}:factory"


PARSERS = {
    "undeclared": Parser(undeclared, "hermes", tuple(Bug)),
    "strict": Parser(strict, "hermes", tuple(Bug)),
    "trimming": Parser(trimming, "hermes", tuple(Bug)),
    "qwen3_coder": Parser(qwen3_coder, "qwen3_coder", qwen3_coder.BUGS),
}
BUGGED = [(name, bug) for name, parser in PARSERS.items() for bug in parser.bugs]


def events(make: Callable[..., object], chunks: list[str], tools: list[str] | None) -> list[Event]:
    detector = make(tools=tools)
    out: list[Event] = []
    for chunk in chunks:
        out += detector.feed(chunk)  # type: ignore[attr-defined]
    out += detector.finish()  # type: ignore[attr-defined]
    return merge_text(out)


def read(name: str, text: str, tools: list[str] | None = None) -> tuple[str, list[object]]:
    """What the parser ``name`` makes of ``text`` whole: the text shown and the calls."""
    found = events(PARSERS[name].module.factory, [text], tools)
    shown = "".join(e.text for e in found if isinstance(e, Text))
    calls: list[object] = [
        (e.name, json.loads(e.arguments)) for e in found if isinstance(e, ToolCall)
    ]
    calls += ["rejected" for e in found if isinstance(e, Rejected)]
    return shown, calls


def call(name: str, arguments: dict[str, object]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


WEATHER = call("get_weather", {"city": "Paris"})
TIME = call("get_time", {"zone": "CET"})
HERMES = {
    "call": f"Let me check.\n<tool_call>\n{WEATHER}\n</tool_call>\nDone.",
    "two_calls": f"<tool_call>\n{WEATHER}\n</tool_call>\n<tool_call>\n{TIME}\n</tool_call>\nok",
    "closer_in_a_string": '<tool_call>{"name": "s", "arguments": {"q": "a \\"}\\" </tool_call> {"}}'
    "</tool_call> after",
    "malformed": 'A <tool_call>{"name": broken}</tool_call> B',
    "unterminated_call": f"A <tool_call>{WEATHER}",
    "unterminated_in_closer": f"A <tool_call>{WEATHER}</tool_",
    "cut_off_opener": "Is 2 < 3? Yes, and <tool_",
    "parameters": '<tool_call>{"name": "get_weather", "parameters": {"city": "Paris"}}</tool_call>',
    "spaces_around": f"Hi \n <tool_call>{WEATHER}</tool_call>\n\n<tool_call>{TIME}</tool_call>  bye  ",
}
FUNCTION = (
    "<function=run_sql>\n<parameter=query>\nSELECT 1\n</parameter>\n"
    "<parameter=limit>\n10\n</parameter>\n</function>"
)
QWEN3 = {
    "call": f"Running it:\n<tool_call>\n{FUNCTION}\n</tool_call> done",
    "two_functions": f"<tool_call>\n{FUNCTION}\n{FUNCTION}\n</tool_call>",
    "no_newline_after_opener": f"<tool_call>{FUNCTION}</tool_call>",
    "json_looking_value": "<tool_call>\n<function=f>\n<parameter=o>\n"
    '{"a": 1}\n</parameter>\n</function>\n</tool_call>',
    "closing_tag_in_passing": "<tool_call>\n<function=f>\n<parameter=q>\na</parameter> b\n"
    "</parameter>\n<parameter=r>\nx\n</parameter>\n</function>\n</tool_call>",
    "malformed": "A <tool_call>\n<function=f>\n<parameter=q>\n1\n</function>\n</tool_call> B",
    "unterminated": f"A <tool_call>\n{FUNCTION}",
    "cut_off_opener": "A <tool_call>",
}
MESSAGES = [
    (name, label, text)
    for name in PARSERS
    for label, text in (QWEN3 if name == "qwen3_coder" else HERMES).items()
]


# --- each parser alone: the same events under every chunking --------------------------


@pytest.mark.parametrize("tools", [None, ["get_weather"]], ids=["no_tools", "declared"])
@pytest.mark.parametrize(("name", "label", "text"), MESSAGES, ids=lambda v: str(v)[:20])
def test_whole_per_character_and_every_split_give_the_same_events(
    name: str, label: str, text: str, tools: list[str] | None
) -> None:
    make = PARSERS[name].module.factory
    whole = events(make, [text], tools)
    for how, chunks in chunkings(text, randoms=20):
        assert events(make, chunks, tools) == whole, (label, how)


# --- the choices each parser makes ---------------------------------------------------


def test_undeclared_accepts_a_tool_the_request_did_not_declare() -> None:
    assert read("undeclared", HERMES["call"], tools=["get_time"]) == (
        "Let me check.\n\nDone.",
        [("get_weather", {"city": "Paris"})],
    )


def test_undeclared_parses_calls_when_no_tools_are_offered() -> None:
    assert read("undeclared", HERMES["call"], tools=[])[1] == [("get_weather", {"city": "Paris"})]


def test_strict_reads_only_an_arguments_object() -> None:
    for loose in (
        HERMES["parameters"],
        '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>',
        '<tool_call>{"name": "f"}</tool_call>',
        '<tool_call>{"type": "function", "function": {"name": "f", "arguments": {}}}</tool_call>',
    ):
        assert read("strict", loose) == ("", []), loose


def test_strict_drops_a_malformed_block() -> None:
    assert read("strict", HERMES["malformed"]) == ("A  B", [])


def test_strict_drops_an_unterminated_block_even_when_its_body_is_a_call() -> None:
    assert read("strict", HERMES["unterminated_call"]) == ("A ", [])


def test_strict_shows_the_body_of_a_call_to_an_undeclared_tool() -> None:
    assert read("strict", HERMES["call"], tools=["get_time"]) == (
        f"Let me check.\n\n{WEATHER}\n\nDone.",
        [],
    )


def test_trimming_drops_the_white_space_around_and_between_calls() -> None:
    assert read("trimming", HERMES["spaces_around"])[0] == "Hibye  "


def test_trimming_keeps_white_space_around_a_block_that_is_no_call() -> None:
    assert read("trimming", HERMES["malformed"]) == ('A {"name": broken} B', [])


def test_trimming_completes_a_call_cut_off_inside_its_closer() -> None:
    assert read("trimming", HERMES["unterminated_in_closer"]) == (
        "A",
        [("get_weather", {"city": "Paris"})],
    )


def test_trimming_releases_held_white_space_at_the_end() -> None:
    assert read("trimming", "Hello  \n") == ("Hello  \n", [])


def test_qwen3_coder_reads_every_value_as_a_string() -> None:
    assert read("qwen3_coder", QWEN3["call"]) == (
        "Running it:\n done",
        [("run_sql", {"query": "SELECT 1", "limit": "10"})],
    )


def test_qwen3_coder_does_not_type_a_value_that_looks_like_json() -> None:
    assert read("qwen3_coder", QWEN3["json_looking_value"])[1] == [("f", {"o": '{"a": 1}'})]


def test_qwen3_coder_reads_an_opener_without_its_newline_as_text() -> None:
    assert read("qwen3_coder", QWEN3["no_newline_after_opener"]) == (
        QWEN3["no_newline_after_opener"],
        [],
    )


def test_qwen3_coder_ends_a_value_only_where_the_next_element_follows() -> None:
    assert read("qwen3_coder", QWEN3["closing_tag_in_passing"])[1] == [
        ("f", {"q": "a</parameter> b", "r": "x"})
    ]


def test_qwen3_coder_reads_several_functions_in_one_block() -> None:
    sql = ("run_sql", {"query": "SELECT 1", "limit": "10"})
    assert read("qwen3_coder", QWEN3["two_functions"]) == ("", [sql, sql])


def test_qwen3_coder_shows_a_malformed_block_and_rejects_the_call_it_began() -> None:
    shown, calls = read("qwen3_coder", QWEN3["malformed"])
    assert (shown, calls) == (
        "A \n<function=f>\n<parameter=q>\n1\n</function>\n B",
        ["rejected"],
    )


def test_qwen3_coder_reads_a_closer_cut_off_at_the_end_as_body_text() -> None:
    text = "<tool_call>\n<function=f>\n</function>\n</tool_"
    assert read("qwen3_coder", text) == (text.removeprefix("<tool_call>"), ["rejected"])


def test_qwen3_coder_holds_the_opener_until_the_newline_can_be_seen() -> None:
    assert read("qwen3_coder", QWEN3["cut_off_opener"]) == ("A <tool_call>", [])


# --- judged by tcr, claiming only the dialect -----------------------------------------


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("undeclared", "undeclared accepted, tools=[] parse, long blocks held"),
        (
            "strict",
            "malformed dropped (lossy), unterminated dropped (lossy), arguments strict, "
            "long blocks held",
        ),
        ("trimming", "long blocks held, holdback closer, whitespace trimmed (lossy)"),
        ("qwen3_coder", "cut_closer unterminated, long blocks held, opener_newline required"),
    ],
)
def test_each_parser_is_read_with_the_choices_it_makes(name: str, line: str) -> None:
    parser = PARSERS[name]
    reading = read_policies(parser.module.factory, Claim.of([parser.dialect]))
    assert reading.violations == ()
    assert reading.claim.judged_line == (
        f"judged against: {parser.dialect}; {line}; the rest as the reference"
    )


# What still fails for want of policy inference (issue 32), as measured on 2026-12-07
# (docs/explanation/policies.md says which choices are inferred so far).
# Move an entry once it passes: these are xfail(strict=False), so an XPASS is only shown.
REPLAY_FAILING: set[str] = set()
FUZZ_FAILING: set[tuple[str, int]] = set()
BUG_PASSING = {
    ("undeclared", Bug.FLUSH_SWALLOWED),
    ("undeclared", Bug.INDEX_REUSED),
    ("undeclared", Bug.PER_CHUNK_MARKER),
    ("undeclared", Bug.CLOSE_IN_STRING),
    ("strict", Bug.FLUSH_SWALLOWED),
    ("strict", Bug.INDEX_REUSED),
    ("strict", Bug.PER_CHUNK_MARKER),
    ("trimming", Bug.INDEX_REUSED),
    ("trimming", Bug.PER_CHUNK_MARKER),
    ("trimming", Bug.CLOSE_IN_STRING),
    ("qwen3_coder", Bug.FLUSH_SWALLOWED),
    ("qwen3_coder", Bug.PER_CHUNK_MARKER),
}


def _marked(failing: bool, *values: object) -> object:
    return pytest.param(*values, marks=[POLICY_XFAIL] if failing else [])


@pytest.mark.slow
@pytest.mark.parametrize("name", [_marked(n in REPLAY_FAILING, n) for n in PARSERS])
def test_replay_of_every_bundled_recording_finds_nothing(name: str) -> None:
    parser = PARSERS[name]
    # 3 random and token chunkings a recording (as in test_correct_parser_over_the_corpora)
    report = replay(bundled(), detector=parser.spec, dialects=[parser.dialect], runs=3)
    assert [str(g.signature) for g in report.findings] == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "seed"),
    [_marked((n, seed) in FUZZ_FAILING, n, seed) for n in PARSERS for seed in (0, 1, 2)],
)
def test_a_fuzz_search_finds_nothing(name: str, seed: int) -> None:
    parser = PARSERS[name]
    report = fuzz(
        detector=parser.spec, dialects=[parser.dialect], max_examples=1000, seed=seed, save=None
    )
    assert [str(f.signature) for f in report.findings] == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "bug"),
    [_marked((name, bug) not in BUG_PASSING, name, bug) for name, bug in BUGGED],
    ids=lambda v: getattr(v, "value", v),
)
def test_each_bug_is_one_finding_named_for_the_bug_not_a_policy(name: str, bug: Bug) -> None:
    spec = f"{PARSERS[name].spec.partition(':')[0]}:{bug.value}"  # the module's __getattr__
    report = fuzz(
        detector=spec, dialects=[PARSERS[name].dialect], max_examples=1000, seed=0, save=None
    )
    grouped = findings(report)
    assert len(grouped) == 1, [g.name for g in grouped]
    assert not grouped[0].name.startswith("policy"), grouped[0].name
