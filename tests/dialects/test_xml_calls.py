"""The XML-ish dialects in their own tags (MiniMax M2's ``<minimax:tool_call>``, Seed-OSS's
``<seed:tool_call>``), read whole, per character and at every split."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tcr.detector import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector
from tcr.dialects import BodyError, dialect


@dataclasses.dataclass(frozen=True, slots=True)
class Spelling:
    """How one dialect writes a block, a call element and a parameter element."""

    id: str
    open: str
    close: str
    call_open: str  # with {name}
    call_close: str
    parameter_open: str  # with {key}
    unterminated_at: int  # an offset inside WEATHER's first parameter
    malformed: tuple[str, ...]  # bodies only this dialect gets wrong

    def call(self, name: str, inner: str) -> str:
        return self.call_open.format(name=name) + inner + self.call_close

    def parameter(self, key: str, value: str) -> str:
        return self.parameter_open.format(key=key) + value + "</parameter>"

    def block(self, body: str) -> str:
        return f"{self.open}{body}{self.close}"

    @property
    def weather(self) -> str:
        params = "\n" + self.parameter("city", "Paris") + "\n" + self.parameter("days", "3") + "\n"
        return self.block("\n" + self.call("get_weather", params) + "\n")

    @property
    def parallel(self) -> str:
        weather = self.call("get_weather", "\n" + self.parameter("city", "Paris") + "\n")
        time = self.call("get_time", "\n" + self.parameter("tz", "Europe/Paris") + "\n")
        return "Both.\n" + self.block("\n" + weather + "\n" + time + "\n") + "\nDone."


MINIMAX_M2 = Spelling(
    id="minimax_m2",
    open="<minimax:tool_call>",
    close="</minimax:tool_call>",
    call_open='<invoke name="{name}">',
    call_close="</invoke>",
    parameter_open='<parameter name="{key}">',
    unterminated_at=60,
    malformed=(
        "<invoke name=get_weather>\n</invoke>",  # the name is quoted
    ),
)
SEED_OSS = Spelling(
    id="seed_oss",
    open="<seed:tool_call>",
    close="</seed:tool_call>",
    call_open="<function={name}>",
    call_close="</function>",
    parameter_open="<parameter={key}>",
    unterminated_at=50,
    malformed=(
        "<function=get weather>\n</function>",
        '{"name": "get_weather", "arguments": {}}',  # Hermes JSON in Seed's tags
    ),
)
SPELLINGS = [MINIMAX_M2, SEED_OSS]
each_dialect = pytest.mark.parametrize("s", SPELLINGS, ids=[s.id for s in SPELLINGS])

SPECS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


def run(chunks: list[str], tools: tuple[str, ...] | None = None, specs: Any = None) -> list[Event]:
    detector = StreamDetector(tools=tools, tool_specs=specs)
    events: list[Event] = []
    for chunk in chunks:
        events += detector.feed(chunk)
    return events + detector.finish()


def meaning(events: list[Event]) -> tuple[str, list[tuple[str, Any]], list[str]]:
    shown = "".join(
        e.text if isinstance(e, Text) else e.content
        for e in events
        if isinstance(e, Text | Rejected)
    )
    calls = [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]
    rejected = [e.reason for e in events if isinstance(e, Rejected)]
    return shown, calls, rejected


@each_dialect
def test_one_call_element_is_one_call_with_text_values(s: Spelling) -> None:
    assert meaning(run([s.weather])) == (
        "",
        [("get_weather", {"city": "Paris", "days": "3"})],
        [],
    )


@each_dialect
def test_the_tool_schema_types_the_values(s: Spelling) -> None:
    _, calls, _ = meaning(run([s.weather], specs=SPECS))
    assert calls == [("get_weather", {"city": "Paris", "days": 3})]


@each_dialect
def test_several_call_elements_in_one_block_are_parallel_calls(s: Spelling) -> None:
    shown, calls, _ = meaning(run([s.parallel]))
    assert shown == "Both.\n\nDone."
    assert calls == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]


@each_dialect
def test_one_block_per_call_is_as_good(s: Spelling) -> None:
    text = s.weather + "\n" + s.weather
    assert [c for c, _ in meaning(run(list(text)))[1]] == ["get_weather", "get_weather"]


@each_dialect
def test_the_calls_carry_the_dialect_and_the_first_the_raw_block(s: Spelling) -> None:
    # Seed-OSS's body is Qwen3-Coder's: the calls still say seed_oss.
    events = [e for e in run([s.parallel]) if isinstance(e, ToolCall)]
    assert {e.format for e in events} == {s.id}
    assert events[0].raw.startswith(s.open) and events[0].raw.endswith(s.close)
    assert events[1].raw == ""


@each_dialect
@pytest.mark.parametrize("which", ["weather", "parallel"], ids=["one", "parallel"])
def test_every_split_point_and_every_character_give_the_whole_result(
    s: Spelling, which: str
) -> None:
    text = getattr(s, which)
    whole = meaning(run([text]))
    assert meaning(run(list(text))) == whole
    for cut in range(1, len(text)):
        assert meaning(run([text[:cut], text[cut:]])) == whole, cut


def test_a_seed_oss_value_that_mentions_the_closing_tags_is_read_whole() -> None:
    s = SEED_OSS
    value = f"a </parameter> b {s.call_close} c"
    text = s.block(s.call("write_file", s.parameter("content", value)))
    assert meaning(run([text]))[1] == [("write_file", {"content": value})]


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("a </parameter> b", {"content": "a "}),
        ("a </invoke> b", {}),  # the call ends there; its unclosed parameter is skipped
        ('a </parameter>\n<parameter name="x">b', {"content": "a ", "x": "b"}),
    ],
)
def test_a_minimax_m2_value_ends_at_its_first_closing_tag(value: str, read: object) -> None:
    """Both engines end a value at its first ``</parameter>`` and a call at its first
    ``</invoke>``, and skip the stray text after (vLLM 0.34 vllm/parser/minimax_m2.py
    ``_PARAM_RE`` and its ``INVOKE_END`` terminal; SGLang's
    ``<parameter name=\"([^>]+)\">(.*?)</parameter>`` and ``_buf.find("</invoke>")``)."""
    s = MINIMAX_M2
    text = s.block(s.call("write_file", s.parameter("content", value)))
    assert meaning(run([text]))[1:] == ([("write_file", read)], [])


def test_minimax_m2_text_between_its_elements_is_skipped() -> None:
    s = MINIMAX_M2
    inner = "\nI will pass the city.\n" + s.parameter("city", "Paris") + "\n"
    text = s.block("Calling it. " + s.call("get_weather", inner))
    assert meaning(run([text]))[1:] == ([("get_weather", {"city": "Paris"})], [])


def test_seed_oss_trims_exactly_one_newline_at_each_end_of_a_value() -> None:
    """Seed-OSS copies Qwen3-Coder's reading: one newline at each end is the template's."""
    text = SEED_OSS.block(SEED_OSS.call("f", SEED_OSS.parameter("v", "\n\n  x  \n")))
    assert meaning(run([text]))[1] == [("f", {"v": "\n  x  "})]


@pytest.mark.parametrize("value", ["\n\n  x  \n", "\n\n", "  x"])
def test_minimax_m2_keeps_a_value_as_written(value: str) -> None:
    """MiniMax M2 writes values inline: vLLM 0.34's ``_minimax_m2_parse_args`` ("surrounding
    whitespace is data") and SGLang's streaming ``_parse_and_stream_parameters`` keep them
    whole (SGLang's non-streaming path strips newlines, older vLLM all white space)."""
    s = MINIMAX_M2
    text = s.block(s.call("f", s.parameter("v", value)))
    assert meaning(run([text]))[1] == [("f", {"v": value})]


@each_dialect
def test_a_call_element_without_parameters_has_no_arguments(s: Spelling) -> None:
    assert meaning(run([s.block(s.call("now", "\n"))]))[1] == [("now", {})]


def _malformed(s: Spelling) -> list[str]:
    return [
        "\n",
        s.parameter("city", "Paris"),  # no call element names the tool
        s.call("", "\n"),
        s.call("get_weather", "\n" + s.parameter("city", "Paris")).removesuffix(s.call_close),
        *s.malformed,
    ]


@pytest.mark.parametrize(
    ("s", "body"),
    [(s, body) for s in SPELLINGS for body in _malformed(s)],
    ids=[f"{s.id}-{k}" for s in SPELLINGS for k in range(len(_malformed(s)))],
)
def test_a_body_that_is_not_call_elements_is_rejected_as_malformed_and_shown(
    s: Spelling, body: str
) -> None:
    shown, calls, rejected = meaning(run([s.block(body)]))
    assert (shown, calls, rejected) == (body, [], ["malformed"])


@each_dialect
def test_the_parser_raises_only_body_errors(s: Spelling) -> None:
    parse = dialect(s.id).parse
    assert parse is not None
    with pytest.raises(BodyError):
        parse(s.call("f", s.parameter("", "1")))


@each_dialect
def test_an_undeclared_tool_is_rejected(s: Spelling) -> None:
    _, calls, rejected = meaning(run([s.weather], tools=("get_time",)))
    assert (calls, rejected) == ([], ["undeclared"])


@each_dialect
def test_an_unclosed_block_whose_call_elements_are_complete_is_a_call(s: Spelling) -> None:
    text = s.weather.removesuffix(s.close)
    assert meaning(run([text]))[1] == [("get_weather", {"city": "Paris", "days": "3"})]


@each_dialect
def test_an_unclosed_block_cut_inside_a_call_element_is_unterminated(s: Spelling) -> None:
    cut = s.unterminated_at
    shown, calls, rejected = meaning(run([s.weather[:cut]]))
    assert (shown, calls, rejected) == (s.weather[len(s.open) : cut], [], ["unterminated"])


@each_dialect
def test_a_bare_call_element_outside_the_tags_stays_text(s: Spelling) -> None:
    # vLLM's and SGLang's Seed-OSS parsers fall back to <function=…> without the
    # tags; the block markers are what make it a call here.
    text = s.call("get_weather", "\n" + s.parameter("city", "Paris") + "\n")
    assert meaning(run(list(text))) == (text, [], [])


@each_dialect
def test_the_opening_tag_inside_reasoning_opens_nothing(s: Spelling) -> None:
    text = f"<think>I will write {s.open} next.</think>{s.weather}"
    events = run(list(text))
    assert [e.text for e in events if isinstance(e, Reasoning)] == [f"I will write {s.open} next."]
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1


@each_dialect
def test_a_near_miss_of_the_tag_stays_text(s: Spelling) -> None:
    text = s.open.removesuffix(">") + "s> " + s.call("f", "")
    assert meaning(run(list(text))) == (text, [], [])


def test_a_minimax_m2_message_that_ends_inside_the_closing_tag_still_holds_the_calls() -> None:
    """vLLM's parser engine completes the calls at the end of the stream, SGLang's has each
    at its ``</invoke>``."""
    s = MINIMAX_M2
    text = s.weather.removesuffix(s.close) + s.close[:9]
    assert meaning(run([text]))[1:] == ([("get_weather", {"city": "Paris", "days": "3"})], [])


def test_a_minimax_m2_message_that_ends_inside_its_next_call_is_unterminated() -> None:
    s = MINIMAX_M2
    text = s.weather.removesuffix(s.close) + '<invoke name="get_t'
    assert meaning(run([text]))[1:] == ([], ["unterminated"])
