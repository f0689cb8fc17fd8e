"""The suite's Hypothesis settings profiles, chosen by ``TCR_HYPOTHESIS_PROFILE``.

    dev   the default: at most ``DEV_EXAMPLES`` examples per property test, even one
          that asks for more with its own ``@settings(max_examples=...)``, so that the
          fast loop stays about a minute
    ci    what each test asks for, as written (the hostile-input fuzz tests times
          ``TCR_FUZZ_SCALE``, tests/corpus/fuzzing.py); ``.ci/run`` chooses it

Both drop Hypothesis's per-example deadline: the machine is shared, and under xdist two
workers and other work share its two cores, so a slow example is not a failure.
tests/conftest.py loads the chosen profile and lowers each test's own count under dev.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import settings

__all__ = ["DEV_EXAMPLES", "PROFILES", "VARIABLE", "chosen", "examples", "fewer_examples"]

VARIABLE = "TCR_HYPOTHESIS_PROFILE"
DEV_EXAMPLES = 10
PROFILES = ("dev", "ci")

settings.register_profile("ci", deadline=None)
settings.register_profile("dev", deadline=None, max_examples=DEV_EXAMPLES)


def chosen() -> str:
    """The profile ``TCR_HYPOTHESIS_PROFILE`` names (``dev`` when unset)."""
    name = os.environ.get(VARIABLE) or "dev"
    if name not in PROFILES:
        raise ValueError(f"{VARIABLE}={name!r}: choose one of {', '.join(PROFILES)}")
    return name


def examples(count: int) -> int:
    """``count`` under the ci profile, at most ``DEV_EXAMPLES`` under dev: for a test that
    loops over a count of its own rather than asking Hypothesis for examples."""
    return count if chosen() == "ci" else min(count, DEV_EXAMPLES)


def fewer_examples(test: Any, most: int = DEV_EXAMPLES) -> None:
    """Lower the own ``max_examples`` of the property test ``test`` to ``most``.

    A test's ``@settings(max_examples=...)`` overrides every profile, so a profile alone
    would leave the fast loop at the counts CI runs. Hypothesis keeps a test's settings
    in the attribute ``@given`` reads on every call (the same since Hypothesis 3);
    tests/test_hypothesis_profiles.py fails if that ever changes.
    """
    test = getattr(test, "__func__", test)  # a method: its function carries the settings
    own = getattr(test, "_hypothesis_internal_use_settings", None)
    if getattr(test, "is_hypothesis_test", False) and own is not None and own.max_examples > most:
        test._hypothesis_internal_use_settings = settings(own, max_examples=most)
