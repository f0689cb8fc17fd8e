"""The broken detectors of the newer families' shapes (issue 13) are found by ``tcr fuzz
--dialect ID`` in a few hundred examples, and by ``tcr replay`` over the bundled corpora.

Time to the first finding is measured by hand and in benchmarks, never asserted here: the
budget is examples, which the seed fixes.
"""

from __future__ import annotations

import pytest

from tcr.corpora import ROOT
from tcr.fuzz import run
from tcr.replay import run as replay

# Each bug: the dialect its shape belongs to (fuzzed with --dialect), the dialect its shrunk
# finding names ("": a lone held "<" of plain text is the shortest case) and the bundled
# recording that pins it.
FAMILIES = {
    "name_at_chunk_edge": ("mistral_v11", "mistral_v11", "mistral_v11_text_after"),
    "holds_special_prefix": ("kimi_k2", "", "policy_02_holdback_bound"),
    "bytewise_partial_marker": ("deepseek_v3", "deepseek_v3", "deepseek_v3_spelled_markers"),
}
EXAMPLES = 500  # measured: each found within 275 examples with seeds 0-4


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_fuzzing_its_dialect_finds_it_within_a_few_hundred_examples(name: str, seed: int) -> None:
    dialect, named, _ = FAMILIES[name]
    report = run(
        detector=f"tcr.detector.broken:{name}",
        dialects=[dialect],
        max_examples=EXAMPLES,
        seed=seed,
        save=None,
        exitfirst=True,
    )
    finding = report.finding
    assert finding is not None, f"{name} survived {report.examples} examples of {dialect}"
    assert finding.signature.dialect == named, finding.signature
    assert finding.case.unmarked <= 100 and len(finding.case.splits) <= 3, finding.case.chunks


@pytest.mark.slow  # every bundled regression per chunking
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_replaying_the_bundled_regressions_finds_it_in_its_recording(name: str) -> None:
    regressions = sorted((ROOT / "regressions").glob("*.msgpack"))
    small = [p for p in regressions if p.stat().st_size < 1_000_000]
    report = replay(small, strategies=["original"], detector=f"tcr.detector.broken:{name}")
    failing = {
        o.path.rsplit("/", 1)[-1].removesuffix(".msgpack") for o in report.outcomes if o.failures
    }
    assert FAMILIES[name][2] in failing, failing
    assert report.exit_code == 1
