"""The reference streaming tool-call detector (ARCHITECTURE.md §5; ADR 0018, §15.1).

Sans-I/O: ``feed(chunk) -> list[Event]`` and ``finish() -> list[Event]``. Every
decision is made on accumulated text, never on one chunk, and depends only on
the input's content, so any re-chunking of a message yields the same events
(adjacent ``Text`` merged). Each policy of ARCHITECTURE.md §5.6 is cited where it bites.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from tcr import claims  # a module, not its names: tcr.claims imports this package
from tcr.detector.block import CALL_KEYS, Block
from tcr.detector.bodies import BodyError, parse_body, strip_markers, typed_call
from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall, merge_text
from tcr.detector.formats import BY_ID, NOTHING, Closing, Lexicon, format_for_model, lexicon
from tcr.detector.machine import FSM, TRANSITIONS, DetectorState, IllegalTransition
from tcr.dialects import Dialect, Kind
from tcr.dialects._record import FENCE, FENCE_DONE_RE, FENCE_MAYBE_RE
from tcr.tool_specs import parameter_schemas, read_tool_specs

__all__ = ["DEFAULT_MAX_BLOCK", "StreamDetector", "format_for_model"]

DEFAULT_MAX_BLOCK = 1 << 20
# The tools=[] choices the reference makes itself (tcr.policies); the others are read
# from its events (tcr.readings), so no choice costs the hot path anything.
_EMPTY_TOOLS = ("reject", "text")

_NON_SPACE_RE = re.compile(r"\S")


# The moves the hot path reports, as _print would (constants: nothing to allocate).
_FLUSH = ("flush",)
_PREFIX = ("prefix",)
_FLUSH_PREFIX = ("flush", "prefix")


def _never(text: str, start: int = 0) -> None:
    """A search for a pattern the claim does not have: it never matches."""
    return None


def _hold_start(lex: Lexicon, s: str) -> int:
    """Where the longest tail of ``s`` that could still become a claimed opening marker begins.

    Policy 2: a tail that is a proper prefix of a distinctive opener is held back.
    """
    if lex.partial_opener_re is None:
        return len(s)
    m = lex.partial_opener_re.search(s, max(0, len(s) - lex.holdback_bound))
    return len(s) if m is None else m.start()


class StreamDetector:
    """The reference detector: every registered dialect and every policy of ARCHITECTURE.md §5.6.

    ``tools``: ``None`` accepts any name, a list rejects calls to other names
    (``[]`` rejects every call). ``format``: a learned or seeded format; a hint
    only, the output never depends on it (policy 11). ``dialects``: the dialect
    ids it speaks (ARCHITECTURE.md §5.7); ``None`` speaks them all. Unclaimed
    markup is plain text: no block opens on it and nothing is held back for it,
    so ``holdback_bound`` is the longest claimed opening marker - 1.

    Shared openers (``<tool_call>``: hermes, qwen3_coder, glm45): a block opens if
    any claimed dialect opens on the marker, and its body is read by the claimed
    ones only. A body in an unclaimed dialect (Qwen3-Coder XML given to a
    hermes-only detector) is then the first claimed dialect's malformed body:
    ``Rejected`` with the body's text shown (policy 12), no call. That is what
    the engines do: vLLM's hermes parser (vllm/entrypoints/openai/tool_parsers/
    hermes_tool_parser.py, ``extract_tool_calls``) runs ``json.loads`` on what
    lies between ``<tool_call>`` and ``</tool_call>`` and, when that raises,
    returns no tool call and the output as content.

    ``empty_tools``: what ``tools=[]`` means (``tcr.claims``). ``"reject"`` (the
    default) rejects every call (policy 7); ``"text"`` parses nothing, as a server
    that runs no tool parser when a request offers no tools: every byte is ``Text``
    at once and nothing is held back.

    ``tool_specs``: the OpenAI ``tools`` list of the request (ARCHITECTURE.md §5.2,
    "Tool specs"). The values of bodies that carry no JSON types (``qwen3_coder``,
    ``glm45``: the records' ``schema_typed``) are typed by the tool's parameter
    schemas as vLLM types them (``tcr.tool_specs.typed_value``); without a schema for
    an argument its value stays text (JSON when it plainly is an object or array).
    JSON bodies keep their JSON types. Names still come from ``tools``.
    """

    def __init__(
        self,
        tools: Iterable[str] | None = None,
        format: str | None = None,
        max_block: int = DEFAULT_MAX_BLOCK,
        dialects: Iterable[str] | None = None,
        empty_tools: str = "reject",
        tool_specs: object = None,
    ) -> None:
        if format is not None and format not in BY_ID and format != "native":
            raise ValueError(f"detector: unknown format {format!r}; known: {', '.join(BY_ID)}")
        if max_block < 1:
            raise ValueError(f"detector: max_block must be at least 1, not {max_block}")
        if empty_tools not in _EMPTY_TOOLS:
            known = ", ".join(_EMPTY_TOOLS)
            raise ValueError(f"detector: empty_tools must be one of {known}, not {empty_tools!r}")
        self.tools: frozenset[str] | None = None if tools is None else frozenset(tools)
        specs = None if tool_specs is None else read_tool_specs(tool_specs, "detector: tool_specs")
        self._schemas = parameter_schemas(specs)  # tool name -> its parameters' schemas
        self.format: str | None = format
        self.max_block = max_block
        self._use(lexicon(dialects))
        # The claim, ``None`` for all; a factory's claim attribute (ARCHITECTURE.md §5.7).
        self.dialects: frozenset[str] | None = None if dialects is None else self._lex.ids
        self.tcr_claim = claims.Claim(self.dialects, empty_tools)  # what tcr judges it against
        if empty_tools == "text" and self.tools == frozenset():
            self._use(NOTHING)  # no tools offered: no tool parser runs
        self.holdback_bound = self._lex.holdback_bound
        self.reset()

    def _use(self, lex: Lexicon) -> None:
        """Read markers by ``lex``; the hot path's searches are bound once (feed() runs per
        chunk)."""
        self._lex = lex
        self._stop = _never if lex.stop_re is None else lex.stop_re.search
        self._opener = _never if lex.opener_re is None else lex.opener_re.search
        # Policy 2 in one ``str`` test: a chunk without the one character every claimed
        # distinctive opener begins with holds no marker and no marker's beginning.
        self._first = lex.stop_first if len(lex.stop_first) == 1 else None

    # The hot path holds and releases a marker's beginning itself, as _print and _emit
    # would; a subclass that changes either (tcr.detector.broken) goes through them.
    _fast_hold = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._fast_hold = cls._print is StreamDetector._print and cls._emit is StreamDetector._emit

    # -- public API -------------------------------------------------------

    def reset(self) -> None:
        """Start a new message; the learned ``format`` is kept."""
        self._fsm = FSM.PRINTING
        self._pending = ""
        self._at_start = True  # all content so far is white space: bare_json may open
        self._block: Block | None = None
        self._offset = 0
        # State changes of the current feed() or finish(): a list the long way builds, a
        # constant tuple from the hot path (nothing to allocate).
        self._moves: list[str] | tuple[str, ...] = []
        self._quiet = False  # printing, nothing pending, past the start, no moves to clear

    @property
    def state(self) -> DetectorState:
        block = self._block
        return DetectorState(
            fsm=self._fsm,
            format=self.format,
            block_format=block.dialect.id if block else None,
            pending=self._pending,
            offset=self._offset,
            moves=tuple(self._moves),
            _parts=block.snapshot() if block else ([], 0, ""),
        )

    def feed(self, chunk: str) -> list[Event]:
        self._offset += len(chunk)
        if self._quiet:
            # Hot paths, printing past the start with no block (policy 2): a chunk in which
            # no marker and no marker's beginning at its end can be is Text; a marker's
            # beginning at the end, after what is held if anything, is held (the moves are
            # _print's). A whole opener goes the long way, through _consume.
            held = self._pending
            if held:  # a marker's beginning (MATCHING_PREFIX): only here is one held
                s = held + chunk
                stop = self._stop(s)
                if stop is None:  # it was none: all of it prints
                    self._moves = _FLUSH
                    self._fsm = FSM.PRINTING
                    self._pending = ""
                    return [Text(s)]
                at = stop.start()
                if stop.end() == len(s) and self._opener(s, at) is None:
                    self._pending = s[at:]
                    if at:
                        self._moves = _FLUSH_PREFIX
                        return [Text(s[:at])]
                    self._moves = ()
                    return []
            else:
                if self._moves:
                    self._moves = ()
                first = self._first
                if first is not None and first not in chunk:
                    return [Text(chunk)] if chunk else []
                stop = self._stop(chunk)
                if stop is None:
                    return [Text(chunk)] if chunk else []
                at = stop.start()
                if self._fast_hold and stop.end() == len(chunk) and self._opener(chunk, at) is None:
                    self._moves = _PREFIX
                    self._fsm = FSM.MATCHING_PREFIX
                    self._pending = chunk[at:]
                    return [Text(chunk[:at])] if at else []
            self._quiet = False
        if self._moves:
            self._moves = []
        block = self._block
        if block is not None and block.cheap is not None and not block.carry:
            # The cheapest path inside a body (issue 37, Block.settle): nothing in the chunk
            # can end or settle the block, and in a JSON body only the parity of its quotes
            # moves the lexer (what Block.absorbs would do, in one search).
            if block.cheap(chunk) is None and block.length + len(chunk) <= self.max_block:
                if block.flips and chunk.count('"') & 1:
                    block.in_string = not block.in_string
                if chunk:
                    block.parts.append(chunk)
                    block.length += len(chunk)
                return []
            if not block.flips:  # its tokens found something: absorbs would say no
                block = None
        if (
            block is not None
            and block.length + len(block.carry) + len(chunk) <= self.max_block
            and block.absorbs(chunk)
        ):
            # Hot path inside a block: nothing here can end it (policy 4: O(1) per character).
            return []
        out: list[Event] = []
        self._consume(chunk, out)
        # Printing past the start (anything held there is a marker's beginning): the next
        # feed may take the hot path (for a subclass that changes _print or _emit: only with
        # nothing held and no move to report).
        self._quiet = (
            self._block is None
            and not self._at_start
            and (self._fast_hold or not (self._pending or self._moves))
        )
        return out

    def finish(self) -> list[Event]:
        """End of message: nothing stays held (policy 5)."""
        if self._moves:
            self._moves = []
        out: list[Event] = []
        block = self._block
        if block is not None:
            if block.awaiting_fence:  # a fenced call whose fence never came: the brace closed it
                tail = block.take_tail()
                self._close(block, out)
                self._consume(tail, out)
            else:
                self._end_unclosed(block, out)
        if self._pending:
            self._go("flush")
            out.append(Text(self._pending))
            self._pending = ""
        # A message ends here; the next one starts white (bare JSON may open again).
        self._at_start = True
        self._quiet = False
        return merge_text(out)

    # -- printing -----------------------------------------------------------

    def _go(self, trigger: str) -> None:
        try:
            target = TRANSITIONS[self._fsm][trigger]
        except KeyError:
            raise IllegalTransition(self._fsm, trigger) from None
        if target is not self._fsm:
            self._moves = [*self._moves, trigger]  # a list, or the hot path's constant
        self._fsm = target

    def _consume(self, text: str, out: list[Event]) -> None:
        while text:
            if self._block is not None:
                rest = self._feed_block(self._block, text, out)
                if rest is None:
                    return
                text = rest
            else:
                text = self._print(text, out)

    def _print(self, text: str, out: list[Event]) -> str:
        """Emit what cannot start a marker; open a block or hold a prefix. Returns unread text."""
        s = self._pending + text
        self._pending = ""
        if self._at_start:
            m = _NON_SPACE_RE.search(s)
            if m is None:
                self._emit(s, out)
                return ""
            start = m.start()
            hold_re = self._lex.start_hold_re
            if hold_re is not None and hold_re.match(s, start):
                # "<|python_" may become an at-start opener, "[T" [TOOL_CALLS] or a
                # pythonic "[TOOL(…)]": wait for the text, still at message start.
                self._emit(s[:start], out)
                self._pending = s[start:]
                self._go("prefix")
                return ""
            self._at_start = False
            opener_re = self._lex.opener_re
            if opener_re is None or not opener_re.match(s, start):
                for marker in self._lex.at_start:  # policy 3: these open only at message start
                    if s.startswith(marker, start):
                        self._emit(s[:start], out)
                        return self._open(marker, s, start, start + len(marker))
        opener_re = self._lex.opener_re
        m = None if opener_re is None else opener_re.search(s)
        if m is not None:
            self._emit(s[: m.start()], out)
            return self._open(m.group(), s, m.start(), m.end())
        # Policy 2: hold back only a tail that could still become a marker.
        hold = _hold_start(self._lex, s)
        self._emit(s[:hold], out)
        if hold < len(s):
            self._pending = s[hold:]
            self._go("prefix")
        elif self._fsm is FSM.MATCHING_PREFIX:
            self._go("flush")
        return ""

    def _emit(self, text: str, out: list[Event]) -> None:
        if not text:
            return
        if self._fsm is FSM.MATCHING_PREFIX:
            self._go("flush")
        else:
            self._go("text")
        if out and type(out[-1]) is Text:
            out[-1] = Text(out[-1].text + text)
        else:
            out.append(Text(text))

    def _open(self, marker: str, s: str, start: int, end: int) -> str:
        """Open a block on ``marker`` at ``s[start:end]``; returns the text after the opener.

        Policy 1: the marker was matched on accumulated text; its kept characters
        (fenced_json's and bare_json's "{") belong to the body.
        """
        self._go("open")
        group = self._lex.sharing[marker]
        cut = end - group[0].keep
        self._block = Block(marker, s[start:cut], group)
        return s[cut:]

    # -- inside a block -----------------------------------------------------

    def _feed_block(self, block: Block, text: str, out: list[Event]) -> str | None:
        """Read ``text`` into the block. Returns the text after the block, or None."""
        if block.awaiting_fence:
            return self._feed_fence(block, text, out)
        limit = self.max_block - block.length
        s = block.take_carry() + text
        end, close_len, release, keep = block.scan(s, self._captured)
        stop = keep if end is None else end + close_len
        if end is None and keep < len(s):
            stop = len(s)  # a carried partial token counts toward the limit too
        if stop > limit:
            # Policy 13: the cut falls at exactly max_block characters of the
            # block, whatever the chunking, so every chunking agrees.
            cut = max(limit, 0)
            block.append(s[:cut])
            self._reject(block, "too_long", out, trigger="too_long")
            return s[cut:]
        if end is None:
            block.carry = s[keep:]
            if keep:
                block.append(s[:keep])
            block.settle()
            self._go("body")
            return None
        block.append(s[:end])
        if release is not None:
            self._reject(block, release, out, trigger="release")
            return s[end:]
        if block.dialect.closing is Closing.FENCED:
            block.awaiting_fence = True
            block.cheap = None
            return self._feed_fence(block, s[end:], out)
        block.append(s[end : end + close_len])
        self._close(block, out)
        return s[end + close_len :]

    def _feed_fence(self, block: Block, text: str, out: list[Event]) -> str | None:
        t = block.take_tail() + text
        m = FENCE_DONE_RE.match(t)
        if m is not None:
            block.append(m.group())
            self._close(block, out)
            return t[m.end() :]
        if FENCE_MAYBE_RE.fullmatch(t):
            block.tail = t
            return None
        self._close(block, out)
        return t

    def _captured(self, kind: str, text: str) -> str | None:
        """A top-level string of a message-start JSON object was read: is it still a call?"""
        try:
            value = json.loads(f'"{text}"')
        except ValueError:
            return "not_a_call"
        if kind == "key":
            # Policy 8: a key no call has settles that this JSON is an answer.
            return None if value in CALL_KEYS else "not_a_call"
        # Policy 7, as early as it is certain.
        if self.tools is not None and value not in self.tools:
            return "undeclared"
        return None

    # -- verdicts -------------------------------------------------------------

    def _close(self, block: Block, out: list[Event]) -> None:
        self._block = None
        self._go("close")
        self._verdict(block, out, closed=True, marked=True)

    def _end_unclosed(self, block: Block, out: list[Event]) -> None:
        block.append(block.take_carry())
        self._block = None
        self._go("close")
        self._verdict(block, out, closed=block.dialect.closed_by_end, marked=False)

    def _reject(self, block: Block, reason: str, out: list[Event], *, trigger: str) -> None:
        self._block = None
        self._go(trigger)
        raw = block.joined()
        dialect = block.body_dialect(raw[len(block.opener) :])
        out.append(Rejected(raw, self._shown(dialect, raw, marked=False), dialect.id, reason))

    @staticmethod
    def _shown(dialect: Dialect, raw: str, *, marked: bool) -> str:
        # Policy 12 (policy 8: JSON that is not a call is shown verbatim). An
        # unclosed block keeps a closing-marker look-alike that sat in a string.
        if dialect.answer_like:
            return raw
        return strip_markers(dialect.id, raw, closed=marked)

    def _verdict(self, block: Block, out: list[Event], *, closed: bool, marked: bool) -> None:
        """Judge a finished block. ``marked``: it ended on its closing marker or bracket."""
        raw = block.joined()
        body = self._call_body(block, raw, marked=marked)
        dialect = block.body_dialect(body)
        if dialect.kind == Kind.REASONING:
            out.append(Reasoning(body, raw, dialect.id))
            return
        try:
            calls = parse_body(dialect.id, body)
        except BodyError as exc:
            if not closed:
                reason = "unterminated"
            elif dialect.answer_like:
                reason = "not_a_call"
            else:
                reason = exc.reason
            shown = self._shown(dialect, raw, marked=marked)
            out.append(Rejected(raw, shown, dialect.id, reason))
            return
        if self.tools is not None and any(c.name not in self.tools for c in calls):
            shown = self._shown(dialect, raw, marked=marked)
            out.append(Rejected(raw, shown, dialect.id, "undeclared"))
            return
        self.format = dialect.id
        if self._schemas:
            calls = [typed_call(c, self._schemas.get(c.name)) for c in calls]
        for k, call in enumerate(calls):
            out.append(ToolCall(call.name, call.arguments, raw if k == 0 else "", dialect.id))

    @staticmethod
    def _call_body(block: Block, raw: str, *, marked: bool) -> str:
        body = raw[len(block.opener) :]
        dialect = block.dialect
        if not marked:
            return body
        if dialect.closing is Closing.MARKER:
            for close in dialect.closes:
                if body.endswith(close):
                    return body[: -len(close)]
        elif dialect.closing is Closing.FENCED:
            return body.rstrip().removesuffix(FENCE)
        return body
