"""The hot path of ``StreamDetector.feed`` (printing past the start, no block) holds and
releases a marker's beginning itself; it must do exactly what the long way through
``_print`` and ``_emit`` does: the same events, and the same state and moves after every
chunk (the TUI steps through those)."""

from __future__ import annotations

from helpers import cut, steps
from hypothesis import given, settings
from hypothesis import strategies as st

from tcr.detector.core import StreamDetector
from tcr.detector.events import Event
from tcr.detector.formats import FULL

# Markers, their beginnings, and prose whose words begin markers (functools, <tool_call>).
PIECES = sorted(
    {*FULL.sharing}
    | {m[:n] for m in FULL.sharing for n in range(1, min(len(m), 6))}
    | {"func", "tion ", "tools", "<t", "ool", "`", "``", "Hello ", " ", "\n", '{"a": 1}', "é😀"}
)
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=24).map("".join)


class LongWay(StreamDetector):
    """The reference, every hold through _print (a subclass that changes it does)."""

    def _print(self, text: str, out: list[Event]) -> str:
        return super()._print(text, out)


def test_the_long_way_is_taken_by_a_subclass_that_changes_print_and_only_then() -> None:
    assert StreamDetector._fast_hold and not LongWay._fast_hold


@settings(max_examples=400)
@given(cut(texts), st.sampled_from([None, ["hermes"], ["phi4_mini_json", "gigachat3"]]))
def test_the_hot_path_does_what_the_long_way_does(
    chunks: list[str], dialects: list[str] | None
) -> None:
    assert steps(StreamDetector(dialects=dialects), chunks) == steps(
        LongWay(dialects=dialects), chunks
    )


def test_a_held_beginning_read_on_in_the_hot_path() -> None:
    # prose whose words begin markers (functools, <tool_call>) at 4-character chunks
    chunks = ["see ", "the f", "unc", "tion", "s <t", "ool ", "<tool", "_call", ">"]
    assert steps(StreamDetector(), chunks) == steps(LongWay(), chunks)
