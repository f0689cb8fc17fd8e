"""The policy registry (``tcr.policies``): data, pinning, and the claim that carries it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcr.claims import EVERYTHING, Claim
from tcr.errors import TcrError
from tcr.policies import BY_ID, DEFAULTS, POLICIES, Policies, parse_policy_options, policy


def test_every_policy_has_a_question_choices_and_the_reference_s_default() -> None:
    assert {p.id for p in POLICIES} >= {
        "malformed",
        "unterminated",
        "undeclared",
        "empty_tools",
        "arguments",
        "holdback",
        "whitespace",
        "typed_arguments",
    }
    for p in POLICIES:
        assert p.question.endswith("?"), p.id
        assert "\n" not in p.question
        assert len(p.choices) >= 2, p.id
        assert p.default in {c.id for c in p.choices}, p.id


def test_every_choice_cites_an_engine_that_makes_it() -> None:
    for p in POLICIES:
        for c in p.choices:
            assert c.engines, f"{p.id}={c.id} cites no engine"
            assert all(e.name and e.source for e in c.engines), f"{p.id}={c.id}"


def test_choice_ids_and_aliases_name_one_choice_each() -> None:
    for p in POLICIES:
        names = [n for c in p.choices for n in (c.id, *c.aliases)]
        assert len(names) == len(set(names)), p.id


def test_the_reference_s_choices_are_not_lossy() -> None:
    assert not any(p.reference.lossy for p in POLICIES)


def test_an_unknown_policy_is_one_line_with_a_suggestion() -> None:
    with pytest.raises(
        TcrError, match=r"unknown policy 'undeclard' \(did you mean 'undeclared'\?\)"
    ):
        policy("undeclard")


def test_an_unknown_choice_is_one_line_with_a_suggestion() -> None:
    with pytest.raises(TcrError) as error:
        parse_policy_options(["malformed=droped"])
    assert "\n" not in str(error.value)
    assert "did you mean 'dropped'" in str(error.value)


def test_policy_options_accept_aliases_and_a_later_one_wins() -> None:
    assert parse_policy_options(["undeclared=reject", "undeclared=accept"]) == {
        "undeclared": "accepted"
    }


def test_a_value_without_equals_sign_is_refused() -> None:
    with pytest.raises(TcrError, match="ID=CHOICE"):
        parse_policy_options(["undeclared"])


def test_the_line_marks_lossy_and_pinned_choices() -> None:
    chosen = Policies.of({"malformed": "dropped"}).reading({"undeclared": "accepted"})
    assert chosen.line() == (
        "malformed dropped (lossy) (pinned), undeclared accepted; the rest as the reference"
    )
    # a pinned choice is said even when it is the reference's
    assert Policies.of({"empty_tools": "reject"}).line() == (
        "tools=[] reject (pinned); the rest as the reference"
    )
    assert Policies.of({}).line() == "every choice as the reference's (tcr policies)"


def test_a_claim_map_pins_policies_and_empty_tools_stays_an_alias() -> None:
    claim = Claim.of({"dialects": ["hermes"], "policies": {"undeclared": "reject"}})
    assert claim.policies.pinned == {"undeclared"}
    assert claim.choice("undeclared") == "rejected"
    assert Claim.of({"empty_tools": "text"}) == Claim.of({"policies": {"empty_tools": "text"}})
    assert Claim.of({"empty_tools": "text"}).empty_tools == "text"
    assert EVERYTHING.with_options(policies={"empty_tools": "parse"}).empty_tools == "parse"


def test_a_claim_restates_its_choices_for_a_reproducer_and_the_stdio_protocol() -> None:
    claim = Claim.of({"dialects": ["hermes"], "policies": {"whitespace": "trimmed"}})
    assert claim.options() == ["--dialect", "hermes", "--policy", "whitespace=trimmed"]
    assert claim.to_map()["policies"] == {"whitespace": "trimmed"}
    assert Claim.of(claim.to_map()) == claim


def test_a_claim_without_policies_maps_as_before() -> None:
    assert Claim.of(["hermes"]).to_map() == {"dialects": ["hermes"], "empty_tools": "reject"}


def test_reading_leaves_a_pinned_choice_alone() -> None:
    pinned = Policies.of({"undeclared": "rejected"})
    read = pinned.reading({"undeclared": "accepted", "whitespace": "trimmed"})
    assert read.choice("undeclared") == "rejected"
    assert read.choice("whitespace") == "trimmed"
    assert read.as_dict().keys() == DEFAULTS.keys()


_IDS = st.sampled_from([*BY_ID, "nope", "", "empty-tools"])
_CHOICES = st.sampled_from(
    [c for p in POLICIES for c in (p.choices[0].id, *p.choices[-1].aliases)] + ["", "x"]
)
_VALUES = st.one_of(_CHOICES, st.text(max_size=8), st.integers(), st.none(), st.lists(_CHOICES))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.one_of(_IDS, st.integers()), _VALUES, max_size=4))
def test_any_claim_policy_map_is_a_claim_or_one_tcr_error(value: dict[object, object]) -> None:
    try:
        claim = Claim.of({"policies": value})
    except TcrError as error:
        assert "\n" not in str(error)
    else:
        assert Claim.of(claim.to_map()).policies.chosen == claim.policies.chosen


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.text(max_size=30), st.builds("{}={}".format, _IDS, _CHOICES))))
def test_any_policy_options_are_a_map_or_one_tcr_error(values: list[str]) -> None:
    try:
        chosen = parse_policy_options(values)
    except TcrError as error:
        assert "\n" not in str(error)
    else:
        assert all(policy(k).choice(v).id == v for k, v in chosen.items())
