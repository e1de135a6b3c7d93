"""The embedded local model run by llama-cpp-python, with grammar-constrained JSON steps.

Measured with Qwen2.5-Coder-1.5B here: free-form tool calling fails, while few-shot prompts plus a
grammar built from the step's JSON schema give valid steps. temperature 0 keeps runs repeatable."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

from agent.llm.base import ChatMessage, Completion, LLMError, Role

PREFIX_CACHE_BYTES = 2 << 30  # per context; one saved state of a 1.5k-token prompt is ~43 MB


# llama-cpp-python's JSON grammar lets a string hold raw control characters (llama.cpp's own
# grammar does not): a judge that wrote a newline inside a string gave invalid JSON and its score
# was lost. Strings here allow only escaped control characters, as JSON requires.
_LOOSE_CHAR = r'char ::= [^"\\] |'
_STRICT_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'


def grammar_text(schema_json: str) -> str:
    """The GBNF grammar of a JSON schema whose strings are valid JSON strings."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    text = json_schema_to_gbnf(schema_json)
    if "char ::=" in text and _LOOSE_CHAR not in text and _STRICT_CHAR not in text:
        raise RuntimeError("llama-cpp-python's JSON string rule changed; check grammar_text")
    return text.replace(_LOOSE_CHAR, _STRICT_CHAR)


class LocalLlama:
    def __init__(self, model_path: Path, n_ctx: int = 8192, threads: int | None = None) -> None:
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.threads = threads or os.cpu_count() or 2
        self.name = "local:" + model_path.stem
        # Contexts on the same memory-mapped weights: the agent's conversation keeps its KV cache
        # (each step only processes new tokens) while tools' one-off prompts and an eval judge's
        # prompts use their own, so they do not evict the agent's system prompt.
        self._contexts: dict[str, object] = {}
        self._grammars: dict[str, object] = {}
        self._lock = threading.Lock()  # one llama context: one call at a time

    def _model(self, role: str = "agent"):
        if role not in self._contexts:
            try:
                from agent.llm.llama_speedups import FastGrammarLlama
            except ImportError as exc:
                raise LLMError("llama-cpp-python is not installed (run scripts/setup.sh)") from exc
            llm = FastGrammarLlama(
                model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.threads, verbose=False
            )
            if role in ("agent", "judge"):
                from agent.llm.llama_speedups import PrefixStateCache

                # Both cycle through a few long fixed prompts (the agent's system prompt with and
                # without level instructions, the judge's metric prompts): keeping each one's
                # evaluated state lets the next call read only its new tokens.
                llm.set_cache(PrefixStateCache(capacity_bytes=PREFIX_CACHE_BYTES))
            self._contexts[role] = llm
        return self._contexts[role]

    def _grammar(self, schema: dict):
        from llama_cpp import LlamaGrammar

        # Properties are generated in the schema's order: a judge must write its question before
        # its verdict, a reason before the label it justifies.
        key = json.dumps(schema)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_string(grammar_text(key), verbose=False)
        return self._grammars[key]

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "agent",
    ) -> Completion:
        with self._lock:
            llm = self._model(role)
            kwargs: dict = {
                "messages": [m.model_dump() for m in messages],
                "max_tokens": max_tokens,
                "temperature": 0.0,
            }
            if json_schema is not None:
                kwargs["grammar"] = self._grammar(json_schema)
            try:
                if on_token is None:
                    result = llm.create_chat_completion(**kwargs)
                    usage = result.get("usage") or {}
                    return Completion(
                        text=result["choices"][0]["message"]["content"] or "",
                        tokens_in=usage.get("prompt_tokens"),
                        tokens_out=usage.get("completion_tokens"),
                        cut=result["choices"][0].get("finish_reason") == "length",
                    )
                parts: list[str] = []
                finish = None
                for chunk in llm.create_chat_completion(stream=True, **kwargs):
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    text = choice["delta"].get("content") or ""
                    if text:
                        parts.append(text)
                        on_token(text)
                # streamed chunks carry no usage: the context now holds the prompt and the reply
                return Completion(
                    text="".join(parts),
                    tokens_in=max(0, llm.n_tokens - len(parts)),
                    tokens_out=len(parts),
                    cut=finish == "length",
                )
            except ValueError as exc:  # e.g. the prompt no longer fits the context window
                raise LLMError(f"the local model failed: {exc}") from exc
