"""The bundled regression corpus: rebuilt byte for byte, well labelled, and met by the reference.

Every recording in ``corpora/regressions`` pins one failure from the seeds
(ARCHITECTURE.md §15) or one policy (§5.6). Replayed through the reference
detector under many chunkings it must pass every trace check, its expectation included, so
``tcr replay`` with no arguments passes out of the box.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

import tcr.corpora
from tcr.corpora.build_regressions import CASES, Case, build
from tcr.corpus import Recording, read_recording
from tcr.detector import FORMATS, format_for_model
from tcr.detector.broken import BROKEN
from tcr.detector.core import StreamDetector
from tcr.dialects import DIALECTS
from tcr.oracle import TRACE_CHECKS, check_trace, check_warm_cold, merge_text
from tcr.rechunk import parse_strategy
from tcr.stream.decode import Decoded, decode
from tcr.tool_specs import spec_names
from tcr.trace import run_trace

REPO = Path(__file__).resolve().parents[2]
REGRESSIONS = tcr.corpora.ROOT / "regressions"
BUNDLED = sorted(
    REGRESSIONS.glob("*.msgpack")
)  # the handmade regressions (recorded/ has its own tests)

# Each failure described in ARCHITECTURE.md §15, by the bug label of its recording.
SEED_FAILURES = (
    "split-marker-mlx",  # PR #879: <tool, _, c, all>
    "split-marker-llama-server",  # <, t, oo, l, _, c, al, l, >
    "false-start-tool-result",  # ADR 0018
    "false-start-tools-do-not",  # ADR 0018
    "preamble-before-call",  # PR #879
    "reasoning-mentions-marker",  # <think> names <tool_call> before a real call
    "json-answer-not-a-call",  # PR #2262
    "undeclared-tool-name",  # PR #2262
    "end-inside-marker-prefix",  # PR #2262
    "end-inside-unterminated-block",  # PR #2262
    "two-calls-one-chunk",  # PR #879 review
    "closing-marker-in-json-string",  # policy 4
    "json-name-key-not-a-call",  # PR #2262
    "json-function-key-not-a-call",  # PR #2262, Llama-3.2-1B
)
POLICIES = range(1, 14)  # ARCHITECTURE.md §5.6, policies 1-13
# Each registered dialect's own regression cases, by the bug label of its recording.
FORMAT_ROWS = tuple(case.bug for d in DIALECTS for case in d.cases)
RANDOM_RUNS = 50


def _ids(paths: list[Path]) -> list[str]:
    return [path.stem for path in paths]


@cache
def _load(path: Path) -> tuple[Recording, Decoded]:
    recording = read_recording(path)
    return recording, decode(recording)


def _bugs() -> set[str]:
    return {str(read_recording(path).labels.get("bug")) for path in BUNDLED}


# --- the script and the files never drift ------------------------------------------


def test_the_corpus_is_bundled() -> None:
    assert BUNDLED, f"no recordings under {tcr.corpora.ROOT}"
    assert {path.name for path in REGRESSIONS.glob("*.msgpack")} == {c.file for c in CASES}


def test_rebuilding_gives_byte_identical_files(tmp_path: Path) -> None:
    written = build(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in REGRESSIONS.glob("*.msgpack"))
    for path in written:
        assert path.read_bytes() == (REGRESSIONS / path.name).read_bytes(), (
            f"{path.name} differs from the bundled file: "
            "run python -m tcr.corpora.build_regressions"
        )


# --- every recording is well formed and labelled -----------------------------------


@pytest.mark.parametrize("path", BUNDLED, ids=_ids(BUNDLED))
def test_bundled_recording_reads_cleanly_complete_and_labelled(path: Path) -> None:
    recording, _ = _load(path)
    assert recording.complete, recording.incomplete_reason
    labels = recording.labels
    assert labels["origin"] == "handmade"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", str(labels["bug"])), labels["bug"]
    assert isinstance(labels["note"], str) and labels["note"].strip()
    assert isinstance(labels["dialect"], str) and labels["dialect"]
    assert recording.expect is not None
    assert set(recording.expect) == {"text", "calls", "reasoning"}


@pytest.mark.parametrize("path", BUNDLED, ids=_ids(BUNDLED))
def test_the_request_offers_exactly_the_declared_tools(path: Path) -> None:
    """A factory that takes ``tool_specs`` must not see other tools than the declared names
    (policy 7's ``tools=[]`` once came with a get_weather spec, policy 12's get_weather
    with a get_time spec)."""
    recording, _ = _load(path)
    specs = recording.tool_specs
    if specs is None:  # the tools were in the prompt, or none was offered
        return
    assert recording.tools is not None
    assert sorted(spec_names(specs)) == sorted(recording.tools)


@pytest.mark.parametrize("path", BUNDLED, ids=_ids(BUNDLED))
def test_bundled_recording_decodes_to_content_chunks(path: Path) -> None:
    recording, decoded = _load(path)
    assert decoded.errors == []
    assert decoded.unfinished is None
    assert decoded.content and all(decoded.content)
    assert decoded.calls == []  # the markup is in the content: that is what is under test
    if recording.kind != "chunks":
        assert decoded.done, "an in-band end marker ([DONE], done, stop) was sent"


@pytest.mark.parametrize("case", CASES, ids=[case.file.removesuffix(".msgpack") for case in CASES])
def test_decoding_gives_back_the_chunks_of_the_table(case: Case) -> None:
    _, decoded = _load(REGRESSIONS / case.file)
    assert tuple(decoded.content) == case.chunks
    assert decoded.framing == case.via.wire.framing


# --- the reference detector meets every expectation under every chunking -----------


def _chunkings(decoded: Decoded) -> list[tuple[str, tuple[str, ...]]]:
    text = decoded.text
    # Sizes 1..8 for messages; the ~1 MiB runaway of policy 13 gets proportionally
    # larger pieces so fifty runs stay fast.
    largest = max(8, len(text) // 1000)
    found = [
        ("whole", (text,)),
        ("char", tuple(text)),
        ("original", tuple(decoded.content)),
    ]
    randoms = parse_strategy(f"random:{largest}").chunkings(text, runs=RANDOM_RUNS, seed=0)
    found += [(chunking.label, chunking.chunks) for chunking in randoms]
    return found


@pytest.mark.parametrize("path", BUNDLED, ids=_ids(BUNDLED))
def test_reference_detector_passes_every_trace_check_under_every_chunking(path: Path) -> None:
    recording, decoded = _load(path)
    tools = recording.tools
    whole = run_trace(StreamDetector(tools=tools), [decoded.text], states=False)
    for label, chunks in _chunkings(decoded):
        trace = run_trace(StreamDetector(tools=tools), chunks, states=False)
        verdict = check_trace(trace, whole=whole, expectation=recording.expect)
        assert verdict.skipped == {}, (label, verdict.skipped)
        assert set(verdict.ran) == set(TRACE_CHECKS), label
        assert verdict.violations == (), (label, [str(v) for v in verdict.violations])


@pytest.mark.parametrize("path", BUNDLED, ids=_ids(BUNDLED))
def test_reference_detector_warm_equals_cold(path: Path) -> None:
    recording, decoded = _load(path)
    assert check_warm_cold(StreamDetector, decoded.content, tools=recording.tools) == []
    # Policy 11: a detector seeded from the model name emits what a cold one emits.
    seed = format_for_model(str(recording.header["source"]["model"]))
    cold = StreamDetector(tools=recording.tools)
    seeded = StreamDetector(tools=recording.tools, format=seed)
    assert merge_text(run_trace(seeded, decoded.content).events) == merge_text(
        run_trace(cold, decoded.content).events
    )


def test_the_policy_11_recording_is_seeded_with_a_different_format() -> None:
    (path,) = [p for p in BUNDLED if p.name.startswith("policy_11_")]
    recording, decoded = _load(path)
    detector = StreamDetector(tools=recording.tools)
    run_trace(detector, decoded.content)
    seed = format_for_model(str(recording.header["source"]["model"]))
    assert seed is not None and detector.format is not None and seed != detector.format


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_deliberately_broken_detector_fails_on_the_corpus(name: str) -> None:
    # A regression corpus earns its name by catching the bugs it was built from.
    caught = []
    for path in BUNDLED:
        recording, decoded = _load(path)
        whole = run_trace(StreamDetector(tools=recording.tools), [decoded.text], states=False)
        trace = run_trace(BROKEN[name](tools=recording.tools), decoded.content, states=False)
        if check_trace(trace, whole=whole, expectation=recording.expect).violations:
            caught.append(path.stem)
    assert caught, f"no bundled recording catches {name}"


# --- the corpus covers what it promises --------------------------------------------


def test_labels_cover_every_seed_failure() -> None:
    assert set(SEED_FAILURES) - _bugs() == set()


@pytest.mark.parametrize("number", POLICIES)
def test_labels_cover_every_policy(number: int) -> None:
    assert any(bug.startswith(f"policy-{number}-") for bug in _bugs()), number


def test_labels_cover_one_message_per_format_row() -> None:
    assert set(FORMAT_ROWS) - _bugs() == set()
    dialects = {str(read_recording(path).labels["dialect"]) for path in BUNDLED}
    assert {fmt.id for fmt in FORMATS} - dialects == set()


def test_recordings_mix_the_kinds_a_real_corpus_has() -> None:
    kinds = {read_recording(path).kind for path in BUNDLED}
    assert kinds == {"sse", "ndjson", "chunks"}
    framings = {_load(path)[1].framing for path in BUNDLED}
    assert framings == {"openai", "llamacpp", "ollama", "chunks"}


# --- tcr.corpora finds them, in the source tree and installed -----------------------


def test_bundled_lists_every_recording_recursively_in_sorted_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("b/z.msgpack", "a.msgpack", "b/a.msgpack", "c/d/e.msgpack", "b/notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setattr(tcr.corpora, "ROOT", tmp_path)
    found = [p.relative_to(tmp_path).as_posix() for p in tcr.corpora.bundled()]
    assert found == ["a.msgpack", "b/a.msgpack", "b/z.msgpack", "c/d/e.msgpack"]


def test_root_is_the_package_folder_and_every_recording_ships_as_package_data() -> None:
    assert Path(tcr.corpora.__file__).resolve().parent == tcr.corpora.ROOT
    assert set(tcr.corpora.__all__) == {"ROOT", "bundled"}
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "tcr.corpora" in config["packages"]
    # An installed tcr.corpora is the corpora/ folder, copied with its package data.
    assert (REPO / config["package-dir"]["tcr.corpora"]).resolve() == tcr.corpora.ROOT
    shipped = {
        path.resolve()
        for pattern in config["package-data"]["tcr.corpora"]
        for path in tcr.corpora.ROOT.glob(pattern)
    }
    assert set(BUNDLED) <= shipped
