"""Choosing the LLM: CHATPAPERS_LLM = `openai:<model>`, `ollama:<model>` or `local`; unset means
`local` when the embedded model is installed. Never a silent fallback to a paid API."""

from __future__ import annotations

import importlib.util

from agent.llm.base import ChatMessage, ChatModel, Completion, LLMError
from ground.settings import Settings


class LLMNotConfigured(LLMError):
    pass


HOW_TO_CONFIGURE = (
    "no language model is configured. Set CHATPAPERS_LLM to one of: `local` (the embedded "
    "Qwen2.5-Coder-1.5B; install it with scripts/setup.sh), `openai:<model>` (with OPENAI_API_KEY, "
    "and OPENAI_BASE_URL for an OpenAI-compatible server such as vLLM or llama.cpp server), or "
    "`ollama:<model>` (with a running Ollama, OLLAMA_HOST if not local)."
)


def local_available() -> bool:
    from agent.llm.model_files import parts_installed

    return importlib.util.find_spec("llama_cpp") is not None and parts_installed()


def resolve_llm(settings: Settings) -> ChatModel:
    spec = (settings.llm or "").strip()
    if not spec:
        if not local_available():
            raise LLMNotConfigured(HOW_TO_CONFIGURE)
        spec = "local"
    kind, _, model = spec.partition(":")
    if kind == "local":
        from agent.llm.local import LocalLlama
        from agent.llm.model_files import LocalModelMissing, model_file

        try:
            path = model_file(settings.data_dir)
        except LocalModelMissing as exc:
            raise LLMNotConfigured(f"{exc}. {HOW_TO_CONFIGURE}") from None
        return LocalLlama(path, n_ctx=settings.llm_context, threads=settings.llm_threads)
    if kind == "openai" and model:
        from langchain_openai import ChatOpenAI

        from agent.llm.langchain_chat import LangChainChat

        key = settings.openai_api_key
        if key is None and not settings.openai_base_url:
            raise LLMNotConfigured("CHATPAPERS_LLM=openai:… needs OPENAI_API_KEY (or OPENAI_BASE_URL)")
        chat = ChatOpenAI(
            model=model,
            temperature=0,
            base_url=settings.openai_base_url,
            api_key=key.get_secret_value() if key else "not-needed",
        )
        return LangChainChat(chat, spec)
    if kind == "ollama" and model:
        from langchain_ollama import ChatOllama

        from agent.llm.langchain_chat import LangChainChat

        return LangChainChat(ChatOllama(model=model, temperature=0, base_url=settings.ollama_host), spec)
    raise LLMNotConfigured(f"CHATPAPERS_LLM={spec!r} is not understood. {HOW_TO_CONFIGURE}")


__all__ = ["ChatMessage", "ChatModel", "Completion", "LLMError", "LLMNotConfigured", "resolve_llm"]
