"""The one model interface of the agent, its tools and the eval judge: chat, optionally
constrained to a JSON schema, optionally streamed, in a named role. Adapters wrap LangChain chat
models and the embedded llama.cpp model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from pydantic import BaseModel

# Who is asking. A local model keeps one evaluated-prompt cache per role, so the agent's long
# system prompt is not evicted by a tool's one-off prompt or by the eval judge; remote models
# accept the role and ignore it.
Role = Literal["agent", "tools", "judge"]


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Completion(BaseModel):
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cut: bool = False  # stopped by max_tokens, mid-sentence


class LLMError(RuntimeError):
    """The model could not be reached or failed; worded for people."""


class Stopped(Exception):
    """The person stopped the answer. Raised from an `on_token` callback it ends the generation
    there; adapters let it through unchanged. `text`: what had been written."""

    def __init__(self, text: str = "") -> None:
        super().__init__("stopped")
        self.text = text


class ChatModel(Protocol):
    name: str

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "agent",
    ) -> Completion: ...


def complete(model: ChatModel, system: str, user: str, max_tokens: int = 400, role: Role = "tools") -> str:
    """One system + user prompt in, text out: what tools ask of a model."""
    messages = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
    return model.chat(messages, max_tokens=max_tokens, role=role).text
