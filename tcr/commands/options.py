"""Options shared by several commands, as reusable decorators (pip-tools style)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "detector_cmd_option",
    "detector_option",
    "fail",
    "json_option",
    "parse_tools",
    "seed_option",
    "tools_option",
]


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
        help="How long a --detector-cmd process may take to answer one request.",
    )(fn)
    return click.option(
        "--detector-cmd",
        "detector_cmd",
        metavar="CMD",
        default=None,
        help="Run the detector in another process speaking the JSON-lines protocol "
        "(see the README); e.g. 'python -m tcr.detector.stdio pkg.mod:factory'.",
    )(fn)


def tools_option(fn: F) -> F:
    return click.option(
        "--tools",
        "tools",
        metavar="NAME[,NAME...]",
        default=None,
        help="Declared tool names, overriding the recording's ('' declares none).",
    )(fn)


def seed_option(fn: F) -> F:
    return click.option(
        "--seed", type=int, default=0, show_default=True, help="Seed for random strategies."
    )(fn)


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(fn)


def parse_tools(value: str | None) -> list[str] | None:
    """``--tools a,b`` → ["a", "b"]; ``--tools ''`` → [] (declares none); absent → None."""
    if value is None:
        return None
    return [name.strip() for name in value.split(",") if name.strip()]


def fail(command: str, error: Exception) -> NoReturn:
    """Bad input: one line on stderr naming what and where, exit code 2, no traceback."""
    message = " ".join(str(error).split()) or type(error).__name__
    click.echo(f"tcr {command}: {message}", err=True)
    raise SystemExit(2)
