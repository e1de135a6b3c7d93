"""The grounded-QA benchmark (eval/grounded/cases): prints its tables, writes bench/out/.

    python bench/grounded.py                        # retrieval only: dense vs hybrid, all cases
    python bench/grounded.py --answers 12           # + 12 cases answered by the local model
    python bench/grounded.py --answers all --systems agent,narrow --kinds single

The corpus is ../shared/corpus/pdfs with its metadata, ingested once into an embedded database
under --work (reused by later runs). Retrieval only takes seconds; answers take 10-60 s a turn with
the local model on 2 cores. Answers are resumable: every answered case is appended to
<work>/answers-<system>-<mode>-<llm>.jsonl as it finishes, and a later run with the same
arguments answers only the cases not there yet (--fresh starts over). The headline is whether
answers state the facts asked (each turn's answer key), per kind of turn.
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
from bench.distractor_corpus import with_distractors
from chatpapers.services import Services
from corpus import papers
from corpus.db import ensure_database
from corpus.embedded import start_embedded
from eval.grounded.cases import Case, load_cases
from eval.grounded.run import TurnScore, answer_cases, evidence_cases, retrieve_cases, summary
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
    ("answer_correct", "**answer correct** (states every key fact)"),
    ("answer_correct_single", "answer correct: single-paper"),
    ("answer_correct_follow-up", "answer correct: follow-ups"),
    ("answer_correct_listing", "answer correct: listing (conversation openings)"),
    ("answer_correct_cross", "answer correct: cross-paper"),
    ("key_facts_stated", "key facts stated"),
    ("listed_precision", "listed precision (cited papers that fit)"),
    ("quoted_answers", "answers with quotes in place of the model's text"),
    ("recall_at_5", "gold in top 5"),
    ("mrr", "MRR"),
    ("gold_cited", "gold cited"),
    ("followups_resolved", "follow-ups resolved"),
    ("abstention_correct", "abstention correct"),
    ("draft_supported_sentences", "supported sentences of the model's own text"),
    ("supported_sentences", "supported sentences as shown"),
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
    keyed = ", ".join(f"{m} {sums[m]['keyed_turns']}" for m in modes)
    lines.append(
        f"({turns} turns; with an answer key: {keyed}; errors: "
        + ", ".join(f"{m} {sums[m]['errors']}" for m in modes)
        + ")"
    )
    return "\n".join(lines)


def answers_file(work: Path, system: str, mode: str, llm: str) -> Path:
    return work / f"answers-{system}-{mode}-{llm.replace('/', '_').replace(':', '_')}.jsonl"


def answered_before(path: Path, turns_of: dict[str, int]) -> dict[str, list[TurnScore]]:
    """Every case answered whole by an earlier run, chosen this time or not (`turns_of`: each
    case's number of turns); a case cut off half way is answered again."""
    if not path.exists():
        return {}
    turns: dict[str, list[TurnScore]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            score = TurnScore.model_validate_json(line)
            turns.setdefault(score.case_id, []).append(score)
    return {cid: ts for cid, ts in turns.items() if len(ts) == turns_of.get(cid)}


def answer_resumably(
    service: ChatService, cases: list[Case], path: Path, fresh: bool, turns_of: dict[str, int]
) -> list[TurnScore]:
    """The chosen cases' answers: those in `path` from earlier runs, the others answered now and
    appended. `fresh` answers the chosen cases again; the file keeps every other case's answers
    (a run of `--kinds single` once rewrote it with the single-paper cases alone)."""
    done = answered_before(path, turns_of)
    if fresh:
        for case in cases:
            done.pop(case.id, None)
    todo = [c for c in cases if c.id not in done]
    print(
        f"  {len(cases) - len(todo)} cases answered before ({path.name}), {len(todo)} to answer", flush=True
    )
    # rewritten so that it holds each whole case once, in the order answered
    path.write_text("".join(s.model_dump_json() + "\n" for ts in done.values() for s in ts))
    for case in todo:
        scores = answer_cases(service, [case], on_turn=_show)
        with path.open("a") as out:
            out.writelines(s.model_dump_json() + "\n" for s in scores)
        done[case.id] = scores
    return [s for c in cases for s in done[c.id]]


def _show(s: TurnScore) -> None:
    stated = f" key {sum(s.key_stated)}/{len(s.key)}" if s.key else ""
    print(
        f"  {s.case_id} t{s.turn} {s.seconds:5.1f}s{stated} cited={s.cited[:3]} gold={s.gold}"
        f"{' ABSTAINED' if s.abstained else ''}{' ERROR ' + s.error if s.error else ''}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatpapers-grounded"))
    parser.add_argument("--modes", default="dense,hybrid", help="retrieval modes to compare")
    parser.add_argument("--answers", default=None, help="N cases (or 'all') answered by the local model")
    parser.add_argument(
        "--systems", default="narrow", help="readers to compare: narrow (the default), agent (ReAct steps)"
    )
    parser.add_argument(
        "--kinds", default=None, help="only cases of these kinds (single,cross,conversation,...)"
    )
    parser.add_argument("--answer-mode", default="hybrid", help="retrieval mode of the answered runs")
    parser.add_argument("--cases", default=None, help="only these cases, by id (conv-16,single-2010.11929-a)")
    parser.add_argument(
        "--fresh", action="store_true", help="answer the chosen cases again (the file keeps the others)"
    )
    parser.add_argument(
        "--evidence",
        type=int,
        default=0,
        metavar="N",
        help="also: key facts found in the N sentences the narrow reader selects from the gold paper",
    )
    parser.add_argument(
        "--distractors",
        action="store_true",
        help="first add the distractors of bench/distractors.py's stage c (once; the README's full runs)",
    )
    parser.add_argument("--llm", default="local")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out")
    args = parser.parse_args()

    every_case = load_cases()
    cases = every_case
    if args.cases:
        wanted = {x.strip() for x in args.cases.split(",") if x.strip()}
        unknown = wanted - {c.id for c in every_case}
        if unknown:
            parser.error(f"no case with the id {', '.join(sorted(unknown))} (see eval/grounded/cases)")
        cases = [c for c in cases if c.id in wanted]
    if args.kinds:
        cases = [c for c in cases if c.kind in args.kinds.split(",")]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    base = corpus_services(args.work)
    if args.distractors:
        with_distractors(base)
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

    if args.evidence:
        found = evidence_cases(
            ToolContext(connect=base.db.pooled, embedder=base.embedder), cases, args.evidence
        )
        facts, stated = sum(f for *_, f, _ in found), sum(s for *_, s in found)
        whole = sum(f == s for *_, f, s in found)
        print(
            f"\nNarrow reader's evidence ({args.evidence} sentences of the gold paper, {len(found)} turns):"
            f" key facts in it {stated}/{facts} = {stated / max(facts, 1):.2f}; turns with every key fact"
            f" {whole}/{len(found)} = {whole / max(len(found), 1):.2f}"
        )
        figures["evidence"] = {"sentences": args.evidence, "turns": found}

    if args.answers:
        chosen = sample(cases, None if args.answers == "all" else int(args.answers))
        answered = {}
        for system in [x.strip() for x in args.systems.split(",") if x.strip()]:
            services = base.with_llm(args.llm)
            service = ChatService(
                services.db,
                services.embedder,
                services.llm(),
                services.settings.max_steps,
                hybrid=args.answer_mode == "hybrid",
                reader=system,
            )
            print(f"\nanswering {len(chosen)} cases ({system}, {args.answer_mode}) ...", flush=True)
            path = answers_file(args.work, system, args.answer_mode, args.llm)
            answered[system] = answer_resumably(
                service, chosen, path, args.fresh, {c.id: len(c.turns) for c in every_case}
            )
            figures["answers"][system] = summary(answered[system])
            figures["turns"][system] = [s.model_dump() for s in answered[system]]
        print(table(f"Answers ({len(chosen)} cases, model {args.llm}, {args.answer_mode})", answered))

    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"grounded-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(figures, indent=2))
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
