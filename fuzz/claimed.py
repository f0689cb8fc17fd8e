"""Which claim a fuzz run judges a detector against, and the reference restricted to it.

The claim comes, part by part, from the command line (``--dialect``,
``--empty-tools``) over the detector's or factory's ``tcr_claim`` attribute, else
every dialect (``tcr.claims``). A library caller may give a whole ``Claim``
instead of the attribute. The reference detector claims everything; asked to
fuzz it for a narrower claim, tcr fuzzes ``StreamDetector(dialects=…)``, the
reference restricted to that claim (DESIGN §5).
"""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from typing import Any

from tcr.claims import EVERYTHING, Claim, read_claim
from tcr.detector.core import StreamDetector
from tcr.detector.loader import Factory, accepts_keyword, make_detector

__all__ = ["claimed_detector"]


def claimed_detector(
    factory: Factory,
    claim: Claim | None = None,
    dialects: Collection[str] | None = None,
    empty_tools: str | None = None,
) -> tuple[Factory, Claim]:
    """The factory to fuzz and its claim: ``dialects`` and ``empty_tools`` over ``claim``.

    ``claim`` ``None`` reads the attribute of a detector the factory makes (a
    ``FactoryError`` when it cannot make one). Unknown dialect ids, an empty claim
    or an attribute of the wrong shape raise ``TcrError``.
    """
    if claim is None:
        claim = read_claim(make_detector(factory), factory) or EVERYTHING
    claim = claim.with_options(None if dialects is None else list(dialects), empty_tools)
    if factory is StreamDetector:
        keywords: dict[str, Any] = {}
        if claim.dialects is not None:
            keywords["dialects"] = sorted(claim.dialects)
        if claim.empty_tools != "reject" and accepts_keyword(factory, "empty_tools"):
            keywords["empty_tools"] = claim.empty_tools  # a choice the reference may learn
        if keywords:
            return partial(StreamDetector, **keywords), claim
    return factory, claim
