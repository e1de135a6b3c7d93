"""Grounded-QA cases: YAML files under eval/grounded/cases/, one list of cases per file.

A case is one question, or a conversation of several turns whose later turns refer back ("the
second one", "that paper"). Every answerable turn names its gold paper(s) and, for each, an
evidence quote copied from the paper's text (as chatpapers extracts it); a turn the corpus cannot
answer has no gold paper, and the right answer says so."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

Kind = Literal["single", "cross", "conversation", "unanswerable"]


class Evidence(BaseModel):
    paper: str  # arXiv id without version
    quote: str = Field(min_length=20, max_length=400)


class KeyFact(BaseModel):
    """One fact a right answer must state, written from the paper (never from chatpapers' output).

    `any` holds its acceptable phrasings; a phrasing with ` & ` in it is stated when every one of
    its parts is (the key terms of a reason, in any order). At least one phrasing must appear in
    the paper's own text (eval.grounded.check)."""

    paper: str  # arXiv id of the paper that states it
    fact: str = Field(min_length=3)  # the fact in words, for people reading the case
    any: list[str] = Field(min_length=1)

    def stated_in(self, text: str) -> bool:
        """Whether `text` (an answer, or a paper's text) states this fact in one of its phrasings."""
        found = comparable(text)
        return any(all(_has(found, part) for part in phrasing_parts(p)) for p in self.any)


class CaseTurn(BaseModel):
    question: str = Field(min_length=5)
    gold_papers: list[str] = []  # empty: the corpus cannot answer it
    evidence: list[Evidence] = []
    # A turn that refers back to a paper of an earlier answer ("the second one"): that paper.
    refers_to: str | None = None
    # What a right answer states: 1-3 facts, each with its acceptable phrasings.
    key: list[KeyFact] = []
    # Papers besides the gold ones that genuinely fit a listing or cross-paper question: an answer
    # that lists them is not wrong (listed precision).
    also_acceptable: list[str] = []

    @property
    def acceptable(self) -> set[str]:
        return {*self.gold_papers, *self.also_acceptable}

    @property
    def answerable(self) -> bool:
        return bool(self.gold_papers)

    @model_validator(mode="after")
    def _evidence_for_gold(self) -> CaseTurn:
        quoted = {e.paper for e in self.evidence}
        missing = [p for p in self.gold_papers if p not in quoted]
        if missing:
            raise ValueError(f"no evidence quote for gold paper(s) {', '.join(missing)}")
        if self.refers_to and self.refers_to not in self.gold_papers:
            raise ValueError("refers_to must be one of the turn's gold papers")
        strays = [f.paper for f in self.key if f.paper not in self.gold_papers]
        if strays:
            raise ValueError(f"key facts of paper(s) {', '.join(strays)} that are not gold papers")
        if self.key and not self.gold_papers:
            raise ValueError("an unanswerable turn has no key facts")
        return self


class Case(BaseModel):
    id: str
    kind: Kind
    turns: list[CaseTurn] = Field(min_length=1)
    notes: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> Case:
        if self.kind == "conversation" and len(self.turns) < 3:
            raise ValueError("a conversation has at least 3 turns")
        if self.kind == "conversation" and not any(t.refers_to for t in self.turns[1:]):
            raise ValueError("a conversation has a later turn that refers back (refers_to)")
        if self.kind == "unanswerable" and any(t.answerable for t in self.turns):
            raise ValueError("an unanswerable case has no gold papers")
        if self.kind == "cross" and len(self.turns[0].gold_papers) < 2:
            raise ValueError("a cross-paper case has at least two gold papers")
        return self


class CaseFileError(ValueError):
    pass


def default_cases_dir() -> Path:
    return Path(str(resources.files("eval.grounded") / "cases"))


def load_cases(folder: Path | None = None) -> list[Case]:
    """Every case of every *.yaml under `folder` (default: the built-in set), ids unique."""
    folder = folder or default_cases_dir()
    cases: list[Case] = []
    for path in sorted(folder.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        if not isinstance(raw, list):
            raise CaseFileError(f"{path.name}: expected a list of cases")
        for i, item in enumerate(raw):
            try:
                cases.append(Case.model_validate(item))
            except ValidationError as exc:
                raise CaseFileError(f"{path.name}, case {i + 1} ({item.get('id', '?')}): {exc}") from None
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise CaseFileError(f"case id {case.id} is used twice")
        seen.add(case.id)
    return cases


def normalise(text: str) -> str:
    """For comparing quotes with extracted text: case, spacing and hyphenation do not matter."""
    text = text.lower().replace("-\n", "").replace("\u00ad", "")
    text = re.sub(r"[\u2010-\u2015]", "-", text)
    text = re.sub(r"[\u2018\u2019]", "'", text)
    text = re.sub(r"[\u201c\u201d]", '"', text)
    return re.sub(r"\s+", " ", text).strip()


_CITATION = re.compile(r"\[\[?\d+\]?\]?(?:\([^)\s]*\))?")


def comparable(text: str) -> str:
    """Answer or paper text as key facts are matched against it: `normalise`d, with markdown
    emphasis, citation markers and thousands separators gone ("1,000" and "1000" are the same)."""
    text = _CITATION.sub(" ", text)
    text = re.sub(r"[*_`]+", "", text)
    text = normalise(text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"(?<=\d) (?=%|percent)", "", text)
    return re.sub(r"\s+", " ", text)


def phrasing_parts(phrasing: str) -> list[str]:
    return [comparable(part) for part in phrasing.split(" & ") if part.strip()]


def _has(text: str, part: str) -> bool:
    """`part` in `text` starting at a word boundary; a part ending in a digit also ends at one
    ("74" is not found in "745" or "7.4", "rate" is found in "rates")."""
    end = r"(?![0-9]|[.,][0-9])" if part[-1:].isdigit() else ""
    return re.search(r"(?<![a-z0-9])" + re.escape(part) + end, text) is not None
