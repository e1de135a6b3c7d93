"""Where the narrow reader loses a question's key facts before the model sees them (no model).

For every key fact of the single-paper cases: is it stated in one of its paper's chunks, in the
passages `best_passages` keeps, in the sentences `select_sentences` keeps? A lost fact's best
rank among the kept passages' sentences is printed, so a change of the sentence scoring can be
judged by how far it moves them. Run on a benchmark work folder that `bench/grounded.py` built:

    .venv/bin/python bench/sentence_stages.py --work /work/grounded
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import reading
from agent.tools import ToolContext
from agent.tools.paper import InformationFromPaper, InformationInput
from bench.grounded import corpus_services
from corpus import papers
from eval.grounded.cases import load_cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatpapers-grounded"))
    parser.add_argument("--passages", type=int, default=reading.PASSAGES)
    parser.add_argument("--sentences", type=int, default=reading.SENTENCES)
    args = parser.parse_args()
    services = corpus_services(args.work)
    embedder = services.embedder
    ctx = ToolContext(connect=services.db.pooled, embedder=embedder)
    cases = [c for c in load_cases() if c.kind == "single"]
    total = in_chunks = in_passages = in_sentences = 0
    for case in cases:
        question = case.turns[0].question
        vector = embedder.embed_query(question)
        for paper in dict.fromkeys(f.paper for f in case.turns[0].key):
            # read as the reader's tool reads it: its kept passages and sentences, once per paper
            read = InformationFromPaper().run(
                ctx,
                InformationInput(paper_id=paper, query=question, k=args.passages, sentences=args.sentences),
            )
            with ctx.connect() as conn:
                every = papers.search_chunks(conn, vector, k=read.paper.n_chunks, paper_id=paper)
            chosen = " ".join(s.text for s in read.sentences)
            texts = [t for c in read.chunks for t in reading.split_sentences(c.text)]
            ranked: list[str] | None = None  # the kept passages' sentences, best first, when needed
            for fact in (f for f in case.turns[0].key if f.paper == paper):
                total += 1
                in_chunks += any(fact.stated_in(c.text) for c in every)
                if not any(fact.stated_in(c.text) for c in read.chunks):
                    print(f"  passage  {case.id}: {fact.fact[:70]}")
                    continue
                in_passages += 1
                if fact.stated_in(chosen):
                    in_sentences += 1
                    continue
                if ranked is None:
                    scores = reading.sentence_scores(question, texts, embedder, vector)
                    ranked = [texts[i] for i in sorted(range(len(texts)), key=lambda i: -scores[i])]
                rank = next((r for r, t in enumerate(ranked, 1) if fact.stated_in(t)), None)
                print(f"  sentence {case.id}: rank {rank} of {len(texts)}: {fact.fact[:60]}")
    print(
        f"key facts {total}: in a chunk {in_chunks}, in the {args.passages} passages {in_passages}, "
        f"in the {args.sentences} sentences {in_sentences}"
    )


if __name__ == "__main__":
    main()
