"""Inside a JSON body, a chunk with no backslash and no closing marker's first character
is read to its end by one search and a count of its quotes (issue 37): each unescaped
quote flips the lexer between string and not, and nothing else can happen there.
``StreamDetector.feed`` takes such a chunk before it calls ``Block.absorbs``
(``Block.cheap``, refreshed by ``Block.settle``). It must leave what the skim leaves (``Block.skim_json``), which
tests/detector/test_block_skim.py pins to the token loop: the same events, FSM state,
moves and held text after every chunk, for the reference, every claim, every broken
detector and a block limit that cuts a body short."""

from __future__ import annotations

from unittest import mock

from helpers import cut, steps
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tcr.detector.block import Block
from tcr.detector.broken import BROKEN
from tcr.detector.core import StreamDetector
from tcr.dialects import BY_ID, BodyLexer

JSON_BODIED = sorted(
    d.id
    for d in BY_ID.values()
    if d.first_lexer is BodyLexer.JSON or any(lx is BodyLexer.JSON for _, lx in d.lexer_by_first)
)
OPENERS = sorted({m for i in JSON_BODIED for m in BY_ID[i].opens} | {"```json\n{", "[TOOL_CALLS]"})
CLOSERS = sorted({m for i in JSON_BODIED for m in BY_ID[i].closes})
# Pieces that leave a chunk cheap (plain text, quotes, braces) and pieces that do not
# (backslashes, closing markers and their first characters), so chunks of both kinds
# follow each other with the lexer on either side of a quote.
BODY = sorted(
    {*CLOSERS}
    | {m[:1] for m in CLOSERS}
    | {m[: len(m) // 2] for m in CLOSERS}
    | {'"', '""', '"a"', '\\"', "\\\\", "\\", "{", "}", "[", "]", ":", ", ", "\n", " ", "```"}
    | {'{"name": "get_weather", "arguments": {"city": "Paris"}}', "é😀", "plain words"}
    | {"<function=f>", "<parameter=a>", "</parameter>", "</function>", "f[ARGS]", "'"}
    | {f'"{e}{c}{e}"' for c in CLOSERS for e in ("", '\\"', "\\\\")}
)
bodies = st.tuples(
    st.sampled_from(["{", "[", ' {"a": "', "\n", "", "\n<function=f>", "get[ARGS]{"]),
    st.lists(st.sampled_from(BODY) | st.text(max_size=3), max_size=30).map("".join),
).map("".join)
texts = st.lists(
    st.tuples(st.text(max_size=4), st.sampled_from(OPENERS), bodies), min_size=1, max_size=3
).map(lambda blocks: "".join(a + b + c for a, b, c in blocks))
CLAIMS = [
    None,
    ["hermes"],
    ["harmony"],
    ["python_tag", "think"],
    ["fenced_json", "hermes"],
    ["qwen3_coder"],
    ["mistral_v13"],
    ["bare_json"],
]


def skimmed(factory: object, chunks: list[str]) -> list[object]:
    with mock.patch.object(Block, "counts_quotes", False):
        return steps(factory(), chunks)  # type: ignore[operator]


@settings(max_examples=300)
@example(["<tool_call>{", '"a": "x', '</tool_call>"}', "</tool_call>"], None, 1 << 20)
@given(cut(texts), st.sampled_from(CLAIMS), st.sampled_from([1 << 20, 40, 7]))
def test_counting_quotes_does_what_the_skim_does(
    chunks: list[str], dialects: list[str] | None, max_block: int
) -> None:
    def make() -> StreamDetector:
        return StreamDetector(dialects=dialects, max_block=max_block)

    assert steps(make(), chunks) == skimmed(make, chunks)


@given(cut(texts), st.sampled_from(sorted(BROKEN)))
def test_every_broken_detector_counts_quotes_as_it_skims(chunks: list[str], name: str) -> None:
    factory = BROKEN[name]
    assert steps(factory(), chunks) == skimmed(factory, chunks)


def test_the_cheap_path_is_taken_inside_a_json_body() -> None:
    detector = StreamDetector(dialects=["hermes"])
    detector.feed("a <tool_call>\n{")
    block = detector._block
    assert block is not None and block.cheap is not None
    with mock.patch.object(Block, "absorbs", side_effect=AssertionError("not cheap")):
        for chunk in ['"nam', 'e": ', '"x", ', '"arguments": {}}']:
            assert detector.feed(chunk) == []
    assert not block.in_string
    assert [type(e).__name__ for e in detector.feed("</tool_call>")] == ["ToolCall"]


def test_a_fenced_body_awaiting_its_fence_is_not_cheap() -> None:
    chunks = ["```json\n{", '"name": "f", "arguments": {}}', "\n`", "``", " after"]
    assert steps(StreamDetector(), chunks) == skimmed(StreamDetector, chunks)


def test_every_split_of_strings_holding_closers() -> None:
    # Cheap chunks with an odd number of quotes, then a closing marker inside a string
    # and the real one: a cut anywhere, and two cuts close together, read the same.
    for text in (
        '<tool_call>{"name": "f", "arguments": {"a": "x</tool_call>", "b": "{}"}}</tool_call>',
        '<|channel|>commentary to=functions.f <|message|>{"a": "<|call|>\\"", "b": ""}<|call|>',
    ):
        n = len(text)
        for i in range(1, n):
            for j in range(i, min(i + 6, n)):
                chunks = [text[:i], text[i:j], text[j:]]
                assert steps(StreamDetector(), chunks) == skimmed(StreamDetector, chunks), chunks


# Printing: a chunk without the one character every claimed distinctive opener begins
# with is Text at once (``Lexicon.stop_first``), where the stop search would find nothing.
prose = st.lists(
    st.sampled_from(["<", "[", "<tool", "<tool_call>", "[TOOL_CALLS]", "<|channel|>", "{"])
    | st.sampled_from(['{"name": "f", "arguments": {}}', "</tool_call>", "[ARGS]", "f"])
    | st.text(max_size=5),
    max_size=20,
).map("".join)
ONE_FIRST = [["hermes"], ["mistral_v13"], ["harmony"], ["qwen3_coder", "hermes"], None]


def searched(factory: object, chunks: list[str]) -> list[object]:
    detector = factory()  # type: ignore[operator]
    detector._first = None  # every chunk goes through the stop search
    return steps(detector, chunks)


@given(cut(prose), st.sampled_from(ONE_FIRST))
def test_testing_the_first_character_does_what_the_stop_search_does(
    chunks: list[str], dialects: list[str] | None
) -> None:
    def make() -> StreamDetector:
        return StreamDetector(dialects=dialects)

    assert make()._first == (None if dialects is None else make()._lex.stop_first)
    assert steps(make(), chunks) == searched(make, chunks)


@given(cut(prose), st.sampled_from(sorted(BROKEN)))
def test_every_broken_detector_tests_the_first_character_as_it_searches(
    chunks: list[str], name: str
) -> None:
    def make() -> StreamDetector:
        return BROKEN[name](dialects=["hermes"])

    assert steps(make(), chunks) == searched(make, chunks)
