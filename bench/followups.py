"""Follow-ups by description ("the Atari one", "the one from Google"): which listed paper the
resolver picks, on cases written by someone else (eval/grounded/followups_by_description.yaml:
a helper session wrote them from the corpus metadata without reading the resolver or the
benchmark cases). No model: the resolver (agent/references.py) reads the listed papers' titles,
authors, abstracts and front pages, as a chat would show them, and their full-text index for a
description none of those hold. Prints right / wrong / unresolved, per kind, and the misses; and,
side by side, the same without the full-text look-up.

    python bench/followups.py [--work /work/grounded] [--cases FILE]

eval/grounded/followups_by_description_b.yaml is a second set, written blind by another helper
session after the resolver's rules were tuned on the first: its figure is the one no tuning saw.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.named import papers_called
from agent.references import resolve
from agent.session import chat_sources
from bench.grounded import corpus_services
from corpus import papers

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "eval" / "grounded" / "followups_by_description.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatpapers-grounded"))
    parser.add_argument("--cases", type=Path, default=CASES, help=f"the cases (default: {CASES.name})")
    parser.add_argument(
        "--names-elsewhere",
        action="store_true",
        help="as in a large corpus where every name a follow-up uses ('the KILT one') leads the title "
        "of a paper not in play: the worst case of the rule that sends 'the ZeRO paper' to the search",
    )
    args = parser.parse_args()
    services = corpus_services(args.work)
    cases = yaml.safe_load(args.cases.read_text(encoding="utf-8"))
    outcome: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    misses = []
    without_full_text: Counter[str] = Counter()
    with services.db.connect() as conn:

        def held(paper_ids: list[str], words: list[str]) -> dict[str, tuple[int, int]]:
            return papers.words_held(conn, paper_ids, words)

        def called(names: list[str]) -> list[str]:
            if args.names_elsewhere:
                return ["elsewhere"]
            return papers_called(conn, names)

        for case in cases:
            listed = [str(p) for p in case["listed"]]
            last, _ = chat_sources(conn, listed, [])
            if len(last) != len(listed):
                outcome["skipped (a listed paper is not in the corpus)"] += 1
                continue
            meant = str(case["means"])
            plain = resolve(case["question"], last, [], services.embedder)
            without_full_text["right" if plain and plain.papers == [meant] else "other"] += 1
            found = resolve(case["question"], last, [], services.embedder, None, held, called)
            picked = found.papers if found else []
            if picked == [meant]:
                verdict = "right"
            elif found and found.pick_one and meant in picked:
                verdict = "narrowed"  # several fit; the reader answers from the one that answers best
            else:
                verdict = "unresolved" if not picked else "wrong"
            outcome[verdict] += 1
            by_kind.setdefault(case["kind"], Counter())[verdict] += 1
            if verdict != "right":
                titles = {p.paper_id: p.title[:50] for p in last}
                misses.append(f"{verdict:10s} {case['question']!r}: meant {titles[meant]!r}"
                              f", got {[titles.get(p, p) for p in picked]}")  # fmt: skip
    judged = outcome["right"] + outcome["narrowed"] + outcome["wrong"] + outcome["unresolved"]
    print(f"{judged} follow-ups: right {outcome['right']} ({outcome['right'] / judged:.2f}), "
          f"narrowed to several that include it {outcome['narrowed']}, wrong {outcome['wrong']}, "
          f"unresolved {outcome['unresolved']}; {dict(outcome)}")  # fmt: skip
    print(f"without the full-text look-up: right {without_full_text['right']} "
          f"({without_full_text['right'] / judged:.2f})")  # fmt: skip
    print("| kind | right | of |\n|---|---|---|")
    for kind, counts in sorted(by_kind.items()):
        print(f"| {kind} | {counts['right']} | {sum(counts.values())} |")
    print("\n".join(misses))


if __name__ == "__main__":
    main()
