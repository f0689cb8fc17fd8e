"""The dev profile's few examples reach tests that ask for more; ci keeps their counts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import DEV_EXAMPLES, VARIABLE, chosen, fewer_examples


def counting_test(asked: int) -> tuple[object, list[bytes]]:
    seen: list[bytes] = []

    @settings(max_examples=asked, database=None)
    @given(st.binary(min_size=8))
    def test(data: bytes) -> None:
        seen.append(data)

    return test, seen


def test_dev_lowers_a_tests_own_count_to_its_few_examples() -> None:
    test, seen = counting_test(5 * DEV_EXAMPLES)
    fewer_examples(test)
    test()  # type: ignore[operator]
    assert len(seen) == DEV_EXAMPLES


def test_a_test_asking_for_fewer_keeps_its_count() -> None:
    test, seen = counting_test(3)
    fewer_examples(test)
    test()  # type: ignore[operator]
    assert len(seen) == 3


def test_a_test_left_alone_runs_the_count_it_asks_for() -> None:
    test, seen = counting_test(2 * DEV_EXAMPLES)
    test()  # type: ignore[operator]
    assert len(seen) == 2 * DEV_EXAMPLES


def test_an_ordinary_function_is_left_alone() -> None:
    def plain() -> None: ...

    fewer_examples(plain)
    assert not hasattr(plain, "_hypothesis_internal_use_settings")


def test_profile_is_dev_unless_the_variable_says_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    assert chosen() == "dev"
    monkeypatch.setenv(VARIABLE, "ci")
    assert chosen() == "ci"
    monkeypatch.setenv(VARIABLE, "fast")
    with pytest.raises(ValueError, match="TCR_HYPOTHESIS_PROFILE='fast': choose one of dev, ci"):
        chosen()
