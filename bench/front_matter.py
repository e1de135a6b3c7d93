"""Titles, authors and clean text of PDFs ingested without metadata, measured on the real corpus.

    .venv/bin/python bench/front_matter.py [--corpus ../shared/corpus] [--text] [--json FILE]
                                           [--only NAME.pdf ...]

Runs what `chatpapers ingest --pdf-dir` runs on each PDF of `<corpus>/pdfs` (`prepare_pdf`: the
title it would store, the authors it would store, the chunks) and compares the first two with
the corpus metadata (`metadata.jsonl`), used here only as the answer key, never as an input.

What counts as right:

- title: equal to the metadata title after lower-casing, NFKC and dropping everything but letters
  and digits (so case, spacing, punctuation, ligatures and a line-break hyphen do not count);
- authors: the surnames (last word of each name, accents folded, lower case) extracted agree with
  the metadata's with precision >= 0.8 and recall >= 0.8 (multisets). Papers whose metadata has no
  author list (four papers with dozens of authors were not transcribed) are left out of the count
  and listed as "not in the key".

With --text, also the clean-text figures over each paper's chunks (joined with spaces):

- title repeats: occurrences of the paper's title in its chunk text beyond the first (the title on
  page 1); running headers repeat it on every page and paste it into passages mid-sentence. The
  body's own mentions count too (a paper titled "Acoustic Scene Classification" names its task);
- page numbers: page breaks (pages are joined by a blank line) next to a bare number; a figure's
  tick labels or a section number there count too;
- split words: line-break hyphens left in the text ("neigh- bours"; "pre- and post-" not counted);
- compounds glued: real compounds whose line-end hyphen was removed ("state-of-theart").
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest.prepare import PreparedPaper, prepare_pdf

ROOT = Path(__file__).resolve().parents[1]
MIN_PRECISION = 0.8
MIN_RECALL = 0.8


def norm_title(text: str | None) -> str:
    text = unicodedata.normalize("NFKC", text or "").lower()
    return re.sub(r"[^0-9a-z]+", "", _fold(text))


def _fold(text: str) -> str:
    """Accents off ("Zdeborová" -> "zdeborova", "Łukasz" -> "lukasz")."""
    text = text.replace("ł", "l").replace("Ł", "L").replace("ø", "o").replace("Ø", "O")
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def surname(name: str) -> str:
    words = re.findall(r"[a-z][a-z'\-]*", _fold(unicodedata.normalize("NFKC", name)).lower())
    return words[-1] if words else ""


def authors_right(found: list[str], want: list[str]) -> bool:
    got, key = Counter(map(surname, found)), Counter(map(surname, want))
    common = sum((got & key).values())
    precision = common / sum(got.values()) if got else 0.0
    recall = common / sum(key.values()) if key else 0.0
    return precision >= MIN_PRECISION and recall >= MIN_RECALL


def title_repeats(title: str, prepared: PreparedPaper) -> int:
    """Occurrences of the title in the chunk text beyond the first."""
    want = re.sub(r"[^0-9a-z]+", " ", _fold(title).lower()).strip()
    text = " ".join(c.text for c in prepared.chunks)
    text = " " + re.sub(r"[^0-9a-z]+", " ", _fold(unicodedata.normalize("NFKC", text)).lower()) + " "
    return max(0, text.count(f" {want} ") - 1) if want else 0


_LEFT_BREAK = re.compile(r"\b([a-z]{2,})- ([a-z]{2,})\b")
_GLUED = re.compile(r"\b(?:state-of-theart|end-toend|out-ofdistribution|sequence-tosequence)\b")
_PAGE_NUMBER = re.compile(r"(?:^|\s)\d{1,3}\s*\n\n|\n\n\s*\d{1,3}(?:\s|$)")


def text_figures(prepared: PreparedPaper) -> dict[str, int]:
    text = " ".join(c.text for c in prepared.chunks)
    left = [m for m in _LEFT_BREAK.finditer(text) if m.group(2) not in {"and", "or", "to"}]
    return {
        "page numbers": sum(len(_PAGE_NUMBER.findall(c.text)) for c in prepared.chunks),
        "split words": len(left),
        "compounds glued": len(_GLUED.findall(text)),
    }


def load_key(corpus: Path) -> dict[Path, dict]:
    key = {}
    for line in (corpus / "metadata.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["file"].startswith("pdfs/"):
            key[corpus / rec["file"]] = rec
    return key


def measure(path: Path, rec: dict, text: bool) -> dict:
    """One paper: what ingest would store for it, and whether that is right."""
    prepared = prepare_pdf(path.read_bytes(), 1000, 0)
    # getattr: the same script measures a checkout from before authors were read
    authors = list(getattr(prepared, "authors_guess", None) or [])
    row = {
        "file": path.name,
        "title": prepared.title_guess,
        "title_ok": norm_title(prepared.title_guess) == norm_title(rec["title"]),
        "authors": authors,
        "authors_ok": authors_right(authors, rec["authors"]) if rec.get("authors") else None,
    }
    if text:
        row["title_repeats"] = title_repeats(rec["title"], prepared)
        row.update(text_figures(prepared))
    return row


def report(rows: list[dict], key: dict[Path, dict], text: bool) -> None:
    wants = {path.name: rec for path, rec in key.items()}
    for row in rows:
        if not row["title_ok"]:
            print(f"TITLE   {row['file']}: {row['title']!r}\n        want {wants[row['file']]['title']!r}")
        if row["authors_ok"] is False:
            print(f"AUTHORS {row['file']}: {row['authors']}\n        want {wants[row['file']]['authors']}")
    keyed = [row for row in rows if row["authors_ok"] is not None]
    print()
    print(f"titles right   {sum(row['title_ok'] for row in rows)}/{len(rows)}")
    print(f"authors right  {sum(row['authors_ok'] for row in keyed)}/{len(keyed)}", end=" ")
    print(f"(not in the key: {len(rows) - len(keyed)})")
    if text:
        repeats = Counter({row["file"]: row["title_repeats"] for row in rows})
        print(f"title repeats  {sum(repeats.values())} in {sum(1 for n in repeats.values() if n)} papers")
        print(f"  most: {repeats.most_common(6)}")
        for name in ("page numbers", "split words", "compounds glued"):
            print(f"{name:15} {sum(row[name] for row in rows)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--text", action="store_true", help="also the clean-text figures (slower)")
    parser.add_argument("--json", type=Path, help="write per-paper results here")
    parser.add_argument("--only", nargs="*", default=[], help="file names to run (default: all)")
    args = parser.parse_args()

    key = load_key(args.corpus)
    rows = [
        measure(path, rec, args.text)
        for path, rec in sorted(key.items())
        if not args.only or path.name in args.only
    ]
    report(rows, key, args.text)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
