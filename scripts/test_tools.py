"""Install the programs the tests drive that pip cannot: Chromium and its driver (the
``tcr matrix`` page's browser test) and tmux (the TUI in a real terminal).

    python scripts/test_tools.py

Installs Debian's ``chromium``, ``chromium-driver`` and ``tmux`` with apt-get (after an
``apt-get update`` if the first try fails) when one is missing and this is a
Debian-like system run as root. Where they cannot be installed it says so in one
line and exits 0: the tests that need them skip, naming what is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# program -> the Debian package that provides it
PROGRAMS = {"chromium": "chromium", "chromedriver": "chromium-driver", "tmux": "tmux"}


def missing() -> list[str]:
    return [package for program, package in PROGRAMS.items() if shutil.which(program) is None]


def main() -> int:
    packages = missing()
    if not packages:
        return 0
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        why = "no apt-get" if apt is None else "not root"
        print(
            f"test_tools: {', '.join(packages)} not installed ({why}): "
            "the tests that need them will skip",
            file=sys.stderr,
        )
        return 0
    command = [apt, "install", "-y", "--no-install-recommends", *packages]
    print(f"test_tools: {' '.join(command)}", file=sys.stderr)
    quiet = {"stdout": subprocess.DEVNULL, "check": False}
    if subprocess.run(command, **quiet).returncode != 0:  # type: ignore[call-overload]
        subprocess.run([apt, "update"], **quiet)  # type: ignore[call-overload]
        subprocess.run(command, **quiet)  # type: ignore[call-overload]
    if missing():
        print(
            f"test_tools: apt-get could not install {', '.join(missing())}: "
            "the tests that need them will skip",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
