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


class CaseTurn(BaseModel):
    question: str = Field(min_length=5)
    gold_papers: list[str] = []  # empty: the corpus cannot answer it
    evidence: list[Evidence] = []
    # A turn that refers back to a paper of an earlier answer ("the second one"): that paper.
    refers_to: str | None = None

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
