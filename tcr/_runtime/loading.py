"""``--detector`` loaded as the commands load it, a misspelt module named with the closest one.

``DetectorSpec.load`` already suggests a factory's name from the names in its module.
A module that does not exist has no names to suggest from; its siblings do: each part
of the dotted path from the first one missing on is replaced by the closest module
beside it (``pkgutil.iter_modules`` of the package above), and the suggestion is the
whole spec again, its factory the closest name in that module, ready to paste. A
top-level package that does not import gets none: everything installed is beside it,
and the closest of that (``mypkg`` -> ``mypy``) is noise, not a hint.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Mapping, Sequence

from tcr.detector.loader import DetectorSpec
from tcr.errors import TcrError, did_you_mean

__all__ = ["closest_module", "load_detector"]

CUTOFF = 0.6  # tcr.errors.did_you_mean's: a part that close is a misspelling


def load_detector(
    spec: str | None,
    *,
    dialects: Sequence[str] | None = None,
    empty_tools: str | None = None,
    special_tokens: str | None = None,
    policies: Mapping[str, str] | None = None,
) -> DetectorSpec:
    """``DetectorSpec.load``; a ``TcrError`` for a module that does not exist ends with
    ``(did you mean 'pkg.module:factory'?)`` when one close to it does."""
    try:
        return DetectorSpec.load(
            spec,
            dialects=dialects,
            empty_tools=empty_tools,
            special_tokens=special_tokens,
            policies=policies,
        )
    except TcrError as error:
        missing = error.__cause__
        if spec is None or not isinstance(missing, ModuleNotFoundError) or not missing.name:
            raise
        module_name, _, attr = spec.partition(":")
        found = closest_module(module_name, missing.name)
        if found is None:
            raise
        suggested = f"{found}:{_closest_attribute(found, attr)}"
        raise TcrError(f"{error}{did_you_mean(spec, [suggested])}") from missing


def closest_module(module_name: str, missing: str) -> str | None:
    """``module_name`` with each part from ``missing`` (the module Python could not find) on
    replaced by the closest module beside it; None when ``missing`` is not part of
    ``module_name`` (a module that ``module_name`` imports), is a top-level one, or a part
    has none close."""
    if "." not in missing:
        return None
    if module_name != missing and not module_name.startswith(missing + "."):
        return None
    parts = module_name.split(".")
    for index in range(missing.count("."), len(parts)):
        beside = _submodules(".".join(parts[:index]))
        close = difflib.get_close_matches(parts[index], beside, n=1, cutoff=CUTOFF)
        if not close:
            return None
        parts[index] = close[0]
    return ".".join(parts)


def _closest_attribute(module_name: str, attr: str) -> str:
    """``attr`` with its first part the closest name in the module, when it has no such name
    (both misspelt: one suggestion, not two runs)."""
    first, dot, rest = attr.partition(".")
    try:
        names = [n for n in dir(importlib.import_module(module_name)) if not n.startswith("_")]
    except Exception:  # the module fails on import: the next run says how
        return attr
    close = difflib.get_close_matches(first, names, n=1, cutoff=CUTOFF)
    return attr if first in names or not close else f"{close[0]}{dot}{rest}"


def _submodules(package: str) -> list[str]:
    """The modules directly in ``package``, without importing them."""
    try:
        path = getattr(importlib.import_module(package), "__path__", None)
    except Exception:  # a corrected package that fails to import: no suggestion
        return []
    return [] if path is None else [m.name for m in pkgutil.iter_modules(path)]
