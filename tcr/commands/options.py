"""Options shared by several commands, as reusable decorators (pip-tools style)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from tcr.claims import EMPTY_TOOLS, SPECIAL_TOKENS
from tcr.errors import EXIT_ERROR, TcrError, did_you_mean
from tcr.oracle import CHECKS
from tcr.policies import parse_policy_options
from tcr.stdio import PER_REQUEST, START_UP
from tcr.time_limit import DEFAULT_TIMEOUT

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

__all__ = [
    "Choice",
    "claim_options",
    "claimed",
    "detector_cmd_option",
    "detector_option",
    "fail",
    "json_option",
    "junit_option",
    "parse_tools",
    "pinned",
    "policy_option",
    "run_interruptible",
    "sarif_option",
    "seed_option",
    "special_tokens_option",
    "timeout_option",
    "tool_specs_option",
    "tools_option",
    "write_reports",
]


class Choice(click.Choice):  # type: ignore[type-arg]
    """``click.Choice`` that suggests the closest choice for a mistyped value."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as error:
            # a new error, not error.message changed: click 8.5 declares message Final
            hint = did_you_mean(str(value), self.choices)
            raise click.BadParameter(error.message + hint, ctx=ctx, param=param) from None


def detector_option(fn: F) -> F:
    return click.option(
        "--detector",
        "detector",
        metavar="PKG.MOD:FACTORY",
        default=None,
        help="Detector factory to load (default: the reference tcr.detector.core:StreamDetector).",
    )(fn)


def detector_cmd_option(fn: F) -> F:
    fn = click.option(
        "--detector-timeout",
        type=float,
        default=5.0,
        show_default=True,
        metavar="SECONDS",
        help=(
            "How long a --detector-cmd process may take to answer one request, and one "
            f"message (plus {PER_REQUEST * 1000:g} ms a request): longer is a crash finding. "
            f"Its first answer after starting may take {START_UP:g} s (or SECONDS, if "
            "longer), for interpreter start-up and imports."
        ),
    )(fn)
    return click.option(
        "--detector-cmd",
        "detector_cmd",
        metavar="CMD",
        default=None,
        help="Run the detector in another process speaking the JSON-lines protocol "
        "(see the README); e.g. 'python -m tcr.stdio pkg.mod:factory'.",
    )(fn)


def special_tokens_option(fn: F) -> F:
    """``--special-tokens split|whole``: whether special tokens reach the detector whole."""
    return click.option(
        "--special-tokens",
        "special_tokens",
        type=Choice(SPECIAL_TOKENS),
        default=None,
        help="Whether the dialects' special tokens (<|call|>, [TOOL_CALLS]) reach the "
        "detector whole (an engine-side parser sees token ids: no rechunking strategy "
        "then cuts one) or may be split by a proxy. Default: what the detector declares, "
        "else split.",
    )(fn)


def claim_options(fn: F) -> F:
    """``--dialect ID`` (repeatable), ``--empty-tools`` and ``--special-tokens``: the claim
    the detector is judged against, over the one its factory declares (``tcr.claims``)."""
    fn = special_tokens_option(fn)
    fn = click.option(
        "--empty-tools",
        "empty_tools",
        type=Choice(EMPTY_TOOLS),
        default=None,
        help="What tools=[] means to the detector: reject every call (the reference's "
        "choice) or text (no parsing at all). Default: what the detector declares.",
    )(fn)
    return click.option(
        "--dialect",
        "dialects",
        multiple=True,
        metavar="ID",
        help="A dialect the detector parses (see tcr dialects); repeatable. Other "
        "dialects' markup must pass through as text. Default: what the detector "
        "declares in tcr_claim, else every dialect.",
    )(fn)


def policy_option(fn: F) -> F:
    """``--policy ID=CHOICE`` (repeatable): a choice pinned, enforced instead of read
    from the probe messages (``tcr.policies``; ``tcr policies`` lists them)."""
    return click.option(
        "--policy",
        "policies",
        multiple=True,
        metavar="ID=CHOICE",
        help="Pin a policy's choice (see tcr policies), e.g. undeclared=rejected; "
        "repeatable. A pinned choice is enforced; the others are read from probe "
        "messages and shown at the top of the report.",
    )(fn)


def pinned(policies: tuple[str, ...]) -> dict[str, str] | None:
    """``--policy`` values as a map (none: ``None``); a bad one is a ``TcrError``."""
    return parse_policy_options(policies) or None


def claimed(dialects: tuple[str, ...]) -> list[str] | None:
    """``--dialect`` as given (none: ``None``, the detector's own claim)."""
    return list(dialects) or None


def timeout_option(fn: F) -> F:
    return click.option(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help=(
            "CPU seconds an in-process detector may take over one message (one chunking), "
            "plus 0.1 ms per chunk; longer is a crash finding at the chunk it was in, and "
            "the run goes on. "
            "A --detector-cmd process has --detector-timeout instead."
        ),
    )(fn)


def tools_option(fn: F) -> F:
    return click.option(
        "--tools",
        "tools",
        metavar="NAME[,NAME...]",
        default=None,
        help="Declared tool names, overriding the recording's ('' declares none).",
    )(fn)


def tool_specs_option(fn: F) -> F:
    return click.option(
        "--tool-specs",
        "tool_specs",
        type=click.Path(path_type=Path),
        metavar="FILE",
        default=None,
        help=(
            'A JSON file with the OpenAI tools list (or {"tools": [...]}) given to a '
            "factory that takes tool_specs, overriding each recording's request tools."
        ),
    )(fn)


def seed_option(fn: F) -> F:
    return click.option(
        "--seed", type=int, default=0, show_default=True, help="Seed for random strategies."
    )(fn)


def check_option(fn: F) -> F:
    """``--check NAME`` (repeatable, into ``checks``): ``tcr replay``'s and ``tcr fuzz``'s,
    validated alike (a mistyped name: click's one error line, with the closest name)."""
    return click.option(
        "--check",
        "checks",
        multiple=True,
        type=Choice([str(check) for check in CHECKS]),
        help="Oracle to run; repeatable (default: all).",
    )(fn)


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(fn)


def junit_option(fn: F) -> F:
    return click.option(
        "--junit",
        type=click.Path(path_type=Path),
        metavar="FILE",
        help="Write JUnit XML here (CI test-report views).",
    )(fn)


def sarif_option(fn: F) -> F:
    return click.option(
        "--sarif",
        type=click.Path(path_type=Path),
        metavar="FILE",
        help="Write SARIF 2.1.0 here (GitHub code scanning, the VS Code SARIF viewer).",
    )(fn)


def write_reports(command: str, *writes: tuple[Path | None, Callable[[Path], None]]) -> bool:
    """Write each report file asked for (``None``: not asked); one that cannot be written is
    one line on stderr, and the others are still written. False if any could not be."""
    ok = True
    for path, write in writes:
        if path is None:
            continue
        try:
            write(path)
        except TcrError as error:
            click.echo(f"tcr {command}: {' '.join(str(error).split())}", err=True)
            ok = False
    return ok


def parse_tools(value: str | None) -> list[str] | None:
    """``--tools a,b`` → ["a", "b"]; ``--tools ''`` → [] (declares none); absent → None."""
    if value is None:
        return None
    return [name.strip() for name in value.split(",") if name.strip()]


def fail(command: str, error: Exception) -> NoReturn:
    """Bad input: one line on stderr naming what and where, exit code 2, no traceback."""
    message = " ".join(str(error).split()) or type(error).__name__
    click.echo(f"tcr {command}: {message}", err=True)
    raise SystemExit(EXIT_ERROR)


def run_interruptible(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro``; Ctrl-C or SIGTERM cancels it with the signal's name, so a
    recording in progress is closed as ``"interrupted: Ctrl-C (SIGINT)"``."""

    async def main() -> T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        installed = []
        for sig, name in ((signal.SIGINT, "Ctrl-C (SIGINT)"), (signal.SIGTERM, "SIGTERM")):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                assert task is not None
                loop.add_signal_handler(sig, task.cancel, name)
                installed.append(sig)
        try:
            return await coro
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)

    return asyncio.run(main())
