"""Failures as a SARIF 2.1.0 log, the format code-scanning views read (GitHub, VS Code).

Pure: :func:`to_sarif` turns :class:`Result` values into the log as plain JSON
data, and the replay, show and fuzz reports say what their results are. Writing
the file is theirs too. ``RULES`` is the table of what tcr checks, one entry per
oracle of ARCHITECTURE.md §7 plus ``input`` (a recording or detector that could not be
used): the rules of every log, so a viewer can explain any result.

A recording is a binary msgpack file: it has no lines to point at, so a result's
location is the file (line 1, for viewers that need a line), with the chunk index
and input offset as a logical location and in the result's properties.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Final
from urllib.parse import quote

from tcr import __version__

__all__ = ["FINGERPRINT", "RULES", "SCHEMA", "SRCROOT", "Result", "Rule", "to_sarif"]

SCHEMA: Final = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT: Final = "%SRCROOT%"  # relative paths are relative to the working directory
FINGERPRINT: Final = "tcrFinding/v1"  # the partialFingerprints key; bump it if identity changes


@dataclass(frozen=True, slots=True)
class Rule:
    id: str  # what --check takes, or "input"
    name: str
    short: str  # one line
    meaning: str  # what the check asserts and what a violation means
    action: str  # what to do about a result


RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "conservation",
        "Conservation",
        "Every input character comes out exactly once, in order.",
        "The raw spans of the detector's events, concatenated, equal its input, and after "
        "every feed() the raw emitted so far is a prefix of the input received so far. A "
        "violation means the detector lost, duplicated or reordered input at the chunk named.",
        "Replay the reproducer and step through it with tcr tui to see the feed() at which "
        "the emitted text stops matching the input.",
    ),
    Rule(
        "invariance",
        "ChunkInvariance",
        "The events do not depend on where chunk boundaries fall.",
        "The events (adjacent text merged) equal those of the same input fed whole. A "
        "violation means a marker, call or piece of text came out differently because a "
        "chunk boundary fell inside it.",
        "The reproducer's --rechunk splits: names the boundaries that change the result.",
    ),
    Rule(
        "no_leak",
        "NoLeak",
        "No text shown to the user contains a complete opening marker.",
        "No Text event contains a complete distinctive opening marker (<tool_call>, "
        "<think>, ...). A violation means markup meant for the parser reached the user, "
        "typically because the marker arrived split over chunks.",
        "Keep a possible marker prefix pending until the next chunk settles it.",
    ),
    Rule(
        "holdback",
        "HoldbackBound",
        "Undecided input held back stays within the longest marker.",
        "After each feed(), input that is neither emitted nor inside a block (as located "
        "by the whole run) is at most the bound, the longest opening marker minus one. A "
        "violation means text reaches the user late, or only at finish().",
        "Emit text as soon as it can no longer start a marker.",
    ),
    Rule(
        "warm_cold",
        "WarmEqualsCold",
        "A reused or format-seeded detector behaves like a fresh one.",
        "A detector seeded with the detected format, and one reused across messages via "
        "reset(), emit the same events as a fresh detector. A violation means state leaks "
        "from one message into the next, or the format hint changes the result.",
        "Clear every buffer and flag in reset(); a format hint may only skip detection.",
    ),
    Rule(
        "expected",
        "Expected",
        "The events match the expectation stored in the recording.",
        "A recording blessed with tcr bless carries the text, calls and reasoning a "
        "detector must produce. A violation means the result changed.",
        "Fix the detector, or accept the new result with tcr bless or tcr review.",
    ),
    Rule(
        "crash",
        "Crash",
        "The detector raised instead of returning events.",
        "The detector's factory, feed() or finish() raised, or a --detector-cmd process "
        "died, hung or printed something that is not an answer. The result names the "
        "chunk at which it happened when it is known.",
        "Run the reproducer with --debug or tcr tui to stop at the failing call.",
    ),
    Rule(
        "cost",
        "Cost",
        "Time per character does not grow with the message.",
        "A probe message (plain text and a long call per claimed dialect) is fed in chunks "
        "of 8 characters at n and at 4n characters; the time per character at 4n over that "
        "at n is about 1 for a linear detector and 4 for one that re-joins or re-scans its "
        "buffer on every chunk. A result means that ratio was 2 or more, twice.",
        "Keep a running position (or the last few characters) instead of re-joining or "
        "re-scanning the whole buffer or block per chunk (policy 4).",
    ),
    Rule(
        "policy",
        "Policy",
        "The detector makes one of the legitimate choices where correct parsers differ.",
        "Probe messages (one or two per policy and claimed dialect) are run unsplit, and "
        "what the detector shows is compared with the reference's reading under each "
        "choice of the policy (tcr policies lists them). A result means no choice explains "
        "the output, or a pinned choice (--policy) was broken, or another dialect's probe "
        "read another choice.",
        "Make the choice the report's first line names, or pin the one you mean with "
        "--policy ID=CHOICE and make the detector keep it.",
    ),
    Rule(
        "input",
        "InputError",
        "A recording or the detector could not be used.",
        "The recording is corrupt, cut short or not a tcr recording, its body does not "
        "decode, or the detector factory raised before the recording could be replayed. "
        "Nothing was checked on it.",
        "The message names the file and the byte, frame or chunk where it went wrong.",
    ),
)
_INDEX: Final = {rule.id: index for index, rule in enumerate(RULES)}


@dataclass(frozen=True, slots=True)
class Result:
    """One failure, as a report knows it."""

    rule: str  # an id in RULES
    message: str  # what happened, and the command line that reproduces it
    path: str | None  # the recording it is about, as the report names it (None: none)
    identity: tuple[str, ...]  # what stays the same from run to run: the fingerprint
    chunk: int | None = None
    offset: int | None = None
    properties: Mapping[str, Any] = field(default_factory=dict)


def to_sarif(
    results: Iterable[Result],
    *,
    root: PurePath,
    exit_code: int | None = None,
    notes: Sequence[str] = (),
    properties: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One run of tcr as a SARIF log; relative paths become URIs under ``root`` (absolute).

    ``notes`` are conditions of the run that are no failures (a recording left
    out, and why); ``exit_code`` is the one the command exits with.
    """
    # Violations found (exit 1) are a successful run; an input tcr could not use (2) is not.
    invocation: dict[str, Any] = {"executionSuccessful": exit_code != 2}
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    if notes:
        invocation["toolExecutionNotifications"] = [
            {"level": "note", "message": {"text": note}} for note in notes
        ]
    base = root.as_uri()
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "tcr",
                "version": __version__,
                "rules": [_rule(rule) for rule in RULES],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": base if base.endswith("/") else base + "/"}},
        "results": [_result(result, root) for result in results],
    }
    if properties:
        run["properties"] = dict(properties)
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def artifact_location(path: str, root: PurePath) -> dict[str, str]:
    """A file as SARIF names it: a URI relative to ``root`` when inside it, else a file URI."""
    given = PurePath(path)
    full = PurePath(os.path.normpath(given if given.is_absolute() else root / given))
    try:
        inside = full.relative_to(root)
    except ValueError:
        return {"uri": "file://" + _percent_encoded(full.as_posix())}
    return {"uri": _percent_encoded(inside.as_posix()), "uriBaseId": SRCROOT}


def _percent_encoded(path: str) -> str:
    """A URI is bytes percent-encoded: a name's undecodable byte is its own %XX; a lone
    surrogate no byte stands for (no file system gives one) is written as its escape."""
    try:
        return quote(os.fsencode(path))
    except UnicodeEncodeError:
        return quote(path.encode("utf-8", "backslashreplace"))


def fingerprint(identity: Sequence[str]) -> str:
    # surrogatepass: a name's lone surrogate is hashed too, never an error
    return hashlib.sha256("\x1f".join(identity).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.short},
        "fullDescription": {"text": rule.meaning},
        "help": {"text": f"{rule.meaning}\n\n{rule.action}"},
        "defaultConfiguration": {"level": "error"},
    }


_FILE: Final = {"startLine": 1}


def _result(result: Result, root: PurePath) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": result.rule,
        "ruleIndex": _INDEX[result.rule],
        "level": "error",
        "message": {"text": result.message},
    }
    if result.path is not None:
        # A recording has no lines, but GitHub code scanning shows a result only at a
        # line (sarif-sdk rule GH1003): line 1 stands for the file.
        physical = {"artifactLocation": artifact_location(result.path, root), "region": _FILE}
        location: dict[str, Any] = {"physicalLocation": physical}
        if result.chunk is not None:
            where = f"chunk {result.chunk}"
            detail = where if result.offset is None else f"{where}, offset {result.offset}"
            location["logicalLocations"] = [{"name": where, "fullyQualifiedName": detail}]
        out["locations"] = [location]
    out["partialFingerprints"] = {FINGERPRINT: fingerprint(result.identity)}
    properties = dict(result.properties)
    if result.chunk is not None:
        properties.setdefault("chunk", result.chunk)
    if result.offset is not None:
        properties.setdefault("offset", result.offset)
    if properties:
        out["properties"] = properties
    return out
