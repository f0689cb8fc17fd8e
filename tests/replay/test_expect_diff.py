"""What bless and review show: a word-level diff of text, a structural diff of calls."""

from __future__ import annotations

from tcr.replay.expect_diff import expectation_diff, word_diff

LONG = "The weather in the city of Paris is sunny today, and it will stay so all week long."


def test_a_changed_word_is_marked_in_place() -> None:
    after = LONG.replace("Paris", "Lyon")
    assert "[-Paris-]{+Lyon+}" in word_diff(LONG, after)


def test_long_unchanged_runs_are_cut_to_the_words_around_the_change() -> None:
    shown = word_diff(LONG, LONG.replace("Paris", "Lyon"))
    assert shown.startswith("…") and shown.endswith("…")
    assert "the city of [-Paris-]{+Lyon+} is sunny today" in shown
    assert len(shown) < len(LONG)


def test_whitespace_and_newlines_are_drawn() -> None:
    assert word_diff("a b", "a b \n") == "a b{+·↵+}"
    assert word_diff("a\tb", "a b") == "a[-→-]{+ +}b"


def test_equal_texts_have_no_marks() -> None:
    assert word_diff(LONG, LONG) == LONG


def test_calls_differ_by_name_then_argument_keys_and_values() -> None:
    stored = {"text": "", "reasoning": "", "calls": [
        {"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}}]}  # fmt: skip
    current = {"text": "", "reasoning": "", "calls": [
        {"name": "get_forecast", "arguments": {"city": "Lyon", "days": 3}},
        {"name": "get_time", "arguments": {}}]}  # fmt: skip
    assert expectation_diff(stored, current) == [
        "~ call 0 name: 'get_weather' → 'get_forecast'",
        '~ call 0 (get_forecast) argument \'city\': "Paris" → "Lyon"',
        "+ call 0 (get_forecast) argument 'days': 3",
        "- call 0 (get_forecast) argument 'unit': \"C\"",
        "+ call 1: get_time({})",
    ]


def test_a_value_of_another_json_type_is_a_change() -> None:
    stored = {"calls": [{"name": "f", "arguments": {"days": "3"}}]}
    current = {"calls": [{"name": "f", "arguments": {"days": 3}}]}
    assert expectation_diff(stored, current) == ["~ call 0 (f) argument 'days': \"3\" → 3"]


def test_a_removed_call_and_changed_reasoning() -> None:
    stored = {"text": "", "reasoning": "let me think", "calls": [{"name": "f", "arguments": {}}]}
    current = {"text": "", "reasoning": "let me look", "calls": []}
    assert expectation_diff(stored, current) == [
        "reasoning: let me [-think-]{+look+}",
        "- call 0: f({})",
    ]


def test_without_a_stored_expectation_everything_is_added() -> None:
    current = {"text": "hi", "calls": [{"name": "f", "arguments": {}}], "reasoning": ""}
    assert expectation_diff(None, current) == [
        "no stored expectation; the current one:",
        "text: {+hi+}",
        "+ call 0: f({})",
    ]
