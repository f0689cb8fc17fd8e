"""A SARIF log checked the way code scanning reads it: the schema, then what tcr promises.

The schema is ``data/sarif-2.1.0-subset.schema.json``: the part of SARIF 2.1.0
that tcr writes, stricter than the standard (see its ``$comment``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

import tcr

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-2.1.0-subset.schema.json").read_text())
VALIDATOR = jsonschema.Draft7Validator(
    SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
)


def load_sarif(path: Path) -> dict[str, Any]:
    """Read a SARIF file tcr wrote, check it, and return its one run."""
    log = json.loads(path.read_text(encoding="utf-8"))
    return check_sarif(log)


def check_sarif(log: dict[str, Any]) -> dict[str, Any]:
    errors = sorted(VALIDATOR.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("tcr", tcr.__version__)
    rules = [rule["id"] for rule in driver["rules"]]
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
    bases = run["originalUriBaseIds"]
    assert all(
        base["uri"].startswith("file:///") and base["uri"].endswith("/") for base in bases.values()
    )
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] == "error"
        assert result["message"]["text"]
        assert result["partialFingerprints"] and all(result["partialFingerprints"].values())
        for location in result.get("locations", []):
            artifact = location["physicalLocation"]["artifactLocation"]
            assert "\\" not in artifact["uri"] and " " not in artifact["uri"]
            if "uriBaseId" in artifact:  # relative: inside the working directory
                assert artifact["uriBaseId"] in bases
                assert not artifact["uri"].startswith(("/", "../", "file:"))
            else:
                assert artifact["uri"].startswith("file:///")
    return run


def location_uri(result: dict[str, Any]) -> str:
    return str(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
