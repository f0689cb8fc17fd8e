"""What generated messages are written in for one claim (ARCHITECTURE.md §5.7, claims).

A detector is judged only on the dialects it claims. Fuzz writes blocks, with
their verdict, in claimed dialects only, and mixes unclaimed dialects' markup in
as text: a correct detector shows it verbatim, so the truth is that text. Two
kinds of unclaimed markup are left out of that pool:

- markup that opens on a claimed marker (Qwen3-Coder XML in ``<tool_call>`` for
  a hermes-only claim): a claimed parser legitimately reads it as a malformed
  block of its own dialect, not as text;
- claimed opening markers inside unclaimed markup (``<tool_call>`` quoted inside
  an unclaimed ``<think>`` block): they are broken up, as in all prose.

With ``empty_tools="text"`` a message that declares ``tools=[]`` is all text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tcr.claims import EVERYTHING, Claim
from tcr.detector.formats import Lexicon, lexicon
from tcr.dialects import DIALECTS

__all__ = ["Repertoire"]


@dataclass(frozen=True, slots=True)
class Repertoire:
    """The dialects blocks are written in, those written as text, and the claim's markers."""

    blocks: tuple[str, ...]  # claimed dialects: blocks whose verdict the truth states
    as_text: tuple[str, ...]  # unclaimed dialects whose markup is text for the claim
    claim: Claim
    lexicon: Lexicon  # the claim's markers

    @classmethod
    def of(cls, claim: Claim | None = None) -> Repertoire:
        """The repertoire of ``claim`` (default: every dialect)."""
        claim = claim or EVERYTHING
        lex = lexicon(claim.dialects)
        blocks = tuple(d.id for d in DIALECTS if d.id in lex.ids)
        as_text = tuple(
            d.id
            for d in DIALECTS
            if d.id not in lex.ids and not any(m in lex.sharing for m in d.opens)
        )
        return cls(blocks, as_text, claim, lex)

    def writing(self, blocks: Sequence[str]) -> Repertoire:
        """This repertoire with blocks written in ``blocks`` only (claimed dialects)."""
        return dataclasses.replace(self, blocks=tuple(blocks))

    @property
    def markers(self) -> re.Pattern[str] | None:
        """The claim's distinctive opening markers: text must hold none of them."""
        return self.lexicon.opener_re

    @property
    def at_start(self) -> tuple[str, ...]:
        """The claim's openers that open a block at message start only (``{``, ``[``…)."""
        return self.lexicon.at_start

    def all_text(self, tools: tuple[str, ...] | None) -> bool:
        """Whether the claim parses nothing for these declared tools (``tools=[]`` as text)."""
        return tools == () and self.claim.empty_tools == "text"
