"""An incremental Hermes parser that keys on token ids, in the shape of vLLM's Hermes parser.

vLLM's ``Hermes2ProToolParser.extract_tool_calls_streaming`` decides where a call
starts and ends by ``self.tool_call_start_token_id in delta_token_ids``, not by
looking for ``<tool_call>`` in the text; text is read only to take the call's JSON.
This one does the same: a ``<tool_call>`` the ids do not announce (a proxy cut the
token, so no id came with it) is plain text to it, as it would be to vLLM.

It answers as vLLM does (``DeltaMessage``: content and per-index call fragments); a
call's name and its arguments go out when its end token arrives. ``factory`` adapts
it with ``tcr.adapters.IncrementalCallDetector(special_tokens=VOCAB)``, which hands it
the special tokens each chunk holds whole, mapped here to ids as a tokenizer would.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from parsers.hermes import call_of
from parsers.shapes import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from tcr.adapters import IncrementalCallDetector

__all__ = [
    "CLAIM",
    "END_ID",
    "START_ID",
    "VOCAB",
    "TokenIdHermesParser",
    "factory",
    "split_factory",
]

START, END = "<tool_call>", "</tool_call>"
START_ID, END_ID = 151657, 151658  # Qwen2.5's ids of <tool_call> and </tool_call>
VOCAB = {START: START_ID, END: END_ID}
_MARKER = {START_ID: START, END_ID: END}


class TokenIdHermesParser:
    """Calls start and end where the token ids say; text between them is the call's JSON."""

    tool_call_start_token_id = START_ID
    tool_call_end_token_id = END_ID

    def __init__(self, tools: Collection[str] | None = None) -> None:
        self.tools = None if tools is None else frozenset(tools)
        self.in_call = False
        self.body = ""
        self.index = 0

    def extract_tool_calls_streaming(
        self, delta_text: str, delta_token_ids: Sequence[int]
    ) -> DeltaMessage | None:
        if self.tools is not None and not self.tools:  # no tools offered: nothing is a call
            return DeltaMessage(content=delta_text)
        content: list[str] = []
        calls: list[DeltaToolCall] = []
        rest = delta_text
        for token_id in delta_token_ids:
            marker = _MARKER.get(token_id)
            if marker is None:
                continue  # an ordinary token: its text is in delta_text
            before, _, rest = rest.partition(marker)
            self._text(before, content)
            if token_id == self.tool_call_start_token_id and not self.in_call:
                self.in_call, self.body = True, ""
            elif token_id == self.tool_call_end_token_id and self.in_call:
                if _in_string(self.body):  # policy 4: a marker inside a JSON string is text
                    self.body += marker
                    continue
                self.in_call = False
                self._close(calls, content)
            else:  # a start inside a call, an end outside one: text as it came
                self._text(marker, content)
        self._text(rest, content)
        if not content and not calls:
            return None
        return DeltaMessage(content="".join(content) or None, tool_calls=calls)

    def flush(self) -> DeltaMessage | None:
        """End of message: an unterminated call is a call if its JSON is complete."""
        if not self.in_call:
            return None
        self.in_call = False
        content: list[str] = []
        calls: list[DeltaToolCall] = []
        self._close(calls, content)
        return DeltaMessage(content="".join(content) or None, tool_calls=calls)

    def _text(self, text: str, content: list[str]) -> None:
        if self.in_call:
            self.body += text
        elif text:
            content.append(text)

    def _close(self, calls: list[DeltaToolCall], content: list[str]) -> None:
        """The call's name and arguments, or its body as text when it is no call (to a tool
        offered): the reference shows a rejected block's body too."""
        call = call_of(self.body)
        if call is None or (self.tools is not None and call[0] not in self.tools):
            content.append(self.body)
            return
        name, arguments = call
        index, self.index = self.index, self.index + 1
        text = json.dumps(arguments, ensure_ascii=False)
        calls.append(DeltaToolCall(index, function=DeltaFunctionCall(name, text)))


def _in_string(body: str) -> bool:
    """Whether ``body`` (JSON so far) ends inside a string."""
    inside = escaped = False
    for char in body:
        if escaped:
            escaped = False
        elif char == "\\" and inside:
            escaped = True
        elif char == '"':
            inside = not inside
    return inside


def factory(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The parser behind the adapter, given each chunk's whole special tokens as ids."""
    parser = TokenIdHermesParser(tools)
    return IncrementalCallDetector(
        lambda chunk, tokens: parser.extract_tool_calls_streaming(
            chunk, [VOCAB[t] for t in tokens]
        ),
        parser.flush,
        format="hermes",
        special_tokens=VOCAB,
    )


# An engine-side parser: it sees token ids, so special tokens reach it whole.
CLAIM = {"dialects": ["hermes"], "empty_tools": "text", "special_tokens": "whole"}
factory.tcr_claim = CLAIM  # type: ignore[attr-defined]


def split_factory(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The same parser claiming, wrongly, that its tokens may be split (a proxy's view)."""
    return factory(tools)


split_factory.tcr_claim = {**CLAIM, "special_tokens": "split"}  # type: ignore[attr-defined]
