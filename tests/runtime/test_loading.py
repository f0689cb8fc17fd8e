"""``--detector`` as the commands load it: a misspelt module gets the closest that exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcr._runtime.loading import closest_module, load_detector
from tcr.errors import TcrError


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        ("tcr.detector.brokn:per_chunk_markers", "'tcr.detector.broken:per_chunk_markers'"),
        ("tcr.detectr.broken:per_chunk_markers", "'tcr.detector.broken:per_chunk_markers'"),
        ("tcr.detectr.brokn:per_chunk_markers", "'tcr.detector.broken:per_chunk_markers'"),
        ("tcr.detector.brokn:per_chunk_marker", "'tcr.detector.broken:per_chunk_markers'"),
    ],
    ids=["last-part", "a-package", "two-parts", "and-the-factory"],
)
def test_a_misspelt_module_gets_the_closest_spec_that_imports(spec: str, hint: str) -> None:
    with pytest.raises(TcrError) as caught:
        load_detector(spec)
    message = str(caught.value)
    assert message.endswith(f" (did you mean {hint}?)") and "\n" not in message
    assert "cannot import" in message  # what went wrong comes first


def test_a_misspelt_top_level_package_gets_no_hint() -> None:
    """Beside it is everything installed: ``mypkg`` is closest to ``mypy``, which is noise."""
    with pytest.raises(TcrError) as caught:
        load_detector("mypkg.parsers:hermes")
    assert "No module named 'mypkg'" in str(caught.value)
    assert "did you mean" not in str(caught.value)
    assert closest_module("tcx.detector", "tcx") is None


def test_no_hint_when_nothing_is_close() -> None:
    with pytest.raises(TcrError) as caught:
        load_detector("tcr.detector.zzzzzzzz:factory")
    assert "did you mean" not in str(caught.value)


def test_no_hint_for_a_module_the_detector_s_module_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing dependency of the user's module is not a misspelt ``--detector``."""
    (tmp_path / "loading_test_needs.py").write_text("import tcr.detector.brokn\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TcrError) as caught:
        load_detector("loading_test_needs:factory")
    assert "tcr.detector.brokn" in str(caught.value)
    assert "did you mean" not in str(caught.value)


def test_a_misspelt_factory_gets_the_closest_name_in_the_module() -> None:
    with pytest.raises(TcrError) as caught:
        load_detector("tcr.detector.broken:per_chunk_marker")
    assert str(caught.value).endswith(" (did you mean 'per_chunk_markers'?)")


def test_a_detector_that_loads_is_the_spec_with_its_claim() -> None:
    spec = load_detector("tcr.detector.broken:per_chunk_markers", dialects=["hermes"])
    assert spec.spec == "tcr.detector.broken:per_chunk_markers"
    assert spec.claim.dialects == frozenset({"hermes"})
