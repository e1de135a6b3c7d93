"""Choosing the model (CHATPAPERS_LLM) and using one behind a real OpenAI-compatible server:
llama-cpp-python's own server, started here with the packaged local model, answers the agent
through LangChain's init_chat_model."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent.events import Final
from agent.llm import LLMNotConfigured, resolve_llm
from agent.llm.base import ChatMessage, Stopped
from agent.llm.json_text import json_object
from agent.llm.langchain_chat import LangChainChat
from agent.llm.model_files import model_file
from agent.loop import step_schema
from agent.session import ChatService
from agent.tools import ALL_TOOLS
from corpus import chats as chat_store
from corpus.db import Database
from corpus.embedder import Embedder
from tests.conftest import make_settings


def _settings(tmp_path: Path, llm: str, **more):
    return make_settings("postgresql://unused/x", tmp_path, llm=llm, **more)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("nonsense:some-model", ["Unsupported provider='nonsense'", "openai", "ollama"]),
        ("anthropic:claude-sonnet", ["pip install langchain-anthropic"]),
        ("openai:", ["names no model"]),
        ("openai:gpt-4o-mini", ["OPENAI_API_KEY"]),
        ("local:/nowhere/model.gguf", ["no such file"]),
    ],
)
def test_a_model_that_cannot_be_used_is_a_clear_error(tmp_path: Path, spec: str, words: list[str]) -> None:
    with pytest.raises(LLMNotConfigured) as caught:
        resolve_llm(_settings(tmp_path, spec))
    assert all(w in str(caught.value) for w in words), str(caught.value)
    assert "Traceback" not in str(caught.value)


def test_local_takes_a_gguf_file_of_ones_own(tmp_path: Path) -> None:
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("not a model")
    with pytest.raises(LLMNotConfigured, match="not a GGUF model file"):
        resolve_llm(_settings(tmp_path, f"local:{not_gguf}"))
    packaged = model_file(tmp_path / "data")  # assembled from its PyPI parts
    own = tmp_path / "my-model.gguf"
    own.symlink_to(packaged)
    model = resolve_llm(_settings(tmp_path, f"local:{own}"))
    assert model.name == "local:my-model" and model.model_path == own


def test_provider_models_are_built_by_init_chat_model(tmp_path: Path) -> None:
    from langchain_ollama import ChatOllama
    from langchain_openai import ChatOpenAI

    model = resolve_llm(_settings(tmp_path, "openai:gpt-4o-mini", openai_base_url="http://127.0.0.1:9/v1"))
    assert isinstance(model, LangChainChat) and isinstance(model.model, ChatOpenAI)
    assert model.model.openai_api_base == "http://127.0.0.1:9/v1" and model.model.temperature == 0
    # the reply length is set per call, on the field this provider calls it
    assert model._with_length(64).max_tokens == 64 and model._with_length(64) is model._with_length(64)
    # a server of one's own also gets the older `max_tokens` in the body (OpenAI itself does not)
    assert model._with_length(64).extra_body == {"max_tokens": 64}
    hosted = resolve_llm(_settings(tmp_path, "openai:gpt-4o-mini", openai_api_key="sk-test"))
    assert hosted._with_length(64).extra_body is None
    ollama = resolve_llm(_settings(tmp_path, "ollama:llama3.1:8b", ollama_host="http://127.0.0.1:9"))
    assert isinstance(ollama.model, ChatOllama) and ollama.model.model == "llama3.1:8b"
    assert ollama._with_length(32).num_predict == 32 and ollama.name == "ollama:llama3.1:8b"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def openai_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server with the packaged model; yields its /v1 URL."""
    gguf = model_file(tmp_path_factory.mktemp("server-model"))
    port = _free_port()
    log = tmp_path_factory.mktemp("server-log") / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "qwen-local",
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
             "--n_threads", str(os.cpu_count() or 2)],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the llama.cpp server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.slow
def test_the_agent_through_an_openai_compatible_server(
    openai_server: str, corpus_copy: Database, embedder: Embedder, tmp_path: Path
) -> None:
    model = resolve_llm(_settings(tmp_path, "openai:qwen-local", openai_base_url=openai_server))
    assert isinstance(model, LangChainChat) and model.name == "openai:qwen-local"

    # max_tokens reaches the server: the reply stops there, and says it was cut
    counting = [ChatMessage(role="user", content="Count from one to one hundred in words, comma separated.")]
    short = model.chat(counting, max_tokens=8)
    assert short.cut and short.tokens_out is not None and short.tokens_out <= 8

    # the step schema: this server refuses response_format json_schema (a 500), so the model falls
    # back to JSON mode once and for all; the reply is a JSON object
    ask = [
        ChatMessage(role="system", content='Reply with one JSON object: {"thought": ..., "action": "search", '
                    '"action_input": {"query": ..., "k": 5}}.'),
        ChatMessage(role="user", content="Find papers on residual networks."),
    ]  # fmt: skip
    step = model.chat(ask, json_schema=step_schema(ALL_TOOLS), max_tokens=200)
    assert model.methods[0] == "json_mode"
    assert isinstance(json.loads(json_object(step.text)), dict)

    # a stop raised while the answer streams ends the generation there
    seen: list[str] = []

    def stop_after_three(text: str) -> None:
        seen.append(text)
        if len(seen) == 3:
            raise Stopped

    with pytest.raises(Stopped):
        model.chat(counting, max_tokens=200, on_token=stop_after_three)
    assert len(seen) == 3

    # a whole turn of the agent, saved like any other
    service = ChatService(corpus_copy, embedder, model, max_steps=3)
    with corpus_copy.connect(autocommit=True) as conn:
        chat_id = chat_store.create_chat(conn, chat_store.LOCAL_OWNER).chat_id
    events = list(
        service.ask(chat_id, chat_store.LOCAL_OWNER, "What problem do deep residual networks solve?")
    )
    final = events[-1]
    assert isinstance(final, Final), events[-1]
    assert final.model == "openai:qwen-local" and final.answer.strip()
    assert "1512.03385" in final.citations
    with corpus_copy.connect() as conn:
        saved = chat_store.messages(conn, chat_id)
    assert [m.role for m in saved] == ["user", "assistant"] and saved[1].model == "openai:qwen-local"
