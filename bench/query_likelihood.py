"""Query likelihood as the judge of the reader's sentences: what it finds and what it costs.

The narrow reader shows the model the 8 sentences its own scorer (MiniLM, the question's terms,
a number bonus) ranks first. This re-ranks the scorer's first `--candidates` sentences by the mean
log-probability the local model gives the question after each one ("Passage: ... Please write a
question based on this passage. Question: ..."; UPR, Sachan et al. 2022) and counts, for the
single-paper cases' first questions, the turns whose every key fact is among the 8 sentences
chosen either way, with the tokens the model read and the seconds it took. No answer is written.
Run on a benchmark work folder that `bench/grounded.py` built:

    .venv/bin/python bench/query_likelihood.py --work /work/grounded --cases single-1503.07150-a,...
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import reading
from agent.llm.model_files import model_file
from agent.tools import ToolContext
from agent.tools.paper import known_paper
from bench.grounded import corpus_services
from corpus import papers
from eval.grounded.cases import load_cases

PROMPT = "Passage: {sentence}\nPlease write a question based on this passage.\nQuestion:"


def question_log_likelihood(llm, sentence: str, question: str) -> tuple[float, int]:
    """Mean log-probability of the question's tokens after the sentence; tokens evaluated."""
    before = llm.tokenize(PROMPT.format(sentence=sentence).encode())
    asked = llm.tokenize((" " + question).encode(), add_bos=False)
    llm.reset()
    llm.eval(before + asked)
    logits = np.asarray(llm.scores[len(before) - 1 : len(before) + len(asked) - 1], dtype=np.float64)
    log_probs = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    return float(log_probs[np.arange(len(asked)), asked].mean()), len(before) + len(asked)


def main() -> None:
    import llama_cpp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatpapers-grounded"))
    parser.add_argument("--candidates", type=int, default=20, help="the scorer's first N sentences re-ranked")
    parser.add_argument("--cases", default="", help="only these single-paper cases, by id (default: all)")
    args = parser.parse_args()
    services = corpus_services(args.work)
    embedder = services.embedder
    ctx = ToolContext(connect=services.db.pooled, embedder=embedder)
    llm = llama_cpp.Llama(
        model_path=str(model_file(args.work)),
        n_ctx=1024,
        n_threads=services.settings.llm_threads,  # the product's own setting (None: llama's default)
        logits_all=True,  # the question's log-probabilities; LocalLlama keeps only the last token's
        verbose=False,
    )
    wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
    cases = [c for c in load_cases() if c.kind == "single" and (not wanted or c.id in wanted)]
    by_scorer = by_likelihood = tokens = 0
    seconds = 0.0
    for case in cases:
        turn = case.turns[0]
        vector = embedder.embed_query(turn.question)
        shown: dict[str, tuple[str, str]] = {}
        for paper_id in dict.fromkeys(f.paper for f in turn.key):
            paper = known_paper(ctx, paper_id)
            with ctx.connect() as conn:
                every = papers.search_chunks(conn, vector, k=paper.n_chunks, paper_id=paper_id)
            passages = reading.best_passages(turn.question, every)
            # the reader's own scorer, over every sentence: the tool (InformationFromPaper) returns 12 at most
            ranked = sorted(
                reading.select_sentences(
                    turn.question,
                    passages,
                    embedder,
                    10**6,
                    vector,
                    reading.own_names(paper.title),
                    paper.title,
                ),
                key=lambda s: -s.score,
            )[: args.candidates]
            start = time.perf_counter()
            judged = []
            for sentence in ranked:
                likelihood, n = question_log_likelihood(llm, sentence.text, turn.question)
                judged.append((likelihood, sentence.text))
                tokens += n
            seconds += time.perf_counter() - start
            first = " ".join(s.text for s in ranked[: reading.SENTENCES])
            best = " ".join(t for _, t in sorted(judged, key=lambda j: -j[0])[: reading.SENTENCES])
            shown[paper_id] = (first, best)
        scorer = all(f.stated_in(shown[f.paper][0]) for f in turn.key)
        likelihood = all(f.stated_in(shown[f.paper][1]) for f in turn.key)
        by_scorer += scorer
        by_likelihood += likelihood
        print(
            f"{case.id}: every key fact shown by the scorer {scorer}, by query likelihood {likelihood}",
            flush=True,
        )
    print(
        f"\n{len(cases)} single-paper questions, {args.candidates} candidate sentences each, "
        f"{reading.SENTENCES} shown: every key fact shown by the scorer {by_scorer}, "
        f"by query likelihood {by_likelihood}; the model read {tokens / max(len(cases), 1):.0f} tokens "
        f"in {seconds / max(len(cases), 1):.1f} s a question"
    )


if __name__ == "__main__":
    main()
