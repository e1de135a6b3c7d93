"""`chatpapers --version`: the installed package's version, before any service is built."""

from __future__ import annotations

import os
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

from tests.conftest import chatpapers_exe

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_installed_package_version() -> None:
    # An unreachable database and an invalid setting: --version must answer before either matters.
    env = {**os.environ, "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/x", "CHATPAPERS_AUTH": "bogus"}
    done = subprocess.run(
        [chatpapers_exe(), "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"chatpapers {version('chatpapers')}\n"
    assert done.stderr == ""


def test_installed_version_is_pyproject_version() -> None:
    """The metadata --version reads is that of this checkout (scripts/setup.sh reinstalls when
    pyproject.toml changes), so the version lives in pyproject.toml alone."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert version("chatpapers") == project["version"]


def test_help_lists_version() -> None:
    done = subprocess.run([chatpapers_exe(), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--version" in done.stdout
