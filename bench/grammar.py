"""Grammar-constrained generation with the local model: llama-cpp-python's own sampler chain vs.
the best-token-first sampler (agent.llm.llama_speedups.py), side by side. Prints figures.

    python bench/grammar.py

The prompts are the RAGAS judge's real prompts (answer relevancy, faithfulness statements and
verdicts) for a fixed question, answer and context. Each prompt is first evaluated in both llama
contexts, so the timed runs measure generation only; both must produce the same text."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from llama_cpp import Llama

from agent.llm.base import ChatMessage
from agent.llm.local import LocalLlama
from agent.llm.model_files import model_file
from chatpapers.services import Services
from eval.metrics import RagasScorer
from eval.scripted_judge import ScriptedJudge

QUESTION = "What problem do residual networks solve, in simple terms?"
ANSWER = (
    "Residual networks make very deep neural networks easier to train. Each block learns a "
    "residual function added to its input through a shortcut connection, so the signal and the "
    "gradients pass through many layers. This fixes the degradation problem, where adding layers "
    "made training accuracy worse, and let the authors train networks with 152 layers that won "
    "ImageNet 2015 [arXiv:1512.03385]."
)
CONTEXT = (
    "[arXiv:1512.03385] Deep Residual Learning for Image Recognition. Deeper neural networks are "
    "more difficult to train. We present a residual learning framework to ease the training of "
    "networks that are substantially deeper than those used previously. We explicitly reformulate "
    "the layers as learning residual functions with reference to the layer inputs, instead of "
    "learning unreferenced functions. On the ImageNet dataset we evaluate residual nets with a "
    "depth of up to 152 layers; an ensemble of these residual nets achieves 3.57% error and won "
    "the 1st place on the ILSVRC 2015 classification task."
)


def main() -> None:
    services = Services.from_environment()
    capture = ScriptedJudge(QUESTION)
    RagasScorer(capture, services.embedder).score(QUESTION, ANSWER, [CONTEXT])
    model = LocalLlama(model_file(services.settings.data_dir))
    stock_ctx = model._model("stock")
    stock_ctx._init_sampler = lambda **kw: Llama._init_sampler(stock_ctx, **kw)  # type: ignore[method-assign]

    def generate(role: str, prompt: str, schema: dict) -> tuple[str, float, int]:
        t0 = time.perf_counter()
        reply = model.chat(
            [ChatMessage(role="user", content=prompt)], json_schema=schema, max_tokens=1200, role=role
        )
        return reply.text, time.perf_counter() - t0, reply.tokens_out or 0

    totals = {"stock": 0.0, "fast": 0.0}
    print(f"{'judge prompt':<28} {'tokens':>6} {'stock s':>8} {'fast s':>7} {'ratio':>6}  same text")
    seen = set()
    for prompt, schema in zip(capture.prompts, capture.schemas, strict=True):
        name = schema.get("title", "?")
        if name in seen:  # context relevance asks twice with the same output schema
            continue
        seen.add(name)
        for role in ("stock", "fast"):  # evaluate the prompt once in each context
            generate(role, prompt, schema)
        stock_text, stock_s, tokens = generate("stock", prompt, schema)
        fast_text, fast_s, _ = generate("fast", prompt, schema)
        totals["stock"] += stock_s
        totals["fast"] += fast_s
        same = "yes" if stock_text == fast_text else "NO"
        print(f"{name:<28} {tokens:>6} {stock_s:>8.1f} {fast_s:>7.1f} {stock_s / fast_s:>6.2f}  {same}")
    print(
        f"{'all':<28} {'':>6} {totals['stock']:>8.1f} {totals['fast']:>7.1f} "
        f"{totals['stock'] / totals['fast']:>6.2f}"
    )


if __name__ == "__main__":
    main()
