"""Modal screens: help (every binding, the FSM table, the legend), breakpoint, search."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tcr.detector.machine import TRANSITIONS

from .navigation import Target

__all__ = ["BreakpointScreen", "HelpScreen", "SearchScreen", "help_text"]

_KEY_NAMES = {
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "slash": "/",
    "question_mark": "?",
    "escape": "esc",
    "down": "↓",
    "up": "↑",
    "right": "→",
    "left": "←",
}

LEGEND = (
    ("¦", "between two chunks, over alternating shades (a ¦ in the stream: ⟨U+00A6⟩)"),
    ("highlight", "the current chunk; dim: input not received yet"),
    ("bold", "an opening or closing marker"),
    ("colour", "an emitted block: call green, reasoning magenta, rejected yellow"),
    ("underline", "the open block; italic: held back; struck out: never emitted"),
    ("↵ → ·", "newline, tab, trailing space"),
)


def key_names(binding: Binding) -> str:
    return ", ".join(_KEY_NAMES.get(key.strip(), key.strip()) for key in binding.key.split(","))


def help_text(bindings: Iterable[Binding]) -> Group:
    """Every binding (keys, short and long description), the FSM's transition table
    and the stream pane's legend."""
    keys = Table.grid(padding=(0, 2))
    keys.add_column(style="bold", no_wrap=True)
    keys.add_column(no_wrap=True)
    keys.add_column(ratio=1)
    for binding in bindings:
        keys.add_row(key_names(binding), binding.description, binding.tooltip)
    scroll = "Focus the detail pane to scroll it (arrows, pages); leave it"
    keys.add_row("tab, esc", "detail", scroll)
    machine = Table.grid(padding=(0, 2))
    machine.add_column(style="bold", no_wrap=True)
    machine.add_column()
    for state, moves in TRANSITIONS.items():
        edges = ", ".join(f"{trigger} → {target.value}" for trigger, target in moves.items())
        machine.add_row(state.value, edges)
    legend = Table.grid(padding=(0, 2))
    legend.add_column(style="bold", no_wrap=True)
    legend.add_column(ratio=1)
    for mark, meaning in LEGEND:
        legend.add_row(mark, meaning)
    return Group(
        RichText("Keys", style="bold underline"),
        keys,
        RichText("\nThe state machine (tcr.detector.machine.TRANSITIONS)", style="bold underline"),
        machine,
        RichText("\nThe stream pane", style="bold underline"),
        legend,
        RichText("\nesc, q or ? closes this screen", style="dim"),
    )


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "close", tooltip="Close the help screen"),
    ]

    def __init__(self, bindings: Sequence[Binding]) -> None:
        super().__init__()
        self.help = help_text(bindings)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help") as scroll:
            scroll.border_title = "Help"
            yield Static(self.help, id="help-body")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)


class BreakpointScreen(ModalScreen[Target | None]):
    """Pick a state or a format; the debugger then runs to where it is entered (forward
    with ``b`` and ``c``, back with ``C``)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel", tooltip="Keep the current breakpoint")
    ]

    def __init__(self, targets: Sequence[Target], current: Target | None) -> None:
        super().__init__()
        self.targets = list(targets)
        self.current = current

    def compose(self) -> ComposeResult:
        options = [
            Option(target.described, id=str(index)) for index, target in enumerate(self.targets)
        ]
        with Vertical(id="breakpoint") as box:
            box.border_title = "Break where the FSM enters"
            yield OptionList(*options, id="targets")

    def on_mount(self) -> None:
        targets = self.query_one(OptionList)
        if self.current in self.targets:
            targets.highlighted = self.targets.index(self.current)
        targets.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.targets[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


class SearchScreen(ModalScreen[str | None]):
    """A search of the content; \\n, \\t and \\r are escapes; smart case."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel", tooltip="Close without searching")
    ]

    def __init__(self, last: str) -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical(id="search") as box:
            box.border_title = "Search the content (\\n: newline; enter again: next match)"
            yield Input(self.last, placeholder="text to find", id="query")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
