"""The model interface the agent needs: chat (optionally constrained to a JSON schema, optionally
streamed). Adapters wrap LangChain chat models and the embedded llama.cpp model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from pydantic import BaseModel


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Completion(BaseModel):
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None


class LLMError(RuntimeError):
    """The model could not be reached or failed; worded for people."""


class ChatModel(Protocol):
    name: str

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
    ) -> Completion: ...


class CompleteMixin:
    """`complete(system, user)` for tools, on top of `chat`."""

    def complete(self, system: str, user: str, max_tokens: int = 400) -> str:
        messages = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
        return self.chat(messages, max_tokens=max_tokens).text  # type: ignore[attr-defined]
