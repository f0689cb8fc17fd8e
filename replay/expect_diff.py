"""What changed between two expectations, as ``bless`` and ``review`` show it.

Text and reasoning get a word-level diff (``[-stored-]{+current+}``, as ``git diff
--word-diff=plain`` writes it, readable without colour) with long unchanged runs
cut to a few words either side; calls a structural one: a call added or removed,
then its name, then each argument key and value. A whole-line JSON diff of a
500-character text says only "this line changed"; these say where.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any, Final

from .show_render import visible

__all__ = ["expectation_diff", "word_diff"]

_WORDS: Final = re.compile(r"\s+|\w+|[^\w\s]")
CONTEXT: Final = 8  # unchanged tokens (words, spaces, marks) kept each side of a change


def _shown(piece: str) -> str:
    """``piece`` with invisible characters drawn; a space is trailing only at a newline
    (a fragment's last space is not the text's)."""
    return visible(piece + ".")[:-1]


def word_diff(before: str, after: str, *, context: int = CONTEXT) -> str:
    """``after`` with what ``before`` had instead marked: ``[-gone-]{+new+}``, unchanged
    runs longer than ``2 * context`` words cut to their ends around ``…``."""
    old, new = _WORDS.findall(before), _WORDS.findall(after)
    out: list[str] = []
    opcodes = SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    if all(op == "equal" for op, *_ in opcodes):
        return _shown(after)
    for n, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            run = old[i1:i2]
            head = run[:context] if n > 0 else []
            tail = run[-context:] if n < len(opcodes) - 1 else []
            if len(run) > len(head) + len(tail):
                out.append(_shown("".join(head)) + "…" + _shown("".join(tail)))
            else:
                out.append(_shown("".join(run)))
            continue
        if i2 > i1:
            out.append(f"[-{_shown(''.join(old[i1:i2]))}-]")
        if j2 > j1:
            out.append(f"{{+{_shown(''.join(new[j1:j2]))}+}}")
    return "".join(out)


def expectation_diff(stored: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[str]:
    """Lines saying what differs from ``stored`` in ``current`` (none: nothing differs)."""
    lines: list[str] = []
    if stored is None:
        lines.append("no stored expectation; the current one:")
        stored = {"text": "", "calls": [], "reasoning": ""}
    for field in ("text", "reasoning"):
        before, after = str(stored.get(field) or ""), str(current.get(field) or "")
        if before != after:
            lines.append(f"{field}: {word_diff(before, after)}")
    lines += _calls_diff(stored.get("calls") or [], current.get("calls") or [])
    return lines


def _calls_diff(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[str]:
    lines: list[str] = []
    for index in range(max(len(before), len(after))):
        if index >= len(after):
            lines.append(f"- call {index}: {_call(before[index])}")
        elif index >= len(before):
            lines.append(f"+ call {index}: {_call(after[index])}")
        else:
            lines += _call_diff(index, before[index], after[index])
    return lines


def _call_diff(index: int, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    name = after.get("name")
    if before.get("name") != name:
        lines.append(f"~ call {index} name: {before.get('name')!r} → {name!r}")
    old, new = before.get("arguments"), after.get("arguments")
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        if old != new:
            lines.append(f"~ call {index} ({name}) arguments: {_json(old)} → {_json(new)}")
        return lines
    for key in sorted(set(old) | set(new)):
        where = f"call {index} ({name}) argument {key!r}"
        if key not in new:
            lines.append(f"- {where}: {_json(old[key])}")
        elif key not in old:
            lines.append(f"+ {where}: {_json(new[key])}")
        elif old[key] != new[key] or type(old[key]) is not type(new[key]):
            lines.append(f"~ {where}: {_json(old[key])} → {_json(new[key])}")
    return lines


def _call(call: Mapping[str, Any]) -> str:
    return f"{call.get('name')}({_json(call.get('arguments'))})"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
