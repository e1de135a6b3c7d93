"""Retrieval against corpus size: bench/grounded.py's retrieval part with distractors added.

    python bench/distractors.py [--work /tmp/chatpapers-distractors] [--modes dense,hybrid]
                                [--synthetic-chunks 200000] [--show 15]

The same turns as `python bench/grounded.py` (every turn of eval/grounded/cases through the
`search` tool, 10 papers; gold paper in the top 5 and MRR over the answerable turns), measured on
a corpus that grows in stages, each adding to the one before:

  a. the 48 PDFs of ../shared/corpus/pdfs: the benchmark as it is (ingested once into the
     database `grounded` under --work, as bench/grounded.py does; later runs reuse it);
  b. + full-text distractors: every other PDF of ../shared/corpus through the product's ingest
     (extra/: 5 non-CS papers; edge/: the hostile files, of which ingest keeps what it can read);
  c. + paper-level distractors: the real arXiv metadata records that bench/inbox.py loads (Kaggle
     snapshot head, Atom and OAI-PMH responses, .abs records and listings, metadata.jsonl) and that
     are not stored yet, as metadata-only papers (a title + abstract vector, no chunks): the Kaggle
     head through the product's own `backfill_snapshot`, the others the same way
     (`copy_metadata_only`). `search` ranks papers by their title + abstract vector (and, hybrid,
     by the words of title and abstract) beside their best chunk, so these can displace gold papers;
  d. with --synthetic-chunks N: + SYNTHETIC full-text papers, N chunks in all, made by
     bench/scale.py's generator from stage a's 48 papers (their stored chunks embedded again):
     each follows one of them, its paper and chunk vectors mixing that paper's real vectors
     (weight 0.55-0.9) with a partner paper's, plus noise. Vectors only: the title names the two
     papers it mixes and there is no abstract, so hybrid's lexical list never sees them (its row is
     an upper bound). All 48 papers are gold papers, so these are close relatives of the gold
     ones: a harder test for the vector lists than a real corpus of that size would set.

Each run copies `grounded` to a scratch database `distractors` (dropped first), so stage a is
always the 48 PDFs alone. For every turn whose gold paper left the top 5 or ranks lower after a
stage (against stage a, per mode), it prints the question and what entered the top 5. Writes
bench/out/distractors.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.tools import ToolContext
from agent.tools.search import Search, SearchInput
from bench import scale
from bench.distractor_corpus import add_full_text, add_metadata_only
from bench.grounded import CORPUS, ROOT, corpus_services
from bench.inbox import load_papers
from chatpapers.services import Services
from corpus import papers
from corpus.db import drop_database, ensure_database
from corpus.embedded import start_embedded
from eval.grounded.cases import load_cases
from eval.grounded.run import TurnScore, retrieve_cases, summary
from ingest.pipeline import paper_text

BASE_DB = "grounded"  # bench/grounded.py's database: the 48 PDFs
SCRATCH_DB = "distractors"
TOP = 5
# where a paper came from, by stage
CORPUS_PAPER, FULL_TEXT, METADATA_ONLY, SYNTHETIC = "corpus", "full-text", "metadata-only", "synthetic"


@dataclass
class Stage:
    name: str
    papers_with_text: int
    metadata_only: int
    chunks: int
    added_s: float  # time to add this stage's distractors
    scores: dict[str, list[TurnScore]] = field(default_factory=dict)  # mode -> every turn

    def figures(self, origin: dict[str, str], follows: dict[str, str] | None = None) -> dict[str, dict]:
        """Per mode; with `follows` (synthetic paper -> the real paper it follows), also the figures
        with each turn's own gold papers' followers taken out of its ranking (near-copies of the
        gold paper: which of the two comes first says little)."""
        out = {}
        for mode, scores in self.scores.items():
            answerable = [s for s in scores if s.answerable]
            figures = summary(scores)
            intruded = [
                s for s in answerable if any(origin.get(p) != CORPUS_PAPER for p in s.retrieved[:TOP])
            ]
            out[mode] = {
                "recall_at_5": figures["recall_at_5"],
                "mrr": figures["mrr"],
                "answerable_turns": len(answerable),
                "turns": figures["turns"],
                # answerable turns with at least one distractor among their top 5
                "distractor_in_top5": len(intruded) / max(len(answerable), 1),
            }
            if follows:
                apart = summary(
                    [
                        s.model_copy(
                            update={"retrieved": [p for p in s.retrieved if follows.get(p) not in s.gold]}
                        )
                        for s in scores
                    ]
                )
                out[mode] |= {
                    "recall_at_5_without_own_followers": apart["recall_at_5"],
                    "mrr_without_own_followers": apart["mrr"],
                }
        return out


def counts(services: Services) -> tuple[int, int, int]:
    """(papers with text, metadata-only papers, chunks)."""
    with services.db.connect(autocommit=True) as conn:
        total = papers.corpus_counts(conn)
        with_text = papers.count_papers_with_chunks(conn)
    return with_text, total["papers"] - with_text, total["chunks"]


def origins(services: Services, known: dict[str, str], label: str) -> dict[str, str]:
    """`known` with every paper stored since labelled (metadata-only ones as such)."""
    with services.db.connect(autocommit=True) as conn:
        stored = papers.chunk_counts(conn)
    return known | {pid: label if n else METADATA_ONLY for pid, n in stored if pid not in known}


def measure(services: Services, name: str, modes: list[str], added_s: float) -> Stage:
    with services.db.connect(autocommit=True) as conn:
        papers.analyze(conn)  # fresh statistics, as autovacuum would have them after a load
    stage = Stage(name, *counts(services), added_s=added_s)
    for mode in modes:
        ctx = ToolContext(connect=services.db.pooled, embedder=services.embedder, hybrid=mode == "hybrid")
        stage.scores[mode] = retrieve_cases(ctx, load_cases())
    return stage


# ---- the distractors -------------------------------------------------------------------------------


def synthetic_base(services: Services, paper_ids: set[str]) -> tuple[scale.Base, list[str]]:
    """bench/scale.py's real material, from these stored papers: their chunks as stored (embedded
    again, no PDF read twice) and their paper vectors as ingest makes them; and the papers' ids."""
    with services.db.connect(autocommit=True) as conn:
        rows = [r for r in papers.chunk_texts(conn) if r[0] in paper_ids]  # by paper, in reading order
        records = papers.get_papers(conn, sorted(paper_ids))
    ids = sorted(records)
    first = {pid: text for pid, _, text in reversed(rows)}  # each paper's opening chunk
    paper_of = np.asarray([ids.index(pid) for pid, _, _ in rows])
    counts = np.bincount(paper_of, minlength=len(ids))
    base = scale.Base(
        vectors=services.embedder.embed([text for _, _, text in rows]),
        texts_z=[papers.pack_text(text) for _, _, text in rows],
        paper_of=paper_of,
        starts=np.concatenate([[0], np.cumsum(counts)[:-1]]),
        counts=counts,
        paper_vectors=services.embedder.embed(
            [paper_text(records[p].title, records[p].abstract, first.get(p, "")) for p in ids]
        ),
        titles=[records[p].title for p in ids],
        abstracts=[records[p].abstract for p in ids],
        authors=[records[p].authors for p in ids],
        queries=[],
    )
    return base, ids


def add_synthetic(
    services: Services, base: scale.Base, ids: list[str], n_chunks: int, seed: int
) -> dict[str, str]:
    """bench/scale.py's synthetic papers, vectors only: a title that names the papers each one
    mixes and nothing else its lexical index could match (a real record's words, repeated over
    thousands of papers, would flood the lexical list). Returns paper -> the real paper it follows."""
    plan = scale.paper_plan(base, n_chunks, seed)
    for i, p in enumerate(plan):
        p.meta.paper_id = f"synthetic.{i:06d}"  # no clash with a real id
        p.meta.title = f"[synthetic] {ids[p.base]} + {ids[p.partner]}"
        p.meta.abstract, p.meta.authors = None, []
    vectors = scale.paper_vectors(base, plan, seed)
    with services.db.connect(autocommit=True) as conn, conn.transaction():
        papers.copy_papers(
            conn,
            (
                papers.BulkPaper(
                    meta=p.meta, title=p.meta.title or "", source="arxiv", n_chunks=p.n_chunks, vector=v
                )
                for p, v in zip(plan, vectors, strict=True)
            ),
        )
        done = 0
        for owner, seq, first, chunk_vectors in scale.chunk_batches(base, plan, seed):
            done += papers.copy_chunks(
                conn,
                (
                    (plan[o].meta.paper_id, int(s), None, None, base.texts_z[f], v)
                    for o, s, f, v in zip(
                        owner.tolist(), seq.tolist(), first.tolist(), chunk_vectors, strict=True
                    )
                ),
            )
            print(f"\r  synthetic: {done:,} / {n_chunks:,} chunks", end="", flush=True)
        print()
        papers.fill_lexical_index(conn)
    return {p.meta.paper_id: ids[p.base] for p in plan}


# ---- reading the results -----------------------------------------------------------------------------


def gold_rank(score: TurnScore) -> int | None:
    ranks = [score.retrieved.index(p) + 1 for p in score.gold if p in score.retrieved]
    return min(ranks) if ranks else None


def _rank(rank: int | None) -> str:
    return str(rank) if rank else ">10"


@dataclass
class Drop:
    mode: str
    case_id: str
    turn: int
    question: str
    gold: list[str]
    rank_before: int | None
    rank_after: int | None
    recall_before: float
    recall_after: float
    entered: list[dict]  # papers that entered the top 5, with their origin, title and relevance
    gold_relevance: dict[str, float]


def drops(
    services: Services, before: Stage, after: Stage, origin: dict[str, str], follows: dict[str, str]
) -> list[Drop]:
    """Turns whose gold paper left the top 5 or ranks lower, with what entered the top 5 (the
    relevance shown is the search tool's: the best cosine of a paper's title + abstract vector
    or of one of its chunks; a synthetic paper's, which real paper it follows)."""
    found = []
    for mode, scores in after.scores.items():
        ctx = ToolContext(connect=services.db.pooled, embedder=services.embedder, hybrid=mode == "hybrid")
        for old, new in zip(before.scores[mode], scores, strict=True):
            if not new.answerable:
                continue
            worse = (new.reciprocal_rank or 0) < (old.reciprocal_rank or 0)
            if not worse and (new.recall_at_5 or 0) >= (old.recall_at_5 or 0):
                continue
            listing = Search().run(ctx, SearchInput(query=new.question, k=10))
            relevance = dict(zip(listing.paper_ids(), listing.scores, strict=True))
            titles = {p.paper_id: p.title for p in listing.papers}
            entered = [
                {
                    "paper_id": p,
                    "origin": origin.get(p, "?"),
                    "title": titles.get(p, ""),
                    "relevance": relevance.get(p),
                    "follows": follows.get(p),
                }
                for p in new.retrieved[:TOP]
                if p not in old.retrieved[:TOP] and p not in new.gold
            ]
            found.append(
                Drop(
                    mode=mode,
                    case_id=new.case_id,
                    turn=new.turn,
                    question=new.question,
                    gold=new.gold,
                    rank_before=gold_rank(old),
                    rank_after=gold_rank(new),
                    recall_before=old.recall_at_5 or 0.0,
                    recall_after=new.recall_at_5 or 0.0,
                    entered=entered,
                    gold_relevance={g: relevance[g] for g in new.gold if g in relevance},
                )
            )
    return found


def gains(before: Stage, after: Stage) -> dict[str, int]:
    """Per mode, turns whose gold paper ranks higher than before (reshuffles cut both ways)."""
    return {
        mode: sum(
            (new.reciprocal_rank or 0) > (old.reciprocal_rank or 0)
            for old, new in zip(before.scores[mode], scores, strict=True)
            if new.answerable
        )
        for mode, scores in after.scores.items()
    }


def print_table(stages: list[Stage], modes: list[str], origin: dict[str, str]) -> None:
    rows = [
        ["corpus", "papers with text", "metadata-only", "chunks"]
        + [f"{m} {k}" for m in modes for k in ("gold@5", "MRR", "distractor in top 5")]
        + ["turns"]
    ]
    for stage in stages:
        figures = stage.figures(origin)
        rows.append(
            [stage.name, f"{stage.papers_with_text:,}", f"{stage.metadata_only:,}", f"{stage.chunks:,}"]
            + [
                f"{figures[m][k]:.2f}" if k != "distractor_in_top5" else f"{figures[m][k]:.0%}"
                for m in modes
                for k in ("recall_at_5", "mrr", "distractor_in_top5")
            ]
            + [str(figures[modes[0]]["answerable_turns"])]
        )
    print("\n| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]))
    for row in rows[1:]:
        print("| " + " | ".join(row) + " |")


def print_drops(name: str, found: list[Drop], gained: dict[str, int], show: int) -> None:
    for mode in gained:
        mine = [d for d in found if d.mode == mode]
        lost = [d for d in mine if d.recall_after < d.recall_before]
        by_distractor = [d for d in mine if any(e["origin"] != CORPUS_PAPER for e in d.entered)]
        print(
            f"\n{name}, {mode}: {len(mine)} turns rank their gold lower ({len(lost)} lose a gold paper"
            f" from the top 5), {gained.get(mode, 0)} higher; a distractor entered the top 5 of"
            f" {len(by_distractor)} of them"
        )
        synthetic = [(e, d) for d in mine for e in d.entered if e["follows"]]
        if synthetic:
            own = sum(e["follows"] in d.gold for e, d in synthetic)
            print(
                f"  {len(synthetic)} synthetic papers entered those top 5s; {own} of them follow the turn's"
                f" own gold paper, {len(synthetic) - own} another paper"
            )
        for d in sorted(mine, key=lambda d: (d.recall_after - d.recall_before, d.case_id))[:show]:
            gold = ", ".join(
                f"{g} ({d.gold_relevance[g]:.2f})" if g in d.gold_relevance else g for g in d.gold
            )
            print(
                f"  {d.case_id} t{d.turn}: gold {gold} rank {_rank(d.rank_before)} -> {_rank(d.rank_after)}"
                f" | {d.question[:110]}"
            )
            for e in d.entered:
                rel = f"{e['relevance']:.2f}" if e["relevance"] is not None else "?"
                print(f"      + {e['paper_id']} [{e['origin']}] {rel} {e['title'][:80]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatpapers-distractors"))
    parser.add_argument("--modes", default="dense,hybrid", help="retrieval modes to compare")
    parser.add_argument(
        "--synthetic-chunks", type=int, default=0, help="stage d: this many chunks of synthetic papers"
    )
    parser.add_argument("--seed", type=int, default=1, help="of the synthetic papers")
    parser.add_argument("--show", type=int, default=15, help="turns shown per stage and mode")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out/distractors.json")
    args = parser.parse_args()
    started = time.perf_counter()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]

    corpus_services(args.work).db.close()  # the 48 PDFs, ingested on the first run
    admin = start_embedded(args.work / "pg")
    drop_database(admin, SCRATCH_DB)
    ensure_database(admin, SCRATCH_DB, template=BASE_DB)
    services = Services.from_environment(
        env_file=None, database_url=make_conninfo(admin, dbname=SCRATCH_DB), data_dir=args.work
    )
    services.embedder.embed_query("warm up")

    stages = [measure(services, "a. 48 PDFs", modes, 0.0)]
    origin = origins(services, {}, CORPUS_PAPER)
    report: dict[str, object] = {}
    follows: dict[str, str] = {}
    diagnosis: dict[str, dict] = {}

    def measured(name: str, label: str, took: float) -> None:
        """Measure the stage just added and diagnose its drops while the corpus is at that stage."""
        nonlocal origin
        origin = origins(services, origin, label)
        stage = measure(services, name, modes, took)
        stages.append(stage)
        found = drops(services, stages[0], stage, origin, follows)
        diagnosis[name] = {"gained": gains(stages[0], stage), "dropped": [d.__dict__ for d in found]}

    t0 = time.perf_counter()
    ingested = add_full_text(services)
    took = time.perf_counter() - t0
    report["full_text"] = ingested.model_dump(mode="json")
    print(
        f"full-text distractors: {ingested.new} papers, {ingested.chunks} chunks in {took:.0f} s; skipped"
        f" {ingested.skip_reasons}, empty {ingested.empty}, failed {len(ingested.failed)}",
        flush=True,
    )
    measured("b. + full-text distractors", FULL_TEXT, took)

    t0 = time.perf_counter()
    added = add_metadata_only(services, load_papers(CORPUS))
    took = time.perf_counter() - t0
    report["metadata_only"] = added
    print(f"paper-level distractors: {added} in {took:.0f} s", flush=True)
    measured("c. + paper-level distractors", METADATA_ONLY, took)

    if args.synthetic_chunks:
        t0 = time.perf_counter()
        base, ids = synthetic_base(services, {p for p, o in origin.items() if o == CORPUS_PAPER})
        print(f"synthetic: {len(base.vectors):,} real chunks of {len(ids)} papers embedded again", flush=True)
        follows = add_synthetic(services, base, ids, args.synthetic_chunks, args.seed)
        took = time.perf_counter() - t0
        report["synthetic"] = {"papers": len(follows), "chunks": args.synthetic_chunks, "seed": args.seed}
        print(
            f"synthetic distractors: {len(follows)} papers, {args.synthetic_chunks:,} chunks in {took:.0f} s",
            flush=True,
        )
        measured("d. + SYNTHETIC full-text papers", SYNTHETIC, took)

    print_table(stages, modes, origin)
    if follows:
        apart = stages[-1].figures(origin, follows)
        print(
            f"{stages[-1].name}, each turn's own gold papers' followers taken out of its 10 papers"
            " (a lower bound: a gold paper they pushed beyond the 10 stays lost): "
            + "; ".join(
                f"{m} gold@5 {apart[m]['recall_at_5_without_own_followers']:.2f}"
                f" MRR {apart[m]['mrr_without_own_followers']:.2f}"
                for m in modes
            )
        )
    for name, found in diagnosis.items():
        print_drops(name, [Drop(**d) for d in found["dropped"]], found["gained"], args.show)

    run_s = time.perf_counter() - started
    print(f"\nwhole run {run_s:.0f} s")
    figures = {
        "stages": [
            {
                "name": s.name,
                "papers_with_text": s.papers_with_text,
                "metadata_only": s.metadata_only,
                "chunks": s.chunks,
                "added_s": s.added_s,
                "figures": s.figures(origin, follows if s is stages[-1] else None),
            }
            for s in stages
        ],
        "added": report,
        "diagnosis": diagnosis,
        "turns": {s.name: {m: [t.model_dump() for t in ts] for m, ts in s.scores.items()} for s in stages},
        "distractors": {o: sorted(p for p, x in origin.items() if x == o) for o in set(origin.values())},
        "synthetic_follows": follows,
        "run_s": run_s,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
