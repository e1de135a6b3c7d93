"""`chatpapers interview` with the real local model over the ingested subset (minutes on 2 cores)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from corpus.db import Database
from tests.conftest import cli_env, run_cli

pytestmark = pytest.mark.slow


def test_two_rounds_with_the_local_model(ingested: Database, local_model, tmp_path: Path) -> None:
    _, settings = local_model
    env = cli_env(ingested.settings, CHATPAPERS_LLM="local", CHATPAPERS_DATA_DIR=str(settings.data_dir))
    transcript = tmp_path / "interview.md"
    started = time.monotonic()
    done = run_cli(env, "interview", "1512.03385", "--rounds", "2", "--level", "BSc", "-o", str(transcript))
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "Interview: Deep Residual Learning for Image Recognition" in done.stderr
    text = transcript.read_text()
    questions = re.findall(r"^## \d\. Journalist: (.+)$", text, re.M)
    assert len(questions) == 2 and len(set(questions)) == 2, text  # two different questions
    assert all(q.endswith("?") for q in questions), questions
    answers = re.findall(r"^\*\*Author:\*\* (.+)$", text, re.M)
    assert len(answers) == 2 and all(len(a) > 40 for a in answers), text
    assert text.count("> [1] (1512.03385#") == 2  # each answer lists the passages it read
    assert seconds < 300, seconds  # two rounds, model loading included


def test_an_unknown_paper_is_a_clear_error(ingested: Database, local_model, tmp_path: Path) -> None:
    _, settings = local_model
    env = cli_env(ingested.settings, CHATPAPERS_LLM="local", CHATPAPERS_DATA_DIR=str(settings.data_dir))
    done = run_cli(env, "interview", "9999.99999")
    assert done.returncode == 2 and "not in the corpus" in done.stderr and "Traceback" not in done.stderr
