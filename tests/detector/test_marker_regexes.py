"""The marker regexes are tries: they must find what a flat alternation finds.

``alternation`` and ``opener_or_partial_regex`` are written as tries for speed
(bench_detector.py, markup rows); a trie is only right if it matches where the
flat, longest-first alternation would, and the same marker there.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tcr.detector.formats import (
    FULL,
    alternation,
    opener_or_partial_regex,
    prefix_regex,
)

# Words sharing prefixes, one inside another, and the real openers.
ALPHABET = "<>[]|_tol｜▁"
words = st.lists(st.text(ALPHABET, min_size=1, max_size=6), min_size=1, max_size=8)
texts = st.text(ALPHABET + "ab", max_size=30)


def flat(words: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)))


@given(words, texts)
def test_alternation_finds_the_longest_word_where_a_flat_one_does(
    tokens: list[str], text: str
) -> None:
    assert [m.span() for m in alternation(tokens).finditer(text)] == [
        m.span() for m in flat(tokens).finditer(text)
    ]


@given(words, texts)
def test_a_stop_is_a_word_or_a_prefix_of_one_at_the_end_where_the_flat_pair_finds_it(
    tokens: list[str], text: str
) -> None:
    stop = opener_or_partial_regex(tokens)
    partial = prefix_regex(w[:-1] for w in tokens)
    pattern = flat(tokens).pattern + ("" if partial is None else "|" + partial.pattern)
    want = re.compile(pattern).search(text)
    got = stop.search(text) if stop is not None else None
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        assert got.start() == want.start()
        # At the end of the text it may be a whole word or a prefix: the hot path asks.
        assert (got.end() == len(text)) == (want.end() == len(text))


def test_the_reference_s_stop_regex_is_a_trie_over_every_opener() -> None:
    assert FULL.stop_re is not None
    for marker in FULL.distinctive:
        found = FULL.stop_re.search("text " + marker + " more")
        assert found is not None and found.group() == marker
        for cut in range(1, len(marker)):
            found = FULL.stop_re.search("text " + marker[:cut])
            assert found is not None and found.start() == 5
