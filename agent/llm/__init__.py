"""Choosing the LLM. CHATPAPERS_LLM is

- `local` — the embedded Qwen2.5-Coder-1.5B (scripts/setup.sh installs it); unset means `local`
  when it is installed. Never a silent fallback to a paid API;
- `local:/path/to/model.gguf` — the embedded runtime with your own GGUF file;
- `<provider>:<model>` — any chat model LangChain's `init_chat_model` knows (openai, anthropic,
  ollama, google_genai, mistralai, groq, ...), with that provider's LangChain package installed.
  `openai:` takes OPENAI_API_KEY and OPENAI_BASE_URL (any OpenAI-compatible server: vLLM,
  llama.cpp, LM Studio) and `ollama:` OLLAMA_HOST from the settings; other providers read their
  own variables (ANTHROPIC_API_KEY, GOOGLE_API_KEY, ...)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from agent.llm.base import ChatMessage, ChatModel, Completion, LLMError
from ground.settings import Settings


class LLMNotConfigured(LLMError):
    pass


HOW_TO_CONFIGURE = (
    "no language model is configured. Set CHATPAPERS_LLM to one of: `local` (the embedded "
    "Qwen2.5-Coder-1.5B; install it with scripts/setup.sh), `local:/path/to/model.gguf` (your own "
    "GGUF file on the embedded runtime), `openai:<model>` (with OPENAI_API_KEY, and OPENAI_BASE_URL "
    "for an OpenAI-compatible server such as vLLM, llama.cpp server or LM Studio), `ollama:<model>` "
    "(with a running Ollama, OLLAMA_HOST if not local), or `<provider>:<model>` for any other "
    "provider of LangChain's init_chat_model (with its package, e.g. langchain-anthropic, installed)."
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
    kind, _, model = spec.partition(":")  # model names may hold ':' themselves (ollama's llama3:8b)
    if kind == "local":
        return _local(settings, model.strip())
    if not model.strip():
        raise LLMNotConfigured(f"CHATPAPERS_LLM={spec!r} names no model. {HOW_TO_CONFIGURE}")
    return _langchain(settings, kind.strip(), model.strip(), spec)


def _local(settings: Settings, path: str) -> ChatModel:
    from agent.llm.local import LocalLlama
    from agent.llm.model_files import LocalModelMissing, model_file

    if importlib.util.find_spec("llama_cpp") is None:
        raise LLMNotConfigured(f"the embedded runtime (llama-cpp-python) is missing. {HOW_TO_CONFIGURE}")
    if path:
        gguf = Path(path).expanduser()
        if not gguf.is_file():
            raise LLMNotConfigured(f"CHATPAPERS_LLM=local:{path}: no such file")
        with gguf.open("rb") as f:
            if f.read(4) != b"GGUF":
                raise LLMNotConfigured(f"CHATPAPERS_LLM=local:{path}: not a GGUF model file")
    else:
        try:
            gguf = model_file(settings.data_dir)
        except LocalModelMissing as exc:
            raise LLMNotConfigured(f"{exc}. {HOW_TO_CONFIGURE}") from None
    return LocalLlama(gguf, n_ctx=settings.llm_context, threads=settings.llm_threads)


def _langchain(settings: Settings, provider: str, model: str, spec: str) -> ChatModel:
    """LangChain's own `init_chat_model` builds the provider's chat model; only the settings this
    project holds for a provider are passed to it."""
    from langchain.chat_models import init_chat_model

    from agent.llm.langchain_chat import LangChainChat

    options: dict = {"temperature": 0}
    if provider == "openai":
        key = settings.openai_api_key
        if key is None and not settings.openai_base_url:
            raise LLMNotConfigured("CHATPAPERS_LLM=openai:… needs OPENAI_API_KEY (or OPENAI_BASE_URL)")
        options["base_url"] = settings.openai_base_url
        options["api_key"] = key.get_secret_value() if key else "not-needed"  # a local server takes any
    elif provider == "ollama" and settings.ollama_host:
        options["base_url"] = settings.ollama_host
    try:
        chat = init_chat_model(model, model_provider=provider, **options)
    except ImportError as exc:
        package = "langchain-" + provider.replace("_", "-")
        raise LLMNotConfigured(
            f"CHATPAPERS_LLM={spec!r} needs the provider's LangChain package: "
            f".venv/bin/pip install {package} ({exc})"
        ) from None
    except ValueError as exc:  # an unknown provider: its message lists the supported ones
        raise LLMNotConfigured(f"CHATPAPERS_LLM={spec!r}: {exc}") from None
    except Exception as exc:  # e.g. a provider that wants its key when the model is built
        raise LLMNotConfigured(f"CHATPAPERS_LLM={spec!r}: {type(exc).__name__}: {exc}") from None
    # a server of one's own (base URL) speaks OpenAI's older dialect: see LangChainChat
    return LangChainChat(
        chat, spec, max_tokens_in_body=provider == "openai" and bool(settings.openai_base_url)
    )


__all__ = ["ChatMessage", "ChatModel", "Completion", "LLMError", "LLMNotConfigured", "resolve_llm"]
