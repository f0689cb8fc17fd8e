"""JUnit XML for CI: one test suite of test cases, each passed, failed, errored or skipped.

``tcr replay``, ``tcr show`` and ``tcr fuzz`` each say what their test cases are;
this module writes them the one way (the counts are derived from the cases, so
they cannot disagree with them).
"""

from __future__ import annotations

import enum
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tcr._runtime.report_files import write_junit_xml

__all__ = ["Case", "Outcome", "write_suite"]


class Outcome(enum.Enum):
    """A test case that did not pass, as the JUnit element that says so."""

    FAILURE = "failure"  # a violation: the detector is wrong
    ERROR = "error"  # unusable input: the detector crashed, a recording does not read
    SKIPPED = "skipped"  # nothing could be checked


@dataclass(frozen=True, slots=True)
class Case:
    """One ``<testcase>``; ``outcome`` None: it passed."""

    classname: str
    name: str
    seconds: float | None = None
    outcome: Outcome | None = None
    message: str = ""
    kind: str | None = None  # the ``type`` attribute: the check, or what was unusable
    text: str | None = None  # details: the violations, how to reproduce them


def write_suite(
    path: str | Path,
    name: str,
    cases: Sequence[Case],
    *,
    seconds: float | None = None,
    properties: Sequence[tuple[str, str]] = (),
) -> None:
    """Write ``cases`` as one ``<testsuite>``; a file that cannot be written is a ``TcrError``."""

    def count(outcome: Outcome) -> str:
        return str(sum(1 for case in cases if case.outcome is outcome))

    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=count(Outcome.FAILURE),
        errors=count(Outcome.ERROR),
        skipped=count(Outcome.SKIPPED),
    )
    if seconds is not None:
        suite.set("time", f"{seconds:.3f}")
    if properties:
        element = ET.SubElement(suite, "properties")
        for key, value in properties:
            ET.SubElement(element, "property", name=key, value=value)
    for case in cases:
        suite.append(_case(case))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    write_junit_xml(path, root)


def _case(case: Case) -> ET.Element:
    element = ET.Element("testcase", classname=case.classname, name=case.name)
    if case.seconds is not None:
        element.set("time", f"{case.seconds:.3f}")
    if case.outcome is not None:
        detail = ET.SubElement(element, case.outcome.value, message=case.message)
        if case.kind is not None:
            detail.set("type", case.kind)
        detail.text = case.text
    return element
