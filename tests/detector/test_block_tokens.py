"""A lexer state's token table (``tcr.detector.block.Tokens``)."""

from __future__ import annotations

from tcr.detector.block import Tokens


def test_a_state_with_no_token_matches_nowhere() -> None:
    # An empty pattern would match at every position: a scan finding a token of no length
    # makes no progress (a balanced body whose lexer has no closing marker hung so).
    empty = Tokens(())
    assert empty.regex.search("plain body } ] >") is None
    assert empty.busy_re.search("plain body") is None
    assert (empty.prefixes, empty.longest) == (frozenset(), 1)


def test_tokens_and_their_prefixes_are_found() -> None:
    tokens = Tokens(("</x>",))
    assert tokens.regex.search("a </x> b").span() == (2, 6)
    assert "</" in tokens.prefixes and tokens.busy_re.search("ab<") is not None
