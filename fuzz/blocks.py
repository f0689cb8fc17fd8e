"""One tool-call or reasoning block as a model writes it, and what a correct detector makes of it.

A ``Block`` is what a dialect's renderer wrote (``tcr.dialects.Rendered``): the
opening marker, the body and the closing marker, plus the verdict ARCHITECTURE.md §5 asks
for: the calls when the body is a call to declared tools, else the shown content
(the body with the dialect's markers stripped, policy 12; verbatim for JSON at
message start, policy 8).

``Block.cut(at)`` is the truncated message ending inside the block (the stream
stopped there). Only cuts whose verdict follows from the contract without
parsing are offered (``Block.cuts()``): inside the opening marker (a held
prefix, shown at ``finish``: policy 5), inside a span that cannot parse while
incomplete (an unterminated block, shown without its opening marker), after the
body with the closing marker missing or cut short.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tcr.dialects import BY_ID, Closing, Kind, Rendered

from .truth import Truth

__all__ = ["Block"]


@dataclass(frozen=True, slots=True)
class Block:
    """A block as a dialect's renderer wrote it (``written``), with its truncations."""

    written: Rendered

    @property
    def dialect(self) -> str:
        return self.written.dialect

    @property
    def opener(self) -> str:
        return self.written.opener

    @property
    def body(self) -> str:
        return self.written.body

    @property
    def closer(self) -> str:
        return self.written.closer

    @property
    def raw(self) -> str:
        return self.opener + self.body + self.closer

    @property
    def marker(self) -> str:
        """The opening marker as the dialect spells it (kept characters included)."""
        return self.opener + self.body[: BY_ID[self.dialect].keep]

    @property
    def name(self) -> str:
        return f"{self.dialect}/{self.written.variant}"

    @property
    def reasoning(self) -> bool:
        return BY_ID[self.dialect].kind == Kind.REASONING

    def truth(self) -> Truth:
        """The verdict on the whole block, closed as written."""
        return self._verdict(self.body + self.written.shown_closer)

    def _verdict(self, shown: str) -> Truth:
        if self.reasoning:
            return Truth(reasoning=self.body)
        if self.written.accepted:  # each call knows its dialect: whether its values are typed
            calls = tuple(replace(call, dialect=self.dialect) for call in self.written.calls)
            return Truth(calls=calls)
        return Truth(text=shown)

    def cuts(self) -> tuple[int, ...]:
        """Offsets into ``raw`` where the message may end with a verdict the contract settles."""
        opener, body, marker = len(self.opener), len(self.body), len(self.marker)
        points = set(range(1, marker))  # inside the opening marker
        if marker == opener > 0:
            points.add(opener)  # the marker whole, an empty body
        for low, high in self.written.fragile:
            points.update(opener + c for c in range(low + 1, high) if opener + c >= marker)
        if self.closer:  # the closing marker missing, or cut short
            points.update(range(opener + body, len(self.raw)))
        return tuple(sorted(points))

    def cut(self, at: int) -> tuple[str, Truth]:
        """The text of a message ending at ``raw[:at]``, and what must be made of it."""
        raw = self.raw
        opener, body = len(self.opener), len(self.body)
        if at < len(self.marker):  # a held prefix of the marker, released at finish
            return raw[:at], Truth(text=raw[:at])
        if at <= opener + body:  # an unterminated body: the contract's policy 5
            cut_body = raw[opener:at]
            if at == opener + body:  # the body whole, the closing marker missing
                return raw[:at], self._verdict(cut_body)
            if self.reasoning:
                return raw[:at], Truth(reasoning=cut_body)
            return raw[:at], Truth(text=cut_body)
        if BY_ID[self.dialect].closing is Closing.FENCED:
            # The balancing brace closed the block; what came of the fence is text.
            return raw[:at], _join(self._verdict(self.body), Truth(text=raw[opener + body : at]))
        if at > opener + body + 1 and BY_ID[self.dialect].reads_cut_closer and not self.reasoning:
            # Past "</" the closing tag can only be this block's: read as if it were whole
            # (Qwen3-Coder, MiniMax: docs/dialect-sources.md).
            return raw[:at], self._verdict(raw[opener:at])
        partial = raw[opener:at]  # body and a cut-short closing marker: unterminated
        if self.reasoning:
            return raw[:at], Truth(reasoning=partial)
        return raw[:at], Truth(text=partial)


def _join(a: Truth, b: Truth) -> Truth:
    return Truth(a.text + b.text, a.calls + b.calls, a.reasoning + b.reasoning)
