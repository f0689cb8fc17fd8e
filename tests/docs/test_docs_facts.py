"""What the docs pages say of the code is what the code does."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _hooks() -> ModuleType:
    """docs/hooks.py, the MkDocs hooks (a file MkDocs loads by path, not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tcr_docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def test_the_holdback_bound_the_docs_give_is_the_detector_s() -> None:
    from tcr.detector import HOLDBACK_BOUND

    page = (DOCS / "explanation" / "reference-detector.md").read_text("utf-8")
    said = re.search(r"outside a block at most (\d+) characters", page)
    assert said is not None and int(said.group(1)) == HOLDBACK_BOUND


def test_the_dialect_page_is_the_registry_s_table() -> None:
    """The page holds no table of its own: the build puts ``tcr dialects --markdown`` in."""
    from tcr.commands.dialects import markdown_table

    hooks = _hooks()
    source = (DOCS / "reference" / "dialects.md").read_text("utf-8")
    assert hooks.DIALECT_TABLE in source and "| dialect |" not in source
    built = hooks.on_page_markdown(source, None, None, None)
    assert markdown_table().rstrip("\n") in built


def test_the_tui_pictures_are_the_snapshot_tests_svgs() -> None:
    hooks = _hooks()
    for snapshot in hooks.PICTURES.values():
        assert (hooks.SNAPSHOTS / snapshot).is_file(), f"the TUI snapshot {snapshot} is gone"


def test_the_readme_is_short_and_its_picture_exists() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 300
    (picture,) = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", readme)
    assert (ROOT / picture.replace("%5B", "[").replace("%5D", "]")).is_file(), picture


def test_the_readme_links_only_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if "://" not in target:
            path = ROOT / target.replace("%5B", "[").replace("%5D", "]")
            assert path.exists(), f"README links to {target}, which does not exist"


CITED = "DESI" + "GN"  # spelled apart, or this file would cite it
FOLDERS = ("tcr", "recorder", "replay", "fuzz", "tui", "corpora", "tests", "benchmarks", "scripts")


def test_no_code_or_page_cites_a_design_document_that_is_not_in_the_repository() -> None:
    """Comments, ARCHITECTURE.md and the docs cite ARCHITECTURE.md's sections or the docs
    pages, which exist (a seed case's note too: it is stored in the recording it builds)."""
    paths = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")]
    paths += [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *(ROOT / "docs").rglob("*.md")]
    cited = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in paths
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if CITED in line
    ]
    assert not cited, cited
