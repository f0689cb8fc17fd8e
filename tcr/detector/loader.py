"""Choosing a detector once, at the edge, and making one per message (ARCHITECTURE.md §5.2).

``DetectorSpec`` is what a command resolves ``--detector`` / ``--detector-cmd`` to:
the factory and how to name it again in a reproducer. ``make_detector`` is the one
way to call a factory, with one error policy: the factory gets ``tools=NAMES`` only
when it accepts a ``tools`` keyword; a factory that raises, or returns something
that is not a detector, raises ``FactoryError`` naming the factory. Callers decide
what that means (a replay reports the recording and goes on; fuzz stops).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tcr.detector.events import Detector
from tcr.errors import FactoryError, TcrError, did_you_mean

__all__ = [
    "REFERENCE",
    "DetectorSpec",
    "Factory",
    "accepts_keyword",
    "factory_name",
    "load_factory",
    "make_detector",
    "resolve_detector",
]

Factory = Callable[..., Detector]
REFERENCE = "tcr.detector.core:StreamDetector"


@dataclass(frozen=True, slots=True)
class DetectorSpec:
    """A detector factory and how the user named it: resolved once, used by every runner."""

    factory: Factory
    spec: str | None = None  # ``--detector PKG.MOD:FACTORY``; None: the reference or a command
    command: str | None = None  # ``--detector-cmd``: a harness in another process

    @classmethod
    def load(cls, spec: str | None) -> DetectorSpec:
        """``--detector``: import the factory (``None``: the reference)."""
        return cls(load_factory(spec), spec)

    @property
    def name(self) -> str:
        """How to name the detector to a user: the spec, the command, or the reference."""
        return self.spec or self.command or REFERENCE

    def options(self) -> list[str]:
        """The command-line options that choose this detector again."""
        if self.command is not None:
            return ["--detector-cmd", self.command]
        return ["--detector", self.spec] if self.spec else []


def resolve_detector(detector: str | Factory | DetectorSpec | None) -> DetectorSpec:
    """What a library caller passes as ``detector=``, as a ``DetectorSpec``.

    A string is imported; a factory is named as ``--detector`` would take it, or by
    its ``command`` when it runs one (``tcr.stdio.command_factory``).
    """
    if isinstance(detector, DetectorSpec):
        return detector
    if detector is None or isinstance(detector, str):
        return DetectorSpec.load(detector)
    command = getattr(detector, "command", None)
    if isinstance(command, str):
        return DetectorSpec(detector, None, command)
    return DetectorSpec(detector, factory_name(detector))


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
            names = [n for n in dir(target) if not n.startswith("_")]
            hint = did_you_mean(part, names)
            raise TcrError(
                f"detector {spec!r}: {module_name} has no attribute {attr!r}{hint}"
            ) from None
    if not callable(target):
        raise TcrError(f"detector {spec!r}: {attr} is not callable")
    return target  # type: ignore[no-any-return]


def factory_name(factory: Callable[..., object]) -> str:
    """``package.module:factory`` for a factory, as ``--detector`` takes it."""
    module_name = getattr(factory, "__module__", None) or "?"
    module = sys.modules.get(module_name)
    qualname = getattr(factory, "__qualname__", "")
    if "<locals>" not in qualname and qualname:
        return f"{module_name}:{qualname}"
    # a factory made by a factory (``broken._factory``): find the name it is bound to
    for name, value in vars(module).items() if module is not None else ():
        if value is factory and not name.startswith("_"):
            return f"{module_name}:{name}"
    return f"{module_name}:{getattr(factory, '__name__', type(factory).__name__)}"


def accepts_keyword(factory: Callable[..., object], keyword: str) -> bool:
    """Whether ``factory`` can be called with ``keyword=...``."""
    keywords, any_keyword = _keywords(factory)
    return any_keyword or keyword in keywords


def make_detector(
    factory: Factory, tools: Sequence[str] | None = None, **keywords: object
) -> Detector:
    """One detector for one message: ``factory(tools=NAMES, **keywords)``.

    ``tools`` is passed only when the factory accepts it (ARCHITECTURE.md §5.2). A factory that
    raises, or returns no ``feed``/``finish`` detector, raises ``FactoryError``.
    """
    if accepts_keyword(factory, "tools"):
        keywords["tools"] = None if tools is None else list(tools)
    try:
        detector = factory(**keywords)
    except Exception as error:  # not Ctrl-C: that still stops the run
        raise FactoryError(
            f"detector factory {_called(factory, keywords)} raised {_one_line(error)}"
        ) from error
    # Not isinstance(detector, Detector): a runtime Protocol check costs more than a
    # short message's whole run, and fuzz makes several detectors per example.
    if not (
        callable(getattr(detector, "feed", None)) and callable(getattr(detector, "finish", None))
    ):
        raise FactoryError(
            f"detector factory {_called(factory, keywords)} returned "
            f"{type(detector).__name__}, not a detector with feed() and finish()"
        )
    return detector


def _called(factory: Callable[..., object], keywords: dict[str, object]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in keywords.items() if k != "tools")
    return f"{factory_name(factory)}({shown})" if shown else factory_name(factory)


def _keywords(factory: Callable[..., object]) -> tuple[frozenset[str], bool]:
    # Asked once per detector made: inspect.signature costs more than a small message.
    try:
        return _cached_keywords(factory)
    except TypeError:  # an unhashable factory: ask every time
        return _signature_keywords(factory)


@functools.lru_cache(maxsize=64)
def _cached_keywords(factory: Callable[..., object]) -> tuple[frozenset[str], bool]:
    return _signature_keywords(factory)


def _signature_keywords(factory: Callable[..., object]) -> tuple[frozenset[str], bool]:
    """The keyword names ``factory`` takes, and whether it takes any (``**kwargs``)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return frozenset(), False
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return (
        frozenset(p.name for p in params if p.kind in named),
        any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params),
    )


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
