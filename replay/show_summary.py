"""What ``tcr show`` found about one recording: a ``ShowSummary``.

The recording's parts (header, frames, decoded stream, chunks, events) are kept
as the JSON data ``tcr show --json`` prints; the verdict is a ``Verdict``. What
the command needs to decide (the exit code, why it is 2) are properties, so the
renderer, the report writers and the command read one type, not string keys.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from tcr.errors import EXIT_ERROR
from tcr.oracle import Verdict, Violation

__all__ = ["ShowSummary"]


@dataclass(frozen=True, slots=True)
class ShowSummary:
    """One recording, decoded, chunked once, run through a detector and judged."""

    path: str
    header: dict[str, Any]
    complete: bool
    incomplete_reason: str | None
    trailer: Any
    frames: list[dict[str, Any]]
    decoded: dict[str, Any]  # ``decoded["error"]``: the body does not decode past it
    expect: Any
    content: dict[str, Any] | None = None  # None when the body does not decode
    detector: dict[str, Any] | None = None  # spec, tools, events, shown, crash
    verdict: Verdict | None = None

    @property
    def decode_error(self) -> str | None:
        """Why the body does not decode (then no detector ran), else None."""
        error: str | None = self.decoded["error"]
        return error

    @property
    def crash(self) -> Violation | None:
        """The detector's crash (or its factory's failure), when it had one."""
        found = self.verdict.violations if self.verdict is not None else ()
        return next((v for v in found if v.check.is_error), None)

    @property
    def exit_code(self) -> int:
        """The codes of ``tcr replay``: 0 pass, 1 a violation, 2 a body that does not
        decode or a detector that crashed."""
        if self.decode_error is not None or self.verdict is None:
            return EXIT_ERROR
        return self.verdict.exit_code

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, the keys in the order ``--json`` prints them."""
        verdict = self.verdict
        return {
            "path": self.path,
            "header": self.header,
            "complete": self.complete,
            "incomplete_reason": self.incomplete_reason,
            "trailer": self.trailer,
            "frames": self.frames,
            "decoded": self.decoded,
            "content": self.content,
            "detector": self.detector,
            "verdict": None
            if verdict is None
            else {
                "ok": verdict.ok,
                "violations": [
                    {**dataclasses.asdict(v), "check": str(v.check)} for v in verdict.violations
                ],
                "ran": [str(check) for check in verdict.ran],
                "skipped": {str(check): why for check, why in verdict.skipped.items()},
            },
            "expect": self.expect,
        }

    def to_json(self) -> str:
        """What ``tcr show --json`` prints."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)
