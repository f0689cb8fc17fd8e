"""The commands of the README and the docs pages run as written (issues 15 and 35).

Every ``console``, ``sh`` and ``yaml`` block of the README and of every page under
``docs/`` is either run here (a block shown on two pages, once), its
commands through ``bash`` in a folder holding the repository's ``corpora``,
``examples`` and ``scripts`` (with ``tcr`` and ``python`` those of the Python running
the tests), or listed in ``NOT_RUN`` with the reason. Where the README shows output,
its lines must appear in order (``...`` skips lines), exactly but for timings and
measured growths. What is changed to run a command is listed in ``CHANGED``: a port
the shared machine may have taken, a budget cut short, and placeholders (``mypkg``,
``my_agent.py``) given stand-ins in the folder.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from readme_blocks import README, Block, Command, every_block, in_order

from tcr.corpus import read_recording
from tcr.stream import decode

ROOT = README.parent
BIN = Path(sys.executable).parent

# First command of a block -> why it is not run here.
NOT_RUN: Mapping[str, str] = {
    "python -m pip install . && tcr replay": (
        "the set-up: CI runs both commands itself (.ci/run), and "
        "test_readme.py::test_readme_names_the_test_command_that_ci_runs checks they agree"
    ),
}

# Text changed in a command before it runs, and why.
CHANGED: Mapping[str, tuple[str, str]] = {
    "--port 8080": ("--port 0", "port 8080 may be taken on a shared machine: 0 picks a free one"),
    "--budget 60s": ("--budget 3s", "the options are what is shown; a minute is not"),
    "--budget 10m": ("--budget 3s", "the options are what is shown; ten minutes are not"),
    "--max-examples 400000": ("--max-examples 4000", "a CI machine's share, cut to a test's"),
    "--budget 10s": ("--budget 1s", "the options are what is shown, 19 rows x 10 s are not"),
}

MYPKG = {
    "__init__.py": "",
    # stands in for `mypkg.parser:make`: the reference, taking the claim it is given
    "parser.py": (
        "from tcr.detector import StreamDetector\n\n\n"
        "def make(tools=None, dialects=None, empty_tools='reject'):\n"
        "    return StreamDetector(tools, dialects=dialects, empty_tools=empty_tools)\n"
    ),
    # stand in for `mypkg.parsers:hermes` and `:qwen`, each with its claim
    "parsers.py": (
        "from tcr.detector import StreamDetector\n\n\n"
        "def hermes(tools=None):\n"
        "    return StreamDetector(tools, dialects=['hermes'])\n\n\n"
        "hermes.tcr_claim = ['hermes']\n\n\n"
        "def qwen(tools=None, tool_specs=None):\n"
        "    return StreamDetector(tools, dialects=['qwen3_coder'], tool_specs=tool_specs)\n\n\n"
        "qwen.tcr_claim = ['qwen3_coder']\n"
    ),
}

# stands in for `my_agent.py`: an OpenAI-style streaming client reading OPENAI_BASE_URL
MY_AGENT = """\
import json, os, urllib.request

body = json.dumps({"model": "x", "stream": True, "messages": []}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body,
                                 {"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
with urllib.request.urlopen(request, timeout=30) as response:
    for line in response:
        if line.startswith(b"data: {"):
            delta = json.loads(line[6:])["choices"][0]["delta"]
            print(delta.get("content") or "", end="")
print()
"""


def block(first: str, *, exactly: bool = False) -> Block:
    """The block that starts with ``first``; where pages show it twice, the same both times."""
    found = [
        b for b in every_block() if (b.first == first if exactly else b.first.startswith(first))
    ]
    assert found, f"no block starts with {first!r}"
    assert all(b.commands == found[0].commands for b in found), [b.where for b in found]
    return found[0]


def as_run(command: Command) -> str:
    line = command.line
    for written, (run, _) in CHANGED.items():
        line = line.replace(written, run)
    return line


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A folder as a clone's root looks to these commands; placeholders get stand-ins."""
    for name in ("corpora", "examples", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "mypkg").mkdir()
    for name, source in MYPKG.items():
        (tmp_path / "mypkg" / name).write_text(source)
    (tmp_path / "my_agent.py").write_text(MY_AGENT)
    return tmp_path


def environment(workspace: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(workspace)  # mypkg, as a user's package is importable
    env.pop("COLUMNS", None)
    return env


def shell(line: str, workspace: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", line],
        cwd=workspace,
        env=environment(workspace),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def shown(command: Command, done: subprocess.CompletedProcess[str]) -> None:
    missing = in_order(command.output, done.stdout.splitlines())
    assert not missing, f"{command.line}\nprints:\n{done.stdout}\nnot shown: {missing}"


# -- every block is accounted for --------------------------------------------------------

RUN = (
    "python scripts/llama_server.py --port 8080 &",
    "python scripts/llama_server.py --port 8080 --template hermes.jinja &",
    "tcr show corpora/recorded/tool_call_tag_json.msgpack",
    "tcr replay corpora/recorded/tool_call_tag_json.msgpack --rechunk original",
    "tcr tui corpora/recorded/tool_call_tag_json.msgpack --rechunk splits:41",
    "tcr replay corpora/ --sarif tcr.sarif",
    "tcr replay",
    "tcr replay --check cost",
    "tcr fuzz --dialect hermes --budget 60s",
    "tcr fuzz --jobs 2 --budget 10m",
    "tcr serve corpora/recorded --rechunk char --speed 0 --port 8080",
    "tcr matrix --detector mypkg.parsers:hermes",
    "tcr replay --detector mypkg.parser:make",
    "tcr fuzz --detector tcr.detector.broken:per_chunk_markers",
)


def _runs(found: Block) -> list[str]:
    return [r for r in RUN if found.first == r or found.first.startswith(r + " ")]


def test_every_shell_block_of_the_readme_and_the_docs_is_run_or_listed_as_not_run() -> None:
    for found in every_block():
        assert _runs(found) or found.first in NOT_RUN, f"{found.where}: {found.first!r}"
    used = {r for found in every_block() for r in _runs(found)}
    assert used == set(RUN), f"RUN names blocks no page shows: {set(RUN) - used}"
    assert all(any(b.first == first for b in every_block()) for first in NOT_RUN)


def test_what_is_changed_to_run_a_command_is_in_the_readme_or_the_docs() -> None:
    every = " ".join(c.line for b in every_block() for c in b.commands)
    assert all(written in every for written in CHANGED)


# -- the worked example --------------------------------------------------------------------


def test_worked_example_shows_the_recorded_chunk_boundaries(workspace: Path) -> None:
    (command,) = block("tcr show ").commands
    done = shell(as_run(command), workspace)
    assert done.returncode == 0, done.stderr
    shown(command, done)


def test_worked_example_replay_prints_the_finding_as_the_readme_shows(workspace: Path) -> None:
    (command,) = block("tcr replay corpora/recorded/tool_call_tag_json.msgpack").commands
    done = shell(as_run(command), workspace)
    assert done.returncode == 1, done.stderr
    shown(command, done)
    assert len(done.stdout.splitlines()) == len(command.output)  # nothing left out


def _record(workspace: Path, server: Block) -> Path:
    start, record = server.commands
    line = as_run(start).removesuffix("&").strip()
    process = subprocess.Popen(
        ["bash", "-c", f"exec {line}"],
        cwd=workspace,
        env=environment(workspace),
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("llama-server on http://127.0.0.1:"), first
        assert first.rstrip().endswith(".log); Ctrl-C or kill stops it"), first
        for expected in start.output:  # as the README shows it, but for the port and log
            prefix, _, rest = expected.partition(":8080 (log ")
            assert first.startswith(prefix) and rest.split("….log")[1] in first
        url = first.split()[2]
        done = shell(as_run(record).replace("http://127.0.0.1:8080", url), workspace)
        assert done.returncode == 0, done.stdout + done.stderr
        out = shlex.split(record.line)[-1]
        return workspace / out
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.live
@pytest.mark.slow
def test_worked_example_records_a_hermes_call_from_the_real_server(workspace: Path) -> None:
    path = _record(workspace, block("python scripts/llama_server.py --port 8080 &"))
    decoded = decode(read_recording(path))
    assert "<tool_call>" in decoded.text and '"get_weather"' in decoded.text


@pytest.mark.live
@pytest.mark.slow
def test_worked_example_records_native_tool_calls_from_the_real_server(workspace: Path) -> None:
    path = _record(workspace, block("python scripts/llama_server.py --port 8080 --template"))
    decoded = decode(read_recording(path))
    assert [call.name for call in decoded.calls] == ["get_weather"]


TMUX = shutil.which("tmux")


@pytest.mark.slow
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)")
def test_worked_example_tui_shows_what_the_walkthrough_describes(workspace: Path) -> None:
    """At 80x24: the header, the ``¦`` after the held-in-one-chunk ``<``, ``v`` landing on
    step 0 with invariance and expected, ``n`` on step 1 with the leak (the README's words)."""
    (command,) = block("tcr tui ").commands
    with tmux(as_run(command), workspace) as term:
        screen = term.wait_for(lambda s: "violations" in s[0], "the first screen")
        assert screen[0].startswith(" tool_call_tag_json.msgpack · splits:41 1/1 · step 0/2 · ✗ ")
        assert any("<¦tool_call>↵" in line for line in screen)
        term.keys("v")
        screen = term.wait_for(lambda s: _has(s, "✗        invariance: event 0"), "step 0's check")
        assert _has(screen, "chunk 0/2 'The weather in the") and _has(screen, "expected: shown")
        term.keys("n")
        screen = term.wait_for(lambda s: "step 1/2" in s[0], "step 1")
        assert _has(screen, "no_leak: Text shows the opening")
        assert _has(screen, "state    printing  (unchanged)")
        assert _has(screen, "fsm      ●printing ○prefix ○block")
        term.keys("G")
        screen = term.wait_for(lambda s: "step fin/2" in s[0], "finish()")
        assert _has(screen, "expected: call 0 (get_weather) is")
        term.keys("q")


def _has(screen: list[str], text: str) -> bool:
    return any(text in line for line in screen)


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def run(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, "-L", self.socket, "-f", os.devnull, *args],
                              capture_output=True, text=True, check=True)  # fmt: skip
        return done.stdout

    def keys(self, keys: str) -> None:
        self.run("send-keys", "-t", "tui", keys)

    def wait_for(self, ready: Callable[[list[str]], bool], what: str) -> list[str]:
        deadline, screen = time.monotonic() + 60, []
        while time.monotonic() < deadline:
            screen = self.run("capture-pane", "-p", "-t", "tui").split("\n")[:24]
            if ready(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(screen))


@contextmanager
def tmux(line: str, workspace: Path) -> Iterator[Tmux]:
    """``line`` in a private tmux server's 80x24 window (the tmux TUI tests' harness)."""
    term = Tmux(f"tcr-readme-{os.getpid()}")
    env = environment(workspace)
    command = f"cd {shlex.quote(str(workspace))} && PATH={shlex.quote(env['PATH'])} {line}"
    term.run("new-session", "-d", "-x", "80", "-y", "24", "-s", "tui", command)
    try:
        term.run("set-option", "-g", "status", "off")
        yield term
    finally:
        subprocess.run([TMUX or "tmux", "-L", term.socket, "kill-server"], capture_output=True)


# -- the command reference ------------------------------------------------------------


@pytest.mark.slow
def test_a_passing_replay_of_the_bundled_corpora_prints_what_the_readme_shows(
    workspace: Path,
) -> None:
    (command,) = block("tcr replay", exactly=True).commands
    done = shell(as_run(command), workspace, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    shown(command, done)
    assert len(done.stdout.splitlines()) == len(command.output)


@pytest.mark.slow
def test_the_ci_example_writes_a_sarif_log(workspace: Path) -> None:
    (command,) = block("tcr replay corpora/ --sarif").commands
    done = shell(as_run(command), workspace, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    log = json.loads((workspace / "tcr.sarif").read_text())
    assert log["version"] == "2.1.0" and log["runs"][0]["results"] == []


@pytest.mark.slow
def test_the_cost_example_finds_the_quadratic_detector(workspace: Path) -> None:
    (command,) = block("tcr replay --check cost").commands
    done = shell(as_run(command), workspace, timeout=1200)
    assert done.returncode == 1, done.stdout + done.stderr
    # Which part grows alone (hermes blocks, or the text) depends on the machine's load:
    # the README shows one run; here the finding and its message's wording are checked.
    lines = done.stdout.splitlines()
    assert any(line.startswith("cost/superlinear") for line in lines), done.stdout
    assert any(": time per character grew " in line for line in lines), done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("first", ["tcr fuzz --dialect hermes", "tcr fuzz --jobs 2"])
def test_the_fuzz_examples_run_clean_on_the_reference(workspace: Path, first: str) -> None:
    for command in block(first).commands:
        done = shell(as_run(command), workspace, timeout=1200)
        assert done.returncode == 0, f"{command.line}\n{done.stdout}{done.stderr}"
        assert done.stdout.splitlines()[-1] == "no violation", done.stdout


@pytest.mark.slow
def test_the_parser_path_of_the_readme_runs_clean_on_a_correct_parser(workspace: Path) -> None:
    """The README's "test your parser" commands, on the stand-in ``mypkg.parser:make``
    (the reference): both pass; a parser with a bug is the console block after them."""
    replay, fuzz = block("tcr replay --detector mypkg.parser:make").commands
    for command in (replay, fuzz):
        done = shell(as_run(command), workspace, timeout=1200)
        assert done.returncode == 0, f"{command.line}\n{done.stdout}{done.stderr}"
    assert done.stdout.splitlines()[-1] == "no violation", done.stdout


@pytest.mark.slow
def test_the_tutorial_fuzz_finds_the_split_marker_and_saves_it(workspace: Path) -> None:
    (command,) = block("tcr fuzz --detector tcr.detector.broken:per_chunk_markers").commands
    done = shell(as_run(command), workspace, timeout=1200)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "split-in-opener" in done.stdout and "hermes" in done.stdout, done.stdout
    assert "tcr replay .tcr/found/" in done.stdout or ".tcr/found/" in done.stdout, done.stdout
    assert list((workspace / ".tcr" / "found").glob("*.msgpack")), "no recording saved"


@pytest.mark.slow
def test_the_matrix_example_writes_its_page(workspace: Path) -> None:
    (command,) = block("tcr matrix").commands
    done = shell(as_run(command), workspace, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mypkg.parsers:hermes" in done.stdout and "mypkg.parsers:qwen" in done.stdout
    assert "<html" in (workspace / "matrix.html").read_text()


def test_the_serve_example_answers_the_agent_and_curl(workspace: Path) -> None:
    serve, agent, curl = block("tcr serve").commands
    process = subprocess.Popen(
        ["bash", "-c", "exec " + as_run(serve)],
        cwd=workspace,
        env=environment(workspace),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        url = _serving(process)
        done = shell(agent.line.replace("http://127.0.0.1:8080", url), workspace, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip(), "the agent got no content"
        done = shell(curl.line.replace("http://127.0.0.1:8080", url) + " -sS", workspace, 60)
        assert done.returncode == 0, done.stderr
        assert "data: " in done.stdout and "data: [DONE]" in done.stdout
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)


def _serving(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        seen.append(line)
        for word in line.split():
            if word.startswith("http://127.0.0.1:"):
                return word.rstrip("/.,")
        if not line and process.poll() is not None:
            break
    raise AssertionError("tcr serve did not say where it serves: " + "".join(seen))
