"""A shrunk failure as a pytest regression test to paste: what replay and fuzz print.

The test calls ``tcr.replay.check_chunks`` with the chunks, the detector and its
claim, the tools (and tool specs the detector was given), the one check that
failed and, for ``expected``, the expectation; it fails until the bug is fixed.

Its name says what it pins (the signature, as an identifier) and ends with a short
digest of its body, so the snippets of one report can be pasted into one module
without one test silently replacing another, and a finding keeps its name from
run to run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from tcr.claims import Claim

__all__ = ["regression_test", "snippet_name"]

_NOT_A_NAME: Final = re.compile(r"[^0-9a-z]+")
_NOTE: Final = re.compile(r"\s*\([^()]*\)\Z")
_LONGEST_STEM: Final = 60  # characters of the signature kept in a name: a line stays readable


def snippet_name(found: str, body: str) -> str:
    """``test_<signature as an identifier>_<digest of body>``: stable, and distinct for
    distinct tests even where two signatures read alike as identifiers (``<tool_call>``,
    ``<|tool_call>``)."""
    label = _NOTE.sub("", found)  # "sig (only when a proxy re-chunks)": the name is the sig's
    stem = _NOT_A_NAME.sub("_", label.lower()).strip("_")[:_LONGEST_STEM].rstrip("_")
    digest = hashlib.blake2s(f"{found}\n{body}".encode(), digest_size=3).hexdigest()
    return f"test_{stem}_{digest}"


def regression_test(
    chunks: Sequence[str],
    *,
    check: str,
    found: str,
    origin: str,
    detector: str | None = None,
    command: str | None = None,
    tools: Sequence[str] | None = None,
    claim: Claim | None = None,
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
    expectation: Mapping[str, Any] | None = None,
) -> str:
    """The test's source. ``found``: the signature it fails with; ``origin``: what shrank
    it from what (``tcr replay from corpora/x.msgpack``); ``detector`` a factory spec or
    ``command`` a ``--detector-cmd`` (neither: the reference)."""
    imports = "from tcr.replay import check_chunks\n"
    given = f", detector={detector!r}" if detector else ""
    if command:
        given = f", detector=command_factory({command!r})"
        imports = "from tcr.stdio import command_factory\n" + imports
    if tools is not None:
        given += f", tools={list(tools)!r}"
    if claim is not None and claim.dialects is not None:
        given += f", dialects={sorted(claim.dialects)!r}"
    if claim is not None and claim.empty_tools != "reject":
        given += f", empty_tools={claim.empty_tools!r}"
    if claim is not None and claim.tokens_whole:
        given += f", special_tokens={claim.special_tokens!r}"
    restated = {} if claim is None else claim.policies.restated()
    restated.pop("empty_tools", None)  # stated above
    if restated:  # pinned and read choices, so the test fails the same way on its own
        given += f", policies={restated!r}"
    if tool_specs is not None:
        given += f", tool_specs={list(tool_specs)!r}"
    expect = f", expectation={dict(expectation)!r}" if expectation is not None else ""
    body = (
        f"    chunks = {list(chunks)!r}\n"
        f"    verdict = check_chunks(chunks{given}, checks={[check]!r}{expect})\n"
        "    assert verdict.ok, verdict.violations\n"
    )
    return (
        f"{imports}\n\n"
        f"def {snippet_name(found, body)}() -> None:\n"
        f"    # shrunk by {origin}; fails as {found}\n"
        f"{body}"
    )
