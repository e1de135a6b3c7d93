"""Check grounded-QA case files against the PDFs they were written from: the schema, that every
evidence quote appears in its paper's text as chatpapers extracts it, and that every key fact is
stated there in one of its phrasings.

    python -m eval.grounded.check --pdf-dir ../shared/corpus/pdfs [CASE_FILE ...]
"""

from __future__ import annotations

import argparse
import sys
from functools import cache
from pathlib import Path

from corpus.ids import find_arxiv_id
from eval.grounded.cases import Case, CaseFileError, default_cases_dir, load_cases, normalise
from ingest.prepare import prepare_pdf


def paper_texts(pdf_dir: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(pdf_dir.glob("*.pdf")):
        parsed = find_arxiv_id(path.name)
        if parsed:
            found[parsed.paper_id] = path
    return found


@cache
def _raw_text(path: Path) -> str:
    return " ".join(c.text for c in prepare_pdf(path, 1000, 0).chunks)


def _text(path: Path) -> str:
    return normalise(_raw_text(path))


def problems(folder: Path, pdf_dir: Path) -> list[str]:
    files = paper_texts(pdf_dir)
    out = []
    for case in load_cases(folder):
        for n, turn in enumerate(case.turns, 1):
            for paper in turn.gold_papers:
                if paper not in files:
                    out.append(f"{case.id} turn {n}: gold paper {paper} is not in {pdf_dir}")
            for ev in turn.evidence:
                if ev.paper in files and normalise(ev.quote) not in _text(files[ev.paper]):
                    out.append(f"{case.id} turn {n}: quote not found in {ev.paper}: {ev.quote[:70]!r}")
            for paper in turn.also_acceptable:
                if paper not in files:
                    out.append(f"{case.id} turn {n}: acceptable paper {paper} is not in {pdf_dir}")
            for fact in turn.key:
                if fact.paper in files and not fact.stated_in(_raw_text(files[fact.paper])):
                    out.append(f"{case.id} turn {n}: key fact not in {fact.paper} as phrased: {fact.any}")
    return out


def unkeyed(cases: list[Case]) -> list[str]:
    """Answerable turns that have no answer key yet."""
    return [f"{c.id} turn {n}" for c in cases for n, t in enumerate(c.turns, 1) if t.answerable and not t.key]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", type=Path, required=True)
    parser.add_argument("--cases", type=Path, default=default_cases_dir(), help="folder of case files")
    args = parser.parse_args()
    try:
        found = problems(args.cases, args.pdf_dir)
        cases = load_cases(args.cases)
    except CaseFileError as exc:
        print(f"invalid case file: {exc}")
        sys.exit(1)
    kinds: dict[str, int] = {}
    for case in cases:
        kinds[case.kind] = kinds.get(case.kind, 0) + 1
    print(f"{len(cases)} cases: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    missing = unkeyed(cases)
    if missing:
        print(
            f"{len(missing)} answerable turns have no answer key: {', '.join(missing[:10])}"
            + (" ..." if len(missing) > 10 else "")
        )
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
