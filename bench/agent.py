"""Agent benchmark: prints its figures (not a timed test).

    python bench/agent.py [--local N]

Ingests a corpus subset into a scratch embedded database (or uses DATABASE_URL), then measures
1. non-LLM overhead per turn with a scripted model (prompt building, tool calls, DB, persistence):
   median and p95 over 50 turns of search -> ask-free paper tool -> answer;
2. each DB-backed tool's p50 / p95 over 100 calls;
3. with `--local N`: seconds per answered question with the embedded local model (N questions).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.events import Final
from agent.llm.scripted import ScriptedModel, step
from agent.session import ChatService
from agent.tools import ToolContext
from agent.tools.context import ChunkInput, PriorContext, SubsequentContext
from agent.tools.paper import InformationFromPaper, InformationInput
from agent.tools.search import RecentInput, RecentPapers, Search, SearchInput
from bench.figures import pct
from bench.scratch import scratch_services
from corpus import chats as chat_store
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "residual learning",
    "attention is all you need",
    "knowledge distillation",
    "adaptive learning rate",
    "vision transformer image patches",
    "music transcription",
    "memory efficient training of large models",
    "retrieval augmented language models",
    "sound event detection",
    "reinforcement learning planning",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", type=Path, default=ROOT.parent / "shared/corpus/pdfs")
    parser.add_argument("--local", type=int, default=0, help="questions to time with the local model")
    args = parser.parse_args()

    services, _ = scratch_services("chatpapers-bench-agent-")
    settings, db, embedder = services.settings, services.db, services.embedder
    report = IngestPipeline(settings, db, embedder).run(
        pdf_dir_items(args.pdf_dir, ROOT.parent / "shared/corpus/metadata.jsonl")
    )
    print(f"corpus: {report.new} papers, {report.chunks} chunks")
    ctx = ToolContext(connect=db.pooled, embedder=embedder)
    embedder.embed_query("warm up")

    print("tools, 100 calls each (ms):")
    tools = {
        "search": lambda i: Search().run(ctx, SearchInput(query=QUERIES[i % 10])),
        "get_recent_papers": lambda i: RecentPapers().run(ctx, RecentInput(query=QUERIES[i % 10])),
        "get_information_from_paper": lambda i: InformationFromPaper().run(
            ctx, InformationInput(paper_id="1706.03762", query=QUERIES[i % 10])
        ),
        "get_prior_context": lambda i: PriorContext().run(
            ctx, ChunkInput(chunk_id=f"1706.03762#{1 + i % 40}")
        ),
        "get_subsequent_context": lambda i: SubsequentContext().run(
            ctx, ChunkInput(chunk_id=f"1706.03762#{i % 40}")
        ),
    }
    for name, call in tools.items():
        times = []
        for i in range(100):
            started = time.perf_counter()
            call(i)
            times.append((time.perf_counter() - started) * 1000)
        print(f"  {name:28} p50 {pct(times, 50):6.1f}   p95 {pct(times, 95):6.1f}")

    turns = []
    for i in range(50):
        model = ScriptedModel(
            [
                step("search", query=QUERIES[i % 10]),
                step("get_information_from_paper", paper_id="1706.03762", query=QUERIES[i % 10]),
                step("final_answer"),
                "An answer citing arXiv:1706.03762.",
            ]
        )
        service = ChatService(db, embedder, model)
        with db.connect(autocommit=True) as conn:
            chat = chat_store.create_chat(conn, "bench")
        started = time.perf_counter()
        events = list(service.ask(chat.chat_id, "bench", f"question {i} about {QUERIES[i % 10]}"))
        turns.append((time.perf_counter() - started) * 1000)
        assert isinstance(events[-1], Final)
    print(
        f"non-LLM overhead per turn (scripted model, 2 tool steps + persistence): "
        f"median {statistics.median(turns):.1f} ms, p95 {pct(turns, 95):.1f} ms"
    )

    if args.local:
        model = services.with_llm("local").llm()
        service = ChatService(db, embedder, model)
        questions = [
            "What problem does residual learning solve, according to the ResNet paper?",
            "How does the Transformer replace recurrence?",
            "What is knowledge distillation?",
            "How does ADADELTA choose learning rates?",
            "How does the Vision Transformer process images?",
        ]
        seconds = []
        for q in questions[: args.local]:
            with db.connect(autocommit=True) as conn:
                chat = chat_store.create_chat(conn, "bench")
            started = time.perf_counter()
            events = list(service.ask(chat.chat_id, "bench", q))
            seconds.append(time.perf_counter() - started)
            final = events[-1]
            print(f"  {seconds[-1]:6.1f} s  {q}  -> cites {getattr(final, 'citations', None)}")
        print(
            f"local model: median {statistics.median(seconds):.1f} s per answered question (n={len(seconds)})"
        )


if __name__ == "__main__":
    main()
