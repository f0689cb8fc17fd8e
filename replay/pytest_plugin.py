"""A pytest plugin: recordings x strategies as test items, and a ``tcr_replay`` fixture.

    pytest --tcr-corpus corpora/ --tcr-detector mypkg.parser:make_detector --tcr-dialect hermes

Each recording under ``--tcr-corpus`` and each ``--tcr-rechunk`` strategy
becomes one test item that replays it with every oracle; a failing item shows
the violation and the shrunk reproducer. Without ``--tcr-corpus`` the plugin
adds nothing but the fixture. The detector's claim (``tcr.claims``) comes from
``--tcr-dialect`` (repeatable) and ``--tcr-empty-tools``, else the ini options
``tcr_dialects``, ``tcr_empty_tools`` and ``tcr_special_tokens``, else what the detector
declares. A message that takes longer than ``--tcr-timeout`` (else the ini option
``tcr_timeout``, else ``tcr replay``'s default) is a crash finding, not a hung test run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tcr.claims import EMPTY_TOOLS, SPECIAL_TOKENS
from tcr.rechunk import DEFAULT_STRATEGIES
from tcr.time_limit import DEFAULT_TIMEOUT

__all__ = ["ReplayItem"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tcr", "tcr: replay recorded LLM token streams")
    group.addoption(
        "--tcr-corpus",
        action="append",
        default=[],
        metavar="PATH",
        help="Recordings (files or directories) to replay as test items; repeatable.",
    )
    group.addoption(
        "--tcr-detector",
        default=None,
        metavar="PKG.MOD:FACTORY",
        help="Detector factory to test (default: the reference StreamDetector).",
    )
    group.addoption(
        "--tcr-rechunk",
        action="append",
        default=[],
        metavar="STRATEGY",
        help="Rechunking strategy; repeatable (default: " + ", ".join(DEFAULT_STRATEGIES) + ").",
    )
    group.addoption(
        "--tcr-dialect",
        action="append",
        default=[],
        metavar="ID",
        help="A dialect the detector parses; repeatable (default: ini tcr_dialects, else "
        "what the detector declares).",
    )
    group.addoption(
        "--tcr-empty-tools",
        default=None,
        choices=list(EMPTY_TOOLS),
        help="What tools=[] means to the detector (default: ini tcr_empty_tools, else its own).",
    )
    parser.addini("tcr_dialects", "Dialects the detector parses (see tcr dialects).", "args")
    group.addoption(
        "--tcr-special-tokens",
        default=None,
        choices=list(SPECIAL_TOKENS),
        help="Whether special tokens reach the detector whole (an engine-side parser sees "
        "token ids) or may be split (default: ini tcr_special_tokens, else its own).",
    )
    group.addoption(
        "--tcr-policy",
        action="append",
        default=[],
        metavar="ID=CHOICE",
        help="Pin a policy's choice (see tcr policies); repeatable (default: ini "
        "tcr_policies, else read from probe messages).",
    )
    parser.addini("tcr_policies", "Pinned policy choices, ID=CHOICE (see tcr policies).", "args")
    parser.addini("tcr_empty_tools", "What tools=[] means to the detector: reject or text.")
    parser.addini("tcr_special_tokens", "Whether special tokens reach the detector whole or split.")
    group.addoption(
        "--tcr-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="CPU seconds the detector may take over one message, plus 0.1 ms per chunk; "
        f"longer is a crash finding (default: ini tcr_timeout, else {DEFAULT_TIMEOUT:g}).",
    )
    parser.addini(
        "tcr_timeout", f"Seconds the detector may take over one message ({DEFAULT_TIMEOUT:g})."
    )
    group.addoption("--tcr-runs", type=int, default=20, help="Runs of random strategies.")
    group.addoption("--tcr-seed", type=int, default=0, help="Seed of random strategies.")


class ReplayItem(pytest.Item):
    """One recording replayed under one strategy."""

    def __init__(self, *, path: Path, strategy: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.strategy = strategy

    def runtest(self) -> None:
        from tcr.errors import EXIT_OK
        from tcr.oracle import RECORDING_CHECKS
        from tcr.replay import run

        config = self.config
        report = run(
            [self.path],
            strategies=[self.strategy],
            checks=RECORDING_CHECKS,  # cost times the detector, once: no test of a recording
            runs=config.getoption("tcr_runs"),
            seed=config.getoption("tcr_seed"),
            detector=config.getoption("tcr_detector"),
            timeout=timeout_of(config),
            **claim_of(config),
        )
        if report.exit_code != EXIT_OK:
            raise ReplayFailed(report)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ReplayFailed):
            report = excinfo.value.report
            lines = [f"{e.path}: {e.message}" for e in report.errors]
            for outcome in report.outcomes:
                if outcome.error:
                    lines.append(f"{outcome.strategy}: {outcome.error}")
                for failure in outcome.failures:
                    lines.append(f"{outcome.strategy}: {failure.violation}")
                    lines.append(f"  reproduce: {failure.reproducer}")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"tcr replay {self.path.name} --rechunk {self.strategy}"


def claim_of(config: pytest.Config) -> dict[str, Any]:
    """``dialects``, ``empty_tools``, ``special_tokens`` and ``policies`` for
    ``tcr.replay.run``: the options, else the ini."""
    dialects = config.getoption("tcr_dialect") or config.getini("tcr_dialects") or None
    empty_tools = config.getoption("tcr_empty_tools") or config.getini("tcr_empty_tools") or None
    special_tokens = (
        config.getoption("tcr_special_tokens") or config.getini("tcr_special_tokens") or None
    )
    from tcr.errors import TcrError
    from tcr.policies import parse_policy_options

    given = config.getoption("tcr_policy") or config.getini("tcr_policies") or []
    try:
        policies = parse_policy_options(given, where="--tcr-policy") or None
    except TcrError as error:
        raise pytest.UsageError(str(error)) from None
    return {
        "dialects": dialects,
        "empty_tools": empty_tools,
        "special_tokens": special_tokens,
        "policies": policies,
    }


def pytest_report_header(config: pytest.Config) -> list[str]:
    """With ``--tcr-corpus``: the claim and the policies as read, one line (as every tcr
    report starts)."""
    if not config.getoption("tcr_corpus"):
        return []
    from tcr.detector.loader import resolve_detector
    from tcr.errors import TcrError
    from tcr.probes import read_spec

    try:
        spec = resolve_detector(config.getoption("tcr_detector"), **claim_of(config))
    except TcrError as error:
        raise pytest.UsageError(str(error)) from None
    judged, _ = read_spec(spec, timeout=timeout_of(config))
    return [f"tcr: {judged.claim.judged_line}"]


def timeout_of(config: pytest.Config) -> float:
    """The time limit of one message: ``--tcr-timeout``, else the ini, else the CLI's default."""
    given = config.getoption("tcr_timeout")
    if given is None:
        given = float(config.getini("tcr_timeout") or DEFAULT_TIMEOUT)
    return float(given)


class ReplayFailed(Exception):
    def __init__(self, report: Any) -> None:
        super().__init__("replay found violations")
        self.report = report


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    corpus = config.getoption("tcr_corpus")
    if not corpus:
        return
    from tcr.corpus import find_recordings
    from tcr.errors import TcrError
    from tcr.replay.report import short_path

    try:
        paths = find_recordings(corpus)
    except TcrError as error:
        raise pytest.UsageError(str(error)) from None
    strategies = config.getoption("tcr_rechunk") or list(DEFAULT_STRATEGIES)
    for path in paths:
        # ``recorded/tools_tag[char]``: the recording as the replay report shows it, no suffix
        shown = short_path(str(path)).removesuffix(".msgpack")
        for strategy in strategies:
            name = f"{shown}[{strategy}]"
            items.append(
                ReplayItem.from_parent(
                    session, name=name, nodeid=name, path=path, strategy=strategy
                )
            )


@pytest.fixture
def tcr_replay(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``tcr.replay.run`` with ``--tcr-detector``, ``--tcr-timeout`` and the claim options as
    its defaults."""
    from tcr.replay import run

    default = request.config.getoption("tcr_detector")
    timeout = timeout_of(request.config)
    claim = claim_of(request.config)

    def replay(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("detector", default)
        kwargs.setdefault("timeout", timeout)
        for key, value in claim.items():
            kwargs.setdefault(key, value)
        return run(*args, **kwargs)

    return replay
