"""Any LangChain chat model (OpenAI or OpenAI-compatible servers, Ollama, Anthropic, ...) as a
ChatModel: the step's JSON schema as structured output where the provider takes one, JSON mode or
plain text (the loop repairs what does not parse) where it does not, and `max_tokens` per call."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from agent.llm.base import ChatMessage, Completion, LLMError, Role, Stopped

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

log = logging.getLogger("chatpapers.llm")

# How a schema is asked for, best first. `json_schema`: the provider constrains the output to the
# schema (OpenAI-compatible response_format json_schema, Ollama's schema `format`, ...);
# `json_mode`: any JSON object (LM Studio refuses this one, llama-cpp-python's server the first);
# `plain`: the prompt alone, for servers that take neither.
Method = Literal["json_schema", "json_mode", "plain"]
METHODS: tuple[Method, ...] = ("json_schema", "json_mode", "plain")

# The field that bounds a reply's length, by chat model class: most call it max_tokens.
_LENGTH_FIELDS = ("max_tokens", "num_predict", "max_output_tokens", "max_new_tokens")


class LangChainChat:
    def __init__(self, model: BaseChatModel, name: str, max_tokens_in_body: bool = False) -> None:
        self.model = model
        self.name = name
        # LangChain's ChatOpenAI sends the reply length as `max_completion_tokens` only, which
        # OpenAI-compatible servers such as llama-cpp-python's ignore: for those, `max_tokens` goes
        # in the request body too (measured: a reply asked for 8 tokens came back with 57).
        self.max_tokens_in_body = max_tokens_in_body
        self.methods: list[Method] = list(METHODS)  # a method the provider refuses is dropped, once
        self._length_field = next((f for f in _LENGTH_FIELDS if f in type(model).model_fields), None)
        self._bounded: dict[int, BaseChatModel] = {}
        self._lock = threading.Lock()

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
        model = self._with_length(max_tokens)
        try:
            if json_schema is not None:
                return self._structured(model, lc_messages, json_schema)
            if on_token is None:
                reply = model.invoke(lc_messages)
                return _with_usage(str(reply.content), reply)
            parts: list[str] = []
            last = None
            for chunk in model.stream(lc_messages):
                last = chunk if last is None else last + chunk
                if chunk.content:
                    parts.append(str(chunk.content))
                    on_token(str(chunk.content))
            return _with_usage("".join(parts), last)
        except (Stopped, LLMError):
            raise
        except Exception as exc:  # network, auth, quota: the provider's own words
            raise LLMError(f"{self.name} failed: {type(exc).__name__}: {exc}") from exc

    def _with_length(self, max_tokens: int) -> BaseChatModel:
        """The model with this reply length; a copy per length (the client connections are shared)."""
        if self._length_field is None:
            return self.model
        with self._lock:
            if max_tokens not in self._bounded:
                update: dict[str, Any] = {self._length_field: max_tokens}
                if self.max_tokens_in_body:
                    body = dict(getattr(self.model, "extra_body", None) or {})
                    update["extra_body"] = {**body, "max_tokens": max_tokens}
                self._bounded[max_tokens] = self.model.model_copy(update=update)
            return self._bounded[max_tokens]

    def _structured(self, model: BaseChatModel, messages: list, schema: dict) -> Completion:
        """The reply as JSON text, asked for in the best way this provider takes."""
        while True:
            method = self.methods[0]
            try:
                if method == "plain":
                    reply = model.invoke(messages)
                    return _with_usage(str(reply.content), reply)
                named, key = (
                    _named(schema) if method == "json_schema" else ({"title": "reply", **schema}, None)
                )
                out = model.with_structured_output(named, method=method, include_raw=True).invoke(messages)
            except Exception as exc:
                if len(self.methods) == 1 or not _refused(exc):
                    raise
                with self._lock:
                    if self.methods and self.methods[0] == method:
                        self.methods.pop(0)
                log.warning("%s refused structured output by %s (%s); using %s", self.name, method,
                            _short(exc), self.methods[0])  # fmt: skip
                continue
            raw = out["raw"]
            parsed = out.get("parsed")
            if not isinstance(parsed, dict):
                try:
                    parsed = json.loads(str(raw.content))
                except ValueError:
                    return _with_usage(str(raw.content), raw)  # the loop repairs what does not parse
            if key is not None and isinstance(parsed, dict) and key in parsed:
                parsed = parsed[key]
            return _with_usage(json.dumps(parsed), raw)


def _named(schema: dict) -> tuple[dict, str | None]:
    """The schema as providers take it for structured output: a named object at the root. A
    schema whose root is not an object (the step's anyOf of tools) is wrapped in one, under `key`."""
    if schema.get("type") == "object" and "properties" in schema:
        return {"title": "reply", "description": "The reply, as JSON.", **schema}, None
    wrapped = {
        "title": "reply",
        "description": "The reply, as JSON, under `value`.",
        "type": "object",
        "properties": {"value": schema},
        "required": ["value"],
    }
    return wrapped, "value"


def _refused(exc: Exception) -> bool:
    """The provider (or LangChain for it) does not take this way of asking for JSON — as opposed to
    a network, auth or rate-limit failure, which every way would meet. Servers say so with 400, 422
    or (llama-cpp-python's, for `json_schema`) 500."""
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    if status is not None:
        return status not in (401, 403, 408, 429)
    return isinstance(exc, NotImplementedError | ValueError | TypeError | KeyError)


def _short(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _with_usage(text: str, message: Any) -> Completion:
    usage = getattr(message, "usage_metadata", None) or {}
    finish = (getattr(message, "response_metadata", None) or {}).get("finish_reason")
    return Completion(
        text=text,
        tokens_in=usage.get("input_tokens"),
        tokens_out=usage.get("output_tokens"),
        cut=finish in ("length", "max_tokens"),
    )
