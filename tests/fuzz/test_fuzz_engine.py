"""What tcr.fuzz.engine relies on in Hypothesis's engine: seeded draws, the limit,
shrinking to the smallest bytes that stay interesting, and exceptions left alone."""

from __future__ import annotations

import pytest

from tcr.fuzz import engine


def _drawn(seed: int, limit: int = 50, size: int = 16) -> list[bytes]:
    seen: list[bytes] = []
    assert engine.search(seen.append, size=size, seed=seed, limit=limit) is None
    return seen


def test_the_limit_is_the_number_of_examples_and_each_has_the_size() -> None:
    drawn = _drawn(0, limit=200)
    assert len(drawn) == 200
    assert {len(data) for data in drawn} == {16}
    assert len(set(drawn)) == 200  # no example run twice


def test_the_same_seed_draws_the_same_examples_and_another_seed_others() -> None:
    assert _drawn(7) == _drawn(7)
    assert _drawn(7) != _drawn(8)


def test_an_interesting_example_is_shrunk_to_the_smallest_that_stays_interesting() -> None:
    def test(data: bytes) -> None:
        if data[3] >= 100 and data[9] % 2:
            raise engine.Interesting

    shrunk = engine.search(test, size=12, seed=1, limit=1000)
    assert shrunk == bytes([0, 0, 0, 100, 0, 0, 0, 0, 0, 1, 0, 0])


def test_a_subclass_of_interesting_is_interesting_too() -> None:
    class Found(engine.Interesting):
        pass

    def test(data: bytes) -> None:
        if data[0] > 0:
            raise Found

    assert engine.search(test, size=4, seed=2, limit=100) == bytes([1, 0, 0, 0])


class _Stop(BaseException):
    pass


@pytest.mark.parametrize("error", [ValueError("a bug"), _Stop(), KeyboardInterrupt()])
def test_any_other_exception_leaves_the_search_as_it_came(error: BaseException) -> None:
    calls = []

    def test(data: bytes) -> None:
        calls.append(data)
        if len(calls) == 3:
            raise error

    with pytest.raises(type(error)) as raised:
        engine.search(test, size=8, seed=0, limit=100)
    assert raised.value is error
    assert len(calls) == 3  # not retried, not shrunk
