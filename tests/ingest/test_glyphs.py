"""Math signs and ligatures that pypdf returns as control codes are stored as the characters they
print: numbers keep their minus and times signs, words keep their ffi."""

from __future__ import annotations

from pathlib import Path

from ingest.glyphs import restore_glyphs
from ingest.prepare import prepare_pdf


def _text(corpus_dir: Path, name: str) -> str:
    paper = prepare_pdf(corpus_dir / "pdfs" / name, 1000, 0)
    return " ".join(chunk.text for chunk in paper.chunks)


def test_numbers_keep_their_signs_in_the_stored_text(corpus_dir: Path) -> None:
    # RETRO's learning rate: "2 104" before, a different number
    retro = _text(corpus_dir, "2112.04426v1.pdf")
    assert "was set to 2 × 10−4 and half that" in retro
    flash = _text(corpus_dir, "2205.14135v2.pdf")
    assert "3× speedup" in flash  # "3 speedup" before
    assert "17.4 ± 1.4" in flash  # a perplexity and its spread, "17.4 1.4" before
    adadelta = _text(corpus_dir, "1212.5701v1.pdf")
    assert "=1e−2" in adadelta  # an epsilon of 1e-2, "1e2" before


def test_words_keep_a_ligature_the_font_does_not_map(corpus_dir: Path) -> None:
    glrm = _text(corpus_dir, "1410.0342v4.pdf")
    assert "solved globally and efficiently" in glrm
    assert "giving the coefficients" in glrm
    assert "ecient" not in glrm and "coecient" not in glrm  # the ligature dropped, as before


def test_the_ligature_chosen_is_the_one_that_makes_a_word() -> None:
    assert restore_glyphs("di\x00cult, o\x00ce, shu\x00ed, a\x00ne") == "difficult, office, shuffled, affine"
    assert restore_glyphs("E\x00cient Training") == "Efficient Training"
    # no ligature makes a word: the code is dropped as it was, never guessed into one
    assert restore_glyphs("xy\x00zq") == "xyzq"


def test_a_nul_outside_a_word_is_the_minus_sign_and_the_rest_is_kept() -> None:
    assert restore_glyphs("t\x001 and (u \x00 a)2 and \x001") == "t−1 and (u − a)2 and −1"
    assert restore_glyphs("25\x02 fewer, m \x14 64, \x18 10\x02") == "25× fewer, m ≤ 64, ∼ 10×"
    assert restore_glyphs("plain text, no codes") == "plain text, no codes"


def test_small_capitals_are_letters_so_retro_is_found_by_its_name(corpus_dir: Path) -> None:
    # DeepMind's template sets "Retro" in small capitals: "R/e.sc /t.sc /r.sc/o.sc" before
    retro = _text(corpus_dir, "2112.04426v1.pdf")
    assert "Retrieval-Enhanced Transformer (RETRO)" in retro
    assert retro.count("RETRO") > 150  # 0 before
    assert ".sc" not in retro
    assert restore_glyphs("[O/f.sc /f.sc ] S/p.sc /l.sc /i.sc /t.sc(H)") == "[OFF ] SPLIT(H)"
    assert restore_glyphs("E M/b.scenc, E MD/r.sc2") == "E MBenc, E MDR2"  # subscripts follow
    assert restore_glyphs("see https://a.scholar.example/x") == "see https://a.scholar.example/x"
