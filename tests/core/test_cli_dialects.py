"""``tcr dialects``: every registered id, its markers and an example, as text or JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tcr.cli import main
from tcr.commands.dialects import _code
from tcr.dialects import BY_ID, DIALECTS, rows


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["dialects", *args])
    return result.exit_code, result.output


def test_json_lists_every_id_in_registry_order_with_markers_example_and_engine_names() -> None:
    code, out = invoke("--json")
    assert code == 0, out
    listed = json.loads(out)
    assert [row["id"] for row in listed] == list(BY_ID)
    hermes = listed[[row["id"] for row in listed].index("hermes")]
    assert hermes["opens"] == ["<tool_call>"] and hermes["closes"] == ["</tool_call>"]
    assert hermes["special_tokens"] == ["<tool_call>", "</tool_call>"]
    assert hermes["opens_where"] == "anywhere" and hermes["parser_names"][0] == "hermes"
    assert hermes["engines"]["sglang"] == ["hermes", "qwen25", "qwen", "trinity"]
    assert hermes["example"] == BY_ID["hermes"].example.text
    bare_json = listed[[row["id"] for row in listed].index("bare_json")]
    assert bare_json["opens_where"] == "message start"
    assert bare_json["aliases"] == ["llama3_json"] and hermes["aliases"] == ["tool_call_tag"]
    assert listed == [row.as_dict() for row in rows()]


def test_text_names_every_id_its_markers_and_engine_names() -> None:
    code, out = invoke()
    assert code == 0, out
    for d in DIALECTS:
        assert f"\n{d.id} (" in "\n" + out
        for marker in d.opens:
            assert repr(marker) in out
        for name in d.parser_names:
            assert name in out
    assert "'<tool_call>'*" in out  # a special token is starred
    assert out.rstrip().splitlines()[-1].startswith("Aliases (claiming one claims every id")


def test_help_ends_with_examples() -> None:
    code, out = invoke("--help")
    assert code == 0
    last = [line.strip() for line in out.rstrip().splitlines()[-5:]]
    assert last == [
        "Examples:",
        "tcr dialects",
        "tcr dialects --json | jq -r '.[].id'",
        "tcr dialects --json | jq '.[] | select(.id == \"hermes\")'",
        "tcr dialects --markdown    # the README's table",
    ]


def test_markdown_is_one_table_row_per_id_in_registry_order() -> None:
    code, out = invoke("--markdown")
    assert code == 0, out
    header, rule, *body, blank, aliases = out.splitlines()
    assert header.startswith("| dialect |") and set(rule) == {"|", "-"}
    assert [row.split(" | ")[0] for row in body] == [f"| `{d.id}`" for d in DIALECTS]
    assert all(
        row.endswith(f"| {_code(d.example.block)} |") for row, d in zip(body, DIALECTS, strict=True)
    )
    assert blank == "" and aliases.startswith("Aliases (claiming one claims every id")
    assert "`llama3_json` = `python_tag` + `bare_json`" in aliases
    fenced = body[list(BY_ID).index("fenced_json")]
    assert "```` ```json\\n{ ````" in fenced  # a fence in a code span, its newline shown
