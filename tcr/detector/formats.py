"""The format table: one row per tool-call dialect (DESIGN §5).

The state machine in ``tcr.detector.core`` reads this table and nothing else
about dialects; adding one is adding a row here plus its body parser in
``tcr.detector.bodies``. The TUI and the docs read the same rows.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "BY_ID",
    "DISTINCTIVE_OPENERS",
    "FORMATS",
    "HOLDBACK_BOUND",
    "MODEL_SEEDS",
    "OPENING_MARKERS",
    "Closing",
    "Format",
    "format_for_model",
]


class Closing(Enum):
    """How a block ends."""

    MARKER = "marker"  # the first closing marker outside a string of the body
    BALANCED = "balanced"  # the bracket that balances the body's first one
    FENCED = "fenced"  # BALANCED, then an optional ``` fence (with a little white space)


@dataclass(frozen=True, slots=True)
class Format:
    id: str
    opens: tuple[str, ...]
    closes: tuple[str, ...]
    closing: Closing
    anywhere: bool  # False: only while all content so far is white space
    kind: str = "call"  # "call" or "reasoning"
    keep: int = 0  # trailing characters of the opening marker that belong to the body
    closed_by_end: bool = False  # end of message is a normal close, not "unterminated"
    summary: str = ""


FORMATS: tuple[Format, ...] = (
    Format(
        "gemma_special",
        ("<|tool_call>",),
        ("<tool_call|>",),
        Closing.MARKER,
        True,
        summary='Gemma 4 call:NAME{key:<|"|>v<|"|>,…}, or JSON',
    ),
    Format(
        "tool_call_tag",
        ("<tool_call>",),
        ("</tool_call>",),
        Closing.MARKER,
        True,
        summary="JSON {name, arguments}; Qwen3-Coder <function=…>; GLM <arg_key>/<arg_value>",
    ),
    Format(
        "tools_tag",
        ("<tools>",),
        ("</tools>",),
        Closing.MARKER,
        True,
        summary="JSON object or array of calls",
    ),
    Format(
        "fenced_json",
        ("```json\n{", "```xml\n{"),
        ("```",),
        Closing.FENCED,
        True,
        keep=1,
        summary="JSON call in a code fence; closes on the balancing }, then an optional ```",
    ),
    Format(
        "bracket_tool_calls",
        ("[TOOL_CALLS]",),
        (),
        Closing.BALANCED,
        True,
        summary="Mistral: a JSON array of calls, or NAME[ARGS]{…}",
    ),
    Format(
        "python_tag",
        ("<|python_tag|>",),
        ("<|eom_id|>", "<|eot_id|>"),
        Closing.MARKER,
        True,
        closed_by_end=True,
        summary="Llama: JSON call(s) separated by ';'; closed by <|eom_id|>, <|eot_id|> or the end",
    ),
    Format(
        "bare_json",
        ("{",),
        (),
        Closing.BALANCED,
        False,
        keep=1,
        summary="a JSON call that is the start of the message",
    ),
    Format(
        "think",
        ("<think>",),
        ("</think>",),
        Closing.MARKER,
        True,
        kind="reasoning",
        summary="reasoning text",
    ),
)

BY_ID: dict[str, Format] = {f.id: f for f in FORMATS}
BY_ID_NATIVE = "native"  # calls from the SSE tool_calls field; never in content

OPENING_MARKERS: dict[str, Format] = {m: f for f in FORMATS for m in f.opens}
DISTINCTIVE_OPENERS: tuple[str, ...] = tuple(m for f in FORMATS if f.anywhere for m in f.opens)

# Policy 2: outside a block at most (longest opening marker - 1) characters are held.
HOLDBACK_BOUND: int = max(len(m) for m in OPENING_MARKERS) - 1

# The ADR's model-name seed table: the first matching pattern wins. A seed is a
# hint only; a seeded detector emits exactly what a cold one emits (policy 11).
MODEL_SEEDS: tuple[tuple[str, str], ...] = (
    ("gemma*", "gemma_special"),
    ("qwen*", "tool_call_tag"),
    ("hermes*", "tool_call_tag"),
    ("mistral*", "bracket_tool_calls"),
    ("mixtral*", "bracket_tool_calls"),
    ("*llama*", "python_tag"),
    ("glm*", "tool_call_tag"),
)


def format_for_model(name: str) -> str | None:
    """The format a model of this name usually writes, or ``None`` if unknown."""
    base = name.strip().lower().rsplit("/", 1)[-1]
    for pattern, fmt in MODEL_SEEDS:
        if fnmatch.fnmatchcase(base, pattern):
            return fmt
    return None
