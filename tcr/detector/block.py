"""Inside a block: the lexer that finds where a block ends (ARCHITECTURE.md §5.6, policies 4 and 8).

The printing side (``tcr.detector.core``) hands every character of an open
block to ``Block.scan``. The lexer skips JSON strings (or strings of the
dialect's own quote token, Gemma's ``<|"|>``), so a closing marker or brace
inside a string never ends the block, and carries a token split across chunks
to the next chunk instead of judging it half-seen. How a body is read (which
lexer, which quote, whether keys are watched) is data of the dialect record.
Each character is looked at a constant number of times: closing is O(1)
amortised per character, never a re-join of the block.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable
from typing import ClassVar

from tcr.detector.formats import SHARING, Closing, alternation
from tcr.dialects import BodyLexer, Dialect

__all__ = ["CALL_KEYS", "LEXER_TOKENS", "RULES", "Block", "Tokens", "partial_at_end"]

# A call object's top-level keys (every JSON call shape the body parsers accept).
# Any other key at message start settles that the JSON is an answer (policy 8).
CALL_KEYS = frozenset({"name", "arguments", "parameters", "type", "function", "id"})

# The lexer's own tokens (besides markers and the dialects' body tokens) whose split matters.
LEXER_TOKENS = ('\\"',)  # an escaped quote inside a JSON string


class Tokens:
    """The tokens one lexer state looks for, compiled once per opening marker."""

    __slots__ = ("busy", "busy_re", "firsts", "longest", "prefixes", "regex")

    def __init__(
        self, tokens: Iterable[str], *, extra: str = "", partials: tuple[str, ...] = ()
    ) -> None:
        toks = tuple(tokens)
        pattern = alternation(toks).pattern if toks else ""
        if extra:
            pattern = f"{pattern}|{extra}" if pattern else extra
        # No token at all matches nowhere (an empty pattern would match everywhere, and a
        # scan that finds a token of no length makes no progress).
        pattern = pattern or "(?!)"
        self.regex = re.compile(pattern, re.DOTALL)
        # A token split across chunks is carried to the next feed, never judged half-seen.
        self.prefixes = frozenset([t[:k] for t in toks for k in range(1, len(t))] + list(partials))
        self.firsts = frozenset(p[0] for p in self.prefixes)
        self.longest = max([len(t) for t in toks] + [len(p) + 1 for p in partials] + [1])
        chars = "".join(sorted(self.firsts))
        # Matches nowhere in a chunk that is plain body through and through.
        self.busy_re = re.compile(
            f"{pattern}|[{re.escape(chars)}]" if chars else pattern, re.DOTALL
        )
        self.busy = self.busy_re.search  # bound once: Block.absorbs runs per chunk


class Rules:
    """The lexer tables of the dialects sharing one opening marker."""

    def __init__(self, group: tuple[Dialect, ...]) -> None:
        first = group[0]
        closes = first.closes if first.closing is Closing.MARKER else ()
        self.closes = frozenset(closes)
        self.undecided = Tokens(closes, extra=r"\S")
        self.plain = Tokens(closes)
        self.json_out = Tokens(('"', *closes))
        self.string_in = Tokens(('"',), extra=r"\\.", partials=("\\",))
        quote = first.quote or '"'
        self.quoted_out = Tokens((quote, *closes))
        self.quoted_in = Tokens((quote,))
        self.quote = quote
        self.brace = Tokens(("{",))
        # The JSON lexer's runs, each one regex call (issue 37): outside strings, whole
        # strings and every character no closing marker starts with; inside one, its
        # characters and escapes. A run stops where the per-token loop would have to look.
        firsts = re.escape("".join(sorted({c[0] for c in closes})))
        self.json_in_run = re.compile(r'(?:[^"\\]++|\\.)*+', re.DOTALL)
        plain = f'[^"{firsts}]++' if firsts else '[^"]++'
        self.json_out_run = re.compile(rf'(?:{plain}|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
        # A chunk holding no backslash and no character a closing marker starts with is
        # read to its end by the JSON lexer on either side of a quote: each unescaped
        # quote flips the side, so only their number's parity is left to count (issue 37).
        self.json_stop = re.compile(f"[\\\\{firsts}]").search
        self.balanced = Tokens(('"', "{", "}", "[", "]"))
        # Python literals: either quote opens a string; brackets count only when the
        # balancing one ends the block.
        brackets = ("{", "}", "[", "]") if first.closing is Closing.BALANCED else ()
        self.python_out = Tokens(('"', "'", *brackets, *closes))
        self.single_in = Tokens(("'",), extra=r"\\.", partials=("\\",))
        # Message-start JSON (an answer_like dialect) at depth 1: keys are watched.
        self.call_shape = Tokens(('"', "{", "}", "[", "]", ":", ","))
        self.key_start = Tokens((), extra=r"\S")


RULES: dict[str, Rules] = {marker: Rules(group) for marker, group in SHARING.items()}


def partial_at_end(s: str, start: int, tokens: Tokens) -> int:
    """Index where a proper prefix of some token begins at the end of ``s``, else len(s)."""
    n = len(s)
    for j in range(max(start, n - tokens.longest + 1), n):
        if s[j] in tokens.firsts and s[j:] in tokens.prefixes:
            return j
    return n


# Judges a top-level string of message-start JSON as soon as it is read: its kind
# ("key" or "name") and its JSON text -> a rejection reason that settles the block, or None.
Judge = Callable[[str, str], str | None]


class _KeyWatch:
    """Message-start JSON (policy 8): the top-level keys and the name, read as they stream.

    Anything but a key where one must come settles that the JSON is an answer;
    the detector judges each key and name as it completes.
    """

    __slots__ = ("capture", "capture_kind", "expect_key", "last_key")

    def __init__(self) -> None:
        self.capture: list[str] | None = None  # a top-level key, or the value of "name"
        self.capture_kind = ""
        self.expect_key = False
        self.last_key: str | None = None

    def start_string(self) -> None:
        if self.expect_key:
            self.capture, self.capture_kind = [], "key"
            self.expect_key = False
        elif self.last_key == "name":
            self.capture, self.capture_kind = [], "name"

    def end_string(self, judge: Judge) -> str | None:
        """A captured string ended: the rejection reason it settles, if any."""
        assert self.capture is not None
        text = "".join(self.capture)
        kind = self.capture_kind
        self.capture = None
        self.last_key = None
        if kind == "key":
            with contextlib.suppress(ValueError):  # undecodable: the judge settles it
                self.last_key = json.loads(f'"{text}"')
        return judge(kind, text)


class Block:
    """One open block: its raw text so far and the lexer state that finds its end.

    The dialect record supplies the lexer moves (the lexer a body starts in, the
    one its first character picks, the string quote, whether keys are watched);
    this class only runs them.
    """

    __slots__ = (
        "awaiting_fence",
        "carry",
        "cheap",
        "depth",
        "dialect",
        "flips",
        "group",
        "heading",
        "in_string",
        "keys",
        "length",
        "lexer",
        "opener",
        "parts",
        "quote",
        "rules",
        "tail",
    )

    # The JSON lexer reads a run of plain characters and whole strings with one regex
    # call (skim_json), where the token loop of ``scan`` takes one per token; a test
    # turns it off to pin the two together (tests/detector/test_block_skim.py).
    skims: ClassVar[bool] = True
    # A chunk nothing in which can move the lexer but quotes is read to its end by one
    # search (and, in the JSON lexer, a count of its quotes) in StreamDetector.feed, before
    # absorbs (issue 37; ``settle``); a test turns it off to pin the two together
    # (tests/detector/test_block_parity.py).
    counts_quotes: ClassVar[bool] = True

    def __init__(self, marker: str, opener: str, group: tuple[Dialect, ...] | None = None) -> None:
        # The dialects this block may be (a restricted detector's: the claimed ones).
        self.group = SHARING[marker] if group is None else group
        self.dialect = self.group[0]  # how it closes (the group agrees on that)
        self.rules = RULES[marker]
        self.opener = opener
        self.parts: list[str] = [opener]
        self.length = len(opener)  # raw characters in parts
        self.carry = ""  # a possibly split token at the end: scanned again with the next chunk
        self.in_string = False
        self.quote = '"'  # the PYTHON lexer's: the quote that opened the current string
        self.depth = 0
        watch = self.dialect.answer_like and self.dialect.first_lexer is BodyLexer.BALANCED
        self.keys = _KeyWatch() if watch else None
        # Policy 8: while every dialect of the group has a head and none is complete yet,
        # the body may turn out to be no call's at all.
        self.heading = all(d.head is not None for d in self.group)
        self.tail = ""  # FENCED: what follows the balancing bracket, while it may be a fence
        self.awaiting_fence = False  # FENCED: the body is done, the fence may follow
        self.lexer = self.dialect.first_lexer
        # The JSON lexer's stop search while the cheap path may take a chunk, else None:
        # what StreamDetector.feed tries first (refreshed by ``settle`` after a scan).
        self.cheap: Callable[[str], object] | None = None
        self.flips = False  # an odd number of quotes in a cheap chunk flips in_string

    # -- the raw text -----------------------------------------------------------------

    @property
    def raw(self) -> str:
        return "".join(self.parts) + self.carry + self.tail

    def joined(self) -> str:
        """The raw text appended so far (without a carried token or fence tail)."""
        return "".join(self.parts)

    def append(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def snapshot(self) -> tuple[list[str], int, str]:
        """The parts, how many there are now, and what is held: an O(1) trace snapshot."""
        return self.parts, len(self.parts), self.carry + self.tail

    def take_carry(self) -> str:
        carry, self.carry = self.carry, ""
        return carry

    def take_tail(self) -> str:
        tail, self.tail = self.tail, ""
        return tail

    def absorbs(self, chunk: str) -> bool:
        """Take ``chunk`` into the block if nothing in it can end the block or settle it:
        the hot path (policy 4). False leaves everything as it was."""
        if (
            self.heading
            or self.awaiting_fence
            or (self.keys is not None and self.keys.capture is not None)
        ):
            return False
        if self.lexer is BodyLexer.JSON and self.skims:
            return self._absorbs_json(chunk)
        if self.carry or self.current_tokens().busy(chunk) is not None:
            return False
        self.parts.append(chunk)
        self.length += len(chunk)
        return True

    def settle(self) -> None:
        """After a scan that left the block open: the search that says a chunk may take
        the cheap path (``cheap``), and whether its quotes move the lexer (``flips``).

        In the JSON lexer, a chunk with no backslash and no closing marker's first
        character; in any other, a chunk in which its present tokens find nothing (what
        ``absorbs`` takes, and nothing it takes changes those tokens). None while a head,
        a fence or a key is watched, or a test turns the cheap path off."""
        flips = self.lexer is BodyLexer.JSON
        if (
            not self.counts_quotes
            or self.heading
            or self.awaiting_fence
            or (self.keys is not None and self.keys.capture is not None)
        ):
            self.cheap = None
        elif flips:
            self.cheap = self.rules.json_stop if self.skims else None
        else:
            self.cheap = self.current_tokens().busy
        self.flips = flips

    def _absorbs_json(self, chunk: str) -> bool:
        """``absorbs`` in the JSON lexer: a chunk read to its end, or to a closing marker's
        beginning or an escape's backslash at its end (carried, as ``scan`` carries them)."""
        s = self.carry + chunk
        in_string = self.in_string
        j = self.skim_json(s, 0)
        n = len(s)
        if j < n and (
            not (s[j] == "\\" if self.in_string else s[j:] in self.rules.json_out.prefixes)
        ):
            self.in_string = in_string  # a closing marker, or a character that starts none
            return False
        self.carry = s[j:]
        if j:
            self.parts.append(s[:j])
            self.length += j
        return True

    def body_dialect(self, body: str) -> Dialect:
        """Whose block this is, by its body: the first of the group that owns it."""
        for dialect in self.group:
            if dialect.owns(body):
                return dialect
        return self.dialect

    # -- the lexer --------------------------------------------------------------------

    def skim_json(self, s: str, i: int) -> int:
        """Move the JSON lexer over ``s`` from ``i`` through whole strings and plain runs.

        Stops at the end, at a character a closing marker starts with outside a string,
        or at a backslash ending ``s`` inside one (an escape split across chunks);
        ``in_string`` says which side of a quote it stopped on.
        """
        rules = self.rules
        if self.in_string:
            i = rules.json_in_run.match(s, i).end()  # type: ignore[union-attr]
            if i == len(s) or s[i] == "\\":
                return i
            self.in_string = False  # s[i] is the closing quote
            i += 1
        i = rules.json_out_run.match(s, i).end()  # type: ignore[union-attr]
        if i < len(s) and s[i] == '"':  # a string that goes on past s
            self.in_string = True
            i = rules.json_in_run.match(s, i + 1).end()  # type: ignore[union-attr]
        return i

    def current_tokens(self) -> Tokens:
        """The tokens the lexer looks for in its present state."""
        r = self.rules
        lexer = self.lexer
        if lexer is BodyLexer.UNDECIDED:
            return r.undecided
        if lexer is BodyLexer.PLAIN:
            return r.plain
        if lexer is BodyLexer.JSON:
            return r.string_in if self.in_string else r.json_out
        if lexer is BodyLexer.QUOTED:
            return r.quoted_in if self.in_string else r.quoted_out
        if lexer is BodyLexer.BEFORE_BRACE:
            return r.brace
        if lexer is BodyLexer.PYTHON:
            if not self.in_string:
                return r.python_out
            return r.string_in if self.quote == '"' else r.single_in
        if self.in_string:
            return r.string_in
        if self.keys is not None and self.depth == 1:
            return r.key_start if self.keys.expect_key else r.call_shape
        return r.balanced

    def scan(self, s: str, judge: Judge) -> tuple[int | None, int, str | None, int]:
        """Advance the lexer over ``s`` from its start.

        Returns ``(end, close_len, release, keep)``: ``end`` is where the body
        ends in ``s`` (None: not yet), ``close_len`` the closing marker's length
        there, ``release`` a rejection reason when the block is settled early,
        and ``keep`` (when ``end`` is None) where a possibly split token begins.
        ``judge`` settles a captured top-level string of message-start JSON.
        """
        keys = self.keys
        i = 0
        n = len(s)
        if self.heading:
            settled = self._head(s)
            if settled is not None:
                return settled, 0, "not_a_call", n
        while i < n:
            if self.lexer is BodyLexer.JSON and self.skims:
                return self._scan_json(s, i)
            tokens = self.current_tokens()
            m = tokens.regex.search(s, i)
            capture = None if keys is None else keys.capture
            if m is None:
                keep = partial_at_end(s, i, tokens)
                if capture is not None:
                    capture.append(s[i:keep])
                return None, 0, None, keep
            tok = m.group()
            lexer = self.lexer
            if self.in_string:
                if len(tok) == 2:  # an escape: the escaped character is never a delimiter
                    if capture is not None:
                        capture.append(s[i : m.end()])
                    i = m.end()
                    continue
                self.in_string = False
                if keys is not None and capture is not None:
                    capture.append(s[i : m.start()])
                    verdict = keys.end_string(judge)
                    if verdict is not None:
                        return m.end(), 0, verdict, n
                i = m.end()
                continue
            if tok in self.rules.closes:
                return m.start(), len(tok), None, n
            if lexer is BodyLexer.UNDECIDED:
                self.lexer = self._decide(tok)
                i = m.start()  # read the deciding character again, with the new lexer
                continue
            if lexer is BodyLexer.BEFORE_BRACE:
                self.lexer = BodyLexer.BALANCED
                i = m.start()
                continue
            if lexer is BodyLexer.PYTHON and tok in ('"', "'"):
                self.in_string = True
                self.quote = tok
                i = m.end()
                continue
            if tok == '"' or tok == self.rules.quote:
                self.in_string = True
                if lexer is BodyLexer.BALANCED and self.depth == 1 and keys is not None:
                    keys.start_string()
                i = m.end()
                continue
            if lexer is BodyLexer.PYTHON:  # a bracket: only a BALANCED block has them as tokens
                self.depth += 1 if tok in "{[" else -1
                if self.depth <= 0:
                    return m.end(), 0, None, n
            elif lexer is BodyLexer.BALANCED:
                if keys is not None and keys.expect_key and self.depth == 1:
                    # The next thing in a call object must be a key or its end.
                    if tok != "}":
                        return m.end(), 0, "not_a_call", n
                    keys.expect_key = False
                if tok == "{" or tok == "[":
                    self.depth += 1
                    if self.depth == 1 and keys is not None:
                        keys.expect_key = tok == "{"
                elif tok == "}" or tok == "]":
                    self.depth -= 1
                    if self.depth <= 0:
                        return m.end(), 0, None, n
                elif tok == "," and keys is not None:
                    keys.expect_key = True
                    keys.last_key = None
            i = m.end()
        return None, 0, None, n

    def _scan_json(self, s: str, i: int) -> tuple[int | None, int, str | None, int]:
        """``scan`` in the JSON lexer, a run at a time: what the token loop finds, found
        with one regex call per string-and-plain run instead of one per token."""
        n = len(s)
        rules = self.rules
        out = rules.json_out
        while True:
            j = self.skim_json(s, i)
            if j == n:
                return None, 0, None, n
            if self.in_string:  # a backslash ends s: the escape is judged whole next time
                return None, 0, None, j
            m = out.regex.match(s, j)
            if m is not None:  # a closing marker (a quote would have been skimmed)
                return j, m.end() - j, None, n
            if s[j:] in out.prefixes:
                return None, 0, None, j
            i = j + 1

    def _head(self, s: str) -> int | None:
        """Where in ``s`` the body is certain to be no call (policy 8), or None.

        The block ends just past the first character no dialect's head allows, so the
        cut depends on the text alone, never on its chunking. Looked at only while the
        head is undecided: a bounded number of characters.
        """
        seen = self.length - len(self.opener)
        body = self.joined()[len(self.opener) :] + s
        reach = 0
        for dialect in self.group:
            assert dialect.head is not None
            verdict = dialect.head.verdict(body)
            if verdict is None:
                self.heading = dialect.head.done.match(body) is None
                return None
            reach = max(reach, verdict)
        return reach + 1 - seen

    def _decide(self, first: str) -> BodyLexer:
        """Pick the body lexer from the body's first non-space character.

        The first dialect of the group that names this character decides.
        """
        for dialect in self.group:
            lexer = dialect.lexer_for(first)
            if lexer is not None:
                return lexer
        return self.dialect.lexer_otherwise
