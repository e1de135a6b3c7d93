"""End to end with the real embedded model (Qwen2.5-Coder-1.5B via llama.cpp) over ingested papers.
Minutes on 2 cores: deselect locally with -m "not slow"; .ci/run runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent import chat_store
from agent.events import Final, StepFinished
from agent.session import ChatService
from corpus.db import Database
from corpus.embedder import Embedder
from tests.conftest import chatpapers_exe

pytestmark = pytest.mark.slow


def test_resnet_question_is_answered_with_a_citation(
    ingested: Database, embedder: Embedder, local_model
) -> None:
    model, _ = local_model
    service = ChatService(ingested, embedder, model)
    with ingested.connect(autocommit=True) as conn:
        chat = chat_store.create_chat(conn, "e2e")
    events = list(
        service.ask(
            chat.chat_id, "e2e", "What problem does residual learning solve, according to the ResNet paper?"
        )
    )
    final = events[-1]
    assert isinstance(final, Final), events[-1]
    tools = [e.tool for e in events if isinstance(e, StepFinished)]
    assert tools and tools[0] in (
        "search",
        "get_recent_papers",
        "ask_paper_question",
        "get_information_from_paper",
    )
    assert "1512.03385" in final.citations, final.answer
    assert len(final.answer.split()) > 15


def test_chat_once_json_from_the_command_line(ingested: Database, local_model, tmp_path: Path) -> None:
    _, settings = local_model
    env = {
        "DATABASE_URL": ingested.settings.database_url or "",
        "CHATPAPERS_DATA_DIR": str(settings.data_dir),
        "CHATPAPERS_LLM": "local",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [
            chatpapers_exe(),
            "chat",
            "--once",
            "What does the paper 'Attention Is All You Need' propose?",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) >= {"answer", "level", "steps", "citations"}
    assert result["steps"] and result["steps"][0]["tool"] and isinstance(result["steps"][0]["input"], dict)
    assert "1706.03762" in result["citations"], result
