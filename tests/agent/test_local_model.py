"""End to end with the real embedded model (Qwen2.5-Coder-1.5B via llama.cpp) over ingested papers.
Minutes on 2 cores: deselect locally with -m "not slow"; .ci/run runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from corpus.db import Database
from tests.conftest import chatpapers_exe

pytestmark = pytest.mark.slow


def test_chat_once_json_from_the_command_line(corpus_copy: Database, local_model, tmp_path: Path) -> None:
    _, settings = local_model
    env = {
        "DATABASE_URL": corpus_copy.settings.database_url or "",
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


@pytest.mark.slow
def test_fast_grammar_sampling_picks_the_same_tokens_as_llama_cpp(local_model) -> None:
    """The best-token-first grammar sampler against llama-cpp-python's own sampler chain, on
    prompts where the model's favourite token is sometimes not allowed (forced key order,
    bounded strings and lists)."""
    from llama_cpp import Llama, LlamaGrammar

    from agent.llm.llama_speedups import FastGrammarLlama, GreedyGrammarSampler

    model, _ = local_model
    schema = {
        "type": "object",
        "properties": {
            "verdict": {"type": "integer"},
            "reasons": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 2},
        },
        "required": ["verdict", "reasons"],
    }
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    fast = FastGrammarLlama(
        model_path=str(model.model_path), n_ctx=1024, n_threads=model.threads, verbose=False
    )
    prompt = "Write a JSON object with your reasons first, then a verdict: is Python a snake?"
    sizes: list[int] = []
    original = GreedyGrammarSampler._apply

    def recording(self, data, size):
        sizes.append(size)
        return original(self, data, size)

    GreedyGrammarSampler._apply = recording  # type: ignore[method-assign]
    try:
        quick = fast.create_completion(prompt, max_tokens=80, temperature=0.0, grammar=grammar)
    finally:
        GreedyGrammarSampler._apply = original  # type: ignore[method-assign]
    # the same context again through llama-cpp-python's own sampler chain
    fast.reset()
    fast._init_sampler = lambda **kw: Llama._init_sampler(fast, **kw)  # type: ignore[method-assign]
    reference = fast.create_completion(prompt, max_tokens=80, temperature=0.0, grammar=grammar)
    assert 1 in sizes and fast.n_vocab() in sizes  # both paths ran: favourite allowed, and not
    text = quick["choices"][0]["text"]
    assert text == reference["choices"][0]["text"]
    parsed = json.loads(text)
    assert list(parsed) == ["verdict", "reasons"] and len(parsed["reasons"]) <= 2


def test_judge_context_reuses_prompt_prefixes_without_keeping_logits(local_model) -> None:
    """A second prompt with the first one's prefix restores the saved state (so only its new
    tokens are read) and answers exactly as a fresh context does; saved states keep one row of
    logits, not n_batch x vocabulary floats."""
    from pathlib import Path

    from agent.llm.base import ChatMessage
    from agent.llm.local import LocalLlama

    model, _ = local_model
    judge = LocalLlama(Path(model.model_path), n_ctx=2048, threads=model.threads)
    shared = "You rate how well a context answers a question, 0 to 2. " * 20

    def ask(role: str, question: str) -> str:
        message = ChatMessage(role="user", content=f"{shared}\nQuestion: {question}\nRating:")
        return judge.chat([message], max_tokens=8, role=role).text

    ask("judge", "What is a residual network?")
    ask("judge", "Who won the 1950 World Cup?")  # evicts the first prompt from the live KV cache
    cache = judge._contexts["judge"].cache
    assert len(cache.cache_state) == 2
    assert all(state.scores.shape[0] == 1 for state in cache.cache_state.values())
    loads = []
    llm = judge._contexts["judge"]
    original = llm.load_state
    llm.load_state = lambda state: (loads.append(state.n_tokens), original(state))[1]  # type: ignore[method-assign]
    again = ask("judge", "What is a residual network? Answer briefly.")
    assert loads and loads[0] > 200  # the shared instructions came from the cache
    assert again == ask("fresh", "What is a residual network? Answer briefly.")


def test_grammar_strings_hold_no_raw_control_characters(local_model) -> None:
    """llama-cpp-python's own JSON grammar let the judge write a raw newline inside a string, which
    is invalid JSON (a faithfulness score was lost to it in the full eval run)."""
    import ctypes
    import math

    import llama_cpp
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from agent.llm.local import grammar_text

    llm, _ = local_model
    vocab = llama_cpp.Llama(str(llm.model_path), vocab_only=True, verbose=False)
    schema = json.dumps({"type": "object", "properties": {"a": {"type": "string", "maxLength": 20}}})
    prefix = vocab.tokenize(b'{"a": "x', add_bos=False)

    def allows(gbnf: str, text: bytes) -> bool:
        (token,) = vocab.tokenize(text, add_bos=False)
        sampler = llama_cpp.llama_sampler_init_grammar(vocab._model.vocab, gbnf.encode(), b"root")
        try:
            for t in prefix:
                llama_cpp.llama_sampler_accept(sampler, t)
            data = (llama_cpp.llama_token_data * 1)()
            data[0].id, data[0].logit, data[0].p = token, 1.0, 0.0
            array = llama_cpp.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
            return data[0].logit != -math.inf
        finally:
            llama_cpp.llama_sampler_free(sampler)

    assert allows(json_schema_to_gbnf(schema), b"\n")  # the library's grammar: a raw newline
    assert not allows(grammar_text(schema), b"\n") and not allows(grammar_text(schema), b"\t")
    assert allows(grammar_text(schema), b"y") and allows(grammar_text(schema), b"\\")  # text, escapes


def test_a_reply_stopped_by_max_tokens_is_marked_cut(local_model) -> None:
    """The loop ends a cut answer at its last whole sentence; only a reply the limit stopped is cut."""
    from agent.llm.base import ChatMessage

    model, _ = local_model
    long = [ChatMessage(role="user", content="Describe residual networks in detail.")]
    short = [ChatMessage(role="user", content="Reply with just the word OK.")]
    assert model.chat(long, max_tokens=8, on_token=lambda _t: None).cut
    assert model.chat(long, max_tokens=8).cut
    assert not model.chat(short, max_tokens=20, on_token=lambda _t: None).cut
