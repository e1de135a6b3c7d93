"""llama-cpp-python, tuned for grammar-constrained greedy decoding and repeated prompt prefixes.

llama-cpp-python runs the grammar over the whole vocabulary (151k tokens for Qwen2.5) at every
step, which made grammar-constrained generation 2-3x slower than free text on this CPU. llama.cpp's
own `common_sampler` avoids that: it checks the best token alone and only filters the whole
vocabulary when that token is not allowed. At temperature 0 both give the same token: the
highest-scoring one the grammar allows."""

from __future__ import annotations

import ctypes
import math
import weakref

import llama_cpp
import numpy as np
from llama_cpp import Llama, LlamaGrammar, LlamaRAMCache

_NEG_INF = -math.inf


class GreedyGrammarSampler:
    """Drop-in for the `LlamaSampler` chain `Llama.generate` builds: only `.sample(ctx, idx)`."""

    def __init__(self, llm: Llama, grammar: LlamaGrammar) -> None:
        self._sampler = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._sampler:
            raise ValueError("llama.cpp rejected the grammar")
        # finalize (not __del__): it also runs at interpreter exit, before the bindings are gone
        weakref.finalize(self, llama_cpp.llama_sampler_free, self._sampler)
        self._n_vocab = llm.n_vocab()
        self._one = (llama_cpp.llama_token_data * 1)()
        self._all = (llama_cpp.llama_token_data * self._n_vocab)()
        self._ids = np.arange(self._n_vocab, dtype=np.int32)

    def _apply(self, data, size: int) -> None:
        array = llama_cpp.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(array))

    def sample(self, ctx, idx: int) -> int:
        pointer = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))
        token = int(logits.argmax())
        self._one[0].id, self._one[0].logit, self._one[0].p = token, float(logits[token]), 0.0
        self._apply(self._one, 1)
        if self._one[0].logit == _NEG_INF:  # not allowed here: filter the whole vocabulary
            view = np.ctypeslib.as_array(self._all).view(
                np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
            )
            view["id"], view["logit"], view["p"] = self._ids, logits, 0.0
            self._apply(self._all, self._n_vocab)
            token = int(view["logit"].argmax())
        llama_cpp.llama_sampler_accept(self._sampler, token)
        return token


class FastGrammarLlama(Llama):
    """`Llama` whose greedy, grammar-constrained steps use `GreedyGrammarSampler`."""

    def _init_sampler(self, **kwargs):  # type: ignore[override]
        grammar = kwargs.get("grammar")
        plain = (
            kwargs.get("temp") == 0.0
            and kwargs.get("logits_processor") is None
            and kwargs.get("repeat_penalty", 1.0) == 1.0
            and not kwargs.get("frequency_penalty")
            and not kwargs.get("presence_penalty")
        )
        if grammar is None or not plain:
            return super()._init_sampler(**kwargs)
        return GreedyGrammarSampler(self, grammar)


class PrefixStateCache(LlamaRAMCache):
    """llama-cpp-python's RAM cache of evaluated prompt states, without the logits copy.

    Each saved state also carries up to n_batch x vocabulary floats of logits (310 MB for
    Qwen2.5) that the cache leaves out of its size count: a judge's process grew to 8 GB in
    minutes. A restored state is always decoded again before sampling, so its logits are never
    read; one row is kept because loading assigns it by broadcasting."""

    def __setitem__(self, key, value) -> None:
        value.scores = value.scores[-1:].copy()
        super().__setitem__(key, value)
