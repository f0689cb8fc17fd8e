"""Claims: what a detector says it speaks, read from attributes and options (tcr.claims)."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcr.claims import EVERYTHING, Claim, read_claim
from tcr.detector.core import StreamDetector
from tcr.dialects import ALIASES, BY_ID
from tcr.errors import TcrError


def test_the_reference_claims_everything_and_a_restricted_one_its_dialects() -> None:
    assert StreamDetector().tcr_claim == EVERYTHING
    assert StreamDetector(dialects=["hermes"]).tcr_claim == Claim(frozenset({"hermes"}))
    assert read_claim(StreamDetector(dialects=["hermes", "think"]), StreamDetector) == Claim(
        frozenset({"hermes", "think"})
    )


def test_shapes_a_user_may_write() -> None:
    hermes = Claim(frozenset({"hermes"}))
    assert Claim.of(["hermes"]) == hermes
    assert Claim.of(("hermes",)) == hermes
    assert Claim.of({"dialects": ["hermes"]}) == hermes
    assert Claim.of({"empty_tools": "text"}) == Claim(None, "text")
    assert Claim.of(None) is EVERYTHING
    assert Claim.of(hermes) is hermes


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_claims_every_id_it_stands_for(alias: str) -> None:
    assert alias not in BY_ID
    assert Claim.of([alias]).dialects == frozenset(ALIASES[alias])
    assert Claim.of([alias, "think"]).dialects == {*ALIASES[alias], "think"}


def test_llama3_json_is_what_the_engines_parser_reads() -> None:
    detector = StreamDetector(dialects=["llama3_json"])
    text = '{"name": "f", "arguments": {}} then <|python_tag|>{"name": "g", "parameters": {}}'
    events = [*detector.feed(text), *detector.finish()]
    assert [(e.format, e.name) for e in events if hasattr(e, "name")] == [
        ("bare_json", "f"),
        ("python_tag", "g"),
    ]


def test_a_misspelt_alias_is_suggested() -> None:
    with pytest.raises(TcrError, match=r"did you mean 'llama3_json'\?"):
        Claim.of(["llama3_jsn"])


def test_reasoning_is_the_think_dialect() -> None:
    assert EVERYTHING.reasoning
    assert not Claim.of(["hermes"]).reasoning
    assert Claim.of(["hermes", "think"]).reasoning


def test_the_detector_s_attribute_wins_over_the_factory_s() -> None:
    def factory(tools: list[str] | None = None) -> StreamDetector:
        return StreamDetector(tools, dialects=["glm45"])

    factory.tcr_claim = ["hermes"]  # type: ignore[attr-defined]
    assert read_claim(factory(), factory) == Claim.of(["glm45"])
    assert read_claim(object(), factory) == Claim.of(["hermes"])
    assert read_claim(object(), functools.partial(factory)) is None


def test_options_override_parts_and_state_the_claim_again() -> None:
    claim = Claim.of({"dialects": ["hermes"], "empty_tools": "text"})
    assert claim.with_options(["glm45"]) == Claim.of({"dialects": ["glm45"], "empty_tools": "text"})
    # given on the command line, reject is pinned (tcr.policies), not read from probes
    pinned_reject = Claim.of({"dialects": ["hermes"], "policies": {"empty_tools": "reject"}})
    assert claim.with_options(empty_tools="reject") == pinned_reject
    assert claim.options() == ["--dialect", "hermes", "--empty-tools", "text"]
    assert EVERYTHING.options() == []
    assert str(claim) == "hermes; tools=[] means text"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("hermes", "dialects must be a list of dialect ids, not str 'hermes'"),
        (["nope"], "unknown dialect 'nope'; known: "),
        ([], "the claim names no dialect; known: "),
        ({"dialects": ["hermes"], "extra": 1}, "unknown key 'extra'; known: dialects, empty_tools"),
        ({"empty_tools": 3}, "empty_tools is a int"),
        ({"empty_tools": "maybe"}, "empty_tools is 'maybe'; known: reject, text"),
        ([3], "dialect id 3 is not a string"),
        (7, "dialects must be a list of dialect ids, not int 7"),
    ],
)
def test_a_bad_claim_is_one_line_naming_where(value: object, message: str) -> None:
    with pytest.raises(TcrError) as caught:
        Claim.of(value, where="my.factory.tcr_claim")
    text = str(caught.value)
    assert "\n" not in text
    assert message in text
    assert "my.factory.tcr_claim" in text or "empty_tools is 'maybe'" in text


def test_an_attribute_that_raises_is_named() -> None:
    class Odd:
        @property
        def tcr_claim(self) -> object:
            raise RuntimeError("boom")

    with pytest.raises(TcrError, match=r"Odd\.tcr_claim: reading it raised"):
        read_claim(Odd())


_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=12)
    | st.sampled_from([*BY_ID, "split", "whole", "reject", "text"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["dialects", "empty_tools", "special_tokens", "x"]), inner, max_size=3
        )
    ),
    max_leaves=10,
)


@given(_values)
def test_any_value_is_a_claim_or_one_tcr_error(value: object) -> None:
    try:
        claim = Claim.of(value)
    except TcrError as error:
        assert "\n" not in str(error)
    else:
        assert claim.dialects is None or claim.dialects <= set(BY_ID)
        assert Claim.of(claim.to_map()) == claim
