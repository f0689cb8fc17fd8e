"""Inside a JSON body the lexer reads whole runs (``Block.skim_json``: plain characters
and complete strings, one regex call each) where the token loop of ``Block.scan`` reads
one token at a time. Both must find the same ends, carry the same split tokens and
leave the same state: the same events, FSM state, moves and held text after every
chunk, for the reference and for every claim."""

from __future__ import annotations

from unittest import mock

from helpers import cut, steps
from hypothesis import given
from hypothesis import strategies as st

from tcr.detector.block import Block
from tcr.detector.core import StreamDetector
from tcr.dialects import BY_ID, BodyLexer

# Dialects whose bodies the JSON lexer reads, and their markers.
JSON_BODIED = sorted(
    d.id
    for d in BY_ID.values()
    if d.first_lexer is BodyLexer.JSON or any(lx is BodyLexer.JSON for _, lx in d.lexer_by_first)
)
OPENERS = sorted({m for i in JSON_BODIED for m in BY_ID[i].opens})
CLOSERS = sorted({m for i in JSON_BODIED for m in BY_ID[i].closes})
# What a JSON body's lexer must get right: quotes, escapes (an escaped quote, an
# escaped backslash before a quote), closing markers and their beginnings inside and
# outside strings, braces, and plain runs.
BODY = sorted(
    {*CLOSERS}
    | {m[: len(m) // 2] for m in CLOSERS}
    | {'"', '\\"', "\\\\", "\\", '"\\\\"', "{", "}", "[", "]", ":", ", ", "\n", " ", "<", "</"}
    | {'{"name": "get_weather", "arguments": {"city": "Paris"}}', "é😀"}
    # strings holding a closing marker after an escaped quote or an escaped backslash
    | {f'"{e}{c}{e}"' for c in CLOSERS for e in ("", '\\"', "\\\\")}
)
# A body starts as JSON does, so the lexer that reads it is the JSON one.
bodies = st.tuples(
    st.sampled_from(["{", "[", ' {"a": "', "\n"]),
    st.lists(st.sampled_from(BODY) | st.text(max_size=3), max_size=30).map("".join),
).map("".join)
# Prose, then blocks: an opener and a body that may or may not close.
texts = st.lists(
    st.tuples(st.text(max_size=4), st.sampled_from(OPENERS), bodies), min_size=1, max_size=3
).map(lambda blocks: "".join(a + b + c for a, b, c in blocks))


def token_by_token(dialects: list[str] | None, chunks: list[str]) -> list[object]:
    with mock.patch.object(Block, "skims", False):
        return steps(StreamDetector(dialects=dialects), chunks)


def test_json_bodied_dialects_are_found() -> None:
    assert {"hermes", "harmony", "python_tag"} <= set(JSON_BODIED)


@given(cut(texts), st.sampled_from([None, ["hermes"], ["harmony"], ["python_tag", "think"]]))
def test_skimming_does_what_the_token_loop_does(
    chunks: list[str], dialects: list[str] | None
) -> None:
    assert steps(StreamDetector(dialects=dialects), chunks) == token_by_token(dialects, chunks)


def test_an_escape_split_across_chunks_is_carried() -> None:
    chunks = [
        '<tool_call>{"name": "f", "arguments": {"a": "x\\',
        '"</tool_call>"}}',
        "</tool_call>",
    ]
    assert steps(StreamDetector(), chunks) == token_by_token(None, chunks)
    events = StreamDetector().feed("".join(chunks))
    assert [type(e).__name__ for e in events] == ["ToolCall"]


def test_every_split_of_strings_with_escapes_and_closers() -> None:
    # A closing marker inside a string, after an escaped quote and before an escaped
    # backslash, then the real one: a cut anywhere, even inside "\\", reads the same.
    text = '<tool_call>{"a": "x\\"</tool_call>\\\\", "b": "\\\\\\"}"}</tool_call>'
    n = len(text)
    for i in range(1, n):
        for j in range(i, min(i + 3, n)):  # one cut, or two around one or two characters
            chunks = [text[:i], text[i:j], text[j:]]
            assert steps(StreamDetector(), chunks) == token_by_token(None, chunks), chunks
