"""Any LangChain chat model (OpenAI or OpenAI-compatible servers, Ollama, ...) as a ChatModel."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent.llm.base import ChatMessage, Completion, LLMError, Role, Stopped

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


class LangChainChat:
    def __init__(self, model: BaseChatModel, name: str) -> None:
        self.model = model
        self.name = name

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "agent",  # one remote model serves every role
    ) -> Completion:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
        lc_messages = [kinds[m.role](content=m.content) for m in messages]
        try:
            if json_schema is not None:
                # JSON mode is the common denominator of providers; the loop validates the step.
                runnable = self.model.with_structured_output(
                    json_schema, method="json_mode", include_raw=True
                )
                out = runnable.invoke(lc_messages)
                raw = out["raw"]
                text = json.dumps(out["parsed"]) if out.get("parsed") is not None else str(raw.content)
                return _with_usage(text, raw)
            if on_token is None:
                reply = self.model.invoke(lc_messages)
                return _with_usage(str(reply.content), reply)
            parts: list[str] = []
            last = None
            for chunk in self.model.stream(lc_messages):
                last = chunk if last is None else last + chunk
                if chunk.content:
                    parts.append(str(chunk.content))
                    on_token(str(chunk.content))
            return _with_usage("".join(parts), last)
        except Stopped:
            raise
        except Exception as exc:  # network, auth, quota: the provider's own words
            raise LLMError(f"{self.name} failed: {type(exc).__name__}: {exc}") from exc


def _with_usage(text: str, message: object) -> Completion:
    usage = getattr(message, "usage_metadata", None) or {}
    finish = (getattr(message, "response_metadata", None) or {}).get("finish_reason")
    return Completion(
        text=text,
        tokens_in=usage.get("input_tokens"),
        tokens_out=usage.get("output_tokens"),
        cut=finish in ("length", "max_tokens"),
    )
