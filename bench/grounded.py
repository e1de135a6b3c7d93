"""The grounded-QA benchmark (eval/grounded/cases): prints its tables, writes bench/out/.

    python bench/grounded.py                        # retrieval only: dense vs hybrid, all cases
    python bench/grounded.py --answers 12           # + 12 cases answered by the local model
    python bench/grounded.py --answers all --modes hybrid,dense

The corpus is ../shared/corpus/pdfs with its metadata, ingested once into an embedded database
under --work (reused by later runs). Retrieval only takes seconds; answers take about a minute a
turn with the local model on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from psycopg.conninfo import make_conninfo

from agent.session import ChatService
from agent.tools import ToolContext
from chatpapers.services import Services
from corpus import papers
from corpus.db import ensure_database
from corpus.embedded import start_embedded
from eval.grounded.cases import Case, load_cases
from eval.grounded.run import TurnScore, answer_cases, retrieve_cases, summary
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def corpus_services(work: Path, **overrides: object) -> Services:
    """Services over the benchmark corpus, ingesting it on the first run."""
    admin = start_embedded(work / "pg")
    ensure_database(admin, "grounded")
    services = Services.from_environment(
        env_file=None, database_url=make_conninfo(admin, dbname="grounded"), data_dir=work, **overrides
    )
    with services.db.connect(autocommit=True) as conn:
        have = papers.count_papers(conn)
    if have < 48:
        print("ingesting ../shared/corpus/pdfs (once) ...", flush=True)
        report = IngestPipeline(services.settings, services.db, services.embedder).run(
            pdf_dir_items(CORPUS / "pdfs", CORPUS / "metadata.jsonl")
        )
        print(f"  {report.new} papers, {report.chunks} chunks", flush=True)
    return services


def sample(cases: list[Case], n: int | None) -> list[Case]:
    """The first n cases, taken in turn from each kind so that every kind is represented."""
    if n is None:
        return cases
    by_kind: dict[str, list[Case]] = {}
    for case in cases:
        by_kind.setdefault(case.kind, []).append(case)
    picked: list[Case] = []
    while len(picked) < n and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(picked) < n:
                picked.append(by_kind[kind].pop(0))
    return picked


FIGURES = [
    ("recall_at_5", "gold in top 5"),
    ("mrr", "MRR"),
    ("gold_cited", "gold cited"),
    ("followups_resolved", "follow-ups resolved"),
    ("abstention_correct", "abstention correct"),
    ("supported_sentences", "supported sentences"),
    ("draft_supported_sentences", "supported sentences of the draft"),
    ("revised_answers", "answers revised"),
    ("seconds_p50", "s/answer p50"),
    ("seconds_p95", "s/answer p95"),
    ("seconds_max", "s/answer max"),
]


def table(title: str, results: dict[str, list[TurnScore]], keys: tuple[str, ...] | None = None) -> str:
    modes = list(results)
    sums = {mode: summary(scores) for mode, scores in results.items()}
    lines = [f"\n{title}", f"| figure | {' | '.join(modes)} |", "|---|" + "---|" * len(modes)]
    for key, label in FIGURES:
        if keys is not None and key not in keys:
            continue
        values = [sums[m][key] for m in modes]
        if all(v is None for v in values):
            continue
        lines.append(f"| {label} | " + " | ".join("–" if v is None else f"{v:.2f}" for v in values) + " |")
    turns = sums[modes[0]]["turns"]
    lines.append(f"({turns} turns; errors: " + ", ".join(f"{m} {sums[m]['errors']}" for m in modes) + ")")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatpapers-grounded"))
    parser.add_argument("--modes", default="dense,hybrid", help="retrieval modes to compare")
    parser.add_argument("--answers", default=None, help="N cases (or 'all') answered by the local model")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out")
    args = parser.parse_args()

    cases = load_cases()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    base = corpus_services(args.work)
    base.embedder.embed_query("warm up")
    figures: dict[str, dict] = {"retrieval": {}, "answers": {}, "turns": {}}

    retrieval = {}
    for mode in modes:
        ctx = ToolContext(connect=base.db.pooled, embedder=base.embedder, hybrid=mode == "hybrid")
        retrieval[mode] = retrieve_cases(ctx, cases)
        figures["retrieval"][mode] = summary(retrieval[mode])
    print(
        table(
            f"Retrieval only ({len(cases)} cases, the search tool on each question)",
            retrieval,
            keys=("recall_at_5", "mrr"),
        )
    )

    if args.answers:
        chosen = sample(cases, None if args.answers == "all" else int(args.answers))
        answered = {}
        for mode in modes:
            services = base.with_llm(args.llm)
            service = ChatService(
                services.db,
                services.embedder,
                services.llm(),
                services.settings.max_steps,
                hybrid=mode == "hybrid",
            )
            print(f"\nanswering {len(chosen)} cases ({mode}) ...", flush=True)
            answered[mode] = answer_cases(
                service,
                chosen,
                on_turn=lambda s: print(
                    f"  {s.case_id} t{s.turn} {s.seconds:5.1f}s cited={s.cited[:3]} gold={s.gold}"
                    f"{' ABSTAINED' if s.abstained else ''}{' ERROR ' + s.error if s.error else ''}",
                    flush=True,
                ),
            )
            figures["answers"][mode] = summary(answered[mode])
            figures["turns"][mode] = [s.model_dump() for s in answered[mode]]
        print(table(f"Answers ({len(chosen)} cases, model {args.llm})", answered))

    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"grounded-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(figures, indent=2))
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
