"""The printed lines of a PDF page as pypdf draws them: text, type size, position, and whether the
text belongs to an embedded figure.

pypdf's plain text loses what the front-page readers (ingest/front_matter.py, ingest/authors.py)
need: how large each piece is set, where it sits, and which pieces are figure labels. Its
`visitor_text` callback reports each piece with its matrices; `LineCollector` gathers them into
lines. Figures included as PDF (`\\includegraphics` of a plot, a teaser image with captions) are
form XObjects drawn by the `Do` operator: the collector follows the operator callbacks to know
when pypdf is inside one, so that a teaser's large labels are not mistaken for the title."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ingest.glyphs import restore_glyphs


@dataclass(frozen=True)
class Part:
    """One piece of text as pypdf reports it."""

    text: str
    height: float  # type size on the page
    x: float  # left edge on the page
    y: float  # baseline on the page
    in_figure: bool = False  # drawn inside a form XObject (an embedded figure)


@dataclass
class Line:
    y: float
    parts: list[Part] = field(default_factory=list)

    @property
    def text(self) -> str:
        return restore_glyphs("".join(part.text for part in self.parts))

    @property
    def size(self) -> float:
        """The line's type size: of its lettered parts (not of superscript marks or symbols)."""
        return max((p.height for p in self.parts if letters(p.text) >= 2), default=0.0)

    @property
    def marks(self) -> int:
        """Superscripts (footnote and affiliation marks), as author lines have."""
        size = self.size
        return sum(1 for p in self.parts if p.text.strip() and p.height < 0.8 * size)

    def is_mark(self, part: Part) -> bool:
        """A superscript on this line: set smaller, or a little smaller and raised."""
        size = self.size
        return part.height < 0.8 * size or (part.height < 0.9 * size and part.y - self.y > 0.2 * size)

    @property
    def in_figure(self) -> bool:
        """Every lettered part of the line is a figure's label."""
        lettered = [p for p in self.parts if letters(p.text)]
        return bool(lettered) and all(p.in_figure for p in lettered)


def letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


class LineCollector:
    """A pypdf text visitor: gathers upright text into lines with their type size. Pass the
    instance as `visitor_text` and its two operator methods as `visitor_operand_before` and
    `visitor_operand_after` to know which text is inside a figure."""

    def __init__(self) -> None:
        self.lines: list[Line] = []
        self._depth = 0  # form XObjects pypdf is inside now
        self._entering = 0  # `Do` seen, its form's first operator not yet

    def before_operator(self, operator: bytes, operands: object, cm: object, tm: object) -> None:
        # pypdf reports text still pending from before a `Do` after this callback: the form is
        # entered only with its own first operator (an image's `Do` has none).
        if self._entering:
            self._depth += self._entering
            self._entering = 0
        if operator == b"Do":
            self._entering += 1

    def after_operator(self, operator: bytes, operands: object, cm: object, tm: object) -> None:
        if operator != b"Do":
            return
        if self._entering:
            self._entering -= 1
        elif self._depth:
            self._depth -= 1

    def __call__(self, text: str, cm: list[float], tm: list[float], font: object, size: float) -> None:
        if not text or not text.strip():
            return
        a, b, c, d, e, f = tm
        ca, cb, cc, cd, ce, cf = cm
        if abs(b) > 1e-6 or abs(c) > 1e-6 or a * ca <= 0:
            return  # rotated text: arXiv's margin stamp, figure labels
        height = abs(size) * math.hypot(c * ca + d * cc, c * cb + d * cd)
        x = e * ca + f * cc + ce
        y = e * cb + f * cd + cf
        part = Part(text=text, height=height, x=x, y=y, in_figure=self._depth > 0)
        for line in reversed(self.lines[-6:]):
            # same baseline, or a superscript mark (small, a few points up) on it
            if abs(line.y - y) <= 0.45 * max(line.size, height):
                line.parts.append(part)
                return
        self.lines.append(Line(y=y, parts=[part]))
