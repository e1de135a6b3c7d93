"""A chat model whose every call is an OpenTelemetry span with the GenAI conventions' attributes
(model, max tokens, tokens in and out), and the prompt and reply when traces carry content."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent import tracing
from agent.llm.base import ChatMessage, ChatModel, Completion, Role


class TracedModel:
    def __init__(self, model: ChatModel) -> None:
        self.inner = model
        self.name = model.name

    def __getattr__(self, name: str) -> Any:  # the wrapped model's own attributes (model_path, ...)
        return getattr(self.inner, name)

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "agent",
    ) -> Completion:
        with tracing.span(
            f"chat {self.name}",
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": self.name,
                "gen_ai.request.max_tokens": max_tokens,
                "chatpapers.llm.role": role,
                "chatpapers.llm.structured": json_schema is not None,
                "chatpapers.llm.streamed": on_token is not None,
                "chatpapers.llm.prompt_chars": sum(len(m.content) for m in messages),
                "input.value": tracing.content([m.model_dump() for m in messages]),
            },
        ) as span:
            completion = self.inner.chat(messages, json_schema, max_tokens, on_token, role)
            tracing.set_attributes(
                span,
                **{
                    "gen_ai.usage.input_tokens": completion.tokens_in,
                    "gen_ai.usage.output_tokens": completion.tokens_out,
                    "chatpapers.llm.cut": completion.cut,
                    "output.value": tracing.content(completion.text),
                },
            )
            return completion
