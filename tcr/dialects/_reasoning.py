"""Reasoning dialects (``think``, ``seed_think``): a tag pair around the model's thinking.

They differ only in their tags, the call marker their example's reasoning names
and the call their recording writes after it; ``reasoning_dialect`` makes the
rest of the record: a renderer of drawn prose, an example whose reasoning names a
call marker (policy 10: it opens nothing there), and a grammar that forces
reasoning mentioning the marker, then a real call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcr.dialects._grammars import around, expectation
from tcr.dialects._record import (
    BodyLexer,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    Kind,
    RegressionCase,
    Rendered,
    Tools,
)

__all__ = ["ThenCall", "reasoning_dialect"]


@dataclass(frozen=True, slots=True)
class ThenCall:
    """The real call a recording writes after the reasoning.

    ``gbnf`` writes it (from the line break after the sentence that follows the
    reasoning); ``pattern`` matches it from its marker with one group, from which
    ``call`` makes the expected call.
    """

    marker: str  # the call's opening marker, which the reasoning names first
    gbnf: str
    pattern: str
    call: Callable[[str], dict[str, Any]]


def reasoning_dialect(
    *,
    id: str,
    summary: str,
    opens: str,
    closes: str,
    then_call: ThenCall,
    note: str,
    cases: tuple[RegressionCase, ...],
    engines: Engines,
) -> Dialect:
    """The record of a reasoning dialect between ``opens`` and ``closes``."""
    record: Dialect
    mention = then_call.marker

    def render(draws: Draws, tools: Tools) -> Rendered:
        text = draws.prose()
        while closes in text:  # the first one would end the reasoning
            text = text.replace(closes, closes.replace("</", "</ ", 1))
        fragile = ((-1, len(text)),)  # the message may end anywhere in reasoning
        return Rendered(record.id, "text", opens, text, closes, "", (), False, fragile)

    def expect(content: str) -> dict[str, object]:
        m = around(
            rf"{re.escape(opens)}(.*?){re.escape(closes)}(.*?){then_call.pattern}(.*)", content
        )
        return expectation(m[2] + m[4], [then_call.call(m[3])], reasoning=m[1])

    record = Dialect(
        id=id,
        summary=summary,
        opens=(opens,),
        closes=(closes,),
        closing=Closing.MARKER,
        parse=None,
        render=render,
        example=Example(
            "",
            f"{opens}The user wants the weather. I could write {mention} now.{closes}",
            "Let me check.",
        ),
        grammars=(
            Grammar(
                f"{id}_then_call",
                note,
                "What is the weather in Paris? Think first.",
                f'"{opens}" sentence " I will write {mention} next. " sentence "{closes}" sentence '
                + then_call.gbnf,
                expect,
            ),
        ),
        cases=cases,
        engines=engines,
        special_tokens=frozenset({opens, closes}),
        kind=Kind.REASONING,
        first_lexer=BodyLexer.PLAIN,
        markup=(closes, opens),
    )
    return record
