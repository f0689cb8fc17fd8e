"""MkDocs hooks: what the site shows that the code already holds, generated at build time.

- ``<!-- tcr dialects --markdown -->`` in a page becomes the registry's dialect table
  (``tcr.commands.dialects.markdown_table``), so the table cannot drift from the code.
- ``<!-- tcr policies -->`` becomes the policy registry (``tcr.policies.POLICIES``): each
  policy's question, its choices (the reference's first, lossy ones marked) and the
  engines that make each.
- ``<!-- tcr help epilogs -->`` becomes each command's ``--help`` epilog (its examples,
  strategies and exit codes), which mkdocs-click leaves out.
- The TUI pictures are the SVG snapshots the TUI tests make and check
  (``tests/tui/__snapshots__``), added to the site under ``images/``: the picture is
  always what the tests last accepted.
- The API reference reads the modules from a tree laid out as installed: the subpackages
  live in top-level folders (``replay/``, ``fuzz/``, ...) mapped into ``tcr`` by
  setuptools, which mkdocstrings' static analysis cannot follow (tests/test_quality.py
  lays one out for mypy the same way).
"""

from __future__ import annotations

import atexit
import html
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "tests" / "tui" / "__snapshots__" / "test_tui_snapshots"
DIALECT_TABLE = "<!-- tcr dialects --markdown -->"
EPILOGS = "<!-- tcr help epilogs -->"
POLICY_TABLE = "<!-- tcr policies -->"

# site path -> the snapshot it shows
SPLIT_MARKER = "test_split_marker_leaking_through_a_per_chunk_matcher"
PICTURES = {
    "images/tui-split-marker.svg": f"{SPLIT_MARKER}[120x40].svg",
    "images/tui-split-marker-80x24.svg": f"{SPLIT_MARKER}[80x24].svg",
    "images/tui-held-prefix.svg": "test_held_prefix_lost_at_finish[120x40].svg",
    "images/tui-passing.svg": "test_a_passing_run_mid_block.svg",
}


SUBPACKAGE_FOLDERS = ("recorder", "replay", "fuzz", "tui", "corpora")


@event_priority(100)  # before mkdocstrings reads its handlers' configuration
def on_config(config: Any) -> Any:
    tree = Path(tempfile.mkdtemp(prefix="tcr-docs-api-"))
    atexit.register(shutil.rmtree, tree, ignore_errors=True)
    package = tree / "tcr"
    package.mkdir()
    for item in (ROOT / "tcr").iterdir():
        if item.name == "__init__.py":  # a copy: griffe finds submodules beside its real path
            shutil.copy(item, package / item.name)
        elif item.name != "__pycache__":
            (package / item.name).symlink_to(item)
    for folder in SUBPACKAGE_FOLDERS:
        (package / folder).symlink_to(ROOT / folder)
    handlers = config.plugins["mkdocstrings"].config.handlers
    handlers.setdefault("python", {})["paths"] = [str(tree)]
    return config


def on_files(files: Files, config: Any) -> Files:
    for uri, snapshot in PICTURES.items():
        files.append(File.generated(config, uri, abs_src_path=str(SNAPSHOTS / snapshot)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if DIALECT_TABLE in markdown:
        from tcr.commands.dialects import markdown_table

        markdown = markdown.replace(DIALECT_TABLE, markdown_table().rstrip("\n"))
    if EPILOGS in markdown:
        markdown = markdown.replace(EPILOGS, epilogs())
    if POLICY_TABLE in markdown:
        markdown = markdown.replace(POLICY_TABLE, policy_table())
    return markdown


def policy_table() -> str:
    """The policy registry as a table: a row per choice, the reference's marked."""
    from tcr.policies import POLICIES

    def cell(text: str) -> str:  # as written: no markup, no HTML, no "{...}" attributes
        escaped = re.sub(r"([\\`*_{}\[\]|])", r"\\\1", text)
        return html.escape(escaped, quote=False)

    rows = ["| policy | choice | what a parser making it does | engines that make it |"]
    rows.append("|---|---|---|---|")
    for policy in POLICIES:
        for index, choice in enumerate(policy.choices):
            name = f"`{choice.id}`" + (" (reference)" if choice.id == policy.default else "")
            name += " (lossy)" if choice.lossy else ""
            first = f"`{policy.id}`: {cell(policy.question)}" if index == 0 else ""
            engines = ", ".join(e.name for e in choice.engines if e.name != "tcr reference")
            rows.append(f"| {first} | {name} | {cell(choice.meaning)} | {cell(engines) or '-'} |")
    return "\n".join(rows)


def epilogs() -> str:
    """Each command's ``--help`` epilog as a section, as ``tcr CMD --help`` ends."""
    from tcr.cli import main

    sections = []
    for name, command in [("tcr", main), *sorted(main.commands.items())]:
        text = "\n".join(line for line in (command.epilog or "").splitlines() if line != "\b")
        if text.strip():
            title = name if command is main else f"tcr {name}"
            sections.append(f"### `{title}` examples\n\n```text\n{text.rstrip()}\n```")
    return "\n\n".join(sections)
