"""Choosing a detector once, at the edge, and making one per message (ARCHITECTURE.md §5.2).

``DetectorSpec`` is what a command resolves ``--detector`` / ``--detector-cmd`` to:
the factory, how to name it again in a reproducer, and its claim (what it is
judged against, ``tcr.claims``), resolved once: ``--dialect``/``--empty-tools``
over the ``tcr_claim`` of a detector it makes, then of the factory; a factory
that takes ``dialects``/``empty_tools`` keywords (the reference does) gets the
options' parts, so ``--dialect hermes`` restricts it. ``make_detector`` is the one
way to call a factory, with one error policy: the factory gets ``tools=NAMES`` only
when it accepts a ``tools`` keyword, and ``tool_specs=`` (the request's OpenAI
``tools`` list) only when it accepts that one; a factory that raises, or returns something
that is not a detector, raises ``FactoryError`` naming the factory. Callers decide
what that means (a replay reports the recording and goes on; fuzz stops).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcr.claims import EVERYTHING, Claim, read_claim
from tcr.detector.events import Detector
from tcr.errors import FactoryError, TcrError, did_you_mean
from tcr.tool_specs import read_tool_specs

__all__ = [
    "REFERENCE",
    "DetectorSpec",
    "Factory",
    "accepts_keyword",
    "factory_name",
    "load_factory",
    "make_detector",
    "resolve_detector",
    "unbound_factory",
]

Factory = Callable[..., Detector]
BINDS_EMPTY_TOOLS = ("reject", "text")  # the empty_tools a factory's keyword is given
REFERENCE = "tcr.detector.core:StreamDetector"


@dataclass(frozen=True, slots=True)
class DetectorSpec:
    """A detector factory, how the user named it and its claim: resolved once, used by
    every runner (``resolve_detector`` and ``load`` read the claim; built directly, a
    spec claims everything)."""

    factory: Factory
    spec: str | None = None  # ``--detector PKG.MOD:FACTORY``; None: the reference or a command
    command: str | None = None  # ``--detector-cmd``: a harness in another process
    claim: Claim = EVERYTHING  # what it is judged against

    @classmethod
    def load(
        cls,
        spec: str | None,
        *,
        dialects: Sequence[str] | None = None,
        empty_tools: str | None = None,
        special_tokens: str | None = None,
        policies: Mapping[str, str] | None = None,
    ) -> DetectorSpec:
        """``--detector``: import the factory (``None``: the reference) and read its claim."""
        return cls(load_factory(spec), spec).claiming(
            dialects, empty_tools, special_tokens, policies
        )

    def claiming(
        self,
        dialects: Sequence[str] | None = None,
        empty_tools: str | None = None,
        special_tokens: str | None = None,
        policies: Mapping[str, str] | None = None,
    ) -> DetectorSpec:
        """This detector with its claim read, the options' parts over it (module docstring).

        One detector is made to read its ``tcr_claim``; when the factory fails, only
        its own attribute is read (the failure is the replay's to report). A claim of
        the wrong shape, declared or given, is a ``TcrError``.
        """
        # bad: fail first
        given = EVERYTHING.with_options(dialects, empty_tools, special_tokens, policies)
        if empty_tools is None and "empty_tools" in (policies or {}):
            empty_tools = given.empty_tools  # --policy empty_tools=X is --empty-tools X
        keywords: dict[str, object] = {}
        if dialects is not None and accepts_keyword(self.factory, "dialects"):
            keywords["dialects"] = sorted(given.dialects or ())
        # the choices a factory took before policies existed; the others it makes or not,
        # and the probes read which (tcr.probes)
        bound = empty_tools in BINDS_EMPTY_TOOLS
        if bound and accepts_keyword(self.factory, "empty_tools"):
            keywords["empty_tools"] = empty_tools
        if special_tokens is not None and accepts_keyword(self.factory, "special_tokens"):
            keywords["special_tokens"] = special_tokens
        factory = functools.partial(self.factory, **keywords) if keywords else self.factory
        try:
            holders: tuple[object, ...] = (make_detector(factory), unbound_factory(factory))
        except FactoryError:
            holders = (unbound_factory(factory),)
        declared = read_claim(*holders) or EVERYTHING
        claim = declared.with_options(dialects, empty_tools, special_tokens, policies)
        return DetectorSpec(factory, self.spec, self.command, claim)

    @property
    def name(self) -> str:
        """How to name the detector to a user: the spec, the command, or the reference."""
        return self.spec or self.command or REFERENCE

    def options(self) -> list[str]:
        """The command-line options that choose this detector, and its claim, again."""
        if self.command is not None:
            chosen = ["--detector-cmd", self.command]
        else:
            chosen = ["--detector", self.spec] if self.spec else []
        return chosen + self.claim.options()


def resolve_detector(
    detector: str | Factory | DetectorSpec | None,
    *,
    dialects: Sequence[str] | None = None,
    empty_tools: str | None = None,
    special_tokens: str | None = None,
    policies: Mapping[str, str] | None = None,
) -> DetectorSpec:
    """What a library caller passes as ``detector=``, as a ``DetectorSpec`` with its claim.

    A string is imported; a factory is named as ``--detector`` would take it, or by
    its ``command`` when it runs one (``tcr.stdio.command_factory``). A spec already
    resolved keeps its claim unless ``dialects``, ``empty_tools``, ``special_tokens`` or
    ``policies`` (``--policy``: pinned choices, ``tcr.policies``) is given.
    """
    if isinstance(detector, DetectorSpec):
        if dialects is None and empty_tools is None and special_tokens is None and not policies:
            return detector
        return detector.claiming(dialects, empty_tools, special_tokens, policies)
    if detector is None or isinstance(detector, str):
        return DetectorSpec.load(
            detector,
            dialects=dialects,
            empty_tools=empty_tools,
            special_tokens=special_tokens,
            policies=policies,
        )
    command = getattr(detector, "command", None)
    if isinstance(command, str):
        chosen = DetectorSpec(detector, None, command)
    else:
        chosen = DetectorSpec(detector, factory_name(detector))
    return chosen.claiming(dialects, empty_tools, special_tokens, policies)


def unbound_factory(factory: Callable[..., object]) -> Callable[..., object]:
    """The user's factory under the keywords ``claiming`` bound (its attribute is there)."""
    while isinstance(factory, functools.partial):
        factory = factory.func
    return factory


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
    factory = unbound_factory(factory)
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
    factory: Factory,
    tools: Sequence[str] | None = None,
    *,
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
    **keywords: object,
) -> Detector:
    """One detector for one message: ``factory(tools=NAMES, tool_specs=SPECS, **keywords)``.

    ``tools`` (the declared names) and ``tool_specs`` (the request's OpenAI ``tools``
    list, ``tcr.tool_specs``) are each passed only when the factory accepts that keyword
    (ARCHITECTURE.md §5.2), ``tool_specs`` only when there are some. A factory that
    raises, or returns no ``feed``/``finish`` detector, raises ``FactoryError``.
    """
    if accepts_keyword(factory, "tools"):
        keywords["tools"] = None if tools is None else list(tools)
    if tool_specs is not None and accepts_keyword(factory, "tool_specs"):
        # The specs as read once (tcr.tool_specs.ToolSpecs, a tuple): the reference then
        # does not check them again per message.
        keywords["tool_specs"] = read_tool_specs(tool_specs)
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


_NOT_SHOWN = frozenset({"tools", "tool_specs"})  # per message, and long: not the factory's name


def _called(factory: Callable[..., object], keywords: dict[str, object]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in keywords.items() if k not in _NOT_SHOWN)
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
