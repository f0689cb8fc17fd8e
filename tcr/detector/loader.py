"""Loading a user's detector from ``package.module:factory`` (DESIGN §5).

The factory is called as ``factory(tools=NAMES)`` when it accepts a ``tools``
keyword, else as ``factory()``; one detector per message. Everything that can
go wrong while loading is a ``TcrError`` naming the spec.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from tcr.detector.events import Detector
from tcr.errors import TcrError

__all__ = ["REFERENCE", "Factory", "accepts_keyword", "load_factory", "make_detector"]

Factory = Callable[..., Detector]
REFERENCE = "tcr.detector.core:StreamDetector"


def load_factory(spec: str | None) -> Factory:
    """Import ``package.module:attribute`` (default: the reference ``StreamDetector``)."""
    spec = spec or REFERENCE
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise TcrError(f"detector {spec!r}: expected package.module:factory")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an import error in user code is still the user's input
        raise TcrError(f"detector {spec!r}: cannot import {module_name}: {_one_line(exc)}") from exc
    target: Any = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise TcrError(f"detector {spec!r}: {module_name} has no attribute {attr!r}") from None
    if not callable(target):
        raise TcrError(f"detector {spec!r}: {attr} is not callable")
    return target  # type: ignore[no-any-return]


def accepts_keyword(factory: Callable[..., object], keyword: str) -> bool:
    """Whether ``factory`` can be called with ``keyword=...``."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return False
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD
        or (p.name == keyword and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        for p in params
    )


def make_detector(factory: Factory, tools: Sequence[str] | None = None) -> Detector:
    """One detector for one message. A factory that raises is re-raised as it is:
    the caller reports it with the recording and goes on."""
    if accepts_keyword(factory, "tools"):
        return factory(tools=None if tools is None else list(tools))
    return factory()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
