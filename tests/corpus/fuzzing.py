"""Hypothesis settings shared by the hostile-input fuzz tests, and their one property.

Each fuzz test runs a few seconds by default; CI runs longer by setting
``TCR_FUZZ_SCALE`` (a factor on every test's count, ``.ci/run`` sets 10). A factor,
not one count for all: a test that records through a real server takes 40 examples
in the time a decoder test takes 200.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from hypothesis import HealthCheck, settings

from tcr.errors import TcrError

__all__ = ["clean_or_one_line_error", "fuzz_scale", "fuzz_settings"]

T = TypeVar("T")


def fuzz_scale() -> int:
    """``TCR_FUZZ_SCALE``: how many times its default count each fuzz test tries (1 unset)."""
    return int(os.environ.get("TCR_FUZZ_SCALE") or 1)


def fuzz_settings(default_examples: int) -> settings:
    """``default_examples`` per test, times ``TCR_FUZZ_SCALE`` when it is set."""
    examples = default_examples * fuzz_scale()
    return settings(
        max_examples=examples,
        deadline=None,  # the machine is shared: a slow example is not a failure
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def clean_or_one_line_error(run: Callable[[], T]) -> T | TcrError:
    """``run()``'s result, or the ``TcrError`` it raised, whose message must be one line.

    Any other exception propagates and fails the test: the property of every
    hostile-input surface is "a clean result, or the one documented error".
    """
    try:
        return run()
    except TcrError as error:
        message = str(error)
        assert message and "\n" not in message and "\r" not in message, repr(message)
        message.encode("utf-8")  # printable: no lone surrogate
        return error
