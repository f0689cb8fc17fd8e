"""Writing the report files of ``--junit`` and ``--sarif`` (replay, show and fuzz alike)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tcr._runtime.names import safe_data, xml_text
from tcr.errors import TcrError

__all__ = ["write_junit_xml", "write_report_file", "write_sarif_log"]


def write_report_file(path: str | Path, data: str | bytes, what: str) -> None:
    """Write a report file (its folder made if need be); one that cannot be is a ``TcrError``."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            target.write_text(data + "\n", encoding="utf-8")
        else:
            target.write_bytes(data + b"\n")
    except OSError as error:
        raise TcrError(f"cannot write {what} to {path}: {error.strerror or error}") from error


def write_junit_xml(path: str | Path, root: ET.Element) -> None:
    """``root`` as XML, every attribute and text in its ``xml_text`` form: ElementTree writes
    a lone surrogate as a character reference and a control character raw, and XML 1.0
    allows neither."""
    for element in root.iter():
        element.attrib = {key: xml_text(value) for key, value in element.attrib.items()}
        element.text = None if element.text is None else xml_text(element.text)
        element.tail = None if element.tail is None else xml_text(element.tail)
    write_report_file(path, ET.tostring(root, encoding="utf-8", xml_declaration=True), "JUnit XML")


def write_sarif_log(path: str | Path, log: dict[str, Any]) -> None:
    write_report_file(path, json.dumps(safe_data(log), indent=2, ensure_ascii=False), "SARIF")
