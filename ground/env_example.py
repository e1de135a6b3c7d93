"""`.env.example`, written from the settings tree so that it cannot drift from it.

`.venv/bin/python -m ground.env_example > .env.example` regenerates the file after a setting was
added or changed; tests/test_operations.py fails while the committed file differs from `render()`.
Every setting appears commented out with its default, so a copied `.env` changes nothing until a
line is uncommented."""

from __future__ import annotations

import enum
import json
import sys
import types
import typing
from pathlib import Path

from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo

from ground import __version__
from ground.settings import Settings

# Defaults computed at run time (default_factory) depend on the machine, so the file describes them
# instead of writing one machine's value; a new factory default must be described here (render()
# refuses to guess).
DESCRIBED_DEFAULTS = {
    "data_dir": "the platform's user data folder (~/.local/share/chatpapers on Linux)",
    "pg_settings": "none (only the values sized for the machine)",
}

HEADER = """\
# chatpapers settings. Copy this file to .env in the folder you run chatpapers from (and beside
# docker-compose.yml for Docker Compose), then uncomment and change what you need: every line shows
# the default, so a copied file changes nothing. Variables set in the environment win over .env.
# Generated from ground/settings.py: .venv/bin/python -m ground.env_example > .env.example
"""

# Read by docker-compose.yml (variable interpolation from .env), not by chatpapers itself.
COMPOSE_FOOTER = """\
# --- Docker Compose only: read by docker-compose.yml, not by chatpapers ---------------------------

# Password of the compose PostgreSQL's `chatpapers` user (set it before the first `up`). Default: chatpapers.
#POSTGRES_PASSWORD=chatpapers

# Host port of PostgreSQL with docker-compose.db-port.yml added (-f); not published without. Default: 5432.
#POSTGRES_HOST_PORT=5432

# Not read from this file: CHATPAPERS_WHEEL_CACHE (scripts/setup.sh's llama-cpp-python wheel cache,
# default ~/.cache/chatpapers/wheels) and CHATPAPERS_LLAMA_CPU (=portable: an AVX2 build even on a
# CPU with AVX-512) are taken from the environment of the setup run.
"""


def env_names(name: str, field: FieldInfo) -> list[str]:
    """The environment variables a field is read from, the preferred one first: its aliases when
    it has any (DATABASE_URL, OPENAI_API_KEY: the names other tools use too), else the prefix."""
    alias = field.validation_alias
    if isinstance(alias, str):
        return [alias]
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str)]
    prefix = Settings.model_config.get("env_prefix", "")
    return [f"{prefix}{name}".upper()]


def _choices(annotation: object) -> list[str]:
    """The allowed values of a Literal setting (also inside `X | None`), else none."""
    if typing.get_origin(annotation) is typing.Literal:
        return [str(value) for value in typing.get_args(annotation)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [value for arg in typing.get_args(annotation) for value in _choices(arg)]
    return []


def _env_value(value: object) -> str:
    """A default as it is written in an env file (what pydantic-settings parses back to it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, str | int | float | Path):
        return str(value)
    return json.dumps(value)  # lists and dicts: pydantic-settings reads complex values as JSON


def default_of(name: str, field: FieldInfo) -> tuple[str, str]:
    """(what the comment says the default is, the value on the commented-out line). The line's
    value is empty when the default is unset or cannot be written as one portable value."""
    if field.default_factory is not None:
        if name not in DESCRIBED_DEFAULTS:
            raise ValueError(f"describe the computed default of `{name}` in ground/env_example.py")
        return DESCRIBED_DEFAULTS[name], ""
    default = field.get_default()
    if default is None:
        return "unset", ""
    value = _env_value(default)
    if value == "":
        return "empty", ""
    if __version__ in value:  # e.g. the User-Agent: written with <version>, so a release changes nothing here
        return value.replace(__version__, "<version>"), ""
    return value, value


def render() -> str:
    """The whole `.env.example`: one comment line and one commented-out assignment per setting."""
    blocks = [HEADER]
    for name, field in Settings.model_fields.items():
        if not field.description:
            raise ValueError(f"setting `{name}` has no description in ground/settings.py")
        names = env_names(name, field)
        shown, value = default_of(name, field)
        sentences = [field.description.rstrip(".")]
        choices = _choices(field.annotation)
        if choices:
            sentences.append(f"One of: {', '.join(choices)}")
        if len(names) > 1:
            sentences.append(f"Also read as {', '.join(names[1:])}")
        sentences.append(f"Default: {shown}")
        blocks.append(f"# {'. '.join(sentences)}.\n#{names[0]}={value}\n")
    blocks.append(COMPOSE_FOOTER)
    return "\n".join(blocks)


if __name__ == "__main__":
    sys.stdout.write(render())
